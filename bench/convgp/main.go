// Command convgp reproduces the convolutional GP experiments of the SOLVE-GP
// paper (Section 5.2, Tables 1 and 4) on Fashion-MNIST: single-layer and deep
// convolutional GPs with TICK output layers, trained as SVGP or SOLVE-GP.
//
// Each invocation trains one configuration (named by -name, or by its
// settings) and appends one row to <out>/results.jsonl when it finishes, then
// rewrites <out>/results.md with all rows. Training checkpoints its
// parameters and the training loop's state (Adam's moments, the batch
// order's position, the learning-rate back-off) to <out>/<name>.ckpt every
// -checkpoint steps and on interruption; rerunning the same command resumes
// from the checkpoint with the same optimizer state, batches and Monte Carlo
// draws through the layers. A configuration already in results.jsonl is
// skipped if a row of it was evaluated as asked (-test, -train-eval,
// -samples); otherwise its saved model (<out>/<name>.cgp) is evaluated as
// asked and a row with the new evaluation appended. Checkpoints of the
// first format (parameters only) resume with a fresh Adam state.
//
// Example (the paper's single-layer SOLVE-GP, scaled down):
//
//	go run ./bench/convgp -model solvegp -m 100 -m2 100 -iters 2000 -out /tmp/convgp
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/bench/internal/benchutil"
	"github.com/solvegp/solvegp/convgp"
	"github.com/solvegp/solvegp/convgp/dataset"
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/train"
	"github.com/solvegp/solvegp/gp/train/checkpoint"
	"github.com/solvegp/solvegp/internal/atomicfile"
)

type options struct {
	model                 string
	m, m2, hm, hm2        int
	layers                int
	iters, batch          int
	lr, decay             float64
	decayEvery            int
	data, out, name       string
	checkpoint            int
	trainN, testN         int
	samples, threads      int
	seed                  uint64
	maxTime               time.Duration
	whiten                string
	noTICK                bool
	logEvery, imagesLimit int
	variance, lengthscale float64
	locLengthscale, eps   float64
	outLengthscale        float64
	standardize           bool
	linearMean            bool
	hiddenVar, hiddenInit float64
	tableOnly             bool
	cpuProfile            string
	// outputMean is the output layer's mean per class (convgp's
	// DeepConfig.OutputMean); last, so that settings can leave it out
	// when unset.
	outputMean string
}

// Result is one row of the results tables.
type Result struct {
	Name     string `json:"name"`
	Model    string `json:"model"`
	Layers   int    `json:"layers"`
	M        int    `json:"m"`
	M2       int    `json:"m2"`
	HiddenM  int    `json:"hidden_m,omitempty"`
	HiddenM2 int    `json:"hidden_m2,omitempty"`
	Iters    int    `json:"iters"`
	Target   int    `json:"target_iters"`
	Batch    int    `json:"batch"`
	TrainN   int    `json:"train_eval_images"`
	TestN    int    `json:"test_images"`
	// Samples is the number of Monte Carlo samples through the hidden
	// layers the evaluation averaged (1 for a single layer); 0 in rows
	// from before it was recorded, all of which used -samples' default,
	// 5.
	Samples int `json:"samples,omitempty"`
	// Reevaluated marks a row of a finished run evaluated again, from
	// its saved model (<name>.cgp), on other images or samples than its
	// earlier rows.
	Reevaluated bool    `json:"reevaluated,omitempty"`
	TrainAcc    float64 `json:"train_acc"`
	TrainLL     float64 `json:"train_ll"`
	TestAcc     float64 `json:"test_acc"`
	TestLL      float64 `json:"test_ll"`
	SecPerIter  float64 `json:"sec_per_iter"`
	TrainHours  float64 `json:"train_hours"`
	Threads     int     `json:"threads"`
	// Revision is the commit the program that finished the run was built
	// from (benchutil.Revision; empty if the build does not record it).
	Revision string `json:"revision,omitempty"`
	Finished string `json:"finished"`
}

func main() {
	var o options
	flag.StringVar(&o.model, "model", "solvegp", "svgp or solvegp")
	flag.IntVar(&o.m, "m", 1000, "inducing patches M of the output layer")
	flag.IntVar(&o.m2, "m2", 1000, "orthogonal inducing patches M2 of the output layer (solvegp)")
	flag.IntVar(&o.hm, "hidden-m", 384, "inducing patches of each hidden layer")
	flag.IntVar(&o.hm2, "hidden-m2", 384, "orthogonal inducing patches of each hidden layer (solvegp)")
	flag.IntVar(&o.layers, "layers", 1, "number of layers: 1, 2 or 3 (paper's Table 7 configurations adapted to 28×28 inputs)")
	flag.IntVar(&o.iters, "iters", 300000, "training iterations")
	flag.IntVar(&o.batch, "batch", 64, "mini-batch size")
	flag.Float64Var(&o.lr, "lr", 0.003, "initial Adam learning rate")
	flag.Float64Var(&o.decay, "decay", 0.25, "learning-rate factor applied every -decay-every steps")
	flag.IntVar(&o.decayEvery, "decay-every", 50000, "steps between learning-rate decays")
	flag.StringVar(&o.data, "data", dataset.FashionMNISTDir, "Fashion-MNIST directory (IDX files)")
	flag.StringVar(&o.out, "out", "convgp-results", "output directory (checkpoints, results.jsonl, results.md)")
	flag.StringVar(&o.name, "name", "", "run name (default: derived from the settings)")
	flag.IntVar(&o.checkpoint, "checkpoint", 50, "steps between checkpoints")
	flag.IntVar(&o.trainN, "train-eval", 2000, "training images used to estimate train accuracy/LL (0: all)")
	flag.IntVar(&o.testN, "test", 0, "the first n test images are evaluated (0: all 10000; more than there are is an error)")
	flag.IntVar(&o.samples, "samples", 5, "Monte Carlo samples through hidden layers at prediction")
	flag.IntVar(&o.threads, "threads", 0, "threads (0: GOMAXPROCS)")
	flag.Uint64Var(&o.seed, "seed", 1, "random seed")
	flag.DurationVar(&o.maxTime, "max-time", 0, "stop training after this wall time and evaluate (0: no limit)")
	flag.StringVar(&o.whiten, "whiten", "auto", "whitening: auto (single layer only, as the paper), on, off")
	flag.BoolVar(&o.noTICK, "no-tick", false, "plain convolutional output kernel instead of TICK")
	flag.IntVar(&o.logEvery, "log-every", 10, "steps between progress lines")
	flag.IntVar(&o.imagesLimit, "train-images", 0, "use only the first n training images (0: all 60000; more than there are is an error)")
	flag.Float64Var(&o.variance, "variance", 5, "initial patch-kernel variance (paper: 5)")
	flag.Float64Var(&o.lengthscale, "lengthscale", 5, "initial patch-kernel lengthscale (paper: 5)")
	flag.Float64Var(&o.locLengthscale, "loc-lengthscale", 3, "initial TICK location lengthscale (paper: 3)")
	flag.Float64Var(&o.outLengthscale, "output-lengthscale", 0, "initial patch-kernel lengthscale of the output layer (0: -lengthscale)")
	flag.Float64Var(&o.eps, "eps", 1e-3, "RobustMax error rate")
	flag.BoolVar(&o.standardize, "standardize", false, "standardize pixels by the training set's mean and standard deviation")
	flag.BoolVar(&o.linearMean, "linear-mean", false, "hidden layers get a learnable linear mean function (Glorot-initialized)")
	flag.StringVar(&o.outputMean, "output-mean", "", "output layer's prior mean, one per class, learned: constant or linear (in the output layer's input; empty: none, as the paper)")
	flag.Float64Var(&o.hiddenVar, "hidden-variance", 0, "initial hidden-layer kernel variance (0: -variance)")
	flag.Float64Var(&o.hiddenInit, "hidden-init-var", 0, "initial hidden-layer q covariance v·I (0: the prior)")
	flag.BoolVar(&o.tableOnly, "table", false, "only rewrite <out>/results.md from <out>/results.jsonl")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "convgp: unexpected argument %q (flags go before it; see convgp -h)\n", flag.Arg(0))
		os.Exit(2)
	}
	if !o.tableOnly {
		if err := o.validate(); err != nil {
			fmt.Fprintln(os.Stderr, "convgp:", err)
			os.Exit(2) // an invalid flag value, as in the other bench programs
		}
	}
	if o.tableOnly {
		if err := writeTable(o.out); err != nil {
			fmt.Fprintln(os.Stderr, "convgp:", err)
			os.Exit(1)
		}
		return
	}
	stop, err := startProfile(o.cpuProfile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "convgp:", err)
		os.Exit(1)
	}
	err = run(o)
	stop()
	if errors.Is(err, errInterrupted) {
		os.Exit(130) // as a shell reports a program ended by SIGINT
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "convgp:", err)
		os.Exit(1)
	}
}

// errInterrupted is run's result when a signal stopped training: the
// checkpoint is saved, and the program exits with status 130 so that
// scripts do not take the run for finished.
var errInterrupted = errors.New("interrupted; checkpoint saved")

// startProfile starts a CPU profile written to path (nothing if path is
// empty) and returns the function that stops it and closes the file.
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "convgp: cpu profile:", err)
		}
	}, nil
}

func (o options) kind() (gp.Kind, error) {
	switch o.model {
	case "svgp":
		return gp.SVGP, nil
	case "solvegp":
		return gp.SOLVEGP, nil
	}
	return 0, fmt.Errorf("unknown -model %q (svgp or solvegp)", o.model)
}

func (o *options) validate() error {
	if _, err := o.kind(); err != nil {
		return err
	}
	if o.model == "svgp" {
		o.m2, o.hm2 = 0, 0
	}
	switch {
	case o.layers < 1 || o.layers > 3:
		return fmt.Errorf("-layers %d: want 1, 2 or 3", o.layers)
	case o.m < 1 || o.m2 < 0 || o.hm < 1 || o.hm2 < 0:
		return errors.New("inducing sizes must be positive")
	case o.model == "solvegp" && (o.m2 < 1 || (o.layers > 1 && o.hm2 < 1)):
		return errors.New("solvegp needs -m2 (and -hidden-m2) ≥ 1")
	case o.iters < 1 || o.batch < 1 || o.checkpoint < 1 || o.decayEvery < 1:
		return errors.New("-iters, -batch, -checkpoint and -decay-every must be positive")
	case !(o.lr > 0) || !(o.decay > 0):
		return errors.New("-lr and -decay must be positive")
	case !(o.variance > 0) || !(o.lengthscale > 0) || !(o.locLengthscale > 0):
		return errors.New("-variance, -lengthscale and -loc-lengthscale must be positive")
	case !(o.outLengthscale >= 0) || math.IsInf(o.outLengthscale, 0):
		return errors.New("-output-lengthscale must be ≥ 0 and finite")
	case !(o.hiddenVar >= 0) || !(o.hiddenInit >= 0):
		return errors.New("-hidden-variance and -hidden-init-var must be ≥ 0")
	case !(o.eps > 0 && o.eps < 1):
		return errors.New("-eps must be in (0, 1)")
	case o.whiten != "auto" && o.whiten != "on" && o.whiten != "off":
		return fmt.Errorf("-whiten %q: want auto, on or off", o.whiten)
	case o.logEvery < 1:
		return fmt.Errorf("-log-every %d: must be positive", o.logEvery)
	case o.threads < 0:
		return fmt.Errorf("-threads %d: must be ≥ 0", o.threads)
	case o.decay > 1:
		return fmt.Errorf("-decay %g: must be in (0, 1]", o.decay)
	case o.imagesLimit < 0 || o.trainN < 0 || o.testN < 0 || o.samples < 1:
		return errors.New("-train-images, -train-eval and -test must be ≥ 0, -samples ≥ 1")
	case o.maxTime < 0:
		return fmt.Errorf("-max-time %v: must be ≥ 0", o.maxTime)
	case strings.ContainsAny(o.name, `/\`) || o.name == "." || o.name == "..":
		return fmt.Errorf("-name %q: must be a plain file name, without path separators", o.name)
	}
	if o.name == "" {
		o.name = fmt.Sprintf("%s-L%d-M%d", o.model, o.layers, o.m)
		if o.m2 > 0 {
			o.name += fmt.Sprintf("+%d", o.m2)
		}
		if o.layers > 1 {
			o.name += fmt.Sprintf("-H%d", o.hm)
			if o.hm2 > 0 {
				o.name += fmt.Sprintf("+%d", o.hm2)
			}
		}
		o.name += fmt.Sprintf("-it%d-b%d", o.iters, o.batch)
		if o.lr != 0.003 || o.decay != 0.25 || o.decayEvery != 50000 {
			o.name += fmt.Sprintf("-lr%g-d%g@%d", o.lr, o.decay, o.decayEvery)
		}
		if o.variance != 5 || o.lengthscale != 5 || o.locLengthscale != 3 {
			o.name += fmt.Sprintf("-k%g,%g,%g", o.variance, o.lengthscale, o.locLengthscale)
		}
		if o.outLengthscale > 0 {
			o.name += fmt.Sprintf("-ol%g", o.outLengthscale)
		}
		if o.eps != 1e-3 {
			o.name += fmt.Sprintf("-eps%g", o.eps)
		}
		if o.standardize {
			o.name += "-std"
		}
		if o.layers > 1 && (o.linearMean || o.hiddenVar != 0 || o.hiddenInit != 0) {
			o.name += fmt.Sprintf("-hid%v,%g,%g", o.linearMean, o.hiddenVar, o.hiddenInit)
		}
		// Settings added later, named only when not at their defaults,
		// so that the names of earlier runs (and their checkpoints and
		// result rows) stay as they were.
		if o.whiten != "auto" {
			o.name += "-whiten" + o.whiten
		}
		if o.noTICK {
			o.name += "-notick"
		}
		if o.imagesLimit > 0 {
			o.name += fmt.Sprintf("-n%d", o.imagesLimit)
		}
		if o.seed != 1 {
			o.name += fmt.Sprintf("-seed%d", o.seed)
		}
		if o.outputMean != "" {
			o.name += "-om" + o.outputMean
		}
	}
	return nil
}

// config builds the model configuration: the paper's Table 7 layers adapted
// to 28×28×1 images (2 layers: 5×5/1 → 10 channels, output 4×4/2; 3 layers:
// 5×5/1 → 10, 4×4/2 → 10, output 5×5/1).
func (o options) config(h, w, c, classes int) convgp.DeepConfig {
	kind, _ := o.kind()
	whiten := o.layers == 1
	if o.whiten != "auto" {
		whiten = o.whiten == "on"
	}
	cfg := convgp.DeepConfig{Height: h, Width: w, Channels: c, Classes: classes, Kind: kind, Whiten: whiten,
		Init: convgp.InitOptions{Seed: o.seed, Threads: o.threads}, Seed: o.seed, Threads: o.threads,
		Variance: o.variance, Lengthscale: o.lengthscale, LocLengthscale: o.locLengthscale, Epsilon: o.eps,
		LinearMean: o.linearMean, HiddenVariance: o.hiddenVar, HiddenInitVar: o.hiddenInit, OutputMean: o.outputMean}
	hid := convgp.Hidden{Channels: 10, M: o.hm, M2: o.hm2}
	switch o.layers {
	case 1:
		cfg.Output = convgp.Output{PatchHeight: 5, PatchWidth: 5, Stride: 1}
	case 2:
		h0 := hid
		h0.PatchHeight, h0.PatchWidth, h0.Stride = 5, 5, 1
		cfg.Hidden = []convgp.Hidden{h0}
		cfg.Output = convgp.Output{PatchHeight: 4, PatchWidth: 4, Stride: 2}
	case 3:
		h0, h1 := hid, hid
		h0.PatchHeight, h0.PatchWidth, h0.Stride = 5, 5, 1
		h1.PatchHeight, h1.PatchWidth, h1.Stride = 4, 4, 2
		cfg.Hidden = []convgp.Hidden{h0, h1}
		cfg.Output = convgp.Output{PatchHeight: 5, PatchWidth: 5, Stride: 1}
	}
	cfg.Output.M, cfg.Output.M2, cfg.Output.TICK = o.m, o.m2, !o.noTICK
	cfg.Output.Lengthscale = o.outLengthscale
	return cfg
}

// standardize maps the pixels of both sets to (v − mean)/sd with the
// training set's mean and standard deviation over all pixels, which it
// returns.
func standardize(train, test *dataset.Images) (mean, sd float64) {
	var s, s2 float64
	for _, v := range train.Pixels {
		s += v
		s2 += v * v
	}
	n := float64(len(train.Pixels))
	mean = s / n
	sd = math.Sqrt(math.Max(s2/n-mean*mean, 0))
	if sd == 0 {
		sd = 1
	}
	for _, im := range []*dataset.Images{train, test} {
		for i, v := range im.Pixels {
			im.Pixels[i] = (v - mean) / sd
		}
	}
	return mean, sd
}

func run(o options) error {
	if err := o.validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	resultsPath := filepath.Join(o.out, "results.jsonl")
	rows, err := readResults(resultsPath)
	if err != nil {
		return err
	}
	var earlier []Result // this run's rows: it has finished
	for _, r := range rows {
		if r.Name == o.name {
			earlier = append(earlier, r)
		}
	}
	samples := o.samples
	if o.layers == 1 {
		samples = 1
	}
	if len(earlier) > 0 {
		// A finished run evaluated as asked is skipped before the data
		// are read (from the image files' headers, the sizes "all"
		// stands for); without readable headers it is skipped as it
		// always was, its evaluation unchecked.
		trainN, testN, err := fashionSizes(o.data)
		if err != nil {
			r := earlier[len(earlier)-1]
			fmt.Printf("%s: already in %s (test acc %.2f%% on %d images), skipping (the images in %s could not be read to check the evaluation asked for: %v)\n",
				o.name, resultsPath, 100*r.TestAcc, r.TestN, o.data, err)
			return nil
		}
		ye, yt := evalCount(o.trainN, evalCount(o.imagesLimit, trainN)), evalCount(o.testN, testN)
		for _, r := range earlier {
			if r.TestN == yt && r.TrainN == ye && r.samples() == samples {
				fmt.Printf("%s: already in %s (test acc %.2f%% on %d images), skipping\n", o.name, resultsPath, 100*r.TestAcc, r.TestN)
				return nil
			}
		}
	}
	trainSet, testSet, err := loadImages(o)
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(o.out, o.name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	logger := func(format string, args ...any) {
		line := fmt.Sprintf("%s %s", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
		fmt.Println(line)
		fmt.Fprintln(logf, line)
	}

	d, err := prepareImages(o, trainSet, testSet)
	if err != nil {
		return err
	}
	info, x, y, xe, ye, xt, yt := d.info, d.x, d.y, d.xe, d.ye, d.xt, d.yt
	if len(earlier) > 0 {
		// A finished run not evaluated as asked (see above) is evaluated
		// again from its saved model.
		return reevaluate(o, earlier, xe, ye, xt, yt, samples, logger)
	}
	cfg := o.config(trainSet.Height, trainSet.Width, trainSet.Channels, trainSet.Classes)
	t0 := time.Now()
	model, err := convgp.NewDeep(x, cfg)
	if err != nil {
		return err
	}
	logger("%s: %d parameters, initialized in %v", o.name, model.NumParams(), time.Since(t0).Round(time.Millisecond))

	ckpt := filepath.Join(o.out, o.name+".ckpt")
	done, trainSec := 0, 0.0
	base := 0 // the step at which the training segment to continue began
	var resume *train.Checkpoint
	if st, err := loadCheckpoint(ckpt); err == nil {
		if len(st.Params) != model.NumParams() {
			return fmt.Errorf("%s: checkpoint has %d parameters, model %d", ckpt, len(st.Params), model.NumParams())
		}
		if st.Settings != "" && st.Settings != o.settings() {
			return fmt.Errorf("%s: the checkpoint comes from a run with other settings: %s; use another -name or -out, or remove it", ckpt, settingsDiff(st.Settings, o.settings()))
		}
		if err := model.SetParams(st.Params); err != nil {
			return err
		}
		done, trainSec, base = st.Step, st.Seconds, st.Step
		how := "fresh Adam state"
		if st.Train != nil {
			base, resume = st.Base, st.Train
			how = "Adam state and batch order restored"
		}
		logger("resumed from %s at step %d (%s)", ckpt, done, how)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}

	if done, trainSec, err = trainSegment(o, model, x, y, segmentStart{ckpt: ckpt, done: done, base: base, trainSec: trainSec, resume: resume}, logger); err != nil {
		return err
	}

	// The trained model, loadable without the training images
	// (convgp.LoadModel); rewritten if the run is evaluated again. If it
	// cannot be saved, the run stops before it is evaluated and recorded:
	// the checkpoint stays, and rerunning saves and evaluates it.
	modelPath := filepath.Join(o.out, o.name+".cgp")
	info["run"], info["steps"], info["settings"] = o.name, strconv.Itoa(done), o.settings()
	if err := convgp.SaveModel(modelPath, model, info); err != nil {
		return fmt.Errorf("saving the model after step %d: %w (the checkpoint stays; rerun to save and evaluate)", done, err)
	}
	logger("model after step %d saved to %s", done, modelPath)

	// Evaluation.
	trAcc, trLL, teAcc, teLL, err := evaluate(model, xe, ye, xt, yt, samples, logger)
	if err != nil {
		return err
	}
	row := Result{Name: o.name, Model: o.model, Layers: o.layers, M: o.m, M2: o.m2, Iters: done, Target: o.iters,
		Batch: o.batch, TrainN: len(ye), TestN: len(yt), Samples: samples, TrainAcc: trAcc, TrainLL: trLL, TestAcc: teAcc, TestLL: teLL,
		SecPerIter: trainSec / math.Max(1, float64(done)), TrainHours: trainSec / 3600, Threads: o.threads,
		Revision: benchutil.Revision(), Finished: time.Now().UTC().Format(time.RFC3339)}
	if o.layers > 1 {
		row.HiddenM, row.HiddenM2 = o.hm, o.hm2
	}
	if err := appendResult(resultsPath, row); err != nil {
		return err
	}
	return writeTable(o.out)
}

// loadImages reads the Fashion-MNIST images of o.data and checks that
// they hold the images asked for: more than there are is an error, not a
// silent cap (the run's name holds -train-images, and the results the
// test set's size).
func loadImages(o options) (trainSet, testSet *dataset.Images, err error) {
	trainSet, testSet, err = dataset.LoadFashionMNIST(o.data)
	if err != nil {
		return nil, nil, err
	}
	if o.imagesLimit > trainSet.N {
		return nil, nil, fmt.Errorf("-train-images %d: the training set in %s has only %d images (0: all)", o.imagesLimit, o.data, trainSet.N)
	}
	if o.testN > testSet.N {
		return nil, nil, fmt.Errorf("-test %d: the test set in %s has only %d images (0: all)", o.testN, o.data, testSet.N)
	}
	return trainSet, testSet, nil
}

// runImages are a run's images as matrices with their labels: x, y for
// training, xe, ye the training images evaluated, xt, yt the test images,
// and info what a user of the saved model must do to images.
type runImages struct {
	info      map[string]string
	x, xe, xt *mat.Dense
	y, ye, yt []float64
}

// prepareImages keeps the first -train-images training images,
// standardizes the pixels if asked, and takes the evaluation's images.
func prepareImages(o options, trainSet, testSet *dataset.Images) (*runImages, error) {
	var err error
	if o.imagesLimit > 0 && o.imagesLimit < trainSet.N {
		idx := make([]int, o.imagesLimit)
		for i := range idx {
			idx[i] = i
		}
		if trainSet, err = trainSet.Subset(idx); err != nil {
			return nil, err
		}
	}
	// What a user of the saved model must do to images (dataset.LoadIDX
	// gives pixels in [0, 1]), for the model file's info.
	info := map[string]string{"pixels": "in [0, 1] (byte / 255), as dataset.LoadIDX gives them"}
	if o.standardize {
		mean, sd := standardize(trainSet, testSet)
		info["pixel_mean"] = strconv.FormatFloat(mean, 'g', -1, 64)
		info["pixel_sd"] = strconv.FormatFloat(sd, 'g', -1, 64)
		info["pixels"] = "in [0, 1] (byte / 255), then standardized as (v − pixel_mean) / pixel_sd, the training images' mean and standard deviation"
	}
	x, err := trainSet.Matrix()
	if err != nil {
		return nil, err
	}
	xt, err := testSet.Matrix()
	if err != nil {
		return nil, err
	}
	y, yt := trainSet.FloatLabels(), testSet.FloatLabels()
	if o.testN > 0 && o.testN < testSet.N {
		xt, yt = xt.Slice(0, o.testN, 0, xt.RawMatrix().Cols).(*mat.Dense), yt[:o.testN]
	}
	// The evaluation: the first -train-eval training images, the test
	// images, -samples Monte Carlo samples through hidden layers.
	xe, ye := x, y
	if o.trainN > 0 && o.trainN < len(y) {
		xe, ye = x.Slice(0, o.trainN, 0, x.RawMatrix().Cols).(*mat.Dense), y[:o.trainN]
	}
	return &runImages{info: info, x: x, xe: xe, xt: xt, y: y, ye: ye, yt: yt}, nil
}

// segmentStart is where a training segment starts: the checkpoint file,
// the steps done, the step at which the segment to continue began, the
// training seconds so far and Fit's state to resume (nil: fresh).
type segmentStart struct {
	ckpt     string
	done     int
	base     int
	trainSec float64
	resume   *train.Checkpoint
}

// trainSegment trains the model up to o.iters steps from st, saving
// checkpoints, and returns the steps done and the training seconds. It
// returns errInterrupted after saving a checkpoint on Ctrl-C.
func trainSegment(o options, model *convgp.Deep, x *mat.Dense, y []float64, st segmentStart, logger func(string, ...any)) (int, float64, error) {
	ckpt, done, base, trainSec, resume := st.ckpt, st.done, st.base, st.trainSec, st.resume
	// Interruption (Ctrl-C or SIGTERM) and -max-time are seen between steps
	// (OnStep), which saves a checkpoint with the loop's state and stops
	// Fit; Fit itself is never cancelled, so the state saved is always that
	// of a whole step.
	sig, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	go func() {
		// After the first signal, which stops training after its step,
		// a second one ends the program.
		<-sig.Done()
		cancel()
	}()
	var deadline time.Time
	if o.maxTime > 0 {
		deadline = time.Now().Add(o.maxTime)
	}
	save := func(step int, sec float64, tc *train.Checkpoint) error {
		st := &runState{Step: step, Seconds: sec, Params: make([]float64, model.NumParams()), Base: base, Train: tc, Settings: o.settings()}
		model.Params(st.Params)
		return saveCheckpoint(ckpt, st)
	}
	if done < o.iters {
		segStart := time.Now()
		lastLog := time.Now()
		var objSum float64
		var objN int
		interrupted := false
		res, err := train.Fit(context.Background(), model, x, y, train.Config{
			MaxSteps:  o.iters - base,
			BatchSize: o.batch,
			Schedule:  offset{train.StepDecay{Initial: o.lr, Factor: o.decay, Every: o.decayEvery}, base},
			Seed:      o.seed + uint64(base),
			Resume:    resume,
			Logf:      logger,
			OnStep: func(si train.StepInfo) error {
				step := base + si.Step
				objSum += si.Objective
				objN++
				if step%o.logEvery == 0 {
					el := time.Since(lastLog).Seconds()
					logger("step %d  ELBO/N %.4f  rate %.2g  %.2f s/iter", step, objSum/float64(objN)/float64(len(y)), si.Rate, el/float64(objN))
					objSum, objN = 0, 0
					lastLog = time.Now()
				}
				interrupted = sig.Err() != nil || testInterruptAt == step
				timeUp := !deadline.IsZero() && time.Now().After(deadline)
				if step%o.checkpoint == 0 || interrupted || timeUp || step == o.iters {
					ck := si.Checkpoint()
					if err := save(step, trainSec+time.Since(segStart).Seconds(), &ck); err != nil {
						return err
					}
				}
				if interrupted || timeUp {
					return train.ErrStop
				}
				return nil
			},
		})
		cancel() // a signal during the evaluation ends the program: the checkpoint is saved
		trainSec += time.Since(segStart).Seconds()
		steps := base + res.Steps - done // steps taken by this process
		done = base + res.Steps
		if err != nil {
			return done, trainSec, err // the last checkpoint stays
		}
		if interrupted {
			logger("interrupted at step %d; checkpoint saved", done)
			return done, trainSec, errInterrupted
		}
		logger("trained %d steps (%d in this process, %.2f s/iter)", done, steps, time.Since(segStart).Seconds()/math.Max(1, float64(steps)))
	}

	return done, trainSec, nil
}

// samples is the number of Monte Carlo samples r's evaluation averaged
// (rows without it used -samples' default, 5, for deep models).
// evaluate returns the accuracy and mean log-likelihood of model on the
// training images xe, ye and the test images xt, yt, in batches of 250
// (what solvegp classify does by default), and logs them.
func evaluate(model *convgp.Deep, xe *mat.Dense, ye []float64, xt *mat.Dense, yt []float64, samples int, logger func(string, ...any)) (trAcc, trLL, teAcc, teLL float64, err error) {
	te := time.Now()
	if trAcc, trLL, err = model.Evaluate(xe, ye, samples, 250); err != nil {
		return
	}
	if teAcc, teLL, err = model.Evaluate(xt, yt, samples, 250); err != nil {
		return
	}
	logger("evaluated in %v: train acc %.2f%% LL %.4f, test acc %.2f%% LL %.4f", time.Since(te).Round(time.Second), 100*trAcc, trLL, 100*teAcc, teLL)
	return
}

// evalCount is the number of images an evaluation of the first want of n
// images takes (want 0: all).
func evalCount(want, n int) int {
	if want > 0 && want < n {
		return want
	}
	return n
}

// fashionSizes returns the numbers of training and test images of the
// Fashion-MNIST files in dir, from their headers.
func fashionSizes(dir string) (train, test int, err error) {
	var n [2]int
	for i, base := range []string{"train-images-idx3-ubyte", "t10k-images-idx3-ubyte"} {
		path := filepath.Join(dir, base+".gz")
		if _, err := os.Stat(path); err != nil {
			path = filepath.Join(dir, base)
		}
		dims, err := dataset.IDXDims(path)
		if err != nil {
			return 0, 0, err
		}
		n[i] = dims[0]
	}
	return n[0], n[1], nil
}

func (r Result) samples() int {
	switch {
	case r.Samples > 0:
		return r.Samples
	case r.Layers == 1:
		return 1
	}
	return 5
}

// evaluation describes the images and samples of an evaluation.
func evaluation(testN, trainN, samples int) string {
	unit := "samples"
	if samples == 1 {
		unit = "sample"
	}
	return fmt.Sprintf("%d test images, %d training images and %d %s", testN, trainN, samples, unit)
}

// reevaluate evaluates the finished run o, whose rows earlier evaluated it
// otherwise, from its saved model on the training images xe, ye and the
// test images xt, yt with the given samples, as run would have at its
// end, and appends the row (a copy of the last earlier one with the new
// evaluation). The model file must hold the last row's steps and the
// run's settings; without it the error says what to do.
func reevaluate(o options, earlier []Result, xe *mat.Dense, ye []float64, xt *mat.Dense, yt []float64, samples int, logger func(string, ...any)) error {
	resultsPath := filepath.Join(o.out, "results.jsonl")
	last := earlier[len(earlier)-1]
	var had []string
	for _, r := range earlier {
		had = append(had, evaluation(r.TestN, r.TrainN, r.samples()))
	}
	asked := evaluation(len(yt), len(ye), samples)
	modelPath := filepath.Join(o.out, o.name+".cgp")
	model, info, err := convgp.LoadModel(modelPath)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: %s holds this run evaluated on %s, not on the %s asked for, and its saved model %s is missing to evaluate it again: "+
			"ask for -test %d -train-eval %d -samples %d, or remove the run's rows from %s to evaluate its checkpoint again",
			o.name, resultsPath, strings.Join(had, "; "), asked, modelPath, last.TestN, last.TrainN, last.samples(), resultsPath)
	}
	if err != nil {
		return err
	}
	if st := info["settings"]; st != "" && st != o.settings() {
		return fmt.Errorf("%s: the saved model comes from a run with other settings: %s; use another -name or -out", modelPath, settingsDiff(st, o.settings()))
	}
	if info["steps"] != strconv.Itoa(last.Iters) {
		return fmt.Errorf("%s: the saved model holds step %s, the last row of %s in %s step %d; remove the run's rows to evaluate its checkpoint again",
			modelPath, info["steps"], o.name, resultsPath, last.Iters)
	}
	if err := model.SetThreads(o.threads); err != nil {
		return err
	}
	logger("%s: in %s evaluated on %s; evaluating its saved model %s (step %d) on %s", o.name, resultsPath, strings.Join(had, "; "), modelPath, last.Iters, asked)
	trAcc, trLL, teAcc, teLL, err := evaluate(model, xe, ye, xt, yt, samples, logger)
	if err != nil {
		return err
	}
	row := last
	row.TrainN, row.TestN, row.Samples, row.Reevaluated = len(ye), len(yt), samples, true
	row.TrainAcc, row.TrainLL, row.TestAcc, row.TestLL = trAcc, trLL, teAcc, teLL
	row.Revision, row.Finished = benchutil.Revision(), time.Now().UTC().Format(time.RFC3339)
	if err := appendResult(resultsPath, row); err != nil {
		return err
	}
	return writeTable(o.out)
}

// writeTable rewrites dir/results.md from dir/results.jsonl.
func writeTable(dir string) error {
	rows, err := readResults(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, "results.md"), []byte(markdown(rows)), 0o644)
}

// testInterruptAt, when a test sets it, interrupts training after that
// step as a signal would.
var testInterruptAt int

// settings describes the options that decide what training computes (the
// model, its initialization, the data and the schedule, but not -iters,
// which a resumed run may raise, nor output, evaluation and thread
// options); a checkpoint is only resumed with the same settings.
func (o options) settings() string {
	s := o
	s.iters, s.checkpoint, s.trainN, s.testN, s.samples, s.threads, s.logEvery = 0, 0, 0, 0, 0, 0, 0
	s.data, s.out, s.name, s.cpuProfile = "", "", "", ""
	s.maxTime, s.tableOnly = 0, false
	str := fmt.Sprintf("%+v", s)
	if o.outputMean == "" { // as the settings of runs from before the field existed
		str = strings.TrimSuffix(str, " outputMean:}") + "}"
	}
	return str
}

// offset shifts a schedule by the steps already taken before a resume.
type offset struct {
	s    train.Schedule
	done int
}

func (o offset) Rate(step int) float64 { return o.s.Rate(step + o.done) }

// runState is what a checkpoint holds: the steps done, the training wall
// time, the model's parameters and, from the second format on, the
// training loop's state. Train's step and epoch counts are those of the
// Fit call that began at step Base (its seed and schedule offset).
type runState struct {
	Step    int
	Seconds float64
	Params  []float64
	Base    int
	Train   *train.Checkpoint // nil: resume with a fresh Adam state
	// Settings is options.settings of the run ("" in checkpoints from
	// before it was recorded, which are resumed unchecked).
	Settings string
}

// Checkpoint formats: package checkpoint's, with a runState, is the one
// written. The earlier two are still read: v1 is the magic, the step, the
// seconds and the parameters in little-endian binary; v2 is the magic and
// a gob-encoded runState.
const (
	ckptProgram = "bench/convgp"
	ckptMagicV1 = "convgp-ckpt-v1\n"
	ckptMagic   = "convgp-ckpt-v2\n"
)

// saveCheckpoint writes st to path atomically (a crash leaves the earlier
// checkpoint or the new one, never a torn file), encoding it straight into
// the file: at M = 1000 + 1000 a checkpoint is 240 MB.
func saveCheckpoint(path string, st *runState) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		return checkpoint.Write(w, ckptProgram, st)
	})
}

// loadCheckpoint reads a checkpoint of any of the formats.
func loadCheckpoint(path string) (*runState, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	if head, _ := r.Peek(len(checkpoint.Magic)); checkpoint.Is(head) {
		var st runState
		if err := checkpoint.Read(r, ckptProgram, &st); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return checkRunState(path, &st)
	}
	magic := make([]byte, len(ckptMagic))
	if _, err := io.ReadFull(r, magic); err != nil {
		return nil, fmt.Errorf("%s: not a checkpoint", path)
	}
	switch string(magic) {
	case ckptMagic:
		var st runState
		if err := gob.NewDecoder(r).Decode(&st); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return checkRunState(path, &st)
	case ckptMagicV1:
		var st runState
		var step, n int64
		if err := binary.Read(r, binary.LittleEndian, &step); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if err := binary.Read(r, binary.LittleEndian, &st.Seconds); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if err := binary.Read(r, binary.LittleEndian, &n); err != nil || n < 0 || n > 1<<34 || step < 0 {
			return nil, fmt.Errorf("%s: bad header", path)
		}
		st.Params = make([]float64, n)
		if err := binary.Read(r, binary.LittleEndian, st.Params); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		st.Step, st.Base = int(step), int(step)
		return &st, nil
	}
	return nil, fmt.Errorf("%s: not a checkpoint", path)
}

// checkRunState returns st, or an error if its counts are inconsistent.
func checkRunState(path string, st *runState) (*runState, error) {
	if st.Step < 0 || st.Base < 0 || st.Base > st.Step || (st.Train != nil && st.Base+st.Train.Steps != st.Step) {
		return nil, fmt.Errorf("%s: inconsistent checkpoint (step %d, base %d)", path, st.Step, st.Base)
	}
	return st, nil
}

func readResults(path string) ([]Result, error) {
	rows, skipped, err := benchutil.ReadJSONL[Result](path)
	if err != nil {
		return nil, err
	}
	if skipped > 0 {
		fmt.Fprintf(os.Stderr, "convgp: %s: ignoring an incomplete last line\n", path)
	}
	return rows, nil
}

// appendResult appends r to the JSON-lines file at path (an incomplete
// last line, the trace of an interrupted write, is dropped first).
func appendResult(path string, r Result) error { return benchutil.AppendJSONL(path, r) }

// markdown renders the rows like the paper's Tables 1/4 (and 7–9), grouped
// by number of layers.
func markdown(rows []Result) string {
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Layers != rows[j].Layers {
			return rows[i].Layers < rows[j].Layers
		}
		return rows[i].M+rows[i].M2 < rows[j].M+rows[j].M2
	})
	runs := map[string]int{} // rows per run name: a run evaluated again has several
	for _, r := range rows {
		runs[r.Name]++
	}
	var b strings.Builder
	b.WriteString("Convolutional GPs (TICK output layer) on Fashion-MNIST\n\n")
	b.WriteString("| Layers | Model | M(+M2) | Hidden M(+M2) | Iterations | Train Acc | Train LL | Test Acc | Test LL | s/iter | Run |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		name := "SVGP"
		size := fmt.Sprint(r.M)
		hidden := "–"
		if r.Model == "solvegp" {
			name = "SOLVE-GP"
			size = fmt.Sprintf("%d+%d", r.M, r.M2)
		}
		if r.Layers > 1 {
			hidden = fmt.Sprint(r.HiddenM)
			if r.HiddenM2 > 0 {
				hidden += fmt.Sprintf("+%d", r.HiddenM2)
			}
		}
		run := r.Name
		if runs[r.Name] > 1 {
			run += fmt.Sprintf(" (%d test images)", r.TestN)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %d/%d | %.2f%% | %.3f | %.2f%% | %.3f | %.2f | %s |\n",
			r.Layers, name, size, hidden, r.Iters, r.Target, 100*r.TrainAcc, r.TrainLL, 100*r.TestAcc, r.TestLL, r.SecPerIter, run)
	}
	b.WriteString("\nTrain metrics on the first train-eval images; batch size and threads per row in results.jsonl.\n")
	b.WriteString("Run names spell out the settings that differ from the paper's (see README.md).\n")
	return b.String()
}

// settingFlags maps the fields of options that settings records to their
// flags.
var settingFlags = map[string]string{
	"model": "-model", "m": "-m", "m2": "-m2", "hm": "-hidden-m", "hm2": "-hidden-m2", "layers": "-layers",
	"batch": "-batch", "lr": "-lr", "decay": "-decay", "decayEvery": "-decay-every", "seed": "-seed",
	"whiten": "-whiten", "noTICK": "-no-tick", "imagesLimit": "-train-images", "variance": "-variance",
	"lengthscale": "-lengthscale", "locLengthscale": "-loc-lengthscale", "eps": "-eps",
	"outLengthscale": "-output-lengthscale", "standardize": "-standardize", "linearMean": "-linear-mean",
	"hiddenVar": "-hidden-variance", "hiddenInit": "-hidden-init-var", "outputMean": "-output-mean",
}

var settingRE = regexp.MustCompile(`(\w+):(\S*)`)

// settingsDiff names the settings that differ between two options.settings
// strings, a checkpoint's and the run's, by their flags, each with the
// checkpoint's value and the one asked for ("not recorded" for a field one
// of them lacks, as a checkpoint from before it existed). Strings it
// cannot tell apart field by field are returned whole.
func settingsDiff(ckpt, run string) string {
	parse := func(s string) (keys []string, vals map[string]string) {
		vals = map[string]string{}
		for _, m := range settingRE.FindAllStringSubmatch(strings.Trim(s, "{}"), -1) {
			keys = append(keys, m[1])
			vals[m[1]] = m[2]
		}
		return keys, vals
	}
	ck, cv := parse(ckpt)
	rk, rv := parse(run)
	var diffs []string
	seen := map[string]bool{}
	for _, k := range append(rk, ck...) {
		if seen[k] {
			continue
		}
		seen[k] = true
		a, inC := cv[k]
		b, inR := rv[k]
		if inC && inR && a == b {
			continue
		}
		if !inC {
			a = "(not recorded)"
		}
		if !inR {
			b = "not recorded"
		}
		name := settingFlags[k]
		if name == "" {
			name = k
		}
		diffs = append(diffs, fmt.Sprintf("%s %s (asked: %s)", name, a, b))
	}
	if len(diffs) == 0 {
		return fmt.Sprintf("checkpoint %s, asked %s", ckpt, run)
	}
	return strings.Join(diffs, ", ")
}
