package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/internal/floats"
	"github.com/solvegp/solvegp/internal/nilcheck"
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
	// checkpoints from before this field, whose resumes leave the model's
	// generators as they are).
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
	res := Result{Objective: math.NaN(), RateScale: 1, BestEpoch: -1, BestScore: math.NaN()}
	if ctx == nil {
		return res, errors.New("train: Fit: nil Context (use context.Background())")
	}
	if nilcheck.IsNil(m) || x == nil {
		return res, errors.New("train: Fit: nil model or data")
	}
	n, d := x.Dims()
	if len(y) != n {
		return res, fmt.Errorf("train: Fit: x has %d rows but y has %d values", n, len(y))
	}
	if n == 0 || d == 0 {
		return res, errors.New("train: Fit: no data")
	}
	for i := 0; i < n; i++ {
		if !floats.AllFinite(x.RawRowView(i)) {
			return res, fmt.Errorf("train: Fit: input row %d holds NaN or Inf", i)
		}
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return res, fmt.Errorf("train: Fit: target %d is %v", i, v)
		}
	}
	if v, ok := m.(DataValidator); ok {
		if err := v.ValidateData(x, y); err != nil {
			return res, fmt.Errorf("train: Fit: training data: %w", err)
		}
	}
	if cfg.Epochs < 0 || cfg.MaxSteps < 0 || cfg.BatchSize < 0 || cfg.Patience < 0 || cfg.MaxFailures < 0 || cfg.ValidateEvery < 0 {
		return res, errors.New("train: Fit: negative Epochs, MaxSteps, BatchSize, Patience, MaxFailures or ValidateEvery")
	}
	if cfg.Epochs == 0 && cfg.MaxSteps == 0 {
		return res, errors.New("train: Fit: set Epochs or MaxSteps")
	}
	for _, c := range []struct {
		v      float64
		lo, hi float64
		name   string
	}{{cfg.Beta1, 0, 1, "Beta1"}, {cfg.Beta2, 0, 1, "Beta2"}} {
		if !(c.v >= c.lo && c.v < c.hi) {
			return res, fmt.Errorf("train: Fit: %s = %v outside [0, 1)", c.name, c.v)
		}
	}
	if !(cfg.Epsilon >= 0) || math.IsInf(cfg.Epsilon, 0) || !(cfg.NaturalStep >= 0 && cfg.NaturalStep <= 1) || math.IsNaN(cfg.MinDelta) {
		return res, fmt.Errorf("train: Fit: bad Epsilon %v, NaturalStep %v or MinDelta %v", cfg.Epsilon, cfg.NaturalStep, cfg.MinDelta)
	}
	if !(cfg.MinRateScale >= 0 && cfg.MinRateScale <= 1) {
		return res, fmt.Errorf("train: Fit: MinRateScale %v outside [0, 1]", cfg.MinRateScale)
	}
	minScale := cfg.MinRateScale
	if minScale == 0 {
		minScale = 0x1p-40
	}
	sched := cfg.Schedule
	if sched == nil {
		sched = Constant(0.01)
	}
	maxFail := cfg.MaxFailures
	if maxFail == 0 {
		maxFail = 10
	}
	recoverAfter := cfg.RecoverAfter
	if recoverAfter == 0 {
		recoverAfter = 100
	}
	validateEvery := cfg.ValidateEvery
	if validateEvery == 0 {
		validateEvery = 1
	}
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	batch := cfg.BatchSize
	if batch == 0 || batch > n {
		batch = n
	}

	// A gp.NaturalGradient's factors are checked here, as VariationalParams
	// cannot return an error.
	if lc, ok := m.(layoutChecker); ok {
		if err := lc.CheckLayout(cfg.NaturalStep > 0); err != nil {
			return res, fmt.Errorf("train: Fit: %w", err)
		}
	}

	p := m.NumParams()
	params := make([]float64, p)
	m.Params(params)
	grad := make([]float64, p)
	good := make([]float64, p)
	goodGrad := make([]float64, p)
	best := make([]float64, p)
	haveGood, haveBest := false, false
	bestScore := math.Inf(-1)

	adam := NewAdam(p)
	step, startEpoch, accepted := 0, 0, 0 // accepted: consecutive accepted steps since the last rejection
	skip := 0                             // mini-batches of the first epoch already drawn before a resume
	if r := cfg.Resume; r != nil {
		nb := (n + batch - 1) / batch // mini-batches per epoch
		if r.Epochs < 0 || r.Batches < 0 || r.Batches > nb || r.Steps < 0 || r.Accepted < 0 ||
			r.Failures < 0 || r.Rejected < 0 || r.EpochSteps < 0 || r.EpochRejected < 0 || r.EpochRejected > r.Rejected ||
			math.IsNaN(r.EpochObjective) || math.IsInf(r.EpochObjective, 0) || !(r.RateScale > 0 && r.RateScale <= 1) {
			return res, fmt.Errorf("train: Fit: bad Resume state (epochs %d, batches %d of %d, steps %d, accepted %d, failures %d, rejected %d, rate scale %v, epoch sums %v/%d/%d)",
				r.Epochs, r.Batches, nb, r.Steps, r.Accepted, r.Failures, r.Rejected, r.RateScale, r.EpochObjective, r.EpochSteps, r.EpochRejected)
		}
		// The counts must be those of a run on these data in mini-batches
		// of this size: replaying the shuffles of the finished epochs
		// below takes one shuffle per epoch, which a forged or damaged
		// Epochs could make last for ever. Each rejection halves RateScale
		// and only an accepted step can double it, so Rejected is at most
		// Steps + log2(1/RateScale) (< Steps + 1075).
		if halvings := int(math.Ceil(-math.Log2(r.RateScale))); r.Rejected-r.Steps > halvings {
			return res, fmt.Errorf("train: Fit: bad Resume state: Rejected %d exceeds Steps %d plus the %d halvings of RateScale %v", r.Rejected, r.Steps, halvings, r.RateScale)
		}
		// Every mini-batch drawn was accepted (Steps) or rejected. Every
		// finished epoch drew at least one, except one ended by MaxSteps
		// before its first, and at most nb.
		if r.Steps > math.MaxInt-r.Rejected {
			return res, fmt.Errorf("train: Fit: bad Resume state: Steps %d + Rejected %d overflows", r.Steps, r.Rejected)
		}
		drawn := r.Steps + r.Rejected
		if r.Epochs-1 > drawn {
			return res, fmt.Errorf("train: Fit: bad Resume state: Epochs %d, but only %d mini-batches were drawn (Steps %d + Rejected %d)", r.Epochs, drawn, r.Steps, r.Rejected)
		}
		if rest := drawn - r.Batches; rest > 0 && r.Epochs < (rest-1)/nb+1 {
			return res, fmt.Errorf("train: Fit: bad Resume state: Epochs %d, but the %d mini-batches drawn (Steps %d + Rejected %d) besides the next epoch's %d (Batches) take %d epochs of %d",
				r.Epochs, drawn, r.Steps, r.Rejected, r.Batches, (rest-1)/nb+1, nb)
		}
		if err := adam.SetState(r.Adam); err != nil {
			return res, fmt.Errorf("train: Fit: Resume: %w", err)
		}
		if r.SinceImprove < 0 || r.Best != nil && (len(r.Best) != p || r.BestEpoch < 0 || r.BestEpoch >= r.Epochs ||
			math.IsNaN(r.BestScore) || math.IsInf(r.BestScore, 0) || !floats.AllFinite(r.Best)) {
			return res, fmt.Errorf("train: Fit: bad Resume validation state (%d best parameters of %d, best epoch %d of %d finished, score %v, %d validations since an improvement)",
				len(r.Best), p, r.BestEpoch, r.Epochs, r.BestScore, r.SinceImprove)
		}
		if _, ok := m.(RandomStater); r.Random != nil && !ok {
			return res, errors.New("train: Fit: Resume holds a random state, but the model does not implement RandomStater")
		}
		step, startEpoch, accepted, skip = r.Steps, r.Epochs, r.Accepted, r.Batches
		if r.Best != nil {
			copy(best, r.Best)
			haveBest, bestScore = true, r.BestScore
			res.BestEpoch, res.BestScore = r.BestEpoch, r.BestScore
		}
		res.RateScale, res.Steps, res.Epochs, res.Rejected = r.RateScale, r.Steps, r.Epochs, r.Rejected
	}
	if cfg.Beta1 != 0 {
		adam.Beta1 = cfg.Beta1
	}
	if cfg.Beta2 != 0 {
		adam.Beta2 = cfg.Beta2
	}
	if cfg.Epsilon != 0 {
		adam.Epsilon = cfg.Epsilon
	}

	var natModel NaturalGradientModel
	var natUpd NaturalUpdater
	var natMask []bool
	var natNext []float64
	var frozen []bool
	if cfg.Frozen != nil {
		if len(cfg.Frozen) != p {
			return res, fmt.Errorf("train: Fit: Frozen has %d entries, the model %d parameters", len(cfg.Frozen), p)
		}
		frozen = append([]bool(nil), cfg.Frozen...)
	}
	if cfg.NaturalStep > 0 {
		if nm, ok := m.(NaturalGradientModel); ok {
			natModel = nm
			mask := make([]bool, p)
			nm.VariationalParams(mask)
			if cfg.NaturalSharedGradient {
				u, ok := nm.(NaturalUpdater)
				if !ok {
					return res, errors.New("train: Fit: NaturalSharedGradient set but the model does not implement NaturalUpdater")
				}
				natUpd, natMask, natNext = u, mask, make([]float64, p)
			}
			if frozen == nil {
				frozen = mask
			} else {
				for i, v := range mask {
					frozen[i] = frozen[i] || v
				}
			}
		} else {
			return res, errors.New("train: Fit: NaturalStep set but the model does not implement NaturalGradientModel")
		}
	} else if cfg.NaturalSharedGradient {
		return res, errors.New("train: Fit: NaturalSharedGradient set without NaturalStep")
	}
	// The model's random state, last: a Fit that refuses its
	// configuration leaves the model as it was.
	if r := cfg.Resume; r != nil && r.Random != nil {
		if err := m.(RandomStater).SetRandomState(r.Random); err != nil {
			return res, fmt.Errorf("train: Fit: Resume: %w", err)
		}
	}

	xb := mat.NewDense(batch, d, nil)
	yb := make([]float64, batch)

	start := time.Now()
	lastB := 0 // rows of the last mini-batch, still in xb and yb
	failures := 0
	sinceImprove := 0
	// The running sums of the current epoch, for its EpochInfo.
	var epSum float64
	var epCount, epRejectedBefore int
	if r := cfg.Resume; r != nil {
		sinceImprove, failures = r.SinceImprove, r.Failures
		epSum, epCount, epRejectedBefore = r.EpochObjective, r.EpochSteps, r.Rejected-r.EpochRejected
	}

	// finish puts the model at the parameters to keep and fills res.
	finish := func(reason StopReason, err error) (Result, error) {
		res.Reason = reason
		res.Elapsed = time.Since(start)
		keep := params
		switch {
		case !cfg.KeepLast && haveBest:
			keep = best
		case failures > 0 && haveGood:
			keep = good
		case failures > 0:
			keep = nil // never evaluated successfully: leave the model as it is
		}
		if cfg.KeepLast {
			res.BestEpoch, res.BestScore = -1, math.NaN()
		}
		if keep != nil {
			serr := m.SetParams(keep)
			if serr != nil && err == nil {
				err = fmt.Errorf("train: restoring parameters: %w", serr)
				reason = Failed
			}
			// keep was never evaluated unless it is the last good point
			// (it is the result of the last step, or the best validated
			// parameters): check it on the last mini-batch.
			if serr == nil && haveGood && lastB > 0 && len(keep) > 0 && &keep[0] != &good[0] {
				clear(grad)
				f, ferr := m.Objective(xb.Slice(0, lastB, 0, d).(*mat.Dense), yb[:lastB], n, grad)
				if why := checkEval(f, grad, ferr); why != "" {
					res.Rejected++
					logf("train: kept parameters rejected: %s; restored the last parameters with a finite objective", why)
					if serr := m.SetParams(good); serr != nil && err == nil {
						err = fmt.Errorf("train: restoring parameters: %w", serr)
						reason = Failed
					}
				}
			}
		}
		res.Reason = reason
		return res, err
	}

	// withBest adds the validation bookkeeping to a checkpoint.
	// It also takes the model's random state as it is when the checkpoint
	// is asked for (during OnStep or OnEpoch: after the step, or after the
	// epoch's validation), which is where a resumed run continues.
	rs, _ := m.(RandomStater)
	withBest := func(c Checkpoint) Checkpoint {
		if rs != nil {
			c.Random = rs.RandomState()
		}
		c.SinceImprove = sinceImprove
		if haveBest {
			c.Best = append([]float64(nil), best...)
			c.BestEpoch, c.BestScore = res.BestEpoch, bestScore
		}
		return c
	}
	// stepCk is StepInfo.Checkpoint: the state after the step just taken,
	// at mini-batch stepBatch (counted from 1) of epoch stepEpoch.
	var stepEpoch, stepBatch int
	stepCk := func() Checkpoint {
		return withBest(Checkpoint{Epochs: stepEpoch, Batches: stepBatch, Steps: step, RateScale: res.RateScale, Accepted: accepted,
			Failures: failures, Rejected: res.Rejected, Adam: adam.State(),
			EpochObjective: epSum, EpochSteps: epCount, EpochRejected: res.Rejected - epRejectedBefore})
	}

	// reject handles a failed evaluation at the current parameters.
	lastWhy := ""
	reject := func(step, epoch int, why string) error {
		failures++
		res.Rejected++
		lastWhy = why
		if failures >= maxFail {
			return fmt.Errorf("%w: %d consecutive steps rejected, last at step %d (epoch %d): %s; kept the last parameters with a finite objective",
				ErrDiverged, failures, step, epoch, why)
		}
		if res.RateScale/2 < minScale {
			return fmt.Errorf("%w: the back-off would lower the learning-rate multiplier to %g, below MinRateScale %g, after %d rejections in all, never MaxFailures in a row; the last at step %d (epoch %d): %s; kept the last parameters with a finite objective",
				ErrDiverged, res.RateScale/2, minScale, res.Rejected, step, epoch, why)
		}
		res.RateScale /= 2
		logf("train: step %d (epoch %d) rejected: %s; learning-rate multiplier halved to %g", step, epoch, why, res.RateScale)
		if !haveGood {
			return nil // no good point yet: try the next mini-batch at the same parameters
		}
		rate := sched.Rate(step) * res.RateScale
		adam.retake(params, good, goodGrad, rate)
		if err := m.SetParams(params); err != nil {
			// Stay at the good point; the next evaluation retries from there.
			copy(params, good)
			if err2 := m.SetParams(params); err2 != nil {
				return fmt.Errorf("train: model rejected its own last good parameters: %w", err2)
			}
		}
		return nil
	}

	// noneAccepted returns the error of a run that ends (by its epoch limit
	// or early stopping) with rejected steps and no accepted one since its
	// start (a resumed run counts those before the checkpoint, so that it
	// ends as the uninterrupted run would): the rejections were never
	// MaxFailures in a row (evaluations at the last good point succeeded,
	// the steps from it did not), and the back-off did not find a rate the
	// model could take.
	noneAccepted := func() error {
		if step > 0 || res.Rejected == 0 {
			return nil
		}
		last := ""
		if lastWhy != "" {
			last = ", the last: " + lastWhy
		}
		return fmt.Errorf("%w: no step accepted in %d epochs: %d steps rejected%s; kept the last parameters with a finite objective",
			ErrDiverged, res.Epochs, res.Rejected, last)
	}

	// A checkpoint from the end of a run's last epoch leaves nothing to do:
	// the run stopped there at its step limit or by early stopping. Nor
	// does one at or past the epoch limit.
	if r := cfg.Resume; r != nil {
		switch {
		case r.Batches == 0 && cfg.MaxSteps > 0 && step >= cfg.MaxSteps:
			return finish(Finished, nil)
		case r.Batches == 0 && cfg.Validate != nil && cfg.Patience > 0 && sinceImprove >= cfg.Patience:
			return finish(EarlyStopped, nil)
		case cfg.Epochs > 0 && startEpoch >= cfg.Epochs:
			return finish(Finished, nil)
		}
	}
	// Replay the shuffles of the finished epochs, unless no mini-batch is
	// left to draw (a resume at the step limit only finishes its epoch).
	// By the checks of Resume above the epochs replayed are fewer than
	// cfg.Epochs or, with MaxSteps alone, than 2·MaxSteps + 1076; the
	// replay heeds ctx all the same.
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x7a11ab1e))
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for e := 0; e < startEpoch && !(cfg.MaxSteps > 0 && step >= cfg.MaxSteps); e++ {
		if e%64 == 0 {
			if err := ctx.Err(); err != nil {
				res.Reason = Canceled
				return res, err
			}
		}
		rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	}
	for epoch := startEpoch; cfg.Epochs == 0 || epoch < cfg.Epochs; epoch++ {
		epochStart := time.Now()
		rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		lo0 := 0
		if epoch == startEpoch && skip > 0 {
			lo0 = skip * batch // the sums of the epoch's earlier steps came with the checkpoint
		} else {
			epSum, epCount, epRejectedBefore = 0, 0, res.Rejected
		}
		for lo := lo0; lo < n; lo += batch {
			if cfg.MaxSteps > 0 && step >= cfg.MaxSteps {
				break // end of training inside an epoch: still validate it below
			}
			if err := ctx.Err(); err != nil {
				return finish(Canceled, err)
			}
			b := min(batch, n-lo)
			for k := 0; k < b; k++ {
				copy(xb.RawRowView(k), x.RawRowView(perm[lo+k]))
				yb[k] = y[perm[lo+k]]
			}
			xv := xb.Slice(0, b, 0, d).(*mat.Dense)
			lastB = b
			rate := sched.Rate(step)
			if !(rate > 0) || math.IsInf(rate, 0) {
				return finish(Failed, fmt.Errorf("train: Fit: schedule gave learning rate %v at step %d", rate, step))
			}

			why := ""
			if natModel != nil && natUpd == nil {
				if err := natModel.NaturalStep(xv, yb[:b], n, cfg.NaturalStep*res.RateScale); err != nil {
					why = "natural-gradient step failed: " + err.Error()
				} else {
					m.Params(params)
				}
			}
			var f float64
			if why == "" {
				clear(grad)
				var err error
				f, err = m.Objective(xv, yb[:b], n, grad)
				why = checkEval(f, grad, err)
			}
			if why != "" {
				if err := reject(step, epoch, why); err != nil {
					return finish(Failed, err)
				}
				continue
			}
			// The natural step uses the full gradient, before Frozen zeroes
			// the variational entries for Adam.
			var natErr error
			warm := false
			if natUpd != nil {
				natErr = natUpd.NaturalUpdate(params, grad, natNext, cfg.NaturalStep*res.RateScale)
				// The first step of a run moves q only (see
				// Config.NaturalSharedGradient).
				warm = step == 0 && !haveGood
				if warm && natErr != nil {
					if err := reject(step, epoch, "natural-gradient step failed: "+natErr.Error()); err != nil {
						return finish(Failed, err)
					}
					continue
				}
			}
			if failures > 0 {
				accepted = 0
			}
			failures = 0
			haveGood = true
			for i, fr := range frozen {
				if fr {
					grad[i] = 0
				}
			}
			// The evaluated point becomes the last good one (buffers are
			// swapped, not copied) and the step writes into the other.
			good, params = params, good
			goodGrad, grad = grad, goodGrad
			rate *= res.RateScale
			if warm {
				copy(params, good)
			} else {
				adam.ascendTo(params, good, goodGrad, rate)
			}
			if natErr != nil {
				if err := reject(step, epoch, "natural-gradient step failed: "+natErr.Error()); err != nil {
					return finish(Failed, err)
				}
				continue
			}
			if natUpd != nil {
				for i, v := range natMask {
					if v {
						params[i] = natNext[i]
					}
				}
			}
			if err := m.SetParams(params); err != nil {
				if err := reject(step, epoch, "model rejected the updated parameters: "+err.Error()); err != nil {
					return finish(Failed, err)
				}
				continue
			}
			step++
			res.Steps = step
			accepted++
			if res.RateScale < 1 && recoverAfter > 0 && accepted%recoverAfter == 0 {
				res.RateScale = math.Min(1, 2*res.RateScale)
				logf("train: step %d: %d steps accepted since the last rejection; learning-rate multiplier raised to %g", step, accepted, res.RateScale)
			}
			res.Objective = f
			epSum += f
			epCount++
			if cfg.OnStep != nil {
				stepEpoch, stepBatch = epoch, lo/batch+1
				err := cfg.OnStep(StepInfo{Step: step, Epoch: epoch, Objective: f, Rate: rate, Elapsed: time.Since(start), Checkpoint: stepCk})
				if errors.Is(err, ErrStop) {
					return finish(Stopped, nil)
				} else if err != nil {
					return finish(Failed, err)
				}
			}
		}

		info := EpochInfo{Epoch: epoch, Steps: step, Objective: math.NaN(), Rejected: res.Rejected - epRejectedBefore}
		ckEpoch, ckSteps, ckScale, ckAccepted, ckFailures, ckRejected := epoch+1, step, res.RateScale, accepted, failures, res.Rejected
		info.Checkpoint = func() Checkpoint {
			return withBest(Checkpoint{Epochs: ckEpoch, Steps: ckSteps, RateScale: ckScale, Accepted: ckAccepted,
				Failures: ckFailures, Rejected: ckRejected, Adam: adam.State()})
		}
		if epCount > 0 {
			info.Objective = epSum / float64(epCount)
		}
		res.Epochs = epoch + 1
		stopEarly := false
		if cfg.Validate != nil && (epoch+1)%validateEvery == 0 {
			score, metrics, err := cfg.Validate()
			if err != nil {
				return finish(Failed, fmt.Errorf("train: validation after epoch %d: %w", epoch, err))
			}
			info.Validated, info.Score, info.Metrics = true, score, metrics
			improved := false
			if math.IsNaN(score) || math.IsInf(score, 0) {
				logf("train: epoch %d: validation score %v is not finite", epoch, score)
			} else {
				improved = !haveBest || score > bestScore+cfg.MinDelta
				if !haveBest || score > bestScore {
					info.Best = true
					bestScore = score
					copy(best, params)
					haveBest = true
					res.BestEpoch, res.BestScore = epoch, score
				}
			}
			if improved {
				sinceImprove = 0
			} else {
				sinceImprove++
				if cfg.Patience > 0 && sinceImprove >= cfg.Patience {
					stopEarly = true
					logf("train: early stopping after epoch %d: no validation improvement in %d validations (best %g at epoch %d)",
						epoch, sinceImprove, bestScore, res.BestEpoch)
				}
			}
		}
		info.Duration = time.Since(epochStart)
		info.Elapsed = time.Since(start)
		if cfg.OnEpoch != nil {
			err := cfg.OnEpoch(info)
			if errors.Is(err, ErrStop) {
				return finish(Stopped, nil)
			} else if err != nil {
				return finish(Failed, err)
			}
		}
		if stopEarly {
			if err := noneAccepted(); err != nil {
				return finish(Failed, err)
			}
			return finish(EarlyStopped, nil)
		}
		if cfg.MaxSteps > 0 && step >= cfg.MaxSteps {
			break
		}
	}
	if err := noneAccepted(); err != nil {
		return finish(Failed, err)
	}
	return finish(Finished, nil)
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
