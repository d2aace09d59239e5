package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestBLRGradient(t *testing.T) {
	x, y := blrData(30, 1)
	b := newBLR(3)
	p := make([]float64, b.NumParams())
	for i := range p {
		p[i] = 0.1 * float64(i%5-2)
	}
	b.SetParams(p)
	g := make([]float64, len(p))
	xb, _ := x.Slice(0, 10, 0, 3).(*mat.Dense)
	if _, err := b.Objective(xb, y[:10], 30, g); err != nil {
		t.Fatal(err)
	}
	for i := range p {
		const h = 1e-6
		q := append([]float64(nil), p...)
		q[i] += h
		b.SetParams(q)
		fp, _ := b.Objective(xb, y[:10], 30, make([]float64, len(p)))
		q[i] -= 2 * h
		b.SetParams(q)
		fm, _ := b.Objective(xb, y[:10], 30, make([]float64, len(p)))
		if fd := (fp - fm) / (2 * h); math.Abs(fd-g[i]) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("param %d: gradient %v, finite difference %v", i, g[i], fd)
		}
	}
}

func TestScheduleAndAdam(t *testing.T) {
	s := StepDecay{Initial: 0.1, Factor: 0.5, Every: 10}
	for _, c := range []struct {
		step int
		want float64
	}{{0, 0.1}, {9, 0.1}, {10, 0.05}, {25, 0.025}} {
		if got := s.Rate(c.step); math.Abs(got-c.want) > 1e-17 {
			t.Errorf("StepDecay.Rate(%d) = %v, want %v", c.step, got, c.want)
		}
	}
	if Constant(0.3).Rate(1000) != 0.3 || (StepDecay{Initial: 1, Factor: 0.1}).Rate(100) != 1 {
		t.Error("Constant / disabled decay")
	}
	// First Adam step: m = (1−β1)g, v = (1−β2)g², so the move is
	// rate·g/(|g| + ε/√(1−β2)).
	a := NewAdam(2)
	p := []float64{1, 1}
	a.Ascend(p, []float64{4, -1e-9}, 0.1)
	want0 := 1 + 0.1*4/(4+1e-8/math.Sqrt(0.001))
	want1 := 1 - 0.1*1e-9/(1e-9+1e-8/math.Sqrt(0.001))
	if math.Abs(p[0]-want0) > 1e-15 || math.Abs(p[1]-want1) > 1e-15 || a.Steps() != 1 {
		t.Errorf("first Adam step: %v, want %v %v", p, want0, want1)
	}
}

// panics reports whether f panics, with the panic's message.
func panics(f func()) (msg string, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			msg, ok = fmt.Sprint(r), true
		}
	}()
	f()
	return "", false
}

// TestAdamBadUse checks that Adam's documented programming errors panic
// with a message saying what is wrong, rather than writing NaN into the
// parameters (Beta1 = 1, a NaN rate, the zero Adam's ε = 0 on an entry
// without gradient) or panicking in makeslice, and that a restored step
// count of math.MaxInt saturates instead of overflowing into NaN steps.
func TestAdamBadUse(t *testing.T) {
	if msg, ok := panics(func() { NewAdam(-1) }); !ok || !strings.Contains(msg, "NewAdam: negative size -1") {
		t.Errorf("NewAdam(-1): panic %v %q", ok, msg)
	}
	for _, c := range []struct {
		name string
		set  func(a *Adam)
		rate float64
		want string
	}{
		{"Beta1 = 1", func(a *Adam) { a.Beta1 = 1 }, 0.1, "Beta1 1"},
		{"Beta1 < 0", func(a *Adam) { a.Beta1 = -1 }, 0.1, "Beta1 -1"},
		{"Beta2 = 1", func(a *Adam) { a.Beta2 = 1 }, 0.1, "Beta2 1"},
		{"Beta2 NaN", func(a *Adam) { a.Beta2 = math.NaN() }, 0.1, "Beta2 NaN"},
		{"Epsilon 0", func(a *Adam) { a.Epsilon = 0 }, 0.1, "Epsilon 0"},
		{"Epsilon Inf", func(a *Adam) { a.Epsilon = math.Inf(1) }, 0.1, "Epsilon +Inf"},
		{"zero Adam", func(a *Adam) { *a = Adam{m: a.m, v: a.v} }, 0.1, "Epsilon 0"},
		{"rate NaN", func(*Adam) {}, math.NaN(), "learning rate NaN"},
		{"rate Inf", func(*Adam) {}, math.Inf(-1), "learning rate -Inf"},
		{"rate overflows", func(a *Adam) { a.Beta1 = 0.999 }, 1e308, "learning rate 1e+308"},
	} {
		a := NewAdam(2)
		c.set(a)
		p := []float64{1, 2}
		msg, ok := panics(func() { a.Ascend(p, []float64{1, 0}, c.rate) })
		if !ok || !strings.Contains(msg, c.want) || p[0] != 1 || p[1] != 2 || a.Steps() != 0 {
			t.Errorf("%s: panic %v %q, params %v, %d steps", c.name, ok, msg, p, a.Steps())
		}
	}
	// Rates Fit never passes but that give finite steps are fine.
	for _, rate := range []float64{0, -0.1} {
		a := NewAdam(2)
		p := []float64{1, 2}
		a.Ascend(p, []float64{1, 0}, rate)
		if want := 1 + rate/(1+1e-8/math.Sqrt(0.001)); math.Abs(p[0]-want) > 1e-15 || p[1] != 2 {
			t.Errorf("rate %v: %v", rate, p)
		}
	}
	a := NewAdam(2)
	if err := a.SetState(AdamState{M: []float64{0, 0}, V: []float64{0, 0}, T: math.MaxInt}); err != nil {
		t.Fatal(err)
	}
	p := []float64{1, 2}
	for range 2 {
		a.Ascend(p, []float64{1, 0}, 0.1)
	}
	if !(p[0] > 1 && p[0] < 2) || p[1] != 2 || a.Steps() != math.MaxInt { // no bias correction: two steps of about 0.3 and 0.4
		t.Errorf("after steps from T = MaxInt: params %v, %d steps", p, a.Steps())
	}
}

// quad is f(p) = −½ Σ (p_i − c_i)², optionally NaN beyond a cliff.
type quad struct {
	p, c  []float64
	cliff float64 // objective is NaN where any p_i > cliff (if cliff != 0)
	evals int
	// failAfter > 0 makes every evaluation after the first failAfter fail.
	failAfter int
	lastGood  []float64
	errMode   bool    // fail with an error rather than NaN
	maxAbs    float64 // SetParams refuses |p_i| > maxAbs (if maxAbs != 0)
	failEvery int     // every failEvery-th evaluation fails (if failEvery > 0)
}

func (q *quad) NumParams() int       { return len(q.p) }
func (q *quad) Params(dst []float64) { copy(dst, q.p) }
func (q *quad) SetParams(src []float64) error {
	for _, v := range src {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("quad: non-finite")
		}
		if q.maxAbs != 0 && math.Abs(v) > q.maxAbs {
			return errors.New("quad: out of range")
		}
	}
	copy(q.p, src)
	return nil
}
func (q *quad) Objective(x *mat.Dense, y []float64, n int, grad []float64) (float64, error) {
	q.evals++
	bad := q.failAfter > 0 && q.evals > q.failAfter || q.failEvery > 0 && q.evals%q.failEvery == 0
	var f float64
	for i, v := range q.p {
		f -= 0.5 * (v - q.c[i]) * (v - q.c[i])
		grad[i] = q.c[i] - v
		if q.cliff != 0 && v > q.cliff {
			bad = true
		}
	}
	if bad {
		if q.errMode {
			return 0, errors.New("matrix not positive definite")
		}
		grad[0] = math.NaN()
		return f, nil
	}
	q.lastGood = append(q.lastGood[:0], q.p...)
	return f, nil
}

func dummyData(n int) (*mat.Dense, []float64) {
	x := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, float64(i))
	}
	return x, make([]float64, n)
}

func TestFitQuadratic(t *testing.T) {
	q := &quad{p: []float64{0, 0, 0}, c: []float64{1, -2, 3}}
	x, y := dummyData(10)
	res, err := Fit(context.Background(), q, x, y, Config{MaxSteps: 3000, BatchSize: 3, Schedule: StepDecay{0.1, 0.3, 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 3000 || res.Reason != Finished || res.Rejected != 0 {
		t.Errorf("result %+v", res)
	}
	for i := range q.p {
		if math.Abs(q.p[i]-q.c[i]) > 1e-4 {
			t.Errorf("p = %v, want %v", q.p, q.c)
			break
		}
	}
}

// TestFitReachesCollapsedOptimum trains the full-batch BLR ELBO and
// checks it reaches the maximum over σ² of the exact log marginal
// likelihood (the collapsed bound of this model), with q at the posterior.
func TestFitReachesCollapsedOptimum(t *testing.T) {
	if testing.Short() {
		t.Skip("long convergence run; skipped with -short (the race-detector CI run)")
	}
	x, y := blrData(200, 2)
	b := newBLR(3)
	sOpt, lmlOpt := b.optimalLogML(x, y)
	res, err := Fit(context.Background(), b, x, y, Config{MaxSteps: 6000, Schedule: StepDecay{0.05, 0.3, 2000}})
	if err != nil {
		t.Fatal(err)
	}
	g := make([]float64, b.NumParams())
	elbo, _ := b.Objective(x, y, 200, g)
	if elbo > lmlOpt+1e-9 {
		t.Errorf("ELBO %v exceeds the optimal log marginal likelihood %v", elbo, lmlOpt)
	}
	if lmlOpt-elbo > 1e-4 {
		t.Errorf("ELBO %v is %v below the optimum %v (steps %d)", elbo, lmlOpt-elbo, lmlOpt, res.Steps)
	}
	if math.Abs(b.s-sOpt) > 1e-2 {
		t.Errorf("log noise %v, optimum %v", b.s, sOpt)
	}
	mean, _ := b.posterior(x, y, b.s)
	for i := 0; i < 3; i++ {
		if math.Abs(b.m[i]-mean.AtVec(i)) > 1e-3 {
			t.Errorf("q mean %v, posterior mean %v", b.m, mean.RawVector().Data)
			break
		}
	}
}

// TestFitMiniBatchImproves checks that mini-batch training improves the
// full-batch ELBO on average, epoch over epoch, and ends near the optimum.
func TestFitMiniBatchImproves(t *testing.T) {
	if testing.Short() {
		t.Skip("long convergence run; skipped with -short (the race-detector CI run)")
	}
	x, y := blrData(200, 3)
	b := newBLR(3)
	_, lmlOpt := b.optimalLogML(x, y)
	var full []float64
	g := make([]float64, b.NumParams())
	cfg := Config{Epochs: 500, BatchSize: 20, Schedule: StepDecay{0.05, 0.3, 1500}, Seed: 1,
		OnEpoch: func(EpochInfo) error {
			f, _ := b.Objective(x, y, 200, g)
			full = append(full, f)
			return nil
		}}
	res, err := Fit(context.Background(), b, x, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Epochs != 500 || res.Steps != 5000 {
		t.Fatalf("epochs %d steps %d", res.Epochs, res.Steps)
	}
	// Means over consecutive blocks of 50 epochs increase (up to noise
	// once converged).
	for k := 1; k < 10; k++ {
		prev, cur := mean(full[(k-1)*50:k*50]), mean(full[k*50:(k+1)*50])
		if cur < prev-0.01 {
			t.Errorf("block %d mean ELBO %v below block %d mean %v", k, cur, k-1, prev)
		}
		t.Logf("block %d: mean full-batch ELBO %.6f (optimum %.6f)", k, cur, lmlOpt)
	}
	if full[0] >= full[499] {
		t.Errorf("no improvement: %v → %v", full[0], full[499])
	}
	if gap := lmlOpt - full[499]; gap > 0.03 || gap < -1e-9 {
		t.Errorf("final ELBO %v vs optimum %v", full[499], lmlOpt)
	}
}

func mean(v []float64) float64 {
	var s float64
	for _, a := range v {
		s += a
	}
	return s / float64(len(v))
}

func TestFitReproducible(t *testing.T) {
	x, y := blrData(97, 4)
	run := func(seed uint64) []float64 {
		b := newBLR(3)
		if _, err := Fit(context.Background(), b, x, y, Config{Epochs: 5, BatchSize: 10, Seed: seed}); err != nil {
			t.Fatal(err)
		}
		p := make([]float64, b.NumParams())
		b.Params(p)
		return p
	}
	a, b2, c := run(11), run(11), run(12)
	same := true
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b2[i]) {
			t.Fatalf("same seed, param %d differs: %v vs %v", i, a[i], b2[i])
		}
		if a[i] != c[i] {
			same = false
		}
	}
	if same {
		t.Error("different seeds gave identical parameters")
	}
}

func TestFitNonFiniteBackoff(t *testing.T) {
	q := &quad{p: []float64{0, 0}, c: []float64{2.9, -1}, cliff: 3}
	x, y := dummyData(4)
	var log []string
	res, err := Fit(context.Background(), q, x, y, Config{MaxSteps: 400, Schedule: Constant(1), RecoverAfter: -1,
		Logf: func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rejected == 0 || res.RateScale != math.Pow(0.5, float64(res.Rejected)) || len(log) != res.Rejected {
		t.Errorf("rejected %d, rate scale %v, %d log lines", res.Rejected, res.RateScale, len(log))
	}
	if !strings.Contains(log[0], "rejected: gradient entry 0 is NaN; learning-rate multiplier halved to 0.5") {
		t.Errorf("log: %q", log[0])
	}
	for i, v := range q.p {
		if math.IsNaN(v) || v > 3 || math.Abs(v-q.c[i]) > 1e-6 {
			t.Errorf("params %v, want near %v", q.p, q.c)
		}
	}
}

func TestFitDivergesKeepsLastGood(t *testing.T) {
	for _, errMode := range []bool{false, true} {
		q := &quad{p: []float64{0, 0}, c: []float64{1, 1}, failAfter: 7, errMode: errMode}
		x, y := dummyData(4)
		res, err := Fit(context.Background(), q, x, y, Config{MaxSteps: 100, MaxFailures: 4})
		if !errors.Is(err, ErrDiverged) || res.Reason != Failed {
			t.Fatalf("errMode %v: err %v reason %v", errMode, err, res.Reason)
		}
		want := "gradient entry 0 is NaN"
		if errMode {
			want = "matrix not positive definite"
		}
		if !strings.Contains(err.Error(), "4 consecutive steps rejected") || !strings.Contains(err.Error(), want) {
			t.Errorf("message %q", err)
		}
		if res.Steps != 7 || res.Rejected != 4 {
			t.Errorf("steps %d rejected %d", res.Steps, res.Rejected)
		}
		for i := range q.p {
			if q.p[i] != q.lastGood[i] {
				t.Errorf("kept %v, last good %v", q.p, q.lastGood)
			}
		}
	}
	// Bad from the very first evaluation: parameters are left untouched.
	q := &quad{p: []float64{5, 5}, c: []float64{1, 1}, cliff: 3}
	x, y := dummyData(4)
	_, err := Fit(context.Background(), q, x, y, Config{MaxSteps: 100})
	if !errors.Is(err, ErrDiverged) || q.p[0] != 5 {
		t.Errorf("err %v params %v", err, q.p)
	}
}

// A learning rate far too large leads every step to parameters the model
// refuses, while the evaluations at the last good point succeed, so the
// rejections are never MaxFailures in a row. A run that ends that way, with
// no step accepted, ends in ErrDiverged with the parameters untouched, not
// with zero steps and no error; so does one whose back-off would take the
// multiplier below MinRateScale. Without that limit the back-off recovers.
func TestFitNoStepAccepted(t *testing.T) {
	x, y := dummyData(4)
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Epochs: 20, BatchSize: 1, Schedule: Constant(1e300), MinRateScale: math.SmallestNonzeroFloat64},
			"no step accepted in 20 epochs: 80 steps rejected, the last: model rejected the updated parameters: quad: out of range"},
		{Config{Epochs: 20, BatchSize: 1, Schedule: Constant(1e300), MinRateScale: math.SmallestNonzeroFloat64,
			Validate: func() (float64, map[string]float64, error) { return 1, nil, nil }, Patience: 3},
			"no step accepted in 4 epochs: 16 steps rejected"},
		{Config{Epochs: 20, BatchSize: 1, Schedule: Constant(1e300)},
			"the back-off would lower the learning-rate multiplier to 4.547473508864641e-13, below MinRateScale 9.094947017729282e-13, after 41 rejections in all"},
		{Config{MaxSteps: 100, Schedule: Constant(1e300), MinRateScale: 0x1p-20},
			"below MinRateScale 9.5367431640625e-07, after 21 rejections in all, never MaxFailures in a row; the last at step 0"},
	} {
		q := &quad{p: []float64{0, 0}, c: []float64{1, 1}, maxAbs: 10}
		res, err := Fit(context.Background(), q, x, y, c.cfg)
		if !errors.Is(err, ErrDiverged) || res.Reason != Failed || res.Steps != 0 {
			t.Fatalf("%+v: err %v, result %+v", c.cfg, err, res)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("message %q, want %q", err, c.want)
		}
		if q.p[0] != 0 || q.p[1] != 0 {
			t.Errorf("parameters %v, want the initial ones", q.p)
		}
	}
	q := &quad{p: []float64{0, 0}, c: []float64{1, 1}, maxAbs: 10}
	res, err := Fit(context.Background(), q, x, y, Config{MaxSteps: 2000, Schedule: Constant(1e300), MinRateScale: math.SmallestNonzeroFloat64})
	// It trains on at the rate the back-off found (about 10, the size of
	// the region the model accepts; Adam at that rate wanders within it,
	// so where it ends differs between FMA and non-FMA builds).
	if err != nil || res.Steps != 2000 || res.Rejected < 900 || !(math.Abs(q.p[0]) <= 10 && math.Abs(q.p[1]) <= 10) {
		t.Errorf("MaxSteps: err %v, result %+v, parameters %v", err, res, q.p)
	}
	if _, err := Fit(context.Background(), q, x, y, Config{MaxSteps: 1, MinRateScale: -1}); err == nil {
		t.Error("negative MinRateScale accepted")
	}
}

// switchRate is lo for the first at steps and hi after.
type switchRate struct {
	lo, hi float64
	at     int
}

func (s switchRate) Rate(step int) float64 {
	if step < s.at {
		return s.lo
	}
	return s.hi
}

// A run whose steps are accepted in its first epoch and all rejected after
// finishes without the no-step error, and so does the same run resumed
// from its first epoch's checkpoint (a check counted from the resume made
// the resumed run fail where the unbroken one finished).
func TestFitNoStepAcceptedResumed(t *testing.T) {
	x, y := dummyData(4)
	cfg := Config{Epochs: 4, BatchSize: 1, Schedule: switchRate{0.01, 1e300, 4}, MinRateScale: math.SmallestNonzeroFloat64}
	q0 := &quad{p: []float64{0, 0}, c: []float64{1, 1}, maxAbs: 10}
	r0, err0 := Fit(context.Background(), q0, x, y, cfg)
	if err0 != nil || r0.Steps != 4 || r0.Rejected != 12 {
		t.Fatalf("unbroken run: %v, %+v", err0, r0)
	}
	q1 := &quad{p: []float64{0, 0}, c: []float64{1, 1}, maxAbs: 10}
	var ck Checkpoint
	c1 := cfg
	c1.OnEpoch = func(e EpochInfo) error { ck = e.Checkpoint(); return ErrStop }
	if _, err := Fit(context.Background(), q1, x, y, c1); err != nil {
		t.Fatal(err)
	}
	q2 := &quad{p: slices.Clone(q1.p), c: []float64{1, 1}, maxAbs: 10}
	c2 := cfg
	c2.Resume = &ck
	r2, err2 := Fit(context.Background(), q2, x, y, c2)
	if err2 != nil || r2.Steps != r0.Steps || r2.Rejected != r0.Rejected || !slices.Equal(q2.p, q0.p) {
		t.Errorf("resumed run: %v, %+v, parameters %v; unbroken %+v, %v", err2, r2, q2.p, r0, q0.p)
	}
}

// Rejections more frequent than one per RecoverAfter steps, accepted steps
// in between: the multiplier halves without recovering, and Fit stops with
// ErrDiverged when it would pass MinRateScale instead of training on at a
// rate that no longer moves anything.
func TestFitScatteredRejections(t *testing.T) {
	q := &quad{p: []float64{0, 0}, c: []float64{1, -1}, failEvery: 50}
	x, y := dummyData(4)
	res, err := Fit(context.Background(), q, x, y, Config{MaxSteps: 100000, MinRateScale: 0x1p-10})
	if !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "below MinRateScale") || res.Rejected != 11 || res.Steps != 10*49+49 {
		t.Errorf("err %v, result %+v", err, res)
	}
	for i, v := range q.p {
		if v != q.lastGood[i] {
			t.Errorf("kept %v, last good %v", q.p, q.lastGood)
		}
	}
}

func TestFitNilContext(t *testing.T) {
	q := &quad{p: []float64{0}, c: []float64{1}}
	x, y := dummyData(4)
	//lint:ignore SA1012 a nil Context is what is tested
	_, err := Fit(nil, q, x, y, Config{MaxSteps: 1})
	if err == nil || !strings.Contains(err.Error(), "nil Context") {
		t.Errorf("Fit: err %v", err)
	}
	//lint:ignore SA1012 a nil Context is what is tested
	_, err = MaximizeLBFGS(nil, func(x, g []float64) (float64, error) { return 0, nil }, []float64{1}, LBFGSOptions{})
	if err == nil || !strings.Contains(err.Error(), "nil Context") {
		t.Errorf("MaximizeLBFGS: err %v", err)
	}
}

func TestFitCancelAndStop(t *testing.T) {
	x, y := blrData(50, 5)
	b := newBLR(3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := Fit(ctx, b, x, y, Config{Epochs: 100, BatchSize: 5, OnStep: func(s StepInfo) error {
		if s.Step == 17 {
			cancel()
		}
		return nil
	}})
	if !errors.Is(err, context.Canceled) || res.Reason != Canceled || res.Steps != 17 {
		t.Errorf("cancel: err %v reason %v steps %d", err, res.Reason, res.Steps)
	}
	res, err = Fit(context.Background(), newBLR(3), x, y, Config{Epochs: 100, BatchSize: 5, OnEpoch: func(e EpochInfo) error {
		if e.Epoch == 2 {
			return ErrStop
		}
		return nil
	}})
	if err != nil || res.Reason != Stopped || res.Epochs != 3 || res.Steps != 30 {
		t.Errorf("ErrStop: err %v %+v", err, res)
	}
	boom := errors.New("boom")
	_, err = Fit(context.Background(), newBLR(3), x, y, Config{Epochs: 2, OnStep: func(StepInfo) error { return boom }})
	if !errors.Is(err, boom) {
		t.Errorf("callback error: %v", err)
	}
}

func TestFitEarlyStoppingKeepsBest(t *testing.T) {
	x, y := blrData(40, 6)
	b := newBLR(3)
	scores := []float64{1, 2, 3, 2.5, 2.9, 2.8, 5}
	var snap [][]float64
	epoch := 0
	var log []string
	res, err := Fit(context.Background(), b, x, y, Config{Epochs: 7, BatchSize: 8, Patience: 3,
		Logf: func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) },
		Validate: func() (float64, map[string]float64, error) {
			p := make([]float64, b.NumParams())
			b.Params(p)
			snap = append(snap, p)
			s := scores[epoch]
			epoch++
			return s, map[string]float64{"twice": 2 * s}, nil
		},
		OnEpoch: func(e EpochInfo) error {
			if !e.Validated || e.Metrics["twice"] != 2*e.Score || e.Best != (e.Epoch == 0 || e.Epoch == 1 || e.Epoch == 2) {
				t.Errorf("epoch info %+v", e)
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != EarlyStopped || res.Epochs != 6 || res.BestEpoch != 2 || res.BestScore != 3 {
		t.Errorf("result %+v", res)
	}
	p := make([]float64, b.NumParams())
	b.Params(p)
	for i := range p {
		if p[i] != snap[2][i] {
			t.Fatalf("kept params %v, best %v", p, snap[2])
		}
	}
	if len(log) != 1 || !strings.Contains(log[0], "early stopping") {
		t.Errorf("log %q", log)
	}
	// KeepLast keeps the final parameters.
	b = newBLR(3)
	epoch = 0
	snap = nil
	res, _ = Fit(context.Background(), b, x, y, Config{Epochs: 4, BatchSize: 8, KeepLast: true,
		Validate: func() (float64, map[string]float64, error) {
			p := make([]float64, b.NumParams())
			b.Params(p)
			snap = append(snap, p)
			s := []float64{3, 2, 1, 0}[epoch]
			epoch++
			return s, nil, nil
		}})
	b.Params(p)
	if p[0] != snap[3][0] || res.BestEpoch != -1 {
		t.Errorf("KeepLast: %v vs %v, best epoch %d", p, snap[3], res.BestEpoch)
	}
}

func TestFitNaturalGradient(t *testing.T) {
	x, y := blrData(100, 7)
	b := newBLR(3)
	s0 := b.s
	// One full-batch natural step of size 1 gives the exact posterior at
	// the current noise; Adam then moves only the noise, even at a large
	// learning rate.
	res, err := Fit(context.Background(), b, x, y, Config{MaxSteps: 1, NaturalStep: 1, Schedule: Constant(0.5)})
	if err != nil || res.Steps != 1 {
		t.Fatal(err, res.Steps)
	}
	mean, cov := b.posterior(x, y, s0)
	var s mat.SymDense
	s.SymOuterK(1, b.l)
	for i := 0; i < 3; i++ {
		if math.Abs(b.m[i]-mean.AtVec(i)) > 1e-12 {
			t.Errorf("mean %v, posterior %v", b.m, mean.RawVector().Data)
		}
		for j := 0; j < 3; j++ {
			if math.Abs(s.At(i, j)-cov.At(i, j)) > 1e-12 {
				t.Errorf("cov %v, posterior %v", mat.Formatted(&s), mat.Formatted(cov))
			}
		}
	}
	if b.s == s0 {
		t.Error("Adam did not update the noise")
	}
	// Natural steps for q with Adam on the noise reach the collapsed optimum.
	_, lmlOpt := b.optimalLogML(x, y)
	b = newBLR(3)
	if _, err := Fit(context.Background(), b, x, y, Config{MaxSteps: 800, NaturalStep: 1, Schedule: StepDecay{0.05, 0.3, 300}}); err != nil {
		t.Fatal(err)
	}
	f, _ := b.Objective(x, y, 100, make([]float64, b.NumParams()))
	if gap := lmlOpt - f; gap > 1e-4 || gap < -1e-9 {
		t.Errorf("natural-gradient training: ELBO %v, optimum %v", f, lmlOpt)
	}
	if _, err := Fit(context.Background(), &quad{p: []float64{0}, c: []float64{1}}, x, y, Config{MaxSteps: 1, NaturalStep: 1}); err == nil {
		t.Error("NaturalStep accepted for a model without natural gradients")
	}
}

func TestFitBadConfig(t *testing.T) {
	x, y := dummyData(5)
	q := &quad{p: []float64{0}, c: []float64{1}}
	for i, c := range []Config{
		{},
		{Epochs: -1},
		{Epochs: 1, BatchSize: -2},
		{Epochs: 1, Beta1: 1},
		{Epochs: 1, Beta2: math.NaN()},
		{Epochs: 1, Epsilon: -1},
		{Epochs: 1, NaturalStep: 2},
		{Epochs: 1, Schedule: Constant(-1)},
		{Epochs: 1, Schedule: Constant(math.Inf(1))},
	} {
		if _, err := Fit(context.Background(), q, x, y, c); err == nil {
			t.Errorf("config %d accepted: %+v", i, c)
		}
	}
	if _, err := Fit(context.Background(), q, x, y[:3], Config{Epochs: 1}); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := Fit(context.Background(), nil, x, y, Config{Epochs: 1}); err == nil {
		t.Error("nil model accepted")
	}
	if _, err := Fit(context.Background(), q, &mat.Dense{}, nil, Config{Epochs: 1}); err == nil {
		t.Error("empty data accepted")
	}
}

func TestFitBackoffRecovers(t *testing.T) {
	q := &quad{p: []float64{0, 0}, c: []float64{2.9, -1}, cliff: 3}
	x, y := dummyData(4)
	var log []string
	res, err := Fit(context.Background(), q, x, y, Config{MaxSteps: 300, Schedule: Constant(1), RecoverAfter: 50,
		Logf: func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rejected == 0 || res.RateScale != 1 {
		t.Errorf("rejected %d, final rate scale %v", res.Rejected, res.RateScale)
	}
	raised := false
	for _, l := range log {
		raised = raised || strings.Contains(l, "multiplier raised to")
	}
	if !raised {
		t.Errorf("no recovery logged: %q", log)
	}
}

// nop is a model whose objective costs nothing, to time Fit's own work
// per step (batch gathering, Adam, bookkeeping).
type nop struct{ p []float64 }

func (m *nop) NumParams() int                { return len(m.p) }
func (m *nop) Params(dst []float64)          { copy(dst, m.p) }
func (m *nop) SetParams(src []float64) error { copy(m.p, src); return nil }
func (m *nop) Objective(x *mat.Dense, y []float64, n int, grad []float64) (float64, error) {
	for i := range grad {
		grad[i] = 1
	}
	return 0, nil
}

// BenchmarkFitStepOverhead reports Fit's cost per step without a model:
// batch 1024 of d = 8 inputs, and 2^20 parameters (about the size of a
// SOLVE-GP 1024 + 1024 model, whose q(u) and q(v⊥) Cholesky factors hold
// 2·1024·1025/2 values). With -short, 2^14 parameters.
func BenchmarkFitStepOverhead(b *testing.B) {
	n, d, p := 8192, 8, 1<<20
	if testing.Short() {
		p = 1 << 14
	}
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	m := &nop{p: make([]float64, p)}
	b.ResetTimer()
	if _, err := Fit(context.Background(), m, x, y, Config{MaxSteps: b.N, BatchSize: 1024}); err != nil {
		b.Fatal(err)
	}
}

// natQuad is a quad whose second parameter is "variational": NaturalStep
// leaves it alone and Adam must never move it, including in the retaken
// step after a rejection.
type natQuad struct{ quad }

func (q *natQuad) VariationalParams(mask []bool) { mask[1] = true }
func (q *natQuad) NaturalStep(x *mat.Dense, y []float64, n int, gamma float64) error {
	return nil
}

func TestFitFrozenParamsStayThroughBackoff(t *testing.T) {
	q := &natQuad{quad{p: []float64{0, 0.5}, c: []float64{2.9, -1}, cliff: 3}}
	x, y := dummyData(4)
	res, err := Fit(context.Background(), q, x, y, Config{MaxSteps: 200, Schedule: Constant(1), NaturalStep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rejected == 0 {
		t.Fatal("test needs a rejection")
	}
	if q.p[1] != 0.5 || math.Abs(q.p[0]-2.9) > 1e-3 {
		t.Errorf("params %v: the frozen one moved or the free one did not converge", q.p)
	}
}

func TestFitFrozen(t *testing.T) {
	q := &quad{p: []float64{0, 0, 0}, c: []float64{1, 2, 3}}
	x, y := dummyData(4)
	if _, err := Fit(context.Background(), q, x, y, Config{MaxSteps: 500, Schedule: Constant(0.05), Frozen: []bool{false, true, false}}); err != nil {
		t.Fatal(err)
	}
	if q.p[1] != 0 || math.Abs(q.p[0]-1) > 1e-3 || math.Abs(q.p[2]-3) > 1e-3 {
		t.Errorf("params %v", q.p)
	}
	if _, err := Fit(context.Background(), q, x, y, Config{MaxSteps: 1, Frozen: []bool{true}}); err == nil {
		t.Error("short Frozen accepted")
	}
}

func TestFitValidationEdgeCases(t *testing.T) {
	x, y := blrData(20, 9)
	boom := errors.New("validation broke")
	_, err := Fit(context.Background(), newBLR(3), x, y, Config{Epochs: 3, Validate: func() (float64, map[string]float64, error) {
		return 0, nil, boom
	}})
	if !errors.Is(err, boom) {
		t.Errorf("validation error: %v", err)
	}
	// Every other epoch; NaN scores never become the best.
	calls := 0
	var logs []string
	res, err := Fit(context.Background(), newBLR(3), x, y, Config{Epochs: 6, ValidateEvery: 2,
		Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) },
		Validate: func() (float64, map[string]float64, error) {
			calls++
			if calls == 2 {
				return math.NaN(), nil, nil
			}
			return float64(calls), nil, nil
		}})
	if err != nil || calls != 3 || res.BestEpoch != 5 || res.BestScore != 3 {
		t.Errorf("err %v, %d calls, best epoch %d score %v", err, calls, res.BestEpoch, res.BestScore)
	}
	if len(logs) != 1 || !strings.Contains(logs[0], "not finite") {
		t.Errorf("logs %q", logs)
	}
}

// TestFitMemoryIndependentOfN checks that Fit's own allocations grow with
// the batch size and the number of parameters, plus one index per data
// row (for shuffling), but not with the data itself.
func TestFitMemoryIndependentOfN(t *testing.T) {
	const d, batch, p = 16, 256, 1000
	alloc := func(n int) uint64 {
		x := mat.NewDense(n, d, nil)
		y := make([]float64, n)
		m := &nop{p: make([]float64, p)}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := Fit(context.Background(), m, x, y, Config{MaxSteps: 20, BatchSize: batch}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(2000), alloc(200000)
	// Budget: 8 bytes of index per row, the batch, a few parameter-sized
	// buffers and some slack. The data (n·d·8 bytes) must not be copied.
	budget := func(n int) uint64 { return uint64(8*n + 8*batch*d + 64*p + 64<<10) }
	if small > budget(2000) || large > budget(200000) {
		t.Errorf("allocated %d bytes (n = 2000) and %d (n = 200000); budgets %d and %d", small, large, budget(2000), budget(200000))
	}
	if large > uint64(200000*d*8)/4 {
		t.Errorf("allocations %d look proportional to the data (%d bytes)", large, 200000*d*8)
	}
}

// TestFitMaxStepsMidEpochValidates checks that when MaxSteps ends training
// inside an epoch, that partial epoch is still validated (so the kept
// model can be the final one).
func TestFitMaxStepsMidEpochValidates(t *testing.T) {
	x, y := blrData(50, 10)
	b := newBLR(3)
	calls := 0
	var epochs []EpochInfo
	res, err := Fit(context.Background(), b, x, y, Config{MaxSteps: 12, BatchSize: 10,
		Validate: func() (float64, map[string]float64, error) { calls++; return float64(calls), nil, nil },
		OnEpoch:  func(e EpochInfo) error { epochs = append(epochs, e); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 12 || res.Epochs != 3 || calls != 3 || len(epochs) != 3 || epochs[2].Steps != 12 || res.BestEpoch != 2 {
		t.Errorf("result %+v, %d validations, epochs %+v", res, calls, epochs)
	}
}

// labelCheckedBLR is a blr that accepts only non-negative targets through
// DataValidator, as a likelihood with a restricted support would.
type labelCheckedBLR struct{ *blr }

func (b labelCheckedBLR) ValidateData(x *mat.Dense, y []float64) error {
	for i, v := range y {
		if v < 0 {
			return fmt.Errorf("target %d is negative", i)
		}
	}
	return nil
}

// TestFitRejectsBadData checks that data Fit cannot train on are refused
// before the first step, with the model untouched, instead of being taken
// for numerical trouble step after step.
func TestFitRejectsBadData(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(x *mat.Dense, y []float64)
		check bool // model with DataValidator
		want  string
	}{
		{"NaN input", func(x *mat.Dense, y []float64) { x.Set(7, 1, math.NaN()) }, false, "input row 7"},
		{"Inf input", func(x *mat.Dense, y []float64) { x.Set(0, 2, math.Inf(-1)) }, false, "input row 0"},
		{"Inf target", func(x *mat.Dense, y []float64) { y[3] = math.Inf(1) }, false, "target 3"},
		{"NaN target", func(x *mat.Dense, y []float64) { y[39] = math.NaN() }, false, "target 39"},
		{"label", func(x *mat.Dense, y []float64) { y[5] = -1 }, true, "target 5 is negative"},
	} {
		x, y := blrData(40, 3)
		for i := range y {
			y[i] = math.Abs(y[i])
		}
		tc.spoil(x, y)
		b := newBLR(3)
		var m Model = b
		if tc.check {
			m = labelCheckedBLR{b}
		}
		before := make([]float64, b.NumParams())
		b.Params(before)
		res, err := Fit(context.Background(), m, x, y, Config{Epochs: 5, BatchSize: 10})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one naming %q", tc.name, err, tc.want)
		}
		after := make([]float64, b.NumParams())
		b.Params(after)
		if res.Steps != 0 || res.Rejected != 0 || !slices.Equal(before, after) {
			t.Errorf("%s: %d steps, %d rejected, parameters changed %v", tc.name, res.Steps, res.Rejected, !slices.Equal(before, after))
		}
	}
	// The same data unspoiled train.
	x, y := blrData(40, 3)
	for i := range y {
		y[i] = math.Abs(y[i])
	}
	if _, err := Fit(context.Background(), labelCheckedBLR{newBLR(3)}, x, y, Config{Epochs: 2, BatchSize: 10}); err != nil {
		t.Fatal(err)
	}
}
