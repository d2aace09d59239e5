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
	"sort"
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

// trainDescription is train's help text.
const trainDescription = `Trains an SVGP, ODVGP or SOLVE-GP model on a CSV or gzip CSV file (one row per
observation, the target in the last column unless -target says otherwise, an
optional header line) and saves it as a model file. Inputs, and for the
Gaussian likelihood the targets, are standardized with statistics of the
training rows. Z and O are placed by k-means or, with -init greedy, by greedy
selection of rows of largest variance. Training uses Adam on shuffled
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
parameterization is whitened unless -whiten=false. Several files or 'part-*.csv'
are stacked; -stream reads them shard by shard each epoch, never all at once
(-valid then holds out each row by a seeded hash of its place in the files,
scored in one pass per epoch; -checkpoint resumes as in memory). Without
-stream, files estimated to take more than half of the available memory
(MemAvailable) are streamed with a 100000-row buffer, and train says so.
-bound tighter (Gaussian, Bernoulli or Poisson likelihood) maximizes the tighter
bound of Titsias (2025) and Bui et al. (2025): the prior variance dₙ left at xₙ
after Z (and O for solvegp) is scaled by each point's best αₙ ≤ 1 at a cost of
½(αₙ − 1 − log αₙ) (Gaussian: −dₙ/(2σ²) becomes −½ log(1 + dₙ/σ²)); predictions
use q(u) as with the standard bound, and the model file records the bound. With
several -target columns (a multi-output model) an empty, NA or NaN cell (any
case) of a target column, or a Parquet null, is a missing target, which its
output's terms leave out; a row whose targets are all missing is an error naming
its line, and so is an empty input cell. -outputs separate trains one model per
target, with its own kernel, noise and inducing points (placed on the rows where
its target is observed).

With -collapsed (Gaussian likelihood; -model svgp or solvegp) the model is
instead fitted on the whole training set at once by L-BFGS on the collapsed
bound: Titsias' SGPR bound for svgp, the collapsed SOLVE-GP bound with the
optimal q(v⊥) for solvegp, over the kernel, the noise and Z and O, for at
most -iters iterations. -bound tighter fits instead the tighter collapsed
bound of Titsias (2025) and Bui et al. (2025), whose trace term
−½Σ log(1 + dₙ/σ²) replaces −Σ dₙ/(2σ²) (dₙ the prior variance left at
xₙ after Z and O); -bound blockdiag:B the block-diagonal bound of
Bui and Titsias (2025), −½Σ_b log det(I + C_b/σ²) over blocks of B nearby
points (C_b the residual covariance of block b), tighter still. Their optimal
q(u) and q(v⊥) are those of the standard bound and the model file records
which bound was fitted. Each iteration costs O(N·(M+M2)² + (M+M2)³), so it
suits N up to about 10⁵. The model saved is the equivalent SVGP or SOLVE-GP
at the optimal q(u) and q(v⊥), unwhitened; Ctrl-C saves it at the best
bound so far (exit code 130). The mini-batch flags (-epochs, -batch, -lr,
-natural, -patience, -checkpoint, -plot, ...) are errors with it; -valid holds
out rows that the fit does not see and reports the final model's metrics on
them (there is no best-model keeping).`

// trainFlags holds train's flags.
type trainFlags struct {
	fs                    *flag.FlagSet
	spec                  modelSpec
	csv                   csvFlags
	epochs, maxSteps      int
	batch                 int
	lr, decay             float64
	decayEvery            int
	natural               float64
	naturalFresh          bool
	validFrac             float64
	patience              int
	out, plotPath, ckPath string
	asJSON, quiet         bool
	ckEvery               time.Duration
	useCollapsed          bool
	iters                 int
	stream                int
	boundName             string
	bound                 collapsed.BoundKind
	blockSize             int // of -bound blockdiag:B
	outputs               string
	latent                int
}

// newTrainFlags registers train's flags, in the order -h lists them.
func newTrainFlags(stderr io.Writer) *trainFlags {
	f := &trainFlags{fs: newFlags("train", "[flags] data.csv[.gz]|.parquet ...", trainDescription, stderr)}
	fs := f.fs
	f.spec.register(fs)
	f.csv.register(fs)
	fs.IntVar(&f.epochs, "epochs", 100, "passes over the training data")
	fs.IntVar(&f.maxSteps, "steps", 0, "stop after this many optimization steps (0: no limit)")
	fs.IntVar(&f.batch, "batch", 1024, "mini-batch size (0: full batch)")
	fs.Float64Var(&f.lr, "lr", 0.01, "Adam learning rate")
	fs.Float64Var(&f.decay, "decay", 1, "multiply the learning rate by this factor every -decay-every steps (the paper's convolutional runs: 0.25)")
	fs.IntVar(&f.decayEvery, "decay-every", 0, "steps between learning-rate decays (0: constant rate)")
	fs.Float64Var(&f.natural, "natural", 0, "natural-gradient step size in (0, 1] for q(u) and SOLVE-GP's q(v⊥), with Adam on the other parameters (0: Adam on everything); with a Gaussian likelihood and -batch 0, 1 puts q at its optimum at every step, with mini-batches try 0.1")
	fs.BoolVar(&f.naturalFresh, "natural-fresh", false, "with -natural: evaluate the bound again after each natural step for Adam's gradient (twice the cost per step; steadier at a large -lr)")
	fs.Float64Var(&f.validFrac, "valid", 0, "fraction of the rows held out for validation (enables best-model keeping)")
	fs.IntVar(&f.patience, "patience", 0, "stop after this many epochs without validation improvement (0: never)")
	fs.StringVar(&f.out, "out", "model.json", "model file to write")
	fs.StringVar(&f.plotPath, "plot", "", "write training curves (bound and validation metrics per epoch) to this PNG")
	fs.BoolVar(&f.asJSON, "json", false, "print the summary as JSON")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	fs.StringVar(&f.ckPath, "checkpoint", "", "save the training state to this file and resume from it if it exists (see above)")
	fs.DurationVar(&f.ckEvery, "checkpoint-every", time.Minute, "least wall time between two checkpoints")
	fs.BoolVar(&f.useCollapsed, "collapsed", false, "fit the collapsed bound by full-batch L-BFGS (see above)")
	fs.IntVar(&f.iters, "iters", 1000, "with -collapsed: most L-BFGS iterations")
	fs.StringVar(&f.boundName, "bound", "standard", "the bound to maximize: standard, tighter (Titsias 2025; Gaussian, Bernoulli or Poisson likelihood) or, with -collapsed, blockdiag:B (blocks of B training points; see above)")
	fs.IntVar(&f.stream, "stream", 0, "stream the data files each epoch through a shuffle buffer of this many rows instead of loading them (0: load them; see above)")
	fs.StringVar(&f.outputs, "outputs", "independent", "with several -target columns: independent (one GP per output, kernel shared), lmc (linear model of coregionalization, one latent GP per output), lmc:L (L latent GPs) or separate (one model per output with its own kernel, noise and inducing points)")
	fs.StringVar(&f.spec.mean, "mean", "zero", "prior mean function, learned with the other parameters: zero, constant or linear (on standardized inputs and targets), shared by every latent function; or constant-per-latent or linear-per-latent, one per latent function (per class of robustmax and softmax, whose probabilities a shared mean does not change; heteroscedastic's mean and log noise)")
	return f
}

// check validates the parsed flags for the data file path and returns the
// CSV reading options. Outputs go where they are asked to, or the run stops
// before it trains rather than after.
func (f *trainFlags) check(path string) (data.Options, error) {
	if err := f.spec.check(); err != nil {
		return data.Options{}, err
	}
	if err := checkCollapsedFlags(f.fs, &f.spec, f.useCollapsed); err != nil {
		return data.Options{}, err
	}
	opts, err := f.csv.options()
	if err != nil {
		return data.Options{}, err
	}
	if err := f.checkValues(); err != nil {
		return data.Options{}, err
	}
	if f.bound, f.blockSize, err = parseTrainBound(f.boundName); err != nil {
		return data.Options{}, err
	}
	if f.bound == collapsed.BlockDiagonal && !f.useCollapsed {
		return data.Options{}, errors.New("-bound blockdiag needs -collapsed")
	}
	// The bound the model itself evaluates: the tighter one for -bound
	// tighter, else the standard one (blockdiag exists only collapsed).
	f.spec.bound = gp.StandardBound
	if f.bound == collapsed.Tighter {
		f.spec.bound = gp.TighterBound
	}
	if f.spec.bound == gp.TighterBound && f.spec.lik != "gaussian" && f.spec.lik != "bernoulli" && f.spec.lik != "poisson" {
		return data.Options{}, fmt.Errorf("-bound tighter needs the Gaussian, Bernoulli or Poisson likelihood (log p(y|f) concave in f), not -likelihood %s", f.spec.lik)
	}
	if err := distinctFiles(namedFile{what: "the data file", path: path}, namedFile{what: "-out", path: f.out}, namedFile{what: "-plot", path: f.plotPath},
		namedFile{what: "-checkpoint", path: f.ckPath}); err != nil {
		return data.Options{}, err
	}
	for _, nf := range []namedFile{{what: "-out", path: f.out}, {what: "-plot", path: f.plotPath}, {what: "-checkpoint", path: f.ckPath}} {
		if err := writableDir(nf); err != nil {
			return data.Options{}, err
		}
	}
	return opts, nil
}

// checkValues checks the ranges of the numeric flags and the flags that
// need one another.
func (f *trainFlags) checkValues() error {
	switch {
	case f.epochs < 0 || f.maxSteps < 0 || f.epochs == 0 && f.maxSteps == 0:
		return fmt.Errorf("-epochs %d, -steps %d: need a positive limit", f.epochs, f.maxSteps)
	case f.batch < 0:
		return fmt.Errorf("-batch %d: must be non-negative", f.batch)
	case !(f.lr > 0) || math.IsInf(f.lr, 0):
		return fmt.Errorf("-lr %g: must be positive and finite", f.lr)
	case !(f.validFrac >= 0 && f.validFrac < 1):
		return fmt.Errorf("-valid %g: must be in [0, 1)", f.validFrac)
	case !(f.decay > 0 && f.decay <= 1):
		return fmt.Errorf("-decay %g: must be in (0, 1]", f.decay)
	case f.decayEvery < 0:
		return fmt.Errorf("-decay-every %d: must be non-negative", f.decayEvery)
	case !(f.natural >= 0 && f.natural <= 1):
		return fmt.Errorf("-natural %g: must be in [0, 1]", f.natural)
	case f.naturalFresh && f.natural == 0:
		return errors.New("-natural-fresh needs -natural")
	case f.patience < 0:
		return fmt.Errorf("-patience %d: must be non-negative", f.patience)
	case f.patience > 0 && f.validFrac == 0:
		return errors.New("-patience needs a validation set (-valid)")
	case f.out == "":
		return errors.New("-out is empty")
	case f.ckEvery <= 0:
		return fmt.Errorf("-checkpoint-every %v: must be positive", f.ckEvery)
	case f.iters < 1:
		return fmt.Errorf("-iters %d: must be positive", f.iters)
	}
	return nil
}

// notSavedError is an interruption before the first training step: when
// says at which stage.
type notSavedError struct{ when string }

func (e notSavedError) Error() string { return "interrupted " + e.when }

// trainFailure reports err and returns the exit code: an interruption
// before training leaves -out alone (exitInterrupted), anything else is an
// error.
func trainFailure(stderr io.Writer, out string, err error) int {
	var ns notSavedError
	if errors.As(err, &ns) {
		return notSaved(stderr, out, ns.when)
	}
	return fail(stderr, "train", err)
}

// trainData is what train fits: the table read, its likelihood, the raw
// training and validation rows and the standardized training rows.
type trainData struct {
	tab            *data.Table
	lik            gp.Likelihood
	xTrain, xValid *mat.Dense // xValid is nil without -valid
	yTrain, yValid []float64
	std            *data.Standardizer
	xs             *mat.Dense // standardized training inputs and targets
	ys             []float64
	// targetNames are the names of the target columns of a multi-output
	// run (several -target columns), whose y slices hold one value per
	// target and row.
	targetNames []string
}

// loadTrainData reads path, checks its labels and scale for the model,
// holds out the validation rows and standardizes the training rows. Ctrl-C
// abandons the reading (a notSavedError).
func loadTrainData(ctx context.Context, f *trainFlags, path string, opts data.Options) (*trainData, error) {
	if len(f.csv.targets) > 0 {
		return loadMultiTrainData(f, path, opts)
	}
	d := &trainData{}
	if err := interruptible(ctx, func() (err error) {
		d.tab, err = data.LoadFiles(f.fs.Args(), opts)
		return err
	}); err != nil {
		if ctx.Err() != nil {
			return nil, notSavedError{"while reading " + path}
		}
		return nil, err
	}
	tab := d.tab
	n, _ := tab.X.Dims()
	f.spec.names = tab.Names
	var err error
	if d.lik, err = f.spec.likelihood(tab.Y); err != nil {
		return nil, err
	}
	if err := checkLabels(path, tab, d.lik); err != nil {
		return nil, err
	}
	if err := checkDataScale(path, tab); err != nil {
		return nil, err
	}
	split, err := data.RandomSplit(n, 0, f.validFrac, f.spec.seed)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if d.xTrain, d.yTrain, err = data.Rows(tab.X, tab.Y, split.Train); err != nil {
		return nil, err
	}
	if f.validFrac > 0 && len(split.Valid) == 0 {
		return nil, fmt.Errorf("-valid %g holds out no row of %d; use a larger fraction or none", f.validFrac, n)
	}
	if len(split.Valid) > 0 {
		if d.xValid, d.yValid, err = data.Rows(tab.X, tab.Y, split.Valid); err != nil {
			return nil, err
		}
	}
	spec := &f.spec
	if len(d.yTrain) < spec.m+spec.m2 {
		return nil, fmt.Errorf("%s: %d training rows (of %d, after holding out %d for validation), fewer than the %d inducing points asked for (-m %d, -m2 %d)",
			path, len(d.yTrain), n, len(d.yValid), spec.m+spec.m2, spec.m, spec.m2)
	}
	return d, d.standardize(spec.standardizesY())
}

// standardize fits the standardizer on the training rows (their targets
// too if withY) and fills xs and ys.
func (d *trainData) standardize(withY bool) error {
	var err error
	if withY {
		d.std, err = data.FitStandardizer(d.xTrain, d.yTrain)
	} else {
		d.std, err = data.FitStandardizer(d.xTrain, nil)
	}
	if err != nil {
		return err
	}
	d.xs = mat.DenseCopyOf(d.xTrain)
	d.ys = append([]float64(nil), d.yTrain...)
	if err := d.std.TransformX(d.xs); err != nil {
		return err
	}
	d.std.TransformY(d.ys)
	return nil
}

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f := newTrainFlags(stderr)
	fs := f.fs
	if done, code := parse(fs, args); done {
		return code
	}
	if misplacedFlag(fs, args, "the data file") {
		return exitUsage
	}
	if fs.NArg() < 1 {
		fmt.Fprintln(stderr, "solvegp train: need at least one data file (see solvegp train -h)")
		return exitUsage
	}
	path := fs.Arg(0)
	if err := checkM2(fs, &f.spec); err != nil {
		fmt.Fprintf(stderr, "solvegp train: %v\n", err)
		return exitUsage
	}
	if err := f.csv.parseTarget(); err != nil {
		fmt.Fprintf(stderr, "solvegp train: %v\n", err)
		return exitUsage
	}
	if err := f.checkMultiFlags(); err != nil {
		fmt.Fprintf(stderr, "solvegp train: %v\n", err)
		return exitUsage
	}
	if f.useCollapsed && isFlagSet(fs, "stream") {
		fmt.Fprintf(stderr, "solvegp train: %v\n", errStreamCollapsed)
		return exitUsage
	}
	opts, err := f.check(path)
	if err != nil {
		return fail(stderr, "train", err)
	}
	if isFlagSet(fs, "stream") {
		return trainStream(ctx, f, opts, args, stdout, stderr)
	}
	if need, avail, ok := f.autoStream(); ok && wouldNotFit(need, avail) {
		fmt.Fprintf(stderr, "solvegp train: the data would take about %.1f GiB in memory, %.1f GiB are available: streaming it (-stream %d)\n",
			float64(need)/(1<<30), float64(avail)/(1<<30), autoStreamBuffer)
		f.stream = autoStreamBuffer
		return trainStream(ctx, f, opts, args, stdout, stderr)
	}
	// Ctrl-C before the first training step leaves -out alone: loading
	// and k-means are abandoned as soon as the context is cancelled.
	d, err := loadTrainData(ctx, f, path, opts)
	var te targetError
	if errors.As(err, &te) {
		fmt.Fprintf(stderr, "solvegp train: %v\n", err)
		return exitUsage
	}
	if err != nil {
		return trainFailure(stderr, f.out, err)
	}
	if f.useCollapsed {
		return trainCollapsed(ctx, &collapsedRun{spec: &f.spec, lik: d.lik.(*likelihood.Gaussian), xs: d.xs, ys: d.ys,
			xTrain: d.xTrain, yTrain: d.yTrain, xValid: d.xValid, yValid: d.yValid, std: d.std, names: d.tab.Names,
			args: args, out: f.out, iters: f.iters, bound: f.bound, blockSize: f.blockSize, asJSON: f.asJSON, quiet: f.quiet}, stdout, stderr)
	}
	var (
		model  train.Model
		bundle *modelfile.Bundle
		kind   string
	)
	if err := interruptible(ctx, func() (err error) {
		model, bundle, kind, err = f.buildModel(d)
		return err
	}); err != nil {
		if ctx.Err() != nil {
			return notSaved(stderr, f.out, "while placing the inducing points")
		}
		return fail(stderr, "train", fmt.Errorf("%s: %v", path, err))
	}
	r := &trainRun{ctx: ctx, f: f, d: d, stderr: stderr, model: model, kind: kind, bundle: bundle, lastSaved: -1}
	if err := r.loadCheckpoint(); err != nil {
		return fail(stderr, "train", err)
	}
	return r.fit(args, stdout)
}

// trainSet is where the rows of a mini-batch run come from: a table in
// memory (trainData) or files streamed each epoch (streamData).
type trainSet interface {
	// nTrain counts the training rows, nValid the validation rows (0
	// without validation; for streamed files, those of the last
	// validation pass); hasValid says whether there are any.
	nTrain() int
	nValid() int
	hasValid() bool
	// fingerprint hashes the training flags and the data, so that a
	// checkpoint is only resumed by the run that wrote it.
	fingerprint(fs *flag.FlagSet) [32]byte
	// fit trains the model on the training rows.
	fit(ctx context.Context, m train.Model, cfg train.Config) (train.Result, error)
	// validMetrics scores b on the validation rows (ok false without
	// them).
	validMetrics(b *modelfile.Bundle) (m metrics, ok bool, err error)
	// trainBound evaluates b's bound on all training rows (ok false where
	// that would mean another pass over files).
	trainBound(b *modelfile.Bundle) (bound float64, ok bool, err error)
}

func (d *trainData) nTrain() int    { return rows(d.xs) }
func (d *trainData) nValid() int    { return rows(d.xValid) }
func (d *trainData) hasValid() bool { return d.xValid != nil }
func (d *trainData) fingerprint(fs *flag.FlagSet) [32]byte {
	return runFingerprint(fs, d.tab)
}
func (d *trainData) fit(ctx context.Context, m train.Model, cfg train.Config) (train.Result, error) {
	return train.Fit(ctx, m, d.xs, d.ys, cfg)
}
func (d *trainData) validMetrics(b *modelfile.Bundle) (metrics, bool, error) {
	if d.xValid == nil {
		return metrics{}, false, nil
	}
	m, err := evaluate(b, d.xValid, d.yValid, false)
	return m, true, err
}
func (d *trainData) trainBound(b *modelfile.Bundle) (float64, bool, error) {
	v, err := fullBound(b, d.xTrain, d.yTrain)
	return v, true, err
}

// trainRun is one mini-batch training run: the model, its data, and the
// state the progress bar, the training curves and the checkpoints share
// between Fit's callbacks.
type trainRun struct {
	ctx    context.Context
	f      *trainFlags
	d      trainSet
	extra  map[string]string // more entries of the model file's training info
	stderr io.Writer
	model  train.Model // a *gp.Model or, with -outputs separate, a *gp.Separate
	kind   string      // the model's kind (of every output of a gp.Separate)
	bundle *modelfile.Bundle
	bar    *progress

	history      []epochRecord
	resume       *train.Checkpoint
	resumedSteps int // steps taken before this process started
	lastSaved    int // the step of the last checkpoint written, -1 if none
	fingerprint  [32]byte
	priorSeconds float64 // training time before this process started

	running  float64 // moving average of the mini-batch bound
	seeded   bool    // running holds a value of this process
	lastSave time.Time
	ckErr    error // a failed checkpoint write, reported after training
}

// loadCheckpoint, with -checkpoint, resumes from the checkpoint file if it
// exists and belongs to the same run.
func (r *trainRun) loadCheckpoint() error {
	ckPath := r.f.ckPath
	if ckPath == "" {
		return nil
	}
	r.fingerprint = r.d.fingerprint(r.f.fs)
	ck, err := loadTrainCheckpoint(ckPath)
	if err != nil || ck == nil {
		return err
	}
	if ck.Fingerprint != r.fingerprint {
		return fingerprintMismatch(ckPath, ck.Flags, r.trainingFlags())
	}
	if len(ck.Params) != r.model.NumParams() {
		return fmt.Errorf("%s: checkpoint has %d parameters, the model %d", ckPath, len(ck.Params), r.model.NumParams())
	}
	if err := r.model.SetParams(ck.Params); err != nil {
		return fmt.Errorf("%s: %v", ckPath, err)
	}
	r.resume, r.history, r.priorSeconds = &ck.Train, ck.History, ck.Seconds
	r.resumedSteps, r.lastSaved = ck.Train.Steps, ck.Train.Steps
	fmt.Fprintf(r.stderr, "solvegp train: resuming from %s after %d steps\n", ckPath, ck.Train.Steps)
	return nil
}

// trainingFlags lists the run's training flags as checkpoints record
// them: those of trainingFlags and, for a streamed run, the shuffle buffer
// (-stream), which sets the batch order.
func (r *trainRun) trainingFlags() []string {
	fl := trainingFlags(r.f.fs)
	if isFlagSet(r.f.fs, "stream") {
		fl = append(fl, "stream="+strconv.Itoa(r.f.stream))
		sort.Strings(fl)
	}
	return fl
}

// newBar returns the progress bar for the run's step and epoch counts, or
// nil with -quiet.
func (r *trainRun) newBar() *progress {
	if r.f.quiet {
		return nil
	}
	n := r.d.nTrain()
	bs := r.f.batch
	if bs == 0 || bs > n {
		bs = n
	}
	stepsPerEpoch := (n + bs - 1) / bs
	total := r.f.epochs * stepsPerEpoch
	if r.f.maxSteps > 0 && (total == 0 || r.f.maxSteps < total) {
		total = r.f.maxSteps
	}
	nEpochs := r.f.epochs
	if nEpochs == 0 {
		nEpochs = (total + stepsPerEpoch - 1) / stepsPerEpoch
	}
	bar := newProgress(r.stderr, total, nEpochs)
	bar.base = r.resumedSteps
	return bar
}

// saveCheckpoint writes the training state after step; a failure is kept
// in ckErr and reported after training.
func (r *trainRun) saveCheckpoint(step int, elapsed time.Duration, state func() train.Checkpoint) {
	ck := &trainCheckpoint{Version: trainCheckpointVersion, Fingerprint: r.fingerprint, Flags: r.trainingFlags(), Params: make([]float64, r.model.NumParams()),
		Train: state(), History: append([]epochRecord(nil), r.history...), Seconds: r.priorSeconds + elapsed.Seconds()}
	r.model.Params(ck.Params)
	r.ckErr = saveTrainCheckpoint(r.f.ckPath, ck)
	if r.ckErr == nil {
		r.lastSaved = step
	}
	r.lastSave = time.Now()
}

// onStep updates the progress bar and, with -checkpoint, saves the state
// when it is due or on Ctrl-C.
func (r *trainRun) onStep(s train.StepInfo) error {
	if !r.seeded {
		r.running, r.seeded = s.Objective, true
	} else {
		r.running = 0.95*r.running + 0.05*s.Objective
	}
	r.bar.update(s.Step, s.Epoch, r.running, s.Elapsed)
	if r.f.ckPath != "" {
		// With -checkpoint, Fit is not cancelled: Ctrl-C is seen here (or
		// at an epoch's end), after a whole step, so that the checkpoint
		// holds the state Fit would continue from.
		stop := r.ctx.Err() != nil
		if stop || time.Since(r.lastSave) >= r.f.ckEvery {
			r.saveCheckpoint(s.Step, s.Elapsed, s.Checkpoint)
		}
		if stop {
			return train.ErrStop
		}
	}
	return nil
}

// onEpoch records a point of the training curves.
func (r *trainRun) onEpoch(e train.EpochInfo) error {
	rec := epochRecord{Epoch: e.Epoch + 1, Steps: e.Steps, Seconds: r.priorSeconds + e.Elapsed.Seconds()}
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
	r.history = append(r.history, rec)
	if r.f.ckPath != "" && r.ctx.Err() != nil {
		r.saveCheckpoint(e.Steps, e.Elapsed, e.Checkpoint)
		return train.ErrStop
	}
	return nil
}

// validate scores the model on the validation rows: the log-likelihood,
// and RMSE or accuracy where the likelihood has them.
func (r *trainRun) validate() (float64, map[string]float64, error) {
	m, _, err := r.d.validMetrics(r.bundle)
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

// config returns Fit's configuration for the run.
func (r *trainRun) config() train.Config {
	f := r.f
	cfg := train.Config{
		Epochs:    f.epochs,
		MaxSteps:  f.maxSteps,
		BatchSize: f.batch,
		Schedule:  schedule(f.lr, f.decay, f.decayEvery),
		Seed:      f.spec.seed,
		Patience:  f.patience,
		// Natural-gradient steps: one evaluation per step unless
		// -natural-fresh.
		NaturalStep:           f.natural,
		NaturalSharedGradient: f.natural > 0 && !f.naturalFresh,
		OnStep:                r.onStep,
		OnEpoch:               r.onEpoch,
		Logf: func(format string, args ...any) {
			r.bar.done()
			fmt.Fprintf(r.stderr, "solvegp train: "+format+"\n", args...)
		},
		Resume: r.resume,
	}
	if r.d.hasValid() {
		cfg.Validate = r.validate
	}
	return cfg
}

// fit trains the model, saves it and reports; it returns the exit code.
func (r *trainRun) fit(args []string, stdout io.Writer) int {
	r.bar = r.newBar()
	r.lastSave = time.Now()
	cfg := r.config()
	start := time.Now()
	if testHookBeforeFit != nil {
		testHookBeforeFit()
	}
	fitCtx := r.ctx
	if r.f.ckPath != "" {
		if r.ctx.Err() != nil {
			return notSaved(r.stderr, r.f.out, "before the first training step")
		}
		fitCtx = context.WithoutCancel(r.ctx) // see onStep
	}
	res, fitErr := r.d.fit(fitCtx, r.model, cfg)
	r.bar.done()
	interrupted := errors.Is(fitErr, context.Canceled) || errors.Is(fitErr, context.DeadlineExceeded) ||
		fitErr == nil && res.Reason == train.Stopped && r.ctx.Err() != nil // stopped by onStep for a checkpoint
	if r.ckErr != nil {
		fmt.Fprintf(r.stderr, "solvegp train: warning: checkpoint %s not written: %v\n", r.f.ckPath, r.ckErr)
	}
	if interrupted && res.Steps == r.resumedSteps {
		return notSaved(r.stderr, r.f.out, "before the first training step")
	}
	if !interrupted && res.Steps == 0 && (fitErr == nil || errors.Is(fitErr, train.ErrDiverged)) {
		// Every step was rejected (non-finite bound or gradient, or
		// parameters the model refused): the model is the untrained one,
		// not a result.
		why := ""
		if fitErr != nil {
			why = ": " + fitErr.Error()
		}
		return fail(r.stderr, "train", fmt.Errorf("no training step succeeded (%d rejected; try a smaller -lr or other -variance, -lengthscale or -noise)%s; %s not written", res.Rejected, why, r.f.out))
	}
	if fitErr != nil && !interrupted && res.Steps == 0 {
		return fail(r.stderr, "train", fitErr)
	}
	sum, err := r.save(args, res, interrupted, fitErr)
	if err != nil {
		return fail(r.stderr, "train", err)
	}
	sum.Seconds = r.priorSeconds + time.Since(start).Seconds() // with the training time before a resume
	if err := writeTrainSummary(stdout, sum, r.f.asJSON); err != nil {
		return fail(r.stderr, "train", err)
	}
	return r.exitCode(res, interrupted, fitErr)
}

// save writes the model file and the training curves after Fit, removes a
// checkpoint that has served its purpose, and returns the summary (without
// its time).
func (r *trainRun) save(args []string, res train.Result, interrupted bool, fitErr error) (*trainSummary, error) {
	f, d := r.f, r.d
	sum := &trainSummary{
		Model: f.out, Kind: r.kind, M: f.spec.m, M2: f.spec.m2,
		NTrain: d.nTrain(), Steps: res.Steps, Epochs: res.Epochs,
		Stop: stopReason(res.Reason, interrupted), Interrupted: interrupted, Rejected: res.Rejected, Natural: f.natural,
		History: r.history,
	}
	if res.BestEpoch >= 0 && d.hasValid() {
		be := res.BestEpoch + 1
		sum.BestEpoch = &be
	}
	if !interrupted {
		if b, ok, err := d.trainBound(r.bundle); ok && err == nil {
			sum.Bound, sum.BoundMC = &b, sampledLikelihood(r.bundle)
		}
	}
	if m, ok, err := d.validMetrics(r.bundle); ok && err == nil {
		sum.Valid = &m
	}
	sum.NValid = d.nValid()
	info := map[string]string{"steps": strconv.Itoa(res.Steps)}
	for k, v := range r.extra {
		info[k] = v
	}
	r.bundle.Meta.Info = trainInfo(args, stopReason(res.Reason, interrupted), sum.Bound, info)
	if err := modelfile.Save(f.out, r.bundle); err != nil {
		return nil, err
	}
	switch {
	case f.plotPath == "":
	case interrupted && len(r.history) == 0:
		fmt.Fprintf(r.stderr, "solvegp train: warning: interrupted during the first epoch; no training curves to plot, %s not written\n", f.plotPath)
	default:
		if err := plotCurves(f.plotPath, r.history, r.kind); err != nil {
			return nil, err
		}
		sum.Plot = f.plotPath
	}
	if f.ckPath != "" && !interrupted && fitErr == nil {
		// Training ended normally and the model is saved: the checkpoint
		// has served its purpose.
		if err := os.Remove(f.ckPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(r.stderr, "solvegp train: warning: %v\n", err)
		}
	}
	return sum, nil
}

// exitCode reports how training ended and returns the exit code.
func (r *trainRun) exitCode(res train.Result, interrupted bool, fitErr error) int {
	switch {
	case interrupted:
		fmt.Fprintf(r.stderr, "solvegp train: interrupted after %d steps; saved the %s model to %s\n", res.Steps, keptWhich(res.BestEpoch), r.f.out)
		switch {
		case r.f.ckPath == "":
		case r.lastSaved == res.Steps:
			fmt.Fprintf(r.stderr, "solvegp train: training state in %s: run the same command to continue\n", r.f.ckPath)
		case r.lastSaved >= 0:
			fmt.Fprintf(r.stderr, "solvegp train: training state after step %d in %s: run the same command to continue from there\n", r.lastSaved, r.f.ckPath)
		}
		return exitInterrupted
	case fitErr != nil:
		fmt.Fprintf(r.stderr, "solvegp train: %v\nsolvegp train: saved the last good parameters to %s\n", fitErr, r.f.out)
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
		if _, multi := model.Likelihood().(*likelihood.MultiGaussian); multi {
			p := model.NumOutputs()
			d := len(names) - p
			b.Meta.InputNames, b.Meta.TargetNames = names[:d], names[d:]
			return b
		}
		d := len(names) - 1
		b.Meta.InputNames, b.Meta.TargetName = names[:d], names[d]
	}
	return b
}

// rows returns the number of rows of x, 0 for nil.
func rows(x *mat.Dense) int {
	if x == nil {
		return 0
	}
	n, _ := x.Dims()
	return n
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

// parseTrainBound parses train's -bound value: standard, tighter, or
// blockdiag:B with a block size B ≥ 1 (the size is 0 for the others).
func parseTrainBound(s string) (collapsed.BoundKind, int, error) {
	name, size, sized := strings.Cut(s, ":")
	kind, err := collapsed.ParseBound(name)
	if err != nil {
		return 0, 0, fmt.Errorf("-bound: %q is none of standard, tighter and blockdiag:B", s)
	}
	if kind != collapsed.BlockDiagonal {
		if sized {
			return 0, 0, fmt.Errorf("-bound %s takes no block size", name)
		}
		return kind, 0, nil
	}
	if !sized {
		return 0, 0, errors.New("-bound blockdiag needs a block size, as in blockdiag:128")
	}
	b, err := strconv.Atoi(size)
	if err != nil || b < 1 {
		return 0, 0, fmt.Errorf("-bound %s: the block size must be an integer of at least 1", s)
	}
	return kind, b, nil
}
