package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/internal/floats"
)

// Model is what Fit trains: a flat vector of unconstrained parameters and
// a stochastic objective to maximize. The gp package's SVGP, ODVGP and
// SOLVE-GP models implement it.
type Model interface {
	// NumParams returns the length of the flat parameter vector.
	NumParams() int
	// Params copies the current parameters into dst.
	Params(dst []float64)
	// SetParams sets the parameters; it returns an error for a wrong
	// length or values the model cannot accept (such as NaN).
	SetParams(src []float64) error
	// Objective returns the mini-batch estimate of the objective (for the
	// gp models the ELBO, scaled to nTotal data points) on the batch x, y,
	// and writes its gradient with respect to the flat parameters into
	// grad. Fit zeroes grad before each call.
	Objective(x *mat.Dense, y []float64, nTotal int, grad []float64) (float64, error)
}

// NaturalGradientModel is the extension point for natural-gradient updates
// of the variational distributions q(u) and q(v⊥), which need the model's
// internals. When Config.NaturalStep is positive and the model implements
// this interface, each Fit step first calls NaturalStep on the mini-batch,
// then evaluates Objective and lets Adam update only the parameters that
// VariationalParams does not mark (the kernel, likelihood and inducing
// inputs). For a Gaussian likelihood a natural step of size 1 on the full
// data set should give the optimal q.
type NaturalGradientModel interface {
	Model
	// VariationalParams sets mask[i] (len(mask) = NumParams) to true for
	// each flat parameter that NaturalStep updates and Adam must not.
	VariationalParams(mask []bool)
	// NaturalStep takes one natural-gradient step of size gamma ∈ (0, 1]
	// on the variational parameters using the mini-batch x, y from a data
	// set of nTotal points.
	NaturalStep(x *mat.Dense, y []float64, nTotal int, gamma float64) error
}

// NaturalUpdater is an optional extension of NaturalGradientModel for
// models that can compute their natural-gradient step from a gradient
// already evaluated (gp.NaturalGradient and package gp's models implement
// it). With Config.NaturalSharedGradient, Fit evaluates the objective once
// per step: at the current parameters θ it takes the gradient, writes the
// natural step of the variational parameters (NaturalUpdate from θ) and
// Adam's step of the others, both from that one gradient.
type NaturalUpdater interface {
	// NaturalUpdate writes into next (len NumParams) the parameters after
	// a natural step of size gamma ∈ (0, 1] from params, where grad is the
	// objective's gradient at params: the entries VariationalParams marks
	// take the step, the others are copied from params. It must not change
	// the model.
	NaturalUpdate(params, grad, next []float64, gamma float64) error
}

// DataValidator is an optional extension of Model for models that can
// check a whole training set before training: labels outside the
// likelihood's support, or inputs of the wrong width. Fit calls
// ValidateData once, before the first step, and returns its error; without
// it a bad label would only make every step that draws it fail, which Fit
// would take for numerical trouble. The gp and convgp models implement it.
type DataValidator interface {
	ValidateData(x *mat.Dense, y []float64) error
}

// MultiOutputModel is an optional extension of Model for models with
// several targets per point (gp.Model with a gp.MultiOutput likelihood, or
// gp.Separate): Fit's y then holds NumOutputs() values per row of x,
// point-major, and a NaN target is a missing value when NumOutputs() > 1
// (an error otherwise).
// Mini-batches take whole rows. FitSource refuses models of more than one
// output.
type MultiOutputModel interface {
	NumOutputs() int
}

// RandomStater is an optional extension of Model for models that draw
// random numbers while evaluating the objective (Monte Carlo estimates of an
// expected log-likelihood, sampled hidden layers, sampled columns). Fit puts
// RandomState's result in every Checkpoint and hands it to SetRandomState
// when it resumes, so that such a run also continues bit for bit. The
// models of packages gp (Model) and convgp (Deep) implement it.
type RandomStater interface {
	// RandomState returns the state of the model's random generators.
	RandomState() []byte
	// SetRandomState restores a state RandomState returned; it returns an
	// error, and changes nothing, for a state the model cannot use.
	SetRandomState(state []byte) error
}

// Checkpoint is the state of a Fit run at the end of an epoch
// (EpochInfo.Checkpoint) or after a step (StepInfo.Checkpoint) besides the
// model's parameters: the epoch, mini-batch and step counts, which position
// the learning-rate schedule and the shuffling, the learning-rate back-off,
// Adam's moment estimates, and the validation bookkeeping (the best score,
// its epoch and parameters, the early-stopping count). Fit with
// Config.Resume set to a Checkpoint,
// on the same data with the same Config and the model at the parameters it
// had at that point, continues the run as if it had never stopped: for a
// model that is deterministic for a fixed thread count and whose Params
// returns exactly what SetParams received (package gp's models do), the
// parameters after the last epoch, and the best validated ones, are the
// same bit for bit, as are the callbacks' arguments and the Result. A
// model that draws random numbers must implement RandomStater for that;
// its generators' state is then part of the checkpoint (Random). One thing
// is not kept: the last good point that a rejected step goes back to
// (after a resume, a rejection before the first accepted step retries at
// the current parameters). Every field is exported, so encoding/gob and
// encoding/json can store it.
type Checkpoint struct {
	Epochs    int     // epochs finished
	Batches   int     // mini-batches of the next epoch already drawn (accepted or rejected); 0 at an epoch end
	Steps     int     // accepted steps taken
	RateScale float64 // learning-rate back-off multiplier, in (0, 1]
	Accepted  int     // consecutive accepted steps since the last rejection
	Failures  int     // consecutive rejected evaluations (Config.MaxFailures counts them)
	Rejected  int     // rejected evaluations since the start of the run (Result.Rejected)
	Adam      AdamState

	// EpochObjective, EpochSteps and EpochRejected are the sum of the
	// accepted steps' objectives, their number and the rejections so far
	// in the unfinished epoch of a mid-epoch checkpoint (for its
	// EpochInfo); zero at an epoch end.
	EpochObjective float64
	EpochSteps     int
	EpochRejected  int

	// Best holds the best validated parameters so far, BestEpoch (0-based)
	// and BestScore their epoch and score; Best is nil while no validation
	// has given a finite score (and in checkpoints from before these
	// fields). SinceImprove counts the validations since the last
	// improvement (Config.Patience).
	Best         []float64
	BestEpoch    int
	BestScore    float64
	SinceImprove int

	// Random is the model's RandomState when the checkpoint was taken, for
	// a model that implements RandomStater; nil otherwise (and in
	// checkpoints without it, whose resumes leave the model's generators
	// as they are).
	Random []byte
}

// StepInfo describes one accepted optimization step, for Config.OnStep.
type StepInfo struct {
	Step      int           // steps taken so far, including this one
	Epoch     int           // 0-based epoch of this step
	Objective float64       // mini-batch objective before the step
	Rate      float64       // learning rate used (after any back-off)
	Elapsed   time.Duration // wall time since Fit started
	// Checkpoint, called during OnStep, returns the state to resume from
	// after this step (see Config.Resume) as a copy, so that a long run
	// can be stopped after any step and continued exactly. It costs a copy
	// of Adam's two moment vectors.
	Checkpoint func() Checkpoint
}

// EpochInfo describes a finished epoch, for Config.OnEpoch.
type EpochInfo struct {
	Epoch     int                // 0-based epoch just finished
	Steps     int                // steps taken so far
	Objective float64            // mean mini-batch objective over the epoch's accepted steps
	Validated bool               // whether Validate ran after this epoch
	Score     float64            // validation score (if Validated)
	Metrics   map[string]float64 // other validation metrics (if Validated), as returned by Validate
	Best      bool               // whether the current parameters became the kept best
	Rejected  int                // steps rejected in this epoch (non-finite or failed evaluations)
	Duration  time.Duration      // wall time of the epoch, including validation
	Elapsed   time.Duration      // wall time since Fit started
	// Checkpoint, called during OnEpoch, returns the state to resume from
	// after this epoch (see Config.Resume) as a copy. It costs a copy of
	// Adam's two moment vectors, so call it only when the state is to be
	// saved.
	Checkpoint func() Checkpoint
}

// Config controls Fit. The zero value of every field except Epochs and
// MaxSteps (at least one must be positive) has a usable default.
type Config struct {
	// Epochs is the number of passes over the data; MaxSteps bounds the
	// number of optimization steps. Training stops at whichever limit
	// comes first; a zero value means no limit of that kind.
	Epochs   int
	MaxSteps int
	// BatchSize is the mini-batch size (0, or more than the number of
	// rows, means full batch). Each epoch visits the rows in a fresh
	// random order; the last batch of an epoch may be smaller.
	BatchSize int
	// Schedule gives the learning rate per step; nil means Constant(0.01),
	// the paper's setting.
	Schedule Schedule
	// Beta1, Beta2 and Epsilon are Adam's constants; zero means 0.9,
	// 0.999 and 1e-8.
	Beta1, Beta2, Epsilon float64
	// Seed seeds the shuffling of mini-batches. With the same seed, data,
	// initial parameters and a model that is deterministic for a fixed
	// thread count, Fit produces bit-for-bit the same parameters.
	Seed uint64

	// Validate, if not nil, is called every ValidateEvery epochs (default
	// 1) with the model at its current parameters. It returns a score to
	// maximize (for example the validation log-likelihood, or minus the
	// RMSE), which drives early stopping and best-model keeping, and
	// optionally other named metrics, which are passed on to OnEpoch. A
	// non-finite score counts as no improvement.
	Validate      func() (score float64, metrics map[string]float64, err error)
	ValidateEvery int
	// Patience enables early stopping: training stops once Patience
	// validations in a row have not improved the best score by more than
	// MinDelta. Zero disables early stopping.
	Patience int
	MinDelta float64
	// KeepLast leaves the model at its final parameters. By default, when
	// Validate is set, Fit restores the validated parameters with the
	// highest score (best-model keeping); without Validate the final
	// parameters are kept.
	KeepLast bool

	// MaxFailures is the number of consecutive rejected steps after which
	// Fit gives up with an error (default 10). See Fit for the back-off.
	MaxFailures int
	// RecoverAfter is the number of consecutive accepted steps after which
	// a learning-rate multiplier lowered by back-off is doubled again (up
	// to 1). Zero means 100; a negative value never recovers.
	RecoverAfter int
	// MinRateScale is the smallest learning-rate multiplier the back-off
	// may reach: a rejection that would halve it below MinRateScale ends
	// Fit with an error wrapping ErrDiverged. Rejections scattered more
	// often than one per RecoverAfter steps otherwise shrink the rate
	// towards zero while the steps taken are still accepted, and training
	// stalls without an error. Zero means 2⁻⁴⁰ (about 9e-13); it must not
	// be negative, and math.SmallestNonzeroFloat64 disables the limit.
	MinRateScale float64

	// Frozen, if not nil, has one entry per parameter; Adam leaves the
	// parameters marked true unchanged (for example fixed inducing inputs
	// or hyperparameters).
	Frozen []bool

	// NaturalStep, if positive, is the natural-gradient step size γ ∈
	// (0, 1] for the variational parameters; the model must implement
	// NaturalGradientModel. Adam then updates only the other parameters
	// (Frozen applies to Adam's parameters only). The learning-rate
	// back-off multiplier (see Fit) scales γ as well. For a Gaussian
	// likelihood and full batches, γ = 1 puts q at its optimum given the
	// other parameters; with mini-batches a smaller γ (such as 0.1)
	// averages the noisy estimates over batches.
	NaturalStep float64
	// NaturalSharedGradient takes the natural step and Adam's step from
	// one evaluation of the objective (the model must implement
	// NaturalUpdater), which halves the cost of a step. By default each
	// step calls NaturalStep, which evaluates the objective, and evaluates
	// it again after the natural step for Adam, so that Adam's gradient of
	// the other parameters is taken at the updated q. With the shared
	// gradient it is taken at q before the natural step, which lags the
	// hyperparameters by one step: fine at small learning rates (such as
	// the paper's 0.01), slower or unstable when Adam moves them fast.
	// The first step of a run then only moves q: the gradient of the other
	// parameters at the initial q (usually the prior) says little about
	// them and, being large, would damp Adam's steps for about 1/(1−β2)
	// steps through the second moment.
	NaturalSharedGradient bool

	// Resume, if not nil, continues an earlier run from the state that
	// EpochInfo.Checkpoint returned at the end of one of its epochs, or
	// StepInfo.Checkpoint after one of its steps (see Checkpoint); the
	// model must be at the parameters it had then. Epochs
	// and MaxSteps still count from the start of the whole run, as do the
	// epoch and step numbers passed to the callbacks and Result.Steps and
	// Result.Epochs; Fit replays the shuffles of the finished epochs so
	// that the batches follow the same order (heeding ctx), unless the
	// checkpoint is at or past the epoch or step limit, which leaves
	// nothing to do. Fit refuses a checkpoint whose counts no run on these
	// data in mini-batches of this size could have reached (for example
	// more finished epochs than mini-batches drawn, more mini-batches than
	// its epochs hold, or more rejections than the back-off of RateScale
	// records), naming the inconsistent field.
	Resume *Checkpoint

	// OnStep and OnEpoch, if not nil, are called after each accepted step
	// and each epoch. Returning ErrStop ends training normally; any other
	// error ends it and is returned by Fit.
	OnStep  func(StepInfo) error
	OnEpoch func(EpochInfo) error
	// Logf, if not nil, receives one line per notable event (rejected
	// steps, back-offs, early stopping).
	Logf func(format string, args ...any)
}

// ErrStop may be returned by Config.OnStep or Config.OnEpoch to end
// training early without an error.
var ErrStop = errors.New("train: stop requested")

// ErrDiverged is wrapped by the error Fit returns when training cannot go
// on: MaxFailures consecutive steps were rejected, the back-off would go
// below MinRateScale, or no step was accepted in the whole run. A step is
// rejected when the objective or gradient is not finite or the model
// refuses the parameters (its SetParams returns an error); the error says
// which, for the last rejection.
var ErrDiverged = errors.New("train: training diverged (steps rejected)")

// StopReason says why Fit returned.
type StopReason int

const (
	// Finished: the epoch or step limit was reached.
	Finished StopReason = iota
	// EarlyStopped: the validation score stopped improving.
	EarlyStopped
	// Stopped: a callback returned ErrStop.
	Stopped
	// Canceled: the context was canceled.
	Canceled
	// Failed: a callback, the model or validation returned an error, or
	// too many steps were rejected.
	Failed
)

// String returns the name of the reason.
func (r StopReason) String() string {
	switch r {
	case Finished:
		return "finished"
	case EarlyStopped:
		return "early-stopped"
	case Stopped:
		return "stopped"
	case Canceled:
		return "canceled"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("StopReason(%d)", int(r))
}

// Result summarizes a Fit run.
type Result struct {
	Reason    StopReason
	Steps     int     // accepted optimization steps
	Epochs    int     // epochs run (the last one may be partial when MaxSteps ends it)
	Objective float64 // mini-batch objective of the last accepted step (NaN if none)
	Rejected  int     // total rejected steps
	RateScale float64 // final back-off multiplier of the learning rate (1 if no step was rejected)
	// BestEpoch is the 0-based epoch after which the best validation
	// score BestScore was seen, whose parameters were kept (−1 and NaN
	// without Validate or with KeepLast).
	BestEpoch int
	BestScore float64
	Elapsed   time.Duration
}

// Fit maximizes m's objective on the rows of x and targets y with Adam on
// shuffled mini-batches, as configured by cfg. It checks ctx before every
// step. On return the model holds the kept parameters (see
// Config.KeepLast), which are always ones the model accepted and whose
// objective was finite, even when Fit returns an error.
//
// Non-finite safety: if the objective or any gradient entry is NaN or
// ±Inf, or the model returns an error, the step that led to those
// parameters is rejected and Fit backs off: the parameters and Adam's
// second-moment estimate go back to the last point whose objective and
// gradient were finite, Adam's first moment (the momentum that carried the
// parameters into trouble) is cleared, the learning-rate multiplier is
// halved, the step from that point is retaken with the smaller rate, and
// the event is logged through cfg.Logf. The multiplier doubles again
// after every cfg.RecoverAfter consecutive accepted steps, up to 1. After
// cfg.MaxFailures consecutive rejections, or when the multiplier would
// fall below cfg.MinRateScale, Fit stops with an error wrapping
// ErrDiverged that says what was non-finite. Parameters that are about to be
// kept but were never evaluated (those reached by the last step, or the best
// validated ones) are evaluated once more, on the last mini-batch, before
// Fit returns; if their objective or gradient is not finite they are
// rejected too (logged and counted in Result.Rejected) and the model goes
// back to the last parameters whose objective and gradient were finite.
// A run that ends by its epoch limit or early stopping with no step
// accepted at all, its rejections never MaxFailures in a row (each step
// from the last good point refused, each evaluation there successful),
// also returns an error wrapping ErrDiverged.
//
// Fit first checks the data: inputs and targets must be finite, and a
// model that implements DataValidator must accept them; otherwise Fit
// returns an error before training.
//
// On cancellation Fit returns the context's error (test it with
// errors.Is(err, context.Canceled)) together with a valid Result.
func Fit(ctx context.Context, m Model, x *mat.Dense, y []float64, cfg Config) (Result, error) {
	f := &fitter{ctx: ctx, m: m, x: x, y: y, cfg: cfg,
		res: Result{Objective: math.NaN(), RateScale: 1, BestEpoch: -1, BestScore: math.NaN()}}
	if err := f.check(); err != nil {
		return f.res, err
	}
	f.defaults()
	if err := f.setup(); err != nil {
		return f.res, err
	}
	return f.run()
}

// layoutChecker is implemented by gp.NaturalGradient and the types that
// embed it: CheckLayout returns an error if its Model is nil or, when factors is
// set (natural steps will be taken), its factors do not fit in the model's
// parameters.
type layoutChecker interface {
	CheckLayout(factors bool) error
}

// checkEval returns why an evaluation is unusable, or "" if it is fine.
func checkEval(f float64, grad []float64, err error) string {
	if err != nil {
		return "objective failed: " + err.Error()
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Sprintf("objective is %v", f)
	}
	if i := floats.FirstNonFinite(grad); i >= 0 {
		return fmt.Sprintf("gradient entry %d is %v", i, grad[i])
	}
	return ""
}
