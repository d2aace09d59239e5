package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
	"github.com/solvegp/solvegp/gp/train"
)

// epochRecord is one point of the training curves.
type epochRecord struct {
	Epoch     int      `json:"epoch"`
	Steps     int      `json:"steps"`
	Bound     *float64 `json:"bound,omitempty"` // mean mini-batch bound; absent if every step was rejected
	ValidLL   *float64 `json:"valid_log_lik,omitempty"`
	ValidRMSE *float64 `json:"valid_rmse,omitempty"`
	ValidAcc  *float64 `json:"valid_accuracy,omitempty"`
	Seconds   float64  `json:"seconds"`
}

// trainSummary is what train reports.
type trainSummary struct {
	Model       string   `json:"model"`
	Kind        string   `json:"kind"`
	M           int      `json:"m"`
	M2          int      `json:"m2"`
	NTrain      int      `json:"n_train"`
	NValid      int      `json:"n_valid"`
	Steps       int      `json:"steps"`
	Epochs      int      `json:"epochs"`
	Stop        string   `json:"stop"`
	Interrupted bool     `json:"interrupted"`
	Bound       *float64 `json:"train_bound,omitempty"`
	// BoundMC says the bound is a Monte Carlo estimate (a sampled
	// likelihood): eval's estimate on the same data differs a little.
	BoundMC   bool     `json:"train_bound_monte_carlo,omitempty"`
	BestEpoch *int     `json:"best_epoch,omitempty"`
	Valid     *metrics `json:"valid,omitempty"`
	Rejected  int      `json:"rejected_steps"`
	// Optimizer is "lbfgs" for -collapsed (Steps then counts L-BFGS
	// iterations, Evaluations the bound evaluations and FailedEvals those
	// the line search had to step back from), empty for mini-batch
	// training.
	Optimizer   string        `json:"optimizer,omitempty"`
	Evaluations int           `json:"evaluations,omitempty"`
	FailedEvals int           `json:"failed_evaluations,omitempty"`
	Natural     float64       `json:"natural_step,omitempty"`
	Seconds     float64       `json:"seconds"`
	History     []epochRecord `json:"history"`
	Plot        string        `json:"plot,omitempty"`
}

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("train", "[flags] data.csv[.gz]",
		`Trains an SVGP, ODVGP or SOLVE-GP model on a CSV or gzip CSV file (one row per
observation, the target in the last column unless -target says otherwise, an
optional header line) and saves it as a model file. Inputs, and for the
Gaussian likelihood the targets, are standardized with statistics of the
training rows. Z and O are placed by k-means. Training uses Adam on shuffled
mini-batches, or with -natural natural-gradient steps for q(u) (and q(v⊥))
and Adam for the rest; a progress bar on stderr shows a moving average of
the mini-batch bound ("avg bound") and the time left. Ctrl-C (or SIGTERM) stops training and saves the best model so
far (exit code 130); before the first training step has finished it saves
nothing and leaves an existing -out file as it was. With -checkpoint FILE the
training state (the parameters, Adam's moments, the position in the batch
order, the best validated parameters, the random stream the softmax
likelihood's Monte Carlo samples draw from) is saved to FILE every
-checkpoint-every and on Ctrl-C, after a whole step; running the same command
again (same data, same training flags; -epochs, -steps, -patience and
-threads may change) continues from it exactly, and FILE is removed when
training ends normally. (With other -threads the results differ in
rounding; a checkpoint from an older solvegp, which did not keep the random
stream, resumes with fresh Monte Carlo draws.) The
parameterization is whitened unless -whiten=false.

With -collapsed (Gaussian likelihood; -model svgp or solvegp) the model is
instead fitted on the whole training set at once by L-BFGS on the collapsed
bound: Titsias' SGPR bound for svgp, the collapsed SOLVE-GP bound with the
optimal q(v⊥) for solvegp, over the kernel, the noise and Z and O, for at
most -iters iterations. -bound tighter fits instead the tighter collapsed
bound of Titsias (2025) and Bui et al. (2025), whose trace term
−½Σ log(1 + dₙ/σ²) replaces −Σ dₙ/(2σ²) (dₙ the prior variance left at
xₙ after Z and O); its optimal q(u) and q(v⊥) are those of the standard bound
and the model file records which bound was fitted. Each iteration costs O(N·(M+M2)² + (M+M2)³), so it
suits N up to about 10⁵. The model saved is the equivalent SVGP or SOLVE-GP
at the optimal q(u) and q(v⊥), unwhitened; Ctrl-C saves it at the best
bound so far (exit code 130). The mini-batch flags (-epochs, -batch, -lr,
-natural, -patience, -checkpoint, -plot, ...) are errors with it; -valid holds
out rows that the fit does not see and reports the final model's metrics on
them (there is no best-model keeping).`, stderr)
	var spec modelSpec
	var csv csvFlags
	spec.register(fs)
	csv.register(fs)
	epochs := fs.Int("epochs", 100, "passes over the training data")
	maxSteps := fs.Int("steps", 0, "stop after this many optimization steps (0: no limit)")
	batch := fs.Int("batch", 1024, "mini-batch size (0: full batch)")
	lr := fs.Float64("lr", 0.01, "Adam learning rate")
	decay := fs.Float64("decay", 1, "multiply the learning rate by this factor every -decay-every steps (the paper's convolutional runs: 0.25)")
	decayEvery := fs.Int("decay-every", 0, "steps between learning-rate decays (0: constant rate)")
	natural := fs.Float64("natural", 0, "natural-gradient step size in (0, 1] for q(u) and SOLVE-GP's q(v⊥), with Adam on the other parameters (0: Adam on everything); with a Gaussian likelihood and -batch 0, 1 puts q at its optimum at every step, with mini-batches try 0.1")
	naturalFresh := fs.Bool("natural-fresh", false, "with -natural: evaluate the bound again after each natural step for Adam's gradient (twice the cost per step; steadier at a large -lr)")
	validFrac := fs.Float64("valid", 0, "fraction of the rows held out for validation (enables best-model keeping)")
	patience := fs.Int("patience", 0, "stop after this many epochs without validation improvement (0: never)")
	out := fs.String("out", "model.json", "model file to write")
	plotPath := fs.String("plot", "", "write training curves (bound and validation metrics per epoch) to this PNG")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	quiet := fs.Bool("quiet", false, "no progress bar")
	ckPath := fs.String("checkpoint", "", "save the training state to this file and resume from it if it exists (see above)")
	ckEvery := fs.Duration("checkpoint-every", time.Minute, "least wall time between two checkpoints")
	useCollapsed := fs.Bool("collapsed", false, "fit the collapsed bound by full-batch L-BFGS (see above)")
	iters := fs.Int("iters", 1000, "with -collapsed: most L-BFGS iterations")
	boundName := fs.String("bound", "standard", "with -collapsed: the collapsed bound, standard or tighter")
	if done, code := parse(fs, args); done {
		return code
	}
	if misplacedFlag(fs, args, "the data file") {
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "solvegp train: need exactly one data file (see solvegp train -h)")
		return exitUsage
	}
	path := fs.Arg(0)
	if err := checkM2(fs, &spec); err != nil {
		fmt.Fprintf(stderr, "solvegp train: %v\n", err)
		return exitUsage
	}
	if err := spec.check(); err != nil {
		return fail(stderr, "train", err)
	}
	if err := checkCollapsedFlags(fs, &spec, *useCollapsed); err != nil {
		return fail(stderr, "train", err)
	}
	bound, err := collapsed.ParseBound(*boundName)
	if err != nil {
		return fail(stderr, "train", fmt.Errorf("-bound: %q is neither standard nor tighter", *boundName))
	}
	opts, err := csv.options()
	if err != nil {
		return fail(stderr, "train", err)
	}
	switch {
	case *epochs < 0 || *maxSteps < 0 || *epochs == 0 && *maxSteps == 0:
		return fail(stderr, "train", fmt.Errorf("-epochs %d, -steps %d: need a positive limit", *epochs, *maxSteps))
	case *batch < 0:
		return fail(stderr, "train", fmt.Errorf("-batch %d: must be non-negative", *batch))
	case !(*lr > 0) || math.IsInf(*lr, 0):
		return fail(stderr, "train", fmt.Errorf("-lr %g: must be positive and finite", *lr))
	case !(*validFrac >= 0 && *validFrac < 1):
		return fail(stderr, "train", fmt.Errorf("-valid %g: must be in [0, 1)", *validFrac))
	case !(*decay > 0 && *decay <= 1):
		return fail(stderr, "train", fmt.Errorf("-decay %g: must be in (0, 1]", *decay))
	case *decayEvery < 0:
		return fail(stderr, "train", fmt.Errorf("-decay-every %d: must be non-negative", *decayEvery))
	case !(*natural >= 0 && *natural <= 1):
		return fail(stderr, "train", fmt.Errorf("-natural %g: must be in [0, 1]", *natural))
	case *naturalFresh && *natural == 0:
		return fail(stderr, "train", errors.New("-natural-fresh needs -natural"))
	case *patience < 0:
		return fail(stderr, "train", fmt.Errorf("-patience %d: must be non-negative", *patience))
	case *patience > 0 && *validFrac == 0:
		return fail(stderr, "train", errors.New("-patience needs a validation set (-valid)"))
	case *out == "":
		return fail(stderr, "train", errors.New("-out is empty"))
	case *ckEvery <= 0:
		return fail(stderr, "train", fmt.Errorf("-checkpoint-every %v: must be positive", *ckEvery))
	case *iters < 1:
		return fail(stderr, "train", fmt.Errorf("-iters %d: must be positive", *iters))
	}
	if err := distinctFiles(namedFile{what: "the data file", path: path}, namedFile{what: "-out", path: *out}, namedFile{what: "-plot", path: *plotPath},
		namedFile{what: "-checkpoint", path: *ckPath}); err != nil {
		return fail(stderr, "train", err)
	}
	// Outputs go where they are asked to, or the run stops before it
	// trains rather than after.
	for _, f := range []namedFile{{what: "-out", path: *out}, {what: "-plot", path: *plotPath}, {what: "-checkpoint", path: *ckPath}} {
		if err := writableDir(f); err != nil {
			return fail(stderr, "train", err)
		}
	}

	// Ctrl-C before the first training step leaves -out alone: loading
	// and k-means are abandoned as soon as the context is cancelled.
	var tab *data.Table
	if err := interruptible(ctx, func() (err error) {
		tab, err = data.LoadCSV(path, opts)
		return err
	}); err != nil {
		if ctx.Err() != nil {
			return notSaved(stderr, *out, "while reading "+path)
		}
		return fail(stderr, "train", err)
	}
	n, _ := tab.X.Dims()
	spec.names = tab.Names
	lik, err := spec.likelihood(tab.Y)
	if err != nil {
		return fail(stderr, "train", err)
	}
	if err := checkLabels(path, tab, lik); err != nil {
		return fail(stderr, "train", err)
	}
	if err := checkDataScale(path, tab); err != nil {
		return fail(stderr, "train", err)
	}
	split, err := data.RandomSplit(n, 0, *validFrac, spec.seed)
	if err != nil {
		return fail(stderr, "train", fmt.Errorf("%s: %v", path, err))
	}
	xTrain, yTrain, err := data.Rows(tab.X, tab.Y, split.Train)
	if err != nil {
		return fail(stderr, "train", err)
	}
	var xValid *mat.Dense
	var yValid []float64
	if *validFrac > 0 && len(split.Valid) == 0 {
		return fail(stderr, "train", fmt.Errorf("-valid %g holds out no row of %d; use a larger fraction or none", *validFrac, n))
	}
	if len(split.Valid) > 0 {
		if xValid, yValid, err = data.Rows(tab.X, tab.Y, split.Valid); err != nil {
			return fail(stderr, "train", err)
		}
	}
	if len(yTrain) < spec.m+spec.m2 {
		return fail(stderr, "train", fmt.Errorf("%s: %d training rows (of %d, after holding out %d for validation), fewer than the %d inducing points asked for (-m %d, -m2 %d)",
			path, len(yTrain), n, len(yValid), spec.m+spec.m2, spec.m, spec.m2))
	}
	var std *data.Standardizer
	if spec.standardizesY() {
		std, err = data.FitStandardizer(xTrain, yTrain)
	} else {
		std, err = data.FitStandardizer(xTrain, nil)
	}
	if err != nil {
		return fail(stderr, "train", err)
	}
	xs := mat.DenseCopyOf(xTrain)
	ys := append([]float64(nil), yTrain...)
	if err := std.TransformX(xs); err != nil {
		return fail(stderr, "train", err)
	}
	std.TransformY(ys)
	if *useCollapsed {
		return trainCollapsed(ctx, &collapsedRun{spec: &spec, lik: lik.(*likelihood.Gaussian), xs: xs, ys: ys,
			xTrain: xTrain, yTrain: yTrain, xValid: xValid, yValid: yValid, std: std, names: tab.Names,
			args: args, out: *out, iters: *iters, bound: bound, asJSON: *asJSON, quiet: *quiet}, stdout, stderr)
	}
	var model *gp.Model
	if err := interruptible(ctx, func() (err error) {
		model, err = spec.build(xs, lik)
		return err
	}); err != nil {
		if ctx.Err() != nil {
			return notSaved(stderr, *out, "while placing the inducing points")
		}
		return fail(stderr, "train", fmt.Errorf("%s: %v", path, err))
	}
	bundle := newBundle(model, std, tab.Names)

	var history []epochRecord
	var resume *train.Checkpoint
	resumedSteps := 0 // steps taken before this process started
	lastSaved := -1   // the step of the last checkpoint written
	var fingerprint [32]byte
	priorSeconds := 0.0
	if *ckPath != "" {
		fingerprint = runFingerprint(fs, tab)
		ck, err := loadTrainCheckpoint(*ckPath)
		if err != nil {
			return fail(stderr, "train", err)
		}
		if ck != nil {
			if ck.Fingerprint != fingerprint {
				return fail(stderr, "train", fingerprintMismatch(*ckPath, ck.Flags, trainingFlags(fs)))
			}
			if len(ck.Params) != model.NumParams() {
				return fail(stderr, "train", fmt.Errorf("%s: checkpoint has %d parameters, the model %d", *ckPath, len(ck.Params), model.NumParams()))
			}
			if err := model.SetParams(ck.Params); err != nil {
				return fail(stderr, "train", fmt.Errorf("%s: %v", *ckPath, err))
			}
			resume, history, priorSeconds = &ck.Train, ck.History, ck.Seconds
			resumedSteps, lastSaved = ck.Train.Steps, ck.Train.Steps
			fmt.Fprintf(stderr, "solvegp train: resuming from %s after %d steps\n", *ckPath, ck.Train.Steps)
		}
	}
	bs := *batch
	if bs == 0 || bs > len(ys) {
		bs = len(ys)
	}
	stepsPerEpoch := (len(ys) + bs - 1) / bs
	total := *epochs * stepsPerEpoch
	if *maxSteps > 0 && (total == 0 || *maxSteps < total) {
		total = *maxSteps
	}
	nEpochs := *epochs
	if nEpochs == 0 {
		nEpochs = (total + stepsPerEpoch - 1) / stepsPerEpoch
	}
	var bar *progress
	if !*quiet {
		bar = newProgress(stderr, total, nEpochs)
		bar.base = resumedSteps
	}
	var running float64
	seeded := false // running holds a value of this process
	lastSave := time.Now()
	var ckErr error // a failed checkpoint write, reported after training
	saveCk := func(step int, elapsed time.Duration, state func() train.Checkpoint) {
		ck := &trainCheckpoint{Version: trainCheckpointVersion, Fingerprint: fingerprint, Flags: trainingFlags(fs), Params: make([]float64, model.NumParams()),
			Train: state(), History: append([]epochRecord(nil), history...), Seconds: priorSeconds + elapsed.Seconds()}
		model.Params(ck.Params)
		ckErr = saveTrainCheckpoint(*ckPath, ck)
		if ckErr == nil {
			lastSaved = step
		}
		lastSave = time.Now()
	}
	cfg := train.Config{
		Epochs:    *epochs,
		MaxSteps:  *maxSteps,
		BatchSize: *batch,
		Schedule:  schedule(*lr, *decay, *decayEvery),
		Seed:      spec.seed,
		Patience:  *patience,
		// Natural-gradient steps: one evaluation per step unless
		// -natural-fresh.
		NaturalStep:           *natural,
		NaturalSharedGradient: *natural > 0 && !*naturalFresh,
		OnStep: func(s train.StepInfo) error {
			if !seeded {
				running, seeded = s.Objective, true
			} else {
				running = 0.95*running + 0.05*s.Objective
			}
			bar.update(s.Step, s.Epoch, running, s.Elapsed)
			if *ckPath != "" {
				// With -checkpoint, Fit is not cancelled: Ctrl-C is seen
				// here (or at an epoch's end), after a whole step, so
				// that the checkpoint holds the state Fit would continue
				// from.
				stop := ctx.Err() != nil
				if stop || time.Since(lastSave) >= *ckEvery {
					saveCk(s.Step, s.Elapsed, s.Checkpoint)
				}
				if stop {
					return train.ErrStop
				}
			}
			return nil
		},
		OnEpoch: func(e train.EpochInfo) error {
			rec := epochRecord{Epoch: e.Epoch + 1, Steps: e.Steps, Seconds: priorSeconds + e.Elapsed.Seconds()}
			if !math.IsNaN(e.Objective) {
				rec.Bound = ptr(e.Objective)
			}
			if e.Validated {
				rec.ValidLL = ptr(e.Score)
				if v, ok := e.Metrics["rmse"]; ok {
					rec.ValidRMSE = ptr(v)
				}
				if v, ok := e.Metrics["accuracy"]; ok {
					rec.ValidAcc = ptr(v)
				}
			}
			history = append(history, rec)
			if *ckPath != "" && ctx.Err() != nil {
				saveCk(e.Steps, e.Elapsed, e.Checkpoint)
				return train.ErrStop
			}
			return nil
		},
		Logf: func(format string, args ...any) {
			bar.done()
			fmt.Fprintf(stderr, "solvegp train: "+format+"\n", args...)
		},
	}
	if xValid != nil {
		cfg.Validate = func() (float64, map[string]float64, error) {
			m, err := evaluate(bundle, xValid, yValid, false)
			if err != nil {
				return math.NaN(), nil, err
			}
			named := map[string]float64{}
			if m.RMSE != nil {
				named["rmse"] = *m.RMSE
			}
			if m.Accuracy != nil {
				named["accuracy"] = *m.Accuracy
			}
			return m.LogLik, named, nil
		}
	}
	start := time.Now()
	if testHookBeforeFit != nil {
		testHookBeforeFit()
	}
	cfg.Resume = resume
	fitCtx := ctx
	if *ckPath != "" {
		if ctx.Err() != nil {
			return notSaved(stderr, *out, "before the first training step")
		}
		fitCtx = context.WithoutCancel(ctx) // see OnStep
	}
	res, fitErr := train.Fit(fitCtx, model, xs, ys, cfg)
	bar.done()
	interrupted := errors.Is(fitErr, context.Canceled) || errors.Is(fitErr, context.DeadlineExceeded) ||
		fitErr == nil && res.Reason == train.Stopped && ctx.Err() != nil // stopped by OnStep for a checkpoint
	if ckErr != nil {
		fmt.Fprintf(stderr, "solvegp train: warning: checkpoint %s not written: %v\n", *ckPath, ckErr)
	}
	if interrupted && res.Steps == resumedSteps {
		return notSaved(stderr, *out, "before the first training step")
	}
	if !interrupted && res.Steps == 0 && (fitErr == nil || errors.Is(fitErr, train.ErrDiverged)) {
		// Every step was rejected (non-finite bound or gradient, or
		// parameters the model refused): the model is the untrained one,
		// not a result.
		why := ""
		if fitErr != nil {
			why = ": " + fitErr.Error()
		}
		return fail(stderr, "train", fmt.Errorf("no training step succeeded (%d rejected; try a smaller -lr or other -variance, -lengthscale or -noise)%s; %s not written", res.Rejected, why, *out))
	}
	if fitErr != nil && !interrupted && res.Steps == 0 {
		return fail(stderr, "train", fitErr)
	}

	sum := trainSummary{
		Model: *out, Kind: model.Kind().String(), M: spec.m, M2: spec.m2,
		NTrain: len(ys), NValid: len(yValid), Steps: res.Steps, Epochs: res.Epochs,
		Stop: stopReason(res.Reason, interrupted), Interrupted: interrupted, Rejected: res.Rejected, Natural: *natural,
		History: history,
	}
	if res.BestEpoch >= 0 && xValid != nil {
		be := res.BestEpoch + 1
		sum.BestEpoch = &be
	}
	if !interrupted {
		if b, err := fullBound(bundle, xTrain, yTrain); err == nil {
			sum.Bound, sum.BoundMC = &b, sampledLikelihood(bundle)
		}
	}
	if xValid != nil {
		if m, err := evaluate(bundle, xValid, yValid, false); err == nil {
			sum.Valid = &m
		}
	}
	bundle.Meta.Info = trainInfo(args, stopReason(res.Reason, interrupted), sum.Bound, map[string]string{"steps": strconv.Itoa(res.Steps)})
	if err := modelfile.Save(*out, bundle); err != nil {
		return fail(stderr, "train", err)
	}
	switch {
	case *plotPath == "":
	case interrupted && len(history) == 0:
		fmt.Fprintf(stderr, "solvegp train: warning: interrupted during the first epoch; no training curves to plot, %s not written\n", *plotPath)
	default:
		if err := plotCurves(*plotPath, history, model.Kind().String()); err != nil {
			return fail(stderr, "train", err)
		}
		sum.Plot = *plotPath
	}
	if *ckPath != "" && !interrupted && fitErr == nil {
		// Training ended normally and the model is saved: the checkpoint
		// has served its purpose.
		if err := os.Remove(*ckPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(stderr, "solvegp train: warning: %v\n", err)
		}
	}
	sum.Seconds = priorSeconds + time.Since(start).Seconds() // with the training time before a resume
	if err := writeTrainSummary(stdout, &sum, *asJSON); err != nil {
		return fail(stderr, "train", err)
	}
	switch {
	case interrupted:
		fmt.Fprintf(stderr, "solvegp train: interrupted after %d steps; saved the %s model to %s\n", res.Steps, keptWhich(res.BestEpoch), *out)
		switch {
		case *ckPath == "":
		case lastSaved == res.Steps:
			fmt.Fprintf(stderr, "solvegp train: training state in %s: run the same command to continue\n", *ckPath)
		case lastSaved >= 0:
			fmt.Fprintf(stderr, "solvegp train: training state after step %d in %s: run the same command to continue from there\n", lastSaved, *ckPath)
		}
		return exitInterrupted
	case fitErr != nil:
		fmt.Fprintf(stderr, "solvegp train: %v\nsolvegp train: saved the last good parameters to %s\n", fitErr, *out)
		return exitError
	}
	return exitOK
}

// newBundle wraps a trained model and the standardizer of its data with,
// when the data file had a header, the names of its columns (names: the
// inputs' then the target's, as data.Table.Names).
func newBundle(model *gp.Model, std *data.Standardizer, names []string) *modelfile.Bundle {
	b := &modelfile.Bundle{Model: model, Standardizer: std}
	if names != nil {
		names = append([]string(nil), names...)
		d := len(names) - 1
		b.Meta.InputNames, b.Meta.TargetName = names[:d], names[d]
	}
	return b
}

// trainInfo returns the Meta.Info that train records in a model file: the
// command line, why training stopped, when it finished, the bound on the
// training data if known, and extra entries (the number of steps or
// iterations).
func trainInfo(args []string, stop string, bound *float64, extra map[string]string) map[string]string {
	info := map[string]string{
		"created_by": "solvegp train",
		"args":       strings.Join(args, " "),
		"stop":       stop,
		"finished":   time.Now().UTC().Format(time.RFC3339),
	}
	if bound != nil {
		info["train_bound"] = strconv.FormatFloat(*bound, 'g', -1, 64)
	}
	for k, v := range extra {
		info[k] = v
	}
	return info
}

// stopReason names why training stopped; a stop for a checkpoint on
// Ctrl-C is reported as the cancellation it is.
func stopReason(r train.StopReason, interrupted bool) string {
	if interrupted {
		return train.Canceled.String()
	}
	return r.String()
}

// testHookBeforeFit, when set by a test, runs just before training starts.
var testHookBeforeFit func()

// interruptible runs f and returns its error, or the context's error as
// soon as ctx is done; f is then left to finish in the background and its
// results must not be used.
func interruptible(ctx context.Context, f func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// notSaved reports an interruption before any training step was taken,
// when there is nothing worth saving, and returns exitInterrupted.
func notSaved(stderr io.Writer, out, when string) int {
	kept := "no model file was written"
	if _, err := os.Stat(out); err == nil {
		kept = "the existing " + out + " is untouched"
	}
	fmt.Fprintf(stderr, "solvegp train: interrupted %s; nothing was trained, so nothing was saved (%s)\n", when, kept)
	return exitInterrupted
}

// keptWhich says which parameters Fit kept: the best validated ones when a
// validation has run (bestEpoch is 0-based, −1 if none), else the latest.
func keptWhich(bestEpoch int) string {
	if bestEpoch >= 0 {
		return fmt.Sprintf("best validated (epoch %d)", bestEpoch+1)
	}
	return "latest"
}

// writeTrainSummary writes the summary as indented JSON or as text.
func writeTrainSummary(w io.Writer, s *trainSummary, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	printTrainSummary(w, s)
	return nil
}

func printTrainSummary(w io.Writer, s *trainSummary) {
	fmt.Fprintf(w, "model      %s (M = %d, M2 = %d) saved to %s\n", s.Kind, s.M, s.M2, s.Model)
	fmt.Fprintf(w, "data       %d training rows, %d validation rows\n", s.NTrain, s.NValid)
	if s.Optimizer == "lbfgs" {
		fmt.Fprintf(w, "training   L-BFGS on the collapsed bound, %d iterations (%d evaluations), %.1f s, stop: %s", s.Steps, s.Evaluations, s.Seconds, s.Stop)
		if s.FailedEvals > 0 {
			fmt.Fprintf(w, ", %d failed evaluations", s.FailedEvals)
		}
	} else {
		fmt.Fprintf(w, "training   %d steps, %d epochs, %.1f s, stop: %s", s.Steps, s.Epochs, s.Seconds, s.Stop)
	}
	if s.Natural > 0 {
		fmt.Fprintf(w, ", natural-gradient step %g", s.Natural)
	}
	if s.Rejected > 0 {
		fmt.Fprintf(w, ", %d rejected steps", s.Rejected)
	}
	fmt.Fprintln(w)
	if s.Bound != nil {
		fmt.Fprintf(w, "bound      %.6g (training data, standardized%s)\n", *s.Bound, mcNote(s.BoundMC))
	}
	if v := s.Valid; v != nil {
		fmt.Fprintf(w, "validation (original units) log-lik %.4f", v.LogLik)
		if v.RMSE != nil {
			fmt.Fprintf(w, "  RMSE %.4g", *v.RMSE)
		}
		if v.Accuracy != nil {
			fmt.Fprintf(w, "  accuracy %.4f", *v.Accuracy)
		}
		if s.BestEpoch != nil {
			fmt.Fprintf(w, "  (best epoch %d kept)", *s.BestEpoch)
		}
		fmt.Fprintln(w)
	}
	if s.Plot != "" {
		fmt.Fprintf(w, "curves     %s\n", s.Plot)
	}
}

// schedule returns a constant learning rate, or a step decay when every
// is positive and factor below 1.
func schedule(lr, factor float64, every int) train.Schedule {
	if every > 0 && factor < 1 {
		return train.StepDecay{Initial: lr, Factor: factor, Every: every}
	}
	return train.Constant(lr)
}
