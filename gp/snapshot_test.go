package gp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// snelsonLike returns n noisy samples of a smooth 1-D function on [0, 6].
func snelsonLike(seed uint64, n int) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range y {
		v := 6 * rng.Float64()
		x.Set(i, 0, v)
		y[i] = math.Sin(1.5*v) + 0.3*math.Cos(4*v) + 0.2*rng.NormFloat64()
	}
	return x, y
}

// snapKernel returns a sum of two package-kernel kernels (so that cloning
// a combination and its parts is exercised) in one dimension.
func snapKernel(t testing.TB) Kernel {
	t.Helper()
	a, err := kernel.NewRBF(1, 0.8, 1.0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := kernel.NewMatern32(1, 2.0, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	s, err := kernel.NewSum(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func snapLik(t testing.TB) Likelihood {
	t.Helper()
	lik, err := likelihood.NewGaussian(0.1)
	if err != nil {
		t.Fatal(err)
	}
	return lik
}

// snapModel builds a model of the given kind on fresh kernel and
// likelihood objects with parameters th (nil: the initial ones with
// perturbed variational parameters).
func snapModel(t testing.TB, kind Kind, whiten bool, th []float64) *Model {
	t.Helper()
	z := mat.NewDense(7, 1, []float64{0.2, 1.1, 2.0, 2.9, 3.8, 4.7, 5.6})
	o := mat.NewDense(5, 1, []float64{0.6, 1.7, 3.1, 4.3, 5.2})
	mod, err := newOfKind(kind, snapKernel(t), snapLik(t), z, o, WithWhitening(whiten), WithSeed(5))
	if err != nil {
		t.Fatal(err)
	}
	if th == nil {
		perturbQ(mod, rand.New(rand.NewPCG(8, 9)), 0.3)
	} else if err := mod.SetParams(th); err != nil {
		t.Fatal(err)
	}
	return mod
}

// predSnap records everything a Predictor returns at fixed test points.
type predSnap struct {
	fm, fv, ym, yv, lp, jc []float64
}

func takeSnap(t testing.TB, p *Predictor) predSnap {
	t.Helper()
	s, err := snapOf(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func snapOf(p *Predictor) (predSnap, error) {
	xt := mat.NewDense(6, 1, []float64{-1, 0.5, 2.45, 3.3, 5.9, 8})
	yt := []float64{0.1, 0.7, -0.4, -0.9, 0.5, 0}
	var s predSnap
	fm, fv, err := p.PredictF(xt)
	if err != nil {
		return s, err
	}
	ym, yv, err := p.PredictY(xt)
	if err != nil {
		return s, err
	}
	if s.lp, err = p.LogPredictive(xt, yt); err != nil {
		return s, err
	}
	jc, err := p.JointCov(xt, 0)
	if err != nil {
		return s, err
	}
	s.fm, s.fv = fm.RawMatrix().Data, fv.RawMatrix().Data
	s.ym, s.yv = ym.RawMatrix().Data, yv.RawMatrix().Data
	s.jc = mat.DenseCopyOf(jc).RawMatrix().Data
	return s, nil
}

// diffSnap describes the first difference in bits between a and b, or
// returns "" if they are identical.
func diffSnap(a, b predSnap) string {
	for _, c := range []struct {
		name string
		u, v []float64
	}{{"latent mean", a.fm, b.fm}, {"latent variance", a.fv, b.fv}, {"observation mean", a.ym, b.ym},
		{"observation variance", a.yv, b.yv}, {"log predictive", a.lp, b.lp}, {"joint covariance", a.jc, b.jc}} {
		if len(c.u) != len(c.v) {
			return fmt.Sprintf("%s: %d values, then %d", c.name, len(c.u), len(c.v))
		}
		for i := range c.u {
			if math.Float64bits(c.u[i]) != math.Float64bits(c.v[i]) {
				return fmt.Sprintf("%s [%d]: %v, then %v", c.name, i, c.u[i], c.v[i])
			}
		}
	}
	return ""
}

// TestPredictorSnapshot checks that a Predictor is a snapshot: changing
// the model's parameters afterwards (kernel hyperparameters, likelihood,
// inducing inputs, variational parameters), evaluating its objective,
// training it and changing its thread budget leave the predictions of a
// Predictor made before unchanged to the bit, while a Predictor made after
// gives those of a fresh model with the new parameters.
func TestPredictorSnapshot(t *testing.T) {
	x, y := snelsonLike(1, 60)
	for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
		for _, whiten := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/whiten=%v", kind, whiten), func(t *testing.T) {
				mod := snapModel(t, kind, whiten, nil)
				p, err := mod.Predictor(4) // batches of 4 test points
				if err != nil {
					t.Fatal(err)
				}
				before := takeSnap(t, p)

				// Every parameter changes: kernel and likelihood
				// parameters, Z, O and the variational parameters.
				rng := rand.New(rand.NewPCG(21, 22))
				th := make([]float64, mod.NumParams())
				mod.Params(th)
				for i := range th {
					th[i] += 0.3 * rng.NormFloat64()
				}
				if err := mod.SetParams(th); err != nil {
					t.Fatal(err)
				}
				if _, err := mod.Objective(x, y, len(y), make([]float64, len(th))); err != nil {
					t.Fatal(err)
				}
				if d := diffSnap(before, takeSnap(t, p)); d != "" {
					t.Errorf("after SetParams and Objective, the old predictor's %s", d)
				}
				p2, err := mod.Predictor(0)
				if err != nil {
					t.Fatal(err)
				}
				after := takeSnap(t, p2)
				if diffSnap(before, after) == "" {
					t.Errorf("a predictor made after SetParams gives the old predictions")
				}
				fresh, err := snapModel(t, kind, whiten, th).Predictor(0)
				if err != nil {
					t.Fatal(err)
				}
				if d := diffSnap(takeSnap(t, fresh), after); d != "" {
					t.Errorf("a predictor made after SetParams differs from a fresh model's with the same parameters: %s", d)
				}

				res, err := train.Fit(context.Background(), mod, x, y, train.Config{MaxSteps: 150, Schedule: train.Constant(0.05), Seed: 4})
				if err != nil {
					t.Fatal(err)
				}
				if res.Steps == 0 {
					t.Fatal("no training step")
				}
				mod.SetThreads(1)
				if d := diffSnap(before, takeSnap(t, p)); d != "" {
					t.Errorf("after training, the old predictor's %s", d)
				}
				if d := diffSnap(after, takeSnap(t, p2)); d != "" {
					t.Errorf("after training, the second predictor's %s", d)
				}
			})
		}
	}
}

// TestPredictorConcurrentWithTraining predicts from several goroutines
// with one Predictor while its model trains (run with -race): the snapshot
// shares no mutable state with the model, so the predictions stay those
// made before training.
func TestPredictorConcurrentWithTraining(t *testing.T) {
	x, y := snelsonLike(2, 40)
	for _, kind := range []Kind{SVGP, SOLVEGP} {
		t.Run(kind.String(), func(t *testing.T) {
			mod := snapModel(t, kind, true, nil)
			p, err := mod.Predictor(0)
			if err != nil {
				t.Fatal(err)
			}
			want := takeSnap(t, p)
			steps := 60
			if raceEnabled {
				steps = 20
			}
			done := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan string, 3)
			for g := 0; g < 3; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-done:
							return
						default:
						}
						s, err := snapOf(p)
						if err != nil {
							errs <- err.Error()
							return
						}
						if d := diffSnap(want, s); d != "" {
							errs <- d
							return
						}
					}
				}()
			}
			_, err = train.Fit(context.Background(), mod, x, y, train.Config{MaxSteps: steps, Schedule: train.Constant(0.05)})
			close(done)
			wg.Wait()
			close(errs)
			if err != nil {
				t.Fatal(err)
			}
			for d := range errs {
				t.Errorf("during training, the predictor's %s", d)
			}
		})
	}
}

// TestPredictorSharedStale checks the Predictor of a model whose kernel
// or likelihood cannot be copied (no Clone method): it shares them with
// the model, predicts as before while their parameters are those of the
// snapshot, and returns ErrStale while they are not.
func TestPredictorSharedStale(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	x, y := snelsonLike(3, 30)
	for _, c := range []struct {
		name   string
		kernel Kernel // nil: the uncopyable refRBF
	}{{"kernel and likelihood shared", nil}, {"likelihood shared", snapKernel(t)}} {
		t.Run(c.name, func(t *testing.T) {
			k := c.kernel
			if k == nil {
				k = newRefRBF(1, 1.2, 0.9)
			}
			z := mat.NewDense(5, 1, []float64{0.5, 1.7, 3, 4.2, 5.5})
			o := mat.NewDense(4, 1, []float64{1.1, 2.4, 3.6, 4.9})
			mod, err := NewSOLVEGP(k, &refGauss{logVar: math.Log(0.2)}, z, o)
			if err != nil {
				t.Fatal(err)
			}
			perturbQ(mod, rng, 0.3)
			p, err := mod.Predictor(0)
			if err != nil {
				t.Fatal(err)
			}
			want := takeSnap(t, p)
			th0 := make([]float64, mod.NumParams())
			mod.Params(th0)
			lay := mod.Layout()

			// The variational parameters and inducing inputs are copied:
			// changing them does not make the snapshot stale.
			th := append([]float64(nil), th0...)
			for i := lay.Z; i < len(th); i++ {
				th[i] += 0.3 * rng.NormFloat64()
			}
			if err := mod.SetParams(th); err != nil {
				t.Fatal(err)
			}
			if _, err := mod.Objective(x, y, len(y), nil); err != nil {
				t.Fatal(err)
			}
			if d := diffSnap(want, takeSnap(t, p)); d != "" {
				t.Errorf("after changing the variational parameters, the predictor's %s", d)
			}

			// Changing the kernel's parameters is seen only if the kernel
			// is shared; the likelihood's always is.
			kernShared := c.kernel == nil
			for _, part := range []struct {
				name   string
				lo, hi int
				stale  bool
			}{{"kernel", lay.Kernel, lay.Kernel + k.NumParams(), kernShared}, {"likelihood", lay.Lik, lay.Lik + mod.Likelihood().NumParams(), true}} {
				th := append([]float64(nil), th0...)
				for i := part.lo; i < part.hi; i++ {
					th[i] += 0.25
				}
				if err := mod.SetParams(th); err != nil {
					t.Fatal(err)
				}
				_, err := snapOf(p)
				switch {
				case part.stale && !errors.Is(err, ErrStale):
					t.Errorf("after changing the %s's parameters: err = %v, want ErrStale", part.name, err)
				case !part.stale && err != nil:
					t.Errorf("after changing the copied %s's parameters: %v", part.name, err)
				case !part.stale:
					if d := diffSnap(want, takeSnap(t, p)); d != "" {
						t.Errorf("after changing the copied %s's parameters, the predictor's %s", part.name, d)
					}
				}
				if err := mod.SetParams(th0); err != nil {
					t.Fatal(err)
				}
				if d := diffSnap(want, takeSnap(t, p)); d != "" {
					t.Errorf("with the %s's parameters restored, the predictor's %s", part.name, d)
				}
			}
		})
	}
}

// scaledRBF embeds a *kernel.Stationary, and with it its Clone method,
// but changes Matrix: a copy by the embedded Clone would be a plain
// Stationary and drop the scaling. The Predictor must not take it for a
// copy, and shares the kernel instead (ErrStale once it changes).
type scaledRBF struct{ *kernel.Stationary }

func (k scaledRBF) Matrix(dst *mat.Dense, x, z mat.Matrix) {
	k.Stationary.Matrix(dst, x, z)
	dst.Scale(0.5, dst)
}

func (k scaledRBF) Diag(dst []float64, x mat.Matrix) {
	k.Stationary.Diag(dst, x)
	for i := range dst {
		dst[i] *= 0.5
	}
}

func TestPredictorEmbeddedClone(t *testing.T) {
	inner, err := kernel.NewRBF(1, 1.1, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	k := scaledRBF{inner}
	if _, ok := cloneOf[Kernel](k); ok {
		t.Fatal("the embedded Clone was taken for a copy of the wrapper")
	}
	mod, p := svgpPredictor(t, k)
	xs := mat.NewDense(1, 1, []float64{2.5})
	if _, v, err := p.PredictF(xs); err != nil || v.At(0, 0) > 0.45 {
		// The prior variance of the wrapper is 0.45, the plain kernel's
		// 0.9: a prediction above 0.45 would be the plain kernel's.
		t.Fatalf("variance %v, err %v", v, err)
	}
	th := make([]float64, mod.NumParams())
	mod.Params(th)
	th[mod.Layout().Kernel] += 0.3
	if err := mod.SetParams(th); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.PredictF(xs); !errors.Is(err, ErrStale) {
		t.Errorf("after the shared kernel changed: err %v, want ErrStale", err)
	}
}

// svgpPredictor returns a small 1-D SVGP with kernel k and a Predictor
// made from it.
func svgpPredictor(t *testing.T, k Kernel) (*Model, *Predictor) {
	t.Helper()
	lik, _ := likelihood.NewGaussian(0.2)
	z := mat.NewDense(4, 1, []float64{0.5, 2, 3.5, 5})
	mod, err := NewSVGP(k, lik, z)
	if err != nil {
		t.Fatal(err)
	}
	p, err := mod.Predictor(0)
	if err != nil {
		t.Fatal(err)
	}
	return mod, p
}

// selfCloneRBF is a kernel whose Clone returns its receiver: no copy.
type selfCloneRBF struct{ *kernel.Stationary }

func (k *selfCloneRBF) Clone() any { return k }

// TestPredictorSelfClone checks that a Clone returning its receiver is not
// taken for a copy: the Predictor shares the kernel and says so with
// ErrStale once its parameters change, instead of predicting silently with
// the new kernel and the old q.
func TestPredictorSelfClone(t *testing.T) {
	inner, err := kernel.NewRBF(1, 1.1, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	k := &selfCloneRBF{inner}
	if _, ok := cloneOf[Kernel](k); ok {
		t.Fatal("a Clone returning its receiver was taken for a copy")
	}
	other, err := kernel.NewRBF(1, 2, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := kernel.NewSum(k, other)
	if err != nil {
		t.Fatal(err)
	}
	if c := sum.Clone(); c != nil {
		t.Errorf("Sum.Clone with a part whose Clone returns itself = %v, want nil", c)
	}
	mod, p := svgpPredictor(t, k)
	th := make([]float64, mod.NumParams())
	mod.Params(th)
	th[mod.Layout().Kernel] += 0.3
	if err := mod.SetParams(th); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.PredictF(mat.NewDense(1, 1, []float64{2.5})); !errors.Is(err, ErrStale) {
		t.Errorf("after the kernel changed: err %v, want ErrStale", err)
	}
}

// TestPredictorSampledRepeatable: with the softmax likelihood, whose
// predictions are Monte Carlo estimates, PredictY and LogPredictive give
// the same values on every call and from concurrent calls (each call draws
// its random numbers afresh from the model's seed; they used to come from
// one generator that every call advanced).
func TestPredictorSampledRepeatable(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const n, C = 40, 3
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range y {
		x.Set(i, 0, rng.NormFloat64())
		x.Set(i, 1, rng.NormFloat64())
		y[i] = float64(rng.IntN(C))
	}
	k, _ := kernel.NewRBF(2, 1, 1)
	lik, err := likelihood.NewSoftmax(C, likelihood.Samples(4))
	if err != nil {
		t.Fatal(err)
	}
	z := mat.NewDense(5, 2, nil)
	for i := 0; i < 5; i++ {
		z.Set(i, 0, rng.NormFloat64())
		z.Set(i, 1, rng.NormFloat64())
	}
	mod, err := NewSVGP(k, lik, z, WithWhitening(true))
	if err != nil {
		t.Fatal(err)
	}
	perturbQ(mod, rng, 0.5)
	p, err := mod.Predictor(16)
	if err != nil {
		t.Fatal(err)
	}
	m0, _, err := p.PredictY(x)
	if err != nil {
		t.Fatal(err)
	}
	l0, err := p.LogPredictive(x, y)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				m, _, err := p.PredictY(x)
				l, err2 := p.LogPredictive(x, y)
				if err != nil || err2 != nil || !mat.Equal(m, m0) || fmt.Sprint(l) != fmt.Sprint(l0) {
					errs <- fmt.Sprintf("a later call differs (%v, %v)", err, err2)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
