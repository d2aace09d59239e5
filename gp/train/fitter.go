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

// fitter is one run of Fit: the model, the data, the configuration with
// its defaults filled in, and the state of the training loop.
type fitter struct {
	ctx  context.Context
	m    Model
	x    *mat.Dense
	y    []float64
	cfg  Config
	n, d int
	// w is the number of targets per row (see MultiOutputModel).
	w int

	// The configuration with defaults.
	batch         int
	minScale      float64
	sched         Schedule
	maxFail       int
	recoverAfter  int
	validateEvery int
	logf          func(string, ...any)

	res Result
	p   int
	// params are the current parameters, good the last ones evaluated
	// successfully with their gradient goodGrad, best the best validated.
	params, grad, good, goodGrad, best []float64
	haveGood, haveBest                 bool
	bestScore                          float64

	adam       *Adam
	step       int // accepted steps
	startEpoch int
	accepted   int // consecutive accepted steps since the last rejection
	skip       int // mini-batches of the first epoch already drawn before a resume

	natModel NaturalGradientModel
	natUpd   NaturalUpdater
	natMask  []bool
	natNext  []float64
	frozen   []bool

	xb    *mat.Dense
	yb    []float64
	lastB int // rows of the last mini-batch, still in xb and yb

	start        time.Time
	failures     int
	sinceImprove int
	lastWhy      string
	// The running sums of the current epoch, for its EpochInfo.
	epSum                     float64
	epCount, epRejectedBefore int
	// stepEpoch and stepBatch locate the step just taken for
	// stepCheckpoint: mini-batch stepBatch (counted from 1) of epoch
	// stepEpoch.
	stepEpoch, stepBatch int

	rs   RandomStater
	rng  *rand.Rand
	perm []int

	// src, for FitSource, replaces x, y and perm; drawn counts the rows
	// of the current epoch read from it.
	src   Source
	drawn int
}

// check validates the arguments: the data once (finite inputs and
// targets, and whatever a DataValidator model asks) and the configuration.
func (f *fitter) check() error {
	if f.ctx == nil {
		return errors.New("train: Fit: nil Context (use context.Background())")
	}
	if nilcheck.IsNil(f.m) {
		return errors.New("train: Fit: nil model")
	}
	f.w = 1
	if mo, ok := f.m.(MultiOutputModel); ok {
		if f.w = mo.NumOutputs(); f.w < 1 {
			return fmt.Errorf("train: Fit: model has %d outputs", f.w)
		}
	}
	if f.src != nil {
		if err := f.checkSource(); err != nil {
			return err
		}
	} else if err := f.checkData(); err != nil {
		return err
	}
	return f.checkConfig()
}

// checkData checks Fit's in-memory data: finite inputs and targets, and
// whatever a DataValidator model asks.
func (f *fitter) checkData() error {
	if f.x == nil {
		return errors.New("train: Fit: nil data")
	}
	f.n, f.d = f.x.Dims()
	n, d := f.n, f.d
	if len(f.y) != n*f.w {
		if f.w > 1 {
			return fmt.Errorf("train: Fit: x has %d rows of %d outputs but y has %d values", n, f.w, len(f.y))
		}
		return fmt.Errorf("train: Fit: x has %d rows but y has %d values", n, len(f.y))
	}
	if n == 0 || d == 0 {
		return errors.New("train: Fit: no data")
	}
	for i := 0; i < n; i++ {
		if !floats.AllFinite(f.x.RawRowView(i)) {
			return fmt.Errorf("train: Fit: input row %d holds NaN or Inf", i)
		}
	}
	for i, v := range f.y {
		if math.IsInf(v, 0) || math.IsNaN(v) && f.w == 1 {
			return fmt.Errorf("train: Fit: target %d is %v", i, v)
		}
	}
	if v, ok := f.m.(DataValidator); ok {
		if err := v.ValidateData(f.x, f.y); err != nil {
			return fmt.Errorf("train: Fit: training data: %w", err)
		}
	}
	return nil
}

// checkConfig checks the configuration.
func (f *fitter) checkConfig() error {
	cfg := f.cfg
	if cfg.Epochs < 0 || cfg.MaxSteps < 0 || cfg.BatchSize < 0 || cfg.Patience < 0 || cfg.MaxFailures < 0 || cfg.ValidateEvery < 0 {
		return errors.New("train: Fit: negative Epochs, MaxSteps, BatchSize, Patience, MaxFailures or ValidateEvery")
	}
	if cfg.Epochs == 0 && cfg.MaxSteps == 0 {
		return errors.New("train: Fit: set Epochs or MaxSteps")
	}
	for _, c := range []struct {
		v      float64
		lo, hi float64
		name   string
	}{{cfg.Beta1, 0, 1, "Beta1"}, {cfg.Beta2, 0, 1, "Beta2"}} {
		if !(c.v >= c.lo && c.v < c.hi) {
			return fmt.Errorf("train: Fit: %s = %v outside [0, 1)", c.name, c.v)
		}
	}
	if !(cfg.Epsilon >= 0) || math.IsInf(cfg.Epsilon, 0) || !(cfg.NaturalStep >= 0 && cfg.NaturalStep <= 1) || math.IsNaN(cfg.MinDelta) {
		return fmt.Errorf("train: Fit: bad Epsilon %v, NaturalStep %v or MinDelta %v", cfg.Epsilon, cfg.NaturalStep, cfg.MinDelta)
	}
	if !(cfg.MinRateScale >= 0 && cfg.MinRateScale <= 1) {
		return fmt.Errorf("train: Fit: MinRateScale %v outside [0, 1]", cfg.MinRateScale)
	}
	return nil
}

// defaults fills in the configuration's defaults.
func (f *fitter) defaults() {
	cfg := f.cfg
	f.minScale = cfg.MinRateScale
	if f.minScale == 0 {
		f.minScale = 0x1p-40
	}
	f.sched = cfg.Schedule
	if f.sched == nil {
		f.sched = Constant(0.01)
	}
	f.maxFail = cfg.MaxFailures
	if f.maxFail == 0 {
		f.maxFail = 10
	}
	f.recoverAfter = cfg.RecoverAfter
	if f.recoverAfter == 0 {
		f.recoverAfter = 100
	}
	f.validateEvery = cfg.ValidateEvery
	if f.validateEvery == 0 {
		f.validateEvery = 1
	}
	f.logf = cfg.Logf
	if f.logf == nil {
		f.logf = func(string, ...any) {}
	}
	f.batch = cfg.BatchSize
	if f.batch == 0 || f.batch > f.n {
		f.batch = f.n
	}
}

// setup allocates the loop's buffers, restores a Resume state and sets up
// natural-gradient steps; the model's random state is restored last, so
// that a Fit that refuses its configuration leaves the model as it was.
func (f *fitter) setup() error {
	cfg := f.cfg
	// A gp.NaturalGradient's factors are checked here, as VariationalParams
	// cannot return an error.
	if lc, ok := f.m.(layoutChecker); ok {
		if err := lc.CheckLayout(cfg.NaturalStep > 0); err != nil {
			return fmt.Errorf("train: Fit: %w", err)
		}
	}
	p := f.m.NumParams()
	f.p = p
	f.params = make([]float64, p)
	f.m.Params(f.params)
	f.grad = make([]float64, p)
	f.good = make([]float64, p)
	f.goodGrad = make([]float64, p)
	f.best = make([]float64, p)
	f.bestScore = math.Inf(-1)
	f.adam = NewAdam(p)
	if cfg.Resume != nil {
		if err := f.resume(cfg.Resume); err != nil {
			return err
		}
	}
	if cfg.Beta1 != 0 {
		f.adam.Beta1 = cfg.Beta1
	}
	if cfg.Beta2 != 0 {
		f.adam.Beta2 = cfg.Beta2
	}
	if cfg.Epsilon != 0 {
		f.adam.Epsilon = cfg.Epsilon
	}
	if err := f.setupNatural(); err != nil {
		return err
	}
	if r := cfg.Resume; r != nil && r.Random != nil {
		if err := f.m.(RandomStater).SetRandomState(r.Random); err != nil {
			return fmt.Errorf("train: Fit: Resume: %w", err)
		}
	}
	f.xb = mat.NewDense(f.batch, f.d, nil)
	f.yb = make([]float64, f.batch*f.w)
	f.rs, _ = f.m.(RandomStater)
	if r := cfg.Resume; r != nil {
		f.sinceImprove, f.failures = r.SinceImprove, r.Failures
		f.epSum, f.epCount, f.epRejectedBefore = r.EpochObjective, r.EpochSteps, r.Rejected-r.EpochRejected
	}
	return nil
}

// resume checks a Resume state against the data and the model and takes
// its counts, Adam state and best validated parameters.
func (f *fitter) resume(r *Checkpoint) error {
	n, p := f.n, f.p
	nb := (n + f.batch - 1) / f.batch // mini-batches per epoch
	if r.Epochs < 0 || r.Batches < 0 || r.Batches > nb || r.Steps < 0 || r.Accepted < 0 ||
		r.Failures < 0 || r.Rejected < 0 || r.EpochSteps < 0 || r.EpochRejected < 0 || r.EpochRejected > r.Rejected ||
		math.IsNaN(r.EpochObjective) || math.IsInf(r.EpochObjective, 0) || !(r.RateScale > 0 && r.RateScale <= 1) {
		return fmt.Errorf("train: Fit: bad Resume state (epochs %d, batches %d of %d, steps %d, accepted %d, failures %d, rejected %d, rate scale %v, epoch sums %v/%d/%d)",
			r.Epochs, r.Batches, nb, r.Steps, r.Accepted, r.Failures, r.Rejected, r.RateScale, r.EpochObjective, r.EpochSteps, r.EpochRejected)
	}
	// The counts must be those of a run on these data in mini-batches of
	// this size: replaying the shuffles of the finished epochs takes one
	// shuffle per epoch, which a forged or damaged Epochs could make last
	// for ever. Each rejection halves RateScale and only an accepted step
	// can double it, so Rejected is at most Steps + log2(1/RateScale)
	// (< Steps + 1075).
	if halvings := int(math.Ceil(-math.Log2(r.RateScale))); r.Rejected-r.Steps > halvings {
		return fmt.Errorf("train: Fit: bad Resume state: Rejected %d exceeds Steps %d plus the %d halvings of RateScale %v", r.Rejected, r.Steps, halvings, r.RateScale)
	}
	// Every mini-batch drawn was accepted (Steps) or rejected. Every
	// finished epoch drew at least one, except one ended by MaxSteps
	// before its first, and at most nb.
	if r.Steps > math.MaxInt-r.Rejected {
		return fmt.Errorf("train: Fit: bad Resume state: Steps %d + Rejected %d overflows", r.Steps, r.Rejected)
	}
	drawn := r.Steps + r.Rejected
	if r.Epochs-1 > drawn {
		return fmt.Errorf("train: Fit: bad Resume state: Epochs %d, but only %d mini-batches were drawn (Steps %d + Rejected %d)", r.Epochs, drawn, r.Steps, r.Rejected)
	}
	if rest := drawn - r.Batches; rest > 0 && r.Epochs < (rest-1)/nb+1 {
		return fmt.Errorf("train: Fit: bad Resume state: Epochs %d, but the %d mini-batches drawn (Steps %d + Rejected %d) besides the next epoch's %d (Batches) take %d epochs of %d",
			r.Epochs, drawn, r.Steps, r.Rejected, r.Batches, (rest-1)/nb+1, nb)
	}
	if err := f.adam.SetState(r.Adam); err != nil {
		return fmt.Errorf("train: Fit: Resume: %w", err)
	}
	if r.SinceImprove < 0 || r.Best != nil && (len(r.Best) != p || r.BestEpoch < 0 || r.BestEpoch >= r.Epochs ||
		math.IsNaN(r.BestScore) || math.IsInf(r.BestScore, 0) || !floats.AllFinite(r.Best)) {
		return fmt.Errorf("train: Fit: bad Resume validation state (%d best parameters of %d, best epoch %d of %d finished, score %v, %d validations since an improvement)",
			len(r.Best), p, r.BestEpoch, r.Epochs, r.BestScore, r.SinceImprove)
	}
	if _, ok := f.m.(RandomStater); r.Random != nil && !ok {
		return errors.New("train: Fit: Resume holds a random state, but the model does not implement RandomStater")
	}
	f.step, f.startEpoch, f.accepted, f.skip = r.Steps, r.Epochs, r.Accepted, r.Batches
	if r.Best != nil {
		copy(f.best, r.Best)
		f.haveBest, f.bestScore = true, r.BestScore
		f.res.BestEpoch, f.res.BestScore = r.BestEpoch, r.BestScore
	}
	f.res.RateScale, f.res.Steps, f.res.Epochs, f.res.Rejected = r.RateScale, r.Steps, r.Epochs, r.Rejected
	return nil
}

// setupNatural takes Config.Frozen and, with Config.NaturalStep, the
// model's variational parameters, which Adam then leaves alone.
func (f *fitter) setupNatural() error {
	cfg := f.cfg
	if cfg.Frozen != nil {
		if len(cfg.Frozen) != f.p {
			return fmt.Errorf("train: Fit: Frozen has %d entries, the model %d parameters", len(cfg.Frozen), f.p)
		}
		f.frozen = append([]bool(nil), cfg.Frozen...)
	}
	if cfg.NaturalStep == 0 {
		if cfg.NaturalSharedGradient {
			return errors.New("train: Fit: NaturalSharedGradient set without NaturalStep")
		}
		return nil
	}
	nm, ok := f.m.(NaturalGradientModel)
	if !ok {
		return errors.New("train: Fit: NaturalStep set but the model does not implement NaturalGradientModel")
	}
	f.natModel = nm
	mask := make([]bool, f.p)
	nm.VariationalParams(mask)
	if cfg.NaturalSharedGradient {
		u, ok := nm.(NaturalUpdater)
		if !ok {
			return errors.New("train: Fit: NaturalSharedGradient set but the model does not implement NaturalUpdater")
		}
		f.natUpd, f.natMask, f.natNext = u, mask, make([]float64, f.p)
	}
	if f.frozen == nil {
		f.frozen = mask
	} else {
		for i, v := range mask {
			f.frozen[i] = f.frozen[i] || v
		}
	}
	return nil
}

// finish puts the model at the parameters to keep and fills the result.
func (f *fitter) finish(reason StopReason, err error) (Result, error) {
	res := &f.res
	res.Reason = reason
	res.Elapsed = time.Since(f.start)
	keep := f.params
	switch {
	case !f.cfg.KeepLast && f.haveBest:
		keep = f.best
	case f.failures > 0 && f.haveGood:
		keep = f.good
	case f.failures > 0:
		keep = nil // never evaluated successfully: leave the model as it is
	}
	if f.cfg.KeepLast {
		res.BestEpoch, res.BestScore = -1, math.NaN()
	}
	if keep != nil {
		serr := f.m.SetParams(keep)
		if serr != nil && err == nil {
			err = fmt.Errorf("train: restoring parameters: %w", serr)
			reason = Failed
		}
		// keep was never evaluated unless it is the last good point (it is
		// the result of the last step, or the best validated parameters):
		// check it on the last mini-batch.
		if serr == nil && f.haveGood && f.lastB > 0 && len(keep) > 0 && &keep[0] != &f.good[0] {
			clear(f.grad)
			obj, ferr := f.m.Objective(f.xb.Slice(0, f.lastB, 0, f.d).(*mat.Dense), f.yb[:f.lastB*f.w], f.n, f.grad)
			if why := checkEval(obj, f.grad, ferr); why != "" {
				res.Rejected++
				f.logf("train: kept parameters rejected: %s; restored the last parameters with a finite objective", why)
				if serr := f.m.SetParams(f.good); serr != nil && err == nil {
					err = fmt.Errorf("train: restoring parameters: %w", serr)
					reason = Failed
				}
			}
		}
	}
	res.Reason = reason
	return *res, err
}

// withBest adds the validation bookkeeping to a checkpoint. It also takes
// the model's random state as it is when the checkpoint is asked for
// (during OnStep or OnEpoch: after the step, or after the epoch's
// validation), which is where a resumed run continues.
func (f *fitter) withBest(c Checkpoint) Checkpoint {
	if f.rs != nil {
		c.Random = f.rs.RandomState()
	}
	c.SinceImprove = f.sinceImprove
	if f.haveBest {
		c.Best = append([]float64(nil), f.best...)
		c.BestEpoch, c.BestScore = f.res.BestEpoch, f.bestScore
	}
	return c
}

// stepCheckpoint is StepInfo.Checkpoint: the state after the step just
// taken.
func (f *fitter) stepCheckpoint() Checkpoint {
	return f.withBest(Checkpoint{Epochs: f.stepEpoch, Batches: f.stepBatch, Steps: f.step, RateScale: f.res.RateScale, Accepted: f.accepted,
		Failures: f.failures, Rejected: f.res.Rejected, Adam: f.adam.State(),
		EpochObjective: f.epSum, EpochSteps: f.epCount, EpochRejected: f.res.Rejected - f.epRejectedBefore})
}

// reject handles a failed evaluation at the current parameters: it halves
// the learning-rate multiplier and retakes the step from the last good
// point, or returns an error wrapping ErrDiverged when the back-off is
// exhausted.
func (f *fitter) reject(step, epoch int, why string) error {
	f.failures++
	f.res.Rejected++
	f.lastWhy = why
	if f.failures >= f.maxFail {
		return fmt.Errorf("%w: %d consecutive steps rejected, last at step %d (epoch %d): %s; kept the last parameters with a finite objective",
			ErrDiverged, f.failures, step, epoch, why)
	}
	if f.res.RateScale/2 < f.minScale {
		return fmt.Errorf("%w: the back-off would lower the learning-rate multiplier to %g, below MinRateScale %g, after %d rejections in all, never MaxFailures in a row; the last at step %d (epoch %d): %s; kept the last parameters with a finite objective",
			ErrDiverged, f.res.RateScale/2, f.minScale, f.res.Rejected, step, epoch, why)
	}
	f.res.RateScale /= 2
	f.logf("train: step %d (epoch %d) rejected: %s; learning-rate multiplier halved to %g", step, epoch, why, f.res.RateScale)
	if !f.haveGood {
		return nil // no good point yet: try the next mini-batch at the same parameters
	}
	rate := f.sched.Rate(step) * f.res.RateScale
	f.adam.retake(f.params, f.good, f.goodGrad, rate)
	if err := f.m.SetParams(f.params); err != nil {
		// Stay at the good point; the next evaluation retries from there.
		copy(f.params, f.good)
		if err2 := f.m.SetParams(f.params); err2 != nil {
			return fmt.Errorf("train: model rejected its own last good parameters: %w", err2)
		}
	}
	return nil
}

// noneAccepted returns the error of a run that ends (by its epoch limit or
// early stopping) with rejected steps and no accepted one since its start
// (a resumed run counts those before the checkpoint, so that it ends as
// the uninterrupted run would): the rejections were never MaxFailures in a
// row (evaluations at the last good point succeeded, the steps from it did
// not), and the back-off did not find a rate the model could take.
func (f *fitter) noneAccepted() error {
	if f.step > 0 || f.res.Rejected == 0 {
		return nil
	}
	last := ""
	if f.lastWhy != "" {
		last = ", the last: " + f.lastWhy
	}
	return fmt.Errorf("%w: no step accepted in %d epochs: %d steps rejected%s; kept the last parameters with a finite objective",
		ErrDiverged, f.res.Epochs, f.res.Rejected, last)
}

// resumedDone reports whether a Resume state leaves nothing to do, and
// why: a checkpoint from the end of a run's last epoch (the run stopped
// there at its step limit or by early stopping), or one at or past the
// epoch limit.
func (f *fitter) resumedDone() (StopReason, bool) {
	r, cfg := f.cfg.Resume, f.cfg
	switch {
	case r == nil:
		return 0, false
	case r.Batches == 0 && cfg.MaxSteps > 0 && f.step >= cfg.MaxSteps:
		return Finished, true
	case r.Batches == 0 && cfg.Validate != nil && cfg.Patience > 0 && f.sinceImprove >= cfg.Patience:
		return EarlyStopped, true
	case cfg.Epochs > 0 && f.startEpoch >= cfg.Epochs:
		return Finished, true
	}
	return 0, false
}

// atStepLimit reports whether MaxSteps steps have been taken.
func (f *fitter) atStepLimit() bool { return f.cfg.MaxSteps > 0 && f.step >= f.cfg.MaxSteps }

// run is the training loop: epochs of shuffled mini-batches until the
// epoch or step limit, early stopping, a callback's ErrStop, an error or
// cancellation.
func (f *fitter) run() (Result, error) {
	f.start = time.Now()
	if reason, done := f.resumedDone(); done {
		return f.finish(reason, nil)
	}
	// Replay the shuffles of the finished epochs, unless no mini-batch is
	// left to draw (a resume at the step limit only finishes its epoch).
	// By the checks of Resume the epochs replayed are fewer than
	// cfg.Epochs or, with MaxSteps alone, than 2·MaxSteps + 1076; the
	// replay heeds ctx all the same.
	f.rng = rand.New(rand.NewPCG(f.cfg.Seed, 0x7a11ab1e))
	if f.src == nil {
		f.perm = make([]int, f.n)
		for i := range f.perm {
			f.perm[i] = i
		}
	}
	for e := 0; f.src == nil && e < f.startEpoch && !f.atStepLimit(); e++ {
		if e%64 == 0 {
			if err := f.ctx.Err(); err != nil {
				f.res.Reason = Canceled
				return f.res, err
			}
		}
		f.shuffle()
	}
	for epoch := f.startEpoch; f.cfg.Epochs == 0 || epoch < f.cfg.Epochs; epoch++ {
		if e := f.epoch(epoch); e != nil {
			return e.res, e.err
		}
		if f.atStepLimit() {
			break
		}
	}
	if err := f.noneAccepted(); err != nil {
		return f.finish(Failed, err)
	}
	return f.finish(Finished, nil)
}

func (f *fitter) shuffle() {
	if f.src != nil {
		return // the source orders its own rows
	}
	f.rng.Shuffle(f.n, func(i, j int) { f.perm[i], f.perm[j] = f.perm[j], f.perm[i] })
}

// ending is how a run ends: Fit's result and error.
type ending struct {
	res Result
	err error
}

// end finishes the run (see finish) and returns its ending.
func (f *fitter) end(reason StopReason, err error) *ending {
	res, err := f.finish(reason, err)
	return &ending{res, err}
}

// epoch runs one epoch and its end; it returns nil if training goes on.
func (f *fitter) epoch(epoch int) *ending {
	epochStart := time.Now()
	f.shuffle()
	lo0 := 0
	if epoch == f.startEpoch && f.skip > 0 {
		lo0 = f.skip * f.batch // the sums of the epoch's earlier steps came with the checkpoint
	} else {
		f.epSum, f.epCount, f.epRejectedBefore = 0, 0, f.res.Rejected
	}
	if f.src != nil {
		if err := f.openEpoch(epoch, lo0); err != nil {
			return f.badBatch(err)
		}
	}
	for lo := lo0; lo < f.n; lo += f.batch {
		if f.atStepLimit() {
			break // end of training inside an epoch: still validate it below
		}
		if err := f.ctx.Err(); err != nil {
			return f.end(Canceled, err)
		}
		if e := f.trainStep(epoch, lo); e != nil {
			return e
		}
	}
	if f.src != nil {
		if err := f.closeEpoch(epoch); err != nil {
			return f.end(Failed, err)
		}
	}
	return f.endEpoch(epoch, epochStart)
}

// trainStep draws the mini-batch at lo of the epoch's permutation,
// evaluates the objective and takes the step (natural and Adam), or
// rejects it. It returns nil if training goes on.
func (f *fitter) trainStep(epoch, lo int) *ending {
	cfg, n, d := f.cfg, f.n, f.d
	b := min(f.batch, n-lo)
	if f.src != nil {
		if err := f.readBatch(epoch, b); err != nil {
			return f.badBatch(err)
		}
	} else {
		for k := 0; k < b; k++ {
			copy(f.xb.RawRowView(k), f.x.RawRowView(f.perm[lo+k]))
			r := f.perm[lo+k]
			copy(f.yb[k*f.w:(k+1)*f.w], f.y[r*f.w:(r+1)*f.w])
		}
	}
	xv := f.xb.Slice(0, b, 0, d).(*mat.Dense)
	f.lastB = b
	rate := f.sched.Rate(f.step)
	if !(rate > 0) || math.IsInf(rate, 0) {
		return f.end(Failed, fmt.Errorf("train: Fit: schedule gave learning rate %v at step %d", rate, f.step))
	}
	// rejected handles a failed evaluation; training goes on unless the
	// back-off is exhausted.
	rejected := func(why string) *ending {
		if err := f.reject(f.step, epoch, why); err != nil {
			return f.end(Failed, err)
		}
		return nil
	}

	why := ""
	if f.natModel != nil && f.natUpd == nil {
		if err := f.natModel.NaturalStep(xv, f.yb[:b*f.w], n, cfg.NaturalStep*f.res.RateScale); err != nil {
			why = "natural-gradient step failed: " + err.Error()
		} else {
			f.m.Params(f.params)
		}
	}
	var obj float64
	if why == "" {
		clear(f.grad)
		var err error
		obj, err = f.m.Objective(xv, f.yb[:b*f.w], n, f.grad)
		why = checkEval(obj, f.grad, err)
	}
	if why != "" {
		return rejected(why)
	}
	// The natural step uses the full gradient, before Frozen zeroes the
	// variational entries for Adam.
	var natErr error
	warm := false
	if f.natUpd != nil {
		natErr = f.natUpd.NaturalUpdate(f.params, f.grad, f.natNext, cfg.NaturalStep*f.res.RateScale)
		// The first step of a run moves q only (see
		// Config.NaturalSharedGradient).
		warm = f.step == 0 && !f.haveGood
		if warm && natErr != nil {
			return rejected("natural-gradient step failed: " + natErr.Error())
		}
	}
	if f.failures > 0 {
		f.accepted = 0
	}
	f.failures = 0
	f.haveGood = true
	for i, fr := range f.frozen {
		if fr {
			f.grad[i] = 0
		}
	}
	// The evaluated point becomes the last good one (buffers are swapped,
	// not copied) and the step writes into the other.
	f.good, f.params = f.params, f.good
	f.goodGrad, f.grad = f.grad, f.goodGrad
	rate *= f.res.RateScale
	if warm {
		copy(f.params, f.good)
	} else {
		f.adam.ascendTo(f.params, f.good, f.goodGrad, rate)
	}
	if natErr != nil {
		return rejected("natural-gradient step failed: " + natErr.Error())
	}
	if f.natUpd != nil {
		for i, v := range f.natMask {
			if v {
				f.params[i] = f.natNext[i]
			}
		}
	}
	if err := f.m.SetParams(f.params); err != nil {
		return rejected("model rejected the updated parameters: " + err.Error())
	}
	return f.accept(epoch, lo, obj, rate)
}

// accept counts the step just taken, raises the learning-rate multiplier
// after RecoverAfter accepted steps and calls OnStep.
func (f *fitter) accept(epoch, lo int, obj, rate float64) *ending {
	f.step++
	f.res.Steps = f.step
	f.accepted++
	if f.res.RateScale < 1 && f.recoverAfter > 0 && f.accepted%f.recoverAfter == 0 {
		f.res.RateScale = math.Min(1, 2*f.res.RateScale)
		f.logf("train: step %d: %d steps accepted since the last rejection; learning-rate multiplier raised to %g", f.step, f.accepted, f.res.RateScale)
	}
	f.res.Objective = obj
	f.epSum += obj
	f.epCount++
	if f.cfg.OnStep == nil {
		return nil
	}
	f.stepEpoch, f.stepBatch = epoch, lo/f.batch+1
	err := f.cfg.OnStep(StepInfo{Step: f.step, Epoch: epoch, Objective: obj, Rate: rate, Elapsed: time.Since(f.start), Checkpoint: f.stepCheckpoint})
	if errors.Is(err, ErrStop) {
		return f.end(Stopped, nil)
	} else if err != nil {
		return f.end(Failed, err)
	}
	return nil
}

// endEpoch validates after the epoch (keeping the best parameters and
// deciding on early stopping) and calls OnEpoch. It returns nil if
// training goes on.
func (f *fitter) endEpoch(epoch int, epochStart time.Time) *ending {
	info := EpochInfo{Epoch: epoch, Steps: f.step, Objective: math.NaN(), Rejected: f.res.Rejected - f.epRejectedBefore}
	ckEpoch, ckSteps, ckScale, ckAccepted, ckFailures, ckRejected := epoch+1, f.step, f.res.RateScale, f.accepted, f.failures, f.res.Rejected
	info.Checkpoint = func() Checkpoint {
		return f.withBest(Checkpoint{Epochs: ckEpoch, Steps: ckSteps, RateScale: ckScale, Accepted: ckAccepted,
			Failures: ckFailures, Rejected: ckRejected, Adam: f.adam.State()})
	}
	if f.epCount > 0 {
		info.Objective = f.epSum / float64(f.epCount)
	}
	f.res.Epochs = epoch + 1
	stopEarly := false
	if f.cfg.Validate != nil && (epoch+1)%f.validateEvery == 0 {
		var err error
		if stopEarly, err = f.validate(epoch, &info); err != nil {
			return f.end(Failed, err)
		}
	}
	info.Duration = time.Since(epochStart)
	info.Elapsed = time.Since(f.start)
	if f.cfg.OnEpoch != nil {
		err := f.cfg.OnEpoch(info)
		if errors.Is(err, ErrStop) {
			return f.end(Stopped, nil)
		} else if err != nil {
			return f.end(Failed, err)
		}
	}
	if stopEarly {
		if err := f.noneAccepted(); err != nil {
			return f.end(Failed, err)
		}
		return f.end(EarlyStopped, nil)
	}
	return nil
}

// validate scores the parameters after the epoch, records the score in
// info, keeps the best parameters and reports whether Patience is used up.
func (f *fitter) validate(epoch int, info *EpochInfo) (stopEarly bool, err error) {
	score, metrics, err := f.cfg.Validate()
	if err != nil {
		return false, fmt.Errorf("train: validation after epoch %d: %w", epoch, err)
	}
	info.Validated, info.Score, info.Metrics = true, score, metrics
	improved := false
	if math.IsNaN(score) || math.IsInf(score, 0) {
		f.logf("train: epoch %d: validation score %v is not finite", epoch, score)
	} else {
		improved = !f.haveBest || score > f.bestScore+f.cfg.MinDelta
		if !f.haveBest || score > f.bestScore {
			info.Best = true
			f.bestScore = score
			copy(f.best, f.params)
			f.haveBest = true
			f.res.BestEpoch, f.res.BestScore = epoch, score
		}
	}
	if improved {
		f.sinceImprove = 0
		return false, nil
	}
	f.sinceImprove++
	if f.cfg.Patience > 0 && f.sinceImprove >= f.cfg.Patience {
		f.logf("train: early stopping after epoch %d: no validation improvement in %d validations (best %g at epoch %d)",
			epoch, f.sinceImprove, f.bestScore, f.res.BestEpoch)
		return true, nil
	}
	return false, nil
}
