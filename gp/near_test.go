package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/transform"
)

// nearCase is a small SOLVE-GP problem whose orthogonal inducing inputs O
// and some test inputs lie within 1e-7 lengthscales of inducing inputs Z,
// among inputs spread over several lengthscales away from the origin.
type nearCase struct {
	d, m, m2      int
	ls, vr, noise float64
	z, o, x, xt   *mat.Dense
	y             []float64
	nTotal        int
}

func newNearCase() *nearCase {
	rng := rand.New(rand.NewPCG(35, 8))
	c := &nearCase{d: 2, m: 6, m2: 3, ls: 1.3, vr: 1.7, noise: 0.05, nTotal: 200}
	unif := func(r int, lo, hi float64) *mat.Dense {
		a := mat.NewDense(r, c.d, nil)
		for i := 0; i < r; i++ {
			for j := 0; j < c.d; j++ {
				a.Set(i, j, lo+(hi-lo)*rng.Float64())
			}
		}
		return a
	}
	near := func(dst, src []float64, dist float64) {
		th := 2 * math.Pi * rng.Float64()
		dst[0] = src[0] + dist*c.ls*math.Cos(th)
		dst[1] = src[1] + dist*c.ls*math.Sin(th)
	}
	c.z = unif(c.m, 2, 40)
	c.o = unif(c.m2, 2, 40)
	near(c.o.RawRowView(0), c.z.RawRowView(2), 1e-7)
	near(c.o.RawRowView(1), c.z.RawRowView(4), 0.4e-7)
	c.x = unif(10, 2, 40)
	c.y = make([]float64, 10)
	for i := range c.y {
		c.y[i] = math.Sin(c.x.At(i, 0)) + math.Cos(c.x.At(i, 1)/2) + 0.2*rng.NormFloat64()
	}
	c.xt = unif(6, 2, 40)
	near(c.xt.RawRowView(0), c.z.RawRowView(2), 0.7e-7)
	near(c.xt.RawRowView(1), c.o.RawRowView(1), 0.5e-7)
	return c
}

// model builds the SOLVE-GP model of the case with kernel k (nil: the
// package's RBF) and the given whitening.
func (c *nearCase) model(t *testing.T, k Kernel, whiten bool) *Model {
	t.Helper()
	if k == nil {
		var err error
		if k, err = kernel.NewRBF(c.d, c.ls, c.vr); err != nil {
			t.Fatal(err)
		}
	}
	lik, err := likelihood.NewGaussian(c.noise)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := NewSOLVEGP(k, lik, c.z, c.o, WithWhitening(whiten))
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

func rowsOf(a *mat.Dense) [][]float64 {
	r, _ := a.Dims()
	out := make([][]float64, r)
	for i := range out {
		out[i] = append([]float64(nil), a.RawRowView(i)...)
	}
	return out
}

// maxRelErr returns max|got − want| / max|want|.
func maxRelErr(got, want []float64) float64 {
	var e, s float64
	for i := range got {
		e = math.Max(e, math.Abs(got[i]-want[i]))
		s = math.Max(s, math.Abs(want[i]))
	}
	return e / s
}

// nearErrors are the errors of one evaluation against the reference.
type nearErrors struct {
	bound, mean, variance, grad float64
	gradVar                     float64 // gradient in the variational parameters and Z, O only
}

func (e nearErrors) String() string {
	return fmt.Sprintf("bound %.2g, mean %.2g, variance %.2g, gradient %.2g (without kernel and likelihood parameters %.2g)",
		e.bound, e.mean, e.variance, e.grad, e.gradVar)
}

// TestNearCoincidentReference checks SOLVE-GP with orthogonal inducing
// inputs within 1e-7 lengthscales of inducing inputs — bound, gradient and
// predictive marginals, whitened and unwhitened — against the 256-bit
// reference of near_ref_test.go at the same parameters and jitters. C_vv
// is near singular there (its smallest eigenvalues are ~1e-14·σ², below
// the rounding of its O(σ²) terms, so the default policy adds a jitter of
// 1e-10·σ²), and its entries are differences of kernel values that the
// squared-distance expansion would carry with absolute errors of
// ~ε·‖x/ℓ‖² rather than ε (here ‖x/ℓ‖² ~ 10²). The errors must meet the
// targets of issue 35 (relative: mean 2e-6 and bound 1e-7 unwhitened,
// 2e-9 and 1e-10 whitened) and be within 4× of those of a float64
// evaluation of the same formulas with exact differences (the loop kernel
// refRBF through the same model), which the test also measures. That
// evaluation is itself limited by C_vv's conditioning: its gradient is
// off by ~6e-7 (unwhitened) and ~3e-7 (whitened) relative to the largest
// component, its bound and mean by ~1e-11 to 1e-10.
func TestNearCoincidentReference(t *testing.T) {
	c := newNearCase()
	for _, tc := range []struct {
		whiten      bool
		mean, bound float64
	}{
		{false, 2e-6, 1e-7},
		{true, 2e-9, 1e-10},
	} {
		mod := c.model(t, nil, tc.whiten)
		lay := mod.Layout()
		theta := make([]float64, mod.NumParams())
		mod.Params(theta)
		if _, err := mod.Objective(c.x, c.y, c.nTotal, nil); err != nil {
			t.Fatal(err)
		}
		vr := mod.Kernel().(*kernel.Stationary).Variance()
		jit := mod.LastTerms()
		pr := &refProblem{lay: lay, d: c.d, m: c.m, m2: c.m2, whiten: tc.whiten,
			noiseFloor: mod.Likelihood().(*likelihood.Gaussian).NoiseFloor(),
			x:          rowsOf(c.x), xt: rowsOf(c.xt), y: c.y, nTotal: c.nTotal,
			relJitU: bquo(bnew(jit.JitterUU), bnew(vr)), relJitV: bquo(bnew(jit.JitterVV), bnew(vr))}
		if jit.JitterVV == 0 {
			t.Fatalf("whiten=%v: no jitter on C_vv; the case is not near singular", tc.whiten)
		}
		// Variational parameters around the prior: L = L0·T, m = L0·r
		// (unwhitened) or L = T, m = r (whitened), with L0 from the
		// reference so that they do not depend on the code under test.
		rng := rand.New(rand.NewPCG(5, 35))
		btheta := make([]bf, len(theta))
		for i, v := range theta {
			btheta[i] = bnew(v)
		}
		ref0 := pr.eval(btheta, false)
		setBlock := func(l0 bmat, moff, loff, n int) {
			tm := bmatNew(n, n)
			r := bmatNew(n, 1)
			for i := 0; i < n; i++ {
				r[i][0] = bnew(rng.NormFloat64())
				for j := 0; j < i; j++ {
					tm[i][j] = bnew(0.3 * rng.NormFloat64())
				}
				tm[i][i] = bnew(0.5 + 0.5*rng.Float64())
			}
			if !tc.whiten {
				tm, r = bmatMul(l0, tm), bmatMul(l0, r)
			}
			for i := 0; i < n; i++ {
				theta[moff+i] = bf64(r[i][0])
				for j := 0; j <= i; j++ {
					v := bf64(tm[i][j])
					if i == j {
						v = transform.InvSoftplus(v)
					}
					theta[loff+i*(i+1)/2+j] = v
				}
			}
		}
		setBlock(ref0.l0u, lay.MU[0], lay.LU[0], c.m)
		setBlock(ref0.l0v, lay.MV[0], lay.LV[0], c.m2)
		for i, v := range theta {
			btheta[i] = bnew(v)
		}
		ref := pr.eval(btheta, true)
		refBound := bf64(ref.bound)
		refMean, refVar := make([]float64, len(ref.mean)), make([]float64, len(ref.mean))
		for i := range ref.mean {
			refMean[i], refVar[i] = bf64(ref.mean[i]), bf64(ref.variance[i])
		}
		refGrad := pr.grad(btheta)

		measure := func(mod *Model, theta []float64, gradMap func([]float64) []float64) nearErrors {
			t.Helper()
			if err := mod.SetParams(theta); err != nil {
				t.Fatal(err)
			}
			g := make([]float64, len(theta))
			b, err := mod.Objective(c.x, c.y, c.nTotal, g)
			if err != nil {
				t.Fatal(err)
			}
			if got := mod.LastTerms().JitterVV; got != jit.JitterVV {
				t.Fatalf("whiten=%v: C_vv jitter %g, reference assumes %g", tc.whiten, got, jit.JitterVV)
			}
			p, err := mod.Predictor(0)
			if err != nil {
				t.Fatal(err)
			}
			if _, v := p.Jitter(); v != jit.JitterVV {
				t.Fatalf("whiten=%v: predictor's C_vv jitter %g, reference assumes %g", tc.whiten, v, jit.JitterVV)
			}
			mu, va, err := p.PredictF(c.xt)
			if err != nil {
				t.Fatal(err)
			}
			g = gradMap(g)
			var e nearErrors
			e.bound = math.Abs(b-refBound) / math.Abs(refBound)
			e.mean = maxRelErr(mu.RawMatrix().Data, refMean)
			e.variance = maxRelErr(va.RawMatrix().Data, refVar)
			if g[0] == g[0] {
				e.grad = maxRelErr(g, refGrad)
			} else {
				e.grad = math.NaN()
			}
			e.gradVar = maxRelErr(g[lay.Z:], refGrad[lay.Z:])
			return e
		}
		got := measure(mod, theta, func(g []float64) []float64 { return g })
		t.Logf("whiten=%v, jitter on C_vv %.3g: solvegp kernel: %v", tc.whiten, jit.JitterVV, got)

		// The same model with the loop kernel refRBF (exact differences,
		// parameters ln σ², ln ℓ₁, ln ℓ₂ in place of the two softplus ones).
		lsF := transform.Softplus(theta[lay.Kernel])
		vrF := transform.Softplus(theta[lay.Kernel+1])
		plain := c.model(t, newRefRBF(c.d, vrF, lsF, lsF), tc.whiten)
		pt := append([]float64{math.Log(vrF), math.Log(lsF), math.Log(lsF)}, theta[lay.Lik:]...)
		pe := measure(plain, pt, func(g []float64) []float64 {
			out := append([]float64{math.NaN(), math.NaN()}, g[3:]...)
			return out
		})
		t.Logf("whiten=%v: plain float64, exact differences: %v", tc.whiten, pe)

		if got.bound > tc.bound || got.mean > tc.mean {
			t.Errorf("whiten=%v: errors %v; the targets are bound %.2g, mean %.2g", tc.whiten, got, tc.bound, tc.mean)
		}
		for _, q := range []struct {
			name      string
			got, want float64
		}{
			{"bound", got.bound, pe.bound},
			{"mean", got.mean, pe.mean},
			{"variance", got.variance, pe.variance},
			{"gradient", got.grad, pe.gradVar},
			{"gradient in Z, O and q", got.gradVar, pe.gradVar},
		} {
			if q.got > 4*q.want+1e-13 {
				t.Errorf("whiten=%v: %s error %.2g, more than 4× that of float64 with exact differences (%.2g)", tc.whiten, q.name, q.got, q.want)
			}
		}
	}
}
