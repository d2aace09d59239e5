// Command snelson reproduces Figure 3 of the SOLVE-GP paper (Shi, Titsias &
// Mnih, AISTATS 2020; Appendix F.1): posterior processes on Snelson's 1D
// regression data set of SVGP with 5 inducing points, ODVGP with 5 + 100,
// SOLVE-GP with 5 + 5 and SVGP with 10.
//
// 100 of the 200 observations, drawn at random with -seed, are the training
// set and the other 100 the test set. Every model uses an RBF kernel with
// lengthscale 1 and variance 1 and Gaussian noise variance 0.1 at the start,
// Z and O from k-means on the training inputs, q(u) and q(v⊥) at their
// priors, and trains every parameter with Adam (learning rate 0.01) for
// -iters steps (the paper's 10K) on mini-batches of 20.
//
// It writes into the -out directory snelson.png (four panels: predictive
// mean, ±3 standard deviations of y, the training data, Z as + and O as
// triangles — blue for ODVGP, black for SOLVE-GP, as in the paper),
// snelson.md and snelson.json (per model: the evidence lower bound on the
// whole training set, test RMSE, test log-likelihood, learned
// hyperparameters and training time).
//
// Usage:
//
//	go run ./bench/snelson [-data file.csv] [-iters 10000] [-seed 1] [-out bench/results]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/bench/internal/benchutil"
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/data/snelson"
	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/metrics"
	"github.com/solvegp/solvegp/gp/train"
	"github.com/solvegp/solvegp/internal/atomicfile"
	"github.com/solvegp/solvegp/internal/figure"
)

// Settings of Appendix F.1.
const (
	paperIters = 10000
	batchSize  = 20
	learnRate  = 0.01
	nTrain     = 100
)

// spec is one panel of Figure 3.
type spec struct {
	Name string
	Kind gp.Kind
	M    int
	M2   int
}

func (s spec) label() string {
	if s.M2 > 0 {
		return fmt.Sprintf("%s %d + %d", s.Name, s.M, s.M2)
	}
	return fmt.Sprintf("%s %d", s.Name, s.M)
}

// figureModels are the four panels of Figure 3, in the paper's order.
var figureModels = []spec{
	{"SVGP", gp.SVGP, 5, 0},
	{"ODVGP", gp.ODVGP, 5, 100},
	{"SOLVE-GP", gp.SOLVEGP, 5, 5},
	{"SVGP", gp.SVGP, 10, 0},
}

// Result is the outcome of one model, as written to snelson.json.
type Result struct {
	Model       string  `json:"model"`
	M           int     `json:"m"`
	M2          int     `json:"m2"`
	Steps       int     `json:"steps"`
	Bound       float64 `json:"train_bound"`
	TestRMSE    float64 `json:"test_rmse"`
	TestLogLik  float64 `json:"test_log_lik"`
	Noise       float64 `json:"noise_variance"`
	Lengthscale float64 `json:"lengthscale"`
	Variance    float64 `json:"kernel_variance"`
	Seconds     float64 `json:"seconds"`
}

// Report is the content of snelson.json.
type Report struct {
	Data      string    `json:"data"`
	Seed      uint64    `json:"seed"`
	Iters     int       `json:"iters"`
	BatchSize int       `json:"batch_size"`
	LR        float64   `json:"learning_rate"`
	NTrain    int       `json:"n_train"`
	NTest     int       `json:"n_test"`
	GoVersion string    `json:"go_version"`
	Date      time.Time `json:"date"`
	Results   []Result  `json:"results"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("snelson", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataPath := fs.String("data", "", "Snelson CSV file with header x,y (default: the copy embedded in gp/data/snelson)")
	iters := fs.Int("iters", paperIters, "Adam steps per model (the paper: 10000)")
	seed := fs.Uint64("seed", 1, "seed of the train/test split, k-means and mini-batch order")
	out := fs.String("out", "bench/results", "directory for snelson.png, snelson.md and snelson.json")
	threads := fs.Int("threads", 1, "goroutines per linear-algebra call (0: all CPUs)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "snelson: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *iters < 1 {
		fmt.Fprintf(stderr, "snelson: -iters %d: must be positive\n", *iters)
		return 2
	}
	if *threads < 0 {
		fmt.Fprintf(stderr, "snelson: -threads %d: must be non-negative\n", *threads)
		return 2
	}
	if *out == "" {
		fmt.Fprintln(stderr, "snelson: -out must name a directory")
		return 2
	}
	if err := reproduce(ctx, *dataPath, *iters, *seed, *out, *threads, stdout); err != nil {
		fmt.Fprintf(stderr, "snelson: %v\n", err)
		if errors.Is(err, context.Canceled) {
			return 130 // interrupted: nothing is written until all four models finish
		}
		return 1
	}
	return 0
}

// load returns all observations of the data set.
func load(path string) (*mat.Dense, []float64, string, error) {
	if path == "" {
		x, y, _ := snelson.Load()
		return x, y, "embedded gp/data/snelson", nil
	}
	tab, err := data.LoadCSV(path, data.Options{})
	if err != nil {
		return nil, nil, "", err
	}
	if _, d := tab.X.Dims(); d != 1 {
		return nil, nil, "", fmt.Errorf("%s: %d input columns, want 1 (x,y)", path, d)
	}
	if len(tab.Y) <= nTrain {
		return nil, nil, "", fmt.Errorf("%s: %d rows, want more than %d", path, len(tab.Y), nTrain)
	}
	return tab.X, tab.Y, path, nil
}

func reproduce(ctx context.Context, dataPath string, iters int, seed uint64, out string, threads int, stdout io.Writer) error {
	x, y, source, err := load(dataPath)
	if err != nil {
		return err
	}
	n := len(y)
	split, err := data.RandomSplit(n, float64(n-nTrain)/float64(n), 0, seed)
	if err != nil {
		return err
	}
	xTrain, yTrain, err := data.Rows(x, y, split.Train)
	if err != nil {
		return err
	}
	xTest, yTest, err := data.Rows(x, y, split.Test)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	grid := plotGrid(x, 301)
	rep := Report{Data: source, Seed: seed, Iters: iters, BatchSize: batchSize, LR: learnRate,
		NTrain: len(yTrain), NTest: len(yTest), GoVersion: runtime.Version(), Date: time.Now().UTC()}
	fmt.Fprintf(stdout, "Snelson 1D: %d training and %d test points from %s; %d Adam steps per model (batch %d, lr %g)\n",
		len(yTrain), len(yTest), source, iters, batchSize, learnRate)
	var panels []figure.Panel
	for _, s := range figureModels {
		model, res, err := fitOne(ctx, s, fitData{xTrain: xTrain, yTrain: yTrain, xTest: xTest, yTest: yTest}, fitSettings{iters: iters, seed: seed, threads: threads})
		if err != nil {
			return fmt.Errorf("%s: %w", s.label(), err)
		}
		rep.Results = append(rep.Results, res)
		fmt.Fprintf(stdout, "%-18s bound %9.3f  test RMSE %.4f  test LL %8.4f  (%.1f s)\n",
			s.label(), res.Bound, res.TestRMSE, res.TestLogLik, res.Seconds)
		p, err := posteriorPanel(model, grid, s.label())
		if err != nil {
			return err
		}
		panels = append(panels, p)
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(out, "snelson.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(out, "snelson.md"), []byte(markdown(rep)), 0o644); err != nil {
		return err
	}
	png := filepath.Join(out, "snelson.png")
	if err := figure.Posteriors(png, panels, xTrain, yTrain, figure.Layout{}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s, snelson.md and snelson.json\n", png)
	return nil
}

// fitData are the training and test points of a run.
type fitData struct {
	xTrain, xTest *mat.Dense
	yTrain, yTest []float64
}

// fitSettings are the Adam steps per model, the seed (k-means, mini-batches)
// and the thread count of a run.
type fitSettings struct {
	iters   int
	seed    uint64
	threads int
}

// fitOne builds and trains one model of Figure 3 and evaluates it.
func fitOne(ctx context.Context, s spec, d fitData, fs fitSettings) (*gp.Model, Result, error) {
	xTrain, yTrain, xTest, yTest := d.xTrain, d.yTrain, d.xTest, d.yTest
	iters, seed, threads := fs.iters, fs.seed, fs.threads
	res := Result{Model: s.label(), M: s.M, M2: s.M2}
	z, o, err := inducing.Init(xTrain, s.M, s.M2, inducing.KMeansOptions{Seed: seed, Threads: threads})
	if err != nil {
		return nil, res, err
	}
	k, err := kernel.NewRBF(1, 1, 1)
	if err != nil {
		return nil, res, err
	}
	lik, err := likelihood.NewGaussian(0.1)
	if err != nil {
		return nil, res, err
	}
	opts := []gp.Option{gp.WithSeed(seed), gp.WithThreads(threads)}
	var model *gp.Model
	switch s.Kind {
	case gp.SVGP:
		model, err = gp.NewSVGP(k, lik, z, opts...)
	case gp.ODVGP:
		model, err = gp.NewODVGP(k, lik, z, o, opts...)
	default:
		model, err = gp.NewSOLVEGP(k, lik, z, o, opts...)
	}
	if err != nil {
		return nil, res, err
	}
	start := time.Now()
	fr, err := train.Fit(ctx, model, xTrain, yTrain, train.Config{
		MaxSteps:  iters,
		BatchSize: batchSize,
		Schedule:  train.Constant(learnRate),
		Seed:      seed,
	})
	if err != nil {
		return nil, res, err
	}
	res.Seconds = time.Since(start).Seconds()
	res.Steps = fr.Steps
	if res.Bound, err = metrics.FullBound(model, xTrain, yTrain, 0); err != nil {
		return nil, res, err
	}
	met, err := benchutil.Evaluate(model, xTest, yTest, 0)
	if err != nil {
		return nil, res, err
	}
	res.TestRMSE, res.TestLogLik = met.RMSE, met.LogLik
	res.Noise = lik.NoiseVariance()
	res.Lengthscale = k.Lengthscales()[0]
	res.Variance = k.Variance()
	return model, res, nil
}

// markdown formats the results table.
func markdown(rep Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Snelson 1D regression (Figure 3 of the SOLVE-GP paper)\n\n")
	fmt.Fprintf(&b, "%d training / %d test points (%s, split seed %d); RBF kernel, Adam lr %g, batch %d, %d steps per model; %s.\n\n",
		rep.NTrain, rep.NTest, rep.Data, rep.Seed, rep.LR, rep.BatchSize, rep.Iters, rep.GoVersion)
	fmt.Fprintf(&b, "| model | train ELBO | test RMSE | test log-lik | noise var | lengthscale | kernel var | seconds |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rep.Results {
		fmt.Fprintf(&b, "| %s | %.3f | %.4f | %.4f | %.4f | %.4f | %.4f | %.1f |\n",
			r.Model, r.Bound, r.TestRMSE, r.TestLogLik, r.Noise, r.Lengthscale, r.Variance, r.Seconds)
	}
	fmt.Fprintf(&b, "\n![posteriors](snelson.png)\n")
	return b.String()
}

// plotGrid returns n evenly spaced inputs covering the data with a margin
// of 10% of its range on each side.
func plotGrid(x *mat.Dense, n int) *mat.Dense {
	lo, hi := math.Inf(1), math.Inf(-1)
	r, _ := x.Dims()
	for i := 0; i < r; i++ {
		lo, hi = math.Min(lo, x.At(i, 0)), math.Max(hi, x.At(i, 0))
	}
	pad := 0.1 * (hi - lo)
	if pad == 0 {
		pad = 1
	}
	lo, hi = lo-pad, hi+pad
	g := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		g.Set(i, 0, lo+(hi-lo)*float64(i)/float64(n-1))
	}
	return g
}

// posteriorPanel draws model's posterior on grid into a figure panel.
func posteriorPanel(model *gp.Model, grid *mat.Dense, title string) (figure.Panel, error) {
	p, err := model.Predictor(0)
	if err != nil {
		return figure.Panel{}, err
	}
	return figure.Posterior(figure.Model{PredictY: p.PredictY, Z: model.Z(), O: model.O(), ODVGP: model.Kind() == gp.ODVGP}, grid, title)
}
