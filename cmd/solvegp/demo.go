package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot/vg"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data/snelson"
	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
	"github.com/solvegp/solvegp/gp/train"
	"github.com/solvegp/solvegp/internal/figure"
)

// Iteration counts of the demo: the paper trains for 10K iterations
// (Appendix F.1).
const (
	demoPaperIters = 10000
	demoShortIters = 300
)

// demoModel is one panel of Figure 3.
type demoModel struct {
	Name string   `json:"name"`
	Kind gp.Kind  `json:"-"`
	M    int      `json:"m"`
	M2   int      `json:"m2"`
	Res  demoStat `json:"result"`
}

type demoStat struct {
	Bound       float64 `json:"train_bound"`
	TestRMSE    float64 `json:"test_rmse"`
	TestLogLik  float64 `json:"test_log_lik"`
	Noise       float64 `json:"noise_variance"`
	Lengthscale float64 `json:"lengthscale"`
	Seconds     float64 `json:"seconds"`
	Steps       int     `json:"steps"`
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("demo", "[flags]",
		`Reproduces Figure 3 of the SOLVE-GP paper on Snelson's 1D data set, which is
embedded in the program: 100 random training points (the other 100 are the test
set), SVGP with 5 inducing points, ODVGP with 5 + 100, SOLVE-GP with 5 + 5 and
SVGP with 10; RBF kernel with lengthscale 1 and variance 1, Gaussian noise
variance 0.1, Adam with learning rate 0.01 on mini-batches of 20 (Appendix F.1).
Prints the training bound, test RMSE and test log-likelihood of each model and
writes a four-panel PNG of the posteriors (mean, ±3 sd band, data, Z as + and O
as triangles). By default it trains for the paper's 10K iterations; -short
trains for 300.`, stderr)
	iters := fs.Int("iters", demoPaperIters, "optimization steps per model (the paper's 10000 take a few seconds)")
	full := fs.Bool("full", false, "train for the paper's full 10000 steps whatever -iters says")
	short := fs.Bool("short", false, "quick run of 300 steps (for tests; overrides -iters)")
	seed := fs.Uint64("seed", 1, "seed of the train/test split, k-means and mini-batches")
	pngPath := fs.String("png", "solvegp-demo.png", "PNG file for the posterior plots (empty: none)")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	quiet := fs.Bool("quiet", false, "no progress bar")
	threads := fs.Int("threads", 0, "goroutines per linear-algebra call (0: all CPUs)")
	if done, code := parse(fs, args); done {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "solvegp demo: unexpected argument %q (see solvegp demo -h)\n", fs.Arg(0))
		return exitUsage
	}
	steps := *iters
	switch {
	case *full && *short:
		return fail(stderr, "demo", errors.New("-full and -short exclude each other"))
	case *full:
		steps = demoPaperIters
	case *short:
		steps = demoShortIters
	}
	if steps < 1 {
		return fail(stderr, "demo", fmt.Errorf("-iters %d: must be positive", steps))
	}
	if err := writableDir(namedFile{what: "-png", path: *pngPath}); err != nil {
		return fail(stderr, "demo", err)
	}

	xTrain, yTrain, xTest, yTest := snelson.TrainTest(*seed)
	_, _, grid := snelson.Load()
	models := []demoModel{
		{Name: "SVGP", Kind: gp.SVGP, M: 5},
		{Name: "ODVGP", Kind: gp.ODVGP, M: 5, M2: 100},
		{Name: "SOLVE-GP", Kind: gp.SOLVEGP, M: 5, M2: 5},
		{Name: "SVGP", Kind: gp.SVGP, M: 10},
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "Snelson 1D regression: %d training points, %d test points, %d steps per model (batch 20, lr 0.01)\n\n",
			len(yTrain), len(yTest), steps)
	}
	run := &demoRun{ctx: ctx, stderr: stderr, steps: steps, seed: *seed, threads: *threads, quiet: *quiet,
		xTrain: xTrain, yTrain: yTrain, xTest: xTest, yTest: yTest, grid: grid}
	var panels []figure.Panel
	interrupted := false
	for i := range models {
		p, stopped, err := run.fit(&models[i])
		if err != nil {
			return fail(stderr, "demo", err)
		}
		panels = append(panels, p)
		if interrupted = stopped; interrupted {
			break
		}
	}
	if err := writeDemoResults(stdout, steps, models[:len(panels)], interrupted, *asJSON); err != nil {
		return fail(stderr, "demo", err)
	}
	if interrupted && *pngPath != "" {
		// A figure of fewer models would replace a complete one.
		fmt.Fprintf(stderr, "solvegp demo: interrupted; %s not written\n", *pngPath)
	}
	if *pngPath != "" && len(panels) > 0 && !interrupted {
		if err := figure.Posteriors(*pngPath, panels, xTrain, yTrain, figure.Layout{Cols: 2, Width: 11 * vg.Inch, Height: 8 * vg.Inch, Legend: true, YLimit: 6}); err != nil {
			return fail(stderr, "demo", err)
		}
		if !*asJSON {
			fmt.Fprintf(stdout, "Posterior plots written to %s\n", *pngPath)
		}
	}
	if interrupted {
		fmt.Fprintln(stderr, "solvegp demo: interrupted")
		return exitInterrupted
	}
	return exitOK
}

// demoRun holds what every model of the demo is trained and evaluated
// with.
type demoRun struct {
	ctx                 context.Context
	stderr              io.Writer
	steps               int
	seed                uint64
	threads             int
	quiet               bool
	xTrain, xTest, grid *mat.Dense
	yTrain, yTest       []float64
}

// demoLabel names a model in the table and the figure ("SOLVE-GP 5 + 5").
func demoLabel(dm *demoModel) string {
	label := fmt.Sprintf("%s %d", dm.Name, dm.M)
	if dm.M2 > 0 {
		label += fmt.Sprintf(" + %d", dm.M2)
	}
	return label
}

// fit builds and trains the model dm, records its results in dm.Res and
// returns its posterior panel; interrupted says Ctrl-C stopped training.
func (r *demoRun) fit(dm *demoModel) (p figure.Panel, interrupted bool, err error) {
	label := demoLabel(dm)
	stderr, steps, xTrain, yTrain, xTest, yTest := r.stderr, r.steps, r.xTrain, r.yTrain, r.xTest, r.yTest
	var bar *progress
	if !r.quiet {
		bar = newProgress(stderr, steps, 0)
		if bar.tty {
			fmt.Fprintf(stderr, "%-16s ", label)
		} else {
			fmt.Fprintf(stderr, "%s\n", label)
		}
	}
	model, err := demoBuild(dm, xTrain, r.seed, r.threads)
	if err != nil {
		return p, false, err
	}
	start := time.Now()
	var running float64
	res, err := train.Fit(r.ctx, model, xTrain, yTrain, train.Config{
		MaxSteps:  steps,
		BatchSize: 20,
		Schedule:  train.Constant(0.01),
		Seed:      r.seed,
		OnStep: func(s train.StepInfo) error {
			if s.Step == 1 {
				running = s.Objective
			} else {
				running = 0.99*running + 0.01*s.Objective
			}
			bar.update(s.Step, s.Epoch, running, s.Elapsed)
			return nil
		},
	})
	if bar != nil {
		bar.done()
	}
	if errors.Is(err, context.Canceled) {
		interrupted = true
	} else if err != nil {
		return p, false, fmt.Errorf("%s: %v", label, err)
	}
	dm.Res.Seconds = time.Since(start).Seconds()
	dm.Res.Steps = res.Steps
	b := &modelfile.Bundle{Model: model}
	met, err := evaluate(b, xTest, yTest, false)
	if err != nil {
		return p, false, err
	}
	bound, err := fullBound(b, xTrain, yTrain)
	if err != nil {
		return p, false, err
	}
	dm.Res.Bound, dm.Res.TestRMSE, dm.Res.TestLogLik = bound, *met.RMSE, met.LogLik
	dm.Res.Noise = model.Likelihood().(*likelihood.Gaussian).NoiseVariance()
	dm.Res.Lengthscale = model.Kernel().(*kernel.Stationary).Lengthscales()[0]
	p, err = posteriorPanel(model, r.grid, label)
	if err != nil {
		return p, false, err
	}
	return p, interrupted, nil
}

// writeDemoResults prints the results of the models trained, as JSON or
// as a table with the paper's reading of Figure 3 after a complete run.
func writeDemoResults(stdout io.Writer, steps int, models []demoModel, interrupted, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Steps  int         `json:"steps"`
			Models []demoModel `json:"models"`
		}{steps, models})
	}
	fmt.Fprintf(stdout, "%-18s %12s %10s %12s %8s %12s %8s\n", "model", "train bound", "test RMSE", "test log-lik", "noise σ²", "lengthscale", "seconds")
	for i := range models {
		r := models[i].Res
		fmt.Fprintf(stdout, "%-18s %12.3f %10.4f %12.4f %8.4f %12.4f %8.2f\n", demoLabel(&models[i]), r.Bound, r.TestRMSE, r.TestLogLik, r.Noise, r.Lengthscale, r.Seconds)
	}
	if !interrupted {
		fmt.Fprintln(stdout, "\nThe paper's Figure 3: SVGP 5 underfits; ODVGP 5 + 100 fits the mean but not the variance; SOLVE-GP 5 + 5 is close to SVGP 10.")
	}
	return nil
}

// demoBuild builds a model of Figure 3 with Z and O placed by k-means on
// the training inputs and the paper's initial hyperparameters.
func demoBuild(dm *demoModel, x *mat.Dense, seed uint64, threads int) (*gp.Model, error) {
	z, o, err := inducing.Init(x, dm.M, dm.M2, inducing.KMeansOptions{Seed: seed, Threads: threads})
	if err != nil {
		return nil, err
	}
	k, err := kernel.NewRBF(1, 1, 1)
	if err != nil {
		return nil, err
	}
	lik, err := likelihood.NewGaussian(0.1)
	if err != nil {
		return nil, err
	}
	opts := []gp.Option{gp.WithSeed(seed), gp.WithThreads(threads)}
	switch dm.Kind {
	case gp.SVGP:
		return gp.NewSVGP(k, lik, z, opts...)
	case gp.ODVGP:
		return gp.NewODVGP(k, lik, z, o, opts...)
	}
	return gp.NewSOLVEGP(k, lik, z, o, opts...)
}

// posteriorPanel draws model's posterior on grid into a figure panel.
func posteriorPanel(model *gp.Model, grid *mat.Dense, title string) (figure.Panel, error) {
	p, err := model.Predictor(0)
	if err != nil {
		return figure.Panel{}, err
	}
	return figure.Posterior(figure.Model{PredictY: p.PredictY, Z: model.Z(), O: model.O(), ODVGP: model.Kind() == gp.ODVGP}, grid, title)
}
