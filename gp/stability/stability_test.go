package stability

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/train"
)

// coincident returns m inducing inputs all at the same point.
func coincident(m int, at float64) *mat.Dense {
	z := mat.NewDense(m, 1, nil)
	for i := 0; i < m; i++ {
		z.Set(i, 0, at)
	}
	return z
}

// shifted returns z + delta.
func shifted(z *mat.Dense, delta float64) *mat.Dense {
	r, c := z.Dims()
	o := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			o.Set(i, j, z.At(i, j)+delta)
		}
	}
	return o
}

// TestCollapsedInducingPointsNeedJitter: with every inducing input at the
// same point K_uu has rank one. The default jitter policy factorizes it
// (reporting the jitter used) and the bound, gradient and predictions are
// finite; without it the factorization fails with the typed
// *chol.NotPositiveDefiniteError, both at construction and when training
// moves the inducing inputs onto each other.
func TestCollapsedInducingPointsNeedJitter(t *testing.T) {
	x, y := sinData(100, 1)
	for _, kind := range []gp.Kind{gp.SVGP, gp.ODVGP, gp.SOLVEGP} {
		for _, whiten := range []bool{false, true} {
			s := setup{kind: kind, z: coincident(6, 0.5), o: grid(4, -2, 2), lengthscale: 1, variance: 1, noise: 0.1,
				opts: []gp.Option{gp.WithWhitening(whiten)}}
			mod := s.build(t)
			checkSound(t, kind.String()+" collapsed Z", mod, x, y)
			var err error
			if j := mod.LastTerms().JitterUU; !(j > 0) {
				t.Errorf("%v whiten %v: K_uu of collapsed inputs factorized with jitter %v", kind, whiten, j)
			}
			p, err := mod.Predictor(0)
			if err != nil {
				t.Fatal(err)
			}
			mean, variance, err := p.PredictF(x)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 100; i++ {
				if m, v := mean.At(i, 0), variance.At(i, 0); math.IsNaN(m+v) || math.IsInf(m+v, 0) {
					t.Fatalf("%v: prediction %d is N(%v, %v)", kind, i, m, v)
				}
			}

			// The guard removed: no jitter for K_uu. The unwhitened
			// constructor factorizes K_uu (to set q(u) to the prior); the
			// whitened one fails at the first evaluation.
			s.opts = append(s.opts, gp.WithKuuJitter(chol.NoJitter()))
			var npd *chol.NotPositiveDefiniteError
			mod, err = s.try()
			if !whiten && !errors.As(err, &npd) {
				t.Errorf("%v without jitter: constructor error %v, want *chol.NotPositiveDefiniteError", kind, err)
			}
			if whiten {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := mod.Objective(x, y, 100, nil); !errors.As(err, &npd) {
					t.Errorf("%v whitened without jitter: Objective error %v, want *chol.NotPositiveDefiniteError", kind, err)
				}
			}
			s.z = grid(6, -2, 2)
			mod = s.build(t)
			th := params(mod)
			lay := mod.Layout()
			for i := 0; i < 6; i++ {
				th[lay.Z+i] = 0.5
			}
			if err := mod.SetParams(th); err != nil {
				t.Fatal(err)
			}
			if _, err := mod.Objective(x, y, 100, make([]float64, mod.NumParams())); !errors.As(err, &npd) {
				t.Errorf("%v whiten %v without jitter, Z collapsed by SetParams: Objective error %v", kind, whiten, err)
			}
		}
	}
}

// TestOrthogonalPointsApproachingInducingPoints: as an orthogonal inducing
// input o approaches an inducing input z, C_vv = K_vv − K_vu·K_uu⁻¹·K_uv
// loses rank. The default C_vv jitter policy keeps SOLVE-GP's bound,
// gradient and predictions finite all the way to o = z; without it the
// factorization fails with *chol.NotPositiveDefiniteError. ODVGP never
// factorizes C_vv and stays finite without any jitter.
func TestOrthogonalPointsApproachingInducingPoints(t *testing.T) {
	x, y := sinData(100, 2)
	z := grid(5, -2, 2)
	for _, delta := range []float64{1e-2, 1e-4, 1e-6, 1e-8, 0} {
		for _, whiten := range []bool{false, true} {
			s := setup{kind: gp.SOLVEGP, z: z, o: shifted(z, delta), lengthscale: 1, variance: 1, noise: 0.1,
				opts: []gp.Option{gp.WithWhitening(whiten)}}
			mod := s.build(t)
			checkSound(t, "SOLVE-GP o → z", mod, x, y)
			jit := mod.LastTerms().JitterVV
			if delta <= 1e-8 && !(jit > 0) {
				t.Errorf("δ = %g: C_vv factorized without jitter", delta)
			}
			p, err := mod.Predictor(0)
			if err != nil {
				t.Fatalf("δ = %g: %v", delta, err)
			}
			if _, vv := p.Jitter(); delta <= 1e-8 && !(vv > 0) {
				t.Errorf("δ = %g: predictor factorized C_vv without jitter", delta)
			}
			lp, err := p.MeanLogPredictive(x, y)
			if err != nil || math.IsNaN(lp) || math.IsInf(lp, 0) {
				t.Errorf("δ = %g: mean log predictive %v, %v", delta, lp, err)
			}

			od := setup{kind: gp.ODVGP, z: z, o: shifted(z, delta), lengthscale: 1, variance: 1, noise: 0.1,
				opts: []gp.Option{gp.WithWhitening(whiten), gp.WithCvvJitter(chol.NoJitter())}}
			checkSound(t, "ODVGP o → z", od.build(t), x, y)

			if delta > 0 {
				continue
			}
			s.opts = append(s.opts, gp.WithCvvJitter(chol.NoJitter()))
			var npd *chol.NotPositiveDefiniteError
			mod, err = s.try()
			if !whiten && !errors.As(err, &npd) {
				t.Errorf("o = z without C_vv jitter: constructor error %v, want *chol.NotPositiveDefiniteError", err)
			}
			if whiten {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := mod.Objective(x, y, 100, nil); !errors.As(err, &npd) {
					t.Errorf("o = z, whitened, without C_vv jitter: Objective error %v", err)
				}
			}
			s.o = grid(5, -1.5, 2.5)
			mod = s.build(t)
			th := params(mod)
			lay := mod.Layout()
			for i := 0; i < 5; i++ {
				th[lay.O+i] = th[lay.Z+i]
			}
			if err := mod.SetParams(th); err != nil {
				t.Fatal(err)
			}
			if _, err := mod.Objective(x, y, 100, make([]float64, mod.NumParams())); !errors.As(err, &npd) {
				t.Errorf("O moved onto Z without C_vv jitter: Objective error %v", err)
			}
		}
	}
}

// trouble is one hostile training scenario.
type trouble struct {
	name string
	s    setup
}

// troubles lists the scenarios of TestTrainingThroughTrouble for one kind.
func troubles(kind gp.Kind) []trouble {
	z := grid(5, -2, 2)
	o := grid(4, -1.5, 2.5)
	base := setup{kind: kind, z: z, o: o, lengthscale: 1, variance: 1, noise: 0.1}
	var ts []trouble
	add := func(name string, f func(s *setup)) {
		s := base
		f(&s)
		ts = append(ts, trouble{name, s})
	}
	add("collapsed Z", func(s *setup) { s.z = coincident(5, 0.3); s.o = grid(4, -2, 2) })
	add("O on Z", func(s *setup) { s.o = grid(5, -2, 2) })
	add("collapsed Z and O", func(s *setup) { s.z = coincident(5, 0.3); s.o = coincident(4, 0.3) })
	add("lengthscale 1e8", func(s *setup) { s.lengthscale = 1e8 })
	add("lengthscale 1e-8", func(s *setup) { s.lengthscale = 1e-8 })
	add("variance 1e-12", func(s *setup) { s.variance = 1e-12 })
	add("noise 1e12", func(s *setup) { s.noise = 1e12 })
	add("noise near floor", func(s *setup) { s.noise = 2e-6 })
	return ts
}

// TestTrainingThroughTrouble trains every kind of model, whitened or not,
// from hostile starting points with learning rates from reasonable to
// absurd. Whatever happens, Fit must end with finite parameters whose bound
// and gradient on the data are finite; it may end with an error only if
// that error wraps train.ErrDiverged and says why; and every rejected step
// must have been logged.
func TestTrainingThroughTrouble(t *testing.T) {
	x, y := sinData(120, 3)
	rates, whitening := []float64{1e3, 1e10}, []bool{false, true}
	if *long {
		rates = []float64{0.01, 1, 1e3, 1e10, 1e100, 1e200}
	}
	if testing.Short() {
		rates, whitening = []float64{1e10}, []bool{false}
	}
	rejected, diverged := 0, 0
	for _, kind := range []gp.Kind{gp.SVGP, gp.ODVGP, gp.SOLVEGP} {
		for _, tr := range troubles(kind) {
			for _, whiten := range whitening {
				for _, lr := range rates {
					for _, steps := range []int{1, 30} {
						s := tr.s
						s.opts = []gp.Option{gp.WithWhitening(whiten)}
						mod := s.build(t)
						res, lg, err := fit(mod, x, y, train.Config{MaxSteps: steps, BatchSize: 40, Schedule: train.Constant(lr)})
						what := kind.String() + " " + tr.name
						if whiten {
							what += " whitened"
						}
						what += fmt.Sprintf(" lr %g steps %d", lr, steps)
						if err != nil {
							if !errors.Is(err, train.ErrDiverged) || !strings.Contains(err.Error(), "kept the last parameters") {
								t.Errorf("%s: Fit error %v", what, err)
							}
							diverged++
						}
						checkSound(t, what, mod, x, y)
						logged := lg.count("rejected")
						if err != nil {
							logged++ // the last rejection is reported by the error
						}
						if logged != res.Rejected {
							t.Errorf("%s: %d rejected steps, %d reported", what, res.Rejected, logged)
						}
						rejected += res.Rejected
					}
				}
			}
		}
	}
	if rejected == 0 {
		t.Error("no scenario exercised the back-off")
	}
	t.Logf("%d rejected steps, %d runs stopped with ErrDiverged", rejected, diverged)
}

// TestCvvJitterWhenOEqualsZ: with O = Z exactly, C_vv is zero up to
// rounding errors of the size of ε·K_vv, so a jitter scaled by C_vv's own
// diagonal (itself rounding noise, ~1e-17 here) cannot make it positive
// definite: this configuration failed with pivot −1.1e-16 and jitter
// 6.7e-21 until the C_vv jitter was made relative to mean(diag(K_vv))
// (commit 62e34dc). Regression test: the bound must be finite and the
// jitter used must be of the order of K_vv's scale.
func TestCvvJitterWhenOEqualsZ(t *testing.T) {
	x, y := sinData(100, 4)
	for _, whiten := range []bool{false, true} {
		s := setup{kind: gp.SOLVEGP, z: grid(5, -2, 2), o: grid(5, -2, 2), lengthscale: 2, variance: 1, noise: 0.1,
			opts: []gp.Option{gp.WithWhitening(whiten)}}
		mod, err := s.try()
		if err != nil {
			t.Fatalf("whiten %v: %v", whiten, err)
		}
		if !checkSound(t, fmt.Sprintf("SOLVE-GP O = Z, lengthscale 2, whiten %v", whiten), mod, x, y) {
			continue
		}
		if j := mod.LastTerms().JitterVV; !(j >= 1e-12) {
			t.Errorf("whiten %v: C_vv jitter %v, want at least 1e-12 (relative to K_vv's diagonal of 1)", whiten, j)
		}
	}
}

// TestBackoffIsWhatRecovers: a learning rate of 1e10 makes the first steps
// of SVGP and SOLVE-GP produce a non-finite bound. With the back-off Fit
// rejects those steps, halves the rate (logging each halving and passing
// the reduced rate to OnStep) and trains on; without it (MaxFailures: 1,
// so the first rejection is fatal) the same run stops with ErrDiverged,
// keeping the last good parameters.
func TestBackoffIsWhatRecovers(t *testing.T) {
	x, y := sinData(200, 1)
	for _, s := range []setup{
		{kind: gp.SVGP, z: grid(6, -2, 2), lengthscale: 1, variance: 1, noise: 0.1},
		{kind: gp.SOLVEGP, z: grid(5, -2, 2), o: grid(5, -1.5, 2.5), lengthscale: 1, variance: 1, noise: 0.1},
	} {
		const lr = 1e10
		mod := s.build(t)
		minRate := math.Inf(1)
		res, lg, err := fit(mod, x, y, train.Config{MaxSteps: 60, BatchSize: 50, Schedule: train.Constant(lr), RecoverAfter: -1,
			OnStep: func(si train.StepInfo) error { minRate = math.Min(minRate, si.Rate); return nil }})
		if err != nil {
			t.Fatalf("%v: %v", s.kind, err)
		}
		if res.Rejected == 0 || res.Steps != 60 {
			t.Fatalf("%v: %+v: the back-off was not exercised", s.kind, res)
		}
		if halved := lg.count("learning-rate multiplier halved"); halved != res.Rejected || res.RateScale != math.Ldexp(1, -res.Rejected) {
			t.Errorf("%v: %d rejections, %d halvings logged, rate scale %v", s.kind, res.Rejected, halved, res.RateScale)
		}
		if minRate != lr*res.RateScale {
			t.Errorf("%v: smallest rate reported to OnStep %v, want %v", s.kind, minRate, lr*res.RateScale)
		}
		checkSound(t, s.kind.String()+" after back-off", mod, x, y)

		// Without the back-off.
		mod = s.build(t)
		start := params(mod)
		res, _, err = fit(mod, x, y, train.Config{MaxSteps: 60, BatchSize: 50, Schedule: train.Constant(lr), MaxFailures: 1})
		if !errors.Is(err, train.ErrDiverged) || res.Reason != train.Failed {
			t.Fatalf("%v without back-off: err %v, %+v", s.kind, err, res)
		}
		// The reason: a non-finite bound or gradient, or parameters the
		// model refuses (ErrDiverged's own text names none of them).
		why := false
		for _, r := range []string{"not finite", "bound is", "model rejected the updated parameters"} {
			why = why || strings.Contains(err.Error(), r)
		}
		if !strings.Contains(err.Error(), "1 consecutive steps rejected") || !why {
			t.Errorf("%v without back-off: error %q does not say why", s.kind, err)
		}
		checkSound(t, s.kind.String()+" without back-off", mod, x, y)
		if res.Steps == 0 {
			for i, v := range params(mod) {
				if v != start[i] {
					t.Fatalf("%v: no step accepted but parameter %d moved", s.kind, i)
				}
			}
		}
	}
}

// poisoned wraps a model and makes every evaluation after the first
// `after` return a gradient with a NaN in the kernel's entry (or an error
// if asError), recording the parameters of the last successful one.
type poisoned struct {
	*gp.Model
	after, evals int
	asError      bool
	lastGood     []float64
}

func (p *poisoned) Objective(x *mat.Dense, y []float64, n int, grad []float64) (float64, error) {
	f, err := p.Model.Objective(x, y, n, grad)
	p.evals++
	if p.evals > p.after {
		if p.asError {
			return 0, errors.New("simulated failure")
		}
		grad[0] = math.NaN()
		return f, err
	}
	if err == nil {
		p.lastGood = params(p.Model)
	}
	return f, err
}

// TestDivergenceKeepsLastGoodModel: when the bound or gradient stays
// non-finite, Fit gives up after MaxFailures consecutive rejections with an
// error wrapping train.ErrDiverged that names what was not finite, and the
// model is left exactly at the last parameters that evaluated successfully.
func TestDivergenceKeepsLastGoodModel(t *testing.T) {
	x, y := sinData(200, 5)
	for _, asError := range []bool{false, true} {
		for _, kind := range []gp.Kind{gp.SVGP, gp.ODVGP, gp.SOLVEGP} {
			s := setup{kind: kind, z: grid(5, -2, 2), o: grid(4, -1.5, 2.5), lengthscale: 1, variance: 1, noise: 0.1}
			p := &poisoned{Model: s.build(t), after: 25, asError: asError}
			res, lg, err := fit(p, x, y, train.Config{Epochs: 50, BatchSize: 40, Schedule: train.Constant(0.05), MaxFailures: 6})
			want := "gradient entry 0 is NaN"
			if asError {
				want = "objective failed: simulated failure"
			}
			if !errors.Is(err, train.ErrDiverged) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "6 consecutive steps rejected") {
				t.Fatalf("%v: error %v", kind, err)
			}
			if res.Steps != 25 || res.Rejected != 6 || lg.count("rejected") != 5 {
				t.Errorf("%v: %+v, %d rejections logged", kind, res, lg.count("rejected"))
			}
			got := params(p.Model)
			for i := range got {
				if got[i] != p.lastGood[i] {
					t.Fatalf("%v: parameter %d is %v, last good %v", kind, i, got[i], p.lastGood[i])
				}
			}
			checkSound(t, kind.String()+" after divergence", p.Model, x, y)
		}
	}
	// A real divergence: noise variance 1e12 and a learning rate of 1e100
	// push the bound to −Inf on every retry.
	s := setup{kind: gp.SVGP, z: grid(6, -2, 2), lengthscale: 1, variance: 1, noise: 1e12}
	mod := s.build(t)
	_, _, err := fit(mod, x, y, train.Config{MaxSteps: 100, BatchSize: 50, Schedule: train.Constant(1e100), MinRateScale: math.SmallestNonzeroFloat64})
	if !errors.Is(err, train.ErrDiverged) || !strings.Contains(err.Error(), "bound is -Inf") {
		t.Errorf("noise 1e12, rate 1e100: error %v", err)
	}
	checkSound(t, "SVGP noise 1e12 rate 1e100", mod, x, y)
}

// TestLengthscaleDrivenToExtremes lets the data drive the lengthscale up:
// with constant targets the bound keeps improving as the lengthscale grows,
// and K_uu (and C_vv) tend to rank-one and zero matrices. q(u) and q(v⊥) are
// kept at their optimum by natural-gradient steps of size 1 and Adam (rate
// 0.5) moves the hyperparameters. Training must drive the lengthscale up by
// more than a factor of 10 and end sound.
//
// Before the C_vv jitter was made relative to K_vv (see
// TestCvvJitterWhenOEqualsZ), SOLVE-GP stalled here near lengthscale 5:
// C_vv was rounding noise, every natural step failed to factorize it and
// the back-off shrank the learning rate to nothing.
func TestLengthscaleDrivenToExtremes(t *testing.T) {
	const n = 150
	x, _ := sinData(n, 14)
	y := make([]float64, n)
	for i := range y {
		y[i] = 1
	}
	for _, kind := range []gp.Kind{gp.SVGP, gp.ODVGP, gp.SOLVEGP} {
		t.Run(kind.String(), func(t *testing.T) {
			s := setup{kind: kind, z: grid(8, -3, 3), o: grid(6, -2.8, 2.8), lengthscale: 1, variance: 1, noise: 0.5}
			mod := s.build(t)
			res, lg, err := fit(naturalGP(mod), x, y, train.Config{MaxSteps: 300, Schedule: train.Constant(0.5), NaturalStep: 1,
				Frozen: inducingFrozen(mod)})
			if err != nil && !errors.Is(err, train.ErrDiverged) {
				t.Fatal(err)
			}
			checkSound(t, kind.String(), mod, x, y)
			ls := mod.Kernel().(*kernel.Stationary).Lengthscales()[0]
			t.Logf("lengthscale 1 → %.3g, %d steps rejected (err %v)", ls, res.Rejected, err)
			if !(ls > 10) {
				t.Errorf("lengthscale %v was not driven up; %d steps rejected, log %q", ls, res.Rejected, lg.lines)
			}
		})
	}
}

// inducingFrozen returns a Frozen mask that keeps Z and O fixed.
func inducingFrozen(mod *gp.Model) []bool {
	lay := mod.Layout()
	frozen := make([]bool, mod.NumParams())
	_, m, m2, _ := mod.Dims()
	for i := lay.Z; i < lay.Z+m; i++ {
		frozen[i] = true
	}
	for i := lay.O; m2 > 0 && i < lay.O+m2; i++ {
		frozen[i] = true
	}
	return frozen
}

// naturalGP wraps a single-latent gp.Model for natural-gradient steps on
// q(u) (and q(v⊥) for SOLVE-GP), so that with step 1 and full batches q
// stays at its optimum and Adam moves the hyperparameters.
func naturalGP(mod *gp.Model) *gp.NaturalGradient {
	lay := mod.Layout()
	_, m, m2, _ := mod.Dims()
	factors := []gp.GaussianFactor{{Mean: lay.MU[0], Chol: lay.LU[0], N: m}}
	if len(lay.LV) > 0 && lay.LV[0] >= 0 {
		factors = append(factors, gp.GaussianFactor{Mean: lay.MV[0], Chol: lay.LV[0], N: m2})
	}
	return &gp.NaturalGradient{ObjectiveModel: mod, Factors: factors, Threads: 1}
}

// TestNumericallySingularKuu: twenty inducing inputs on a line of six
// lengthscales, two of them 4e-4 apart (a SOLVE-GP found by training on
// Snelson's data), make K_uu numerically singular. Its Cholesky
// factorization succeeds without jitter for about a third of parameter
// vectors within 1e-13 of these, with a squared pivot near 1e-16: the
// solves with that factor amplify rounding so far that C_vv came out with a
// pivot of −0.057, beyond any jitter, and training froze in rejections
// while its learning rate halved to 1e-15. The default policy's pivot
// floor (chol.JitterPolicy.MinPivot) jitters such factors: every
// perturbation must evaluate, to nearly the same bound.
func TestNumericallySingularKuu(t *testing.T) {
	zs := []float64{-0.038766714179944095, 0.6338624129906049, -1.8052595144434473, 0.8714822741857766, 0.6568006530391975,
		-1.732100885201301, -1.6948488340919234, 1.0650277060733628, 0.6071309666089207, 0.21132681690485322,
		0.2276870343159236, -1.7257090074174415, 0.8747215949233293, 0.2868838845584242, -1.7004749097804746,
		-1.6097691403451266, -0.076353030924729, 0.6564307868149445, 1.0475684806420387, -0.4146159741217598}
	ox := []float64{-1.3807739420730147, 1.0901002865668952, 0.6505882609738557, 0.8823830792159072, 1.7340144457734608,
		-1.6020968011456986, -0.6444966048405019, -1.769167383440861, -0.4115691410357049, -0.8265127783588153,
		0.8600119450096038, -0.37106283625128217, -1.5094201941750098, 0.538452885155108, -1.6747806629274604,
		0.03725571537287431, 0.1874812589809508, 1.2590697938021982, -0.7850552696754066, 1.3268356477449588}
	x, y := sinData(200, 3)
	rng := rand.New(rand.NewPCG(4, 5))
	for _, whiten := range []bool{true, false} {
		var lo, hi float64 = math.Inf(1), math.Inf(-1)
		failed := 0
		var firstErr error
		for range 200 {
			z := mat.NewDense(len(zs), 1, nil)
			for i, v := range zs {
				z.Set(i, 0, v*(1+1e-13*rng.NormFloat64()))
			}
			s := setup{kind: gp.SOLVEGP, z: z, o: mat.NewDense(len(ox), 1, slices.Clone(ox)), lengthscale: 0.5102423024740127,
				variance: 0.6093572655245423, noise: 0.1997249288138075, opts: []gp.Option{gp.WithWhitening(whiten)}}
			mod, err := s.try()
			var f float64
			if err == nil {
				f, err = mod.Objective(x, y, len(y), make([]float64, mod.NumParams()))
			}
			if err != nil {
				if failed++; firstErr == nil {
					firstErr = err
				}
				continue
			}
			lo, hi = math.Min(lo, f), math.Max(hi, f)
		}
		if failed > 0 {
			t.Errorf("whiten %v: %d of 200 perturbations failed, the first with %v", whiten, failed, firstErr)
		}
		if hi-lo > 1e-6*math.Abs(lo) {
			t.Errorf("whiten %v: bounds from %v to %v within 1e-13 of the same parameters", whiten, lo, hi)
		}
	}
}
