package collapsed_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// planeKernels returns, by name, a fresh kernel on R^2 of each kind of
// periodic.go, dotproduct.go and active.go, alone or in the sum or product
// that makes it a sensible regression prior.
func planeKernels(t *testing.T) map[string]func() kernel.Kernel {
	t.Helper()
	must := func(k kernel.Kernel, err error) kernel.Kernel {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	rbf := func() kernel.Kernel { return must(kernel.NewRBF(2, 0.9, 1.0)) }
	sum := func(a, b kernel.Kernel) kernel.Kernel { return must(kernel.NewSum(a, b)) }
	return map[string]func() kernel.Kernel{
		"periodic":   func() kernel.Kernel { return must(kernel.NewPeriodic(2, 3.1, 1.2, 1.0, kernel.ARD())) },
		"rq":         func() kernel.Kernel { return must(kernel.NewRationalQuadratic(2, 1.5, 0.9, 1.0, kernel.ARD())) },
		"linear+rbf": func() kernel.Kernel { return sum(must(kernel.NewLinear(2, 0.3, 0.2)), rbf()) },
		"polynomial": func() kernel.Kernel { return must(kernel.NewPolynomial(2, 2, 0.4, 0.5)) },
		"constant+rbf": func() kernel.Kernel {
			return sum(must(kernel.NewConstant(2, 0.3)), rbf())
		},
		"white+rbf": func() kernel.Kernel { return sum(must(kernel.NewWhite(2, 0.05)), rbf()) },
		"rbf@0+periodic@1": func() kernel.Kernel {
			r := must(kernel.NewRBF(1, 0.8, 1.0))
			p := must(kernel.NewPeriodic(1, 2.5, 1.0, 0.2))
			return sum(must(kernel.NewActive(r, 2, []int{0})), must(kernel.NewActive(p, 2, []int{1})))
		},
	}
}

// TestNewKernelsCollapsedVersusUncollapsed checks for every kernel that
// package gp's SVGP and SOLVE-GP bounds at the optimal q equal the
// collapsed bounds, and that both gradients match finite differences.
func TestNewKernelsCollapsedVersusUncollapsed(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	const n = 40
	x, y, z, o := planeData(rng, n, 6, 4)
	for name, mk := range planeKernels(t) {
		for _, withO := range []bool{false, true} {
			if withO && name == "polynomial" {
				// A quadratic kernel on R^2 has rank 6: 6 inducing plus
				// 4 orthogonal inputs make K_ww singular, and the two
				// models then jitter different matrices (see GPModel).
				continue
			}
			var oo *mat.Dense
			if withO {
				oo = o
			}
			lik, _ := likelihood.NewGaussian(0.05)
			cm, err := collapsed.New(mk(), lik, z, oo, collapsed.Options{})
			if err != nil {
				t.Fatal(err)
			}
			cb, err := cm.Bound(x, y)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			mod, err := cm.GPModel(x, y)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			ub, err := mod.Objective(x, y, n, nil)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(ub-cb) > 1e-7*math.Abs(cb) {
				t.Errorf("%s O=%v: uncollapsed bound at the optimal q %.12g, collapsed %.12g", name, withO, ub, cb)
			}
			checkFD(t, name+" gp", mod.NumParams(), mod.Params, mod.SetParams, func(g []float64) (float64, error) {
				return mod.Objective(x, y, n, g)
			})
			checkFD(t, name+" collapsed", cm.NumParams(), cm.Params, cm.SetParams, func(g []float64) (float64, error) {
				if g == nil {
					return cm.Bound(x, y)
				}
				return cm.BoundGrad(x, y, g)
			})
		}
	}
}

// checkFD compares the gradient of f with central finite differences in
// the first 12 parameters (the kernel's, the noise and inducing inputs).
func checkFD(t *testing.T, name string, np int, get func([]float64), set func([]float64) error, f func([]float64) (float64, error)) {
	t.Helper()
	p := make([]float64, np)
	get(p)
	g := make([]float64, np)
	if _, err := f(g); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	const h = 1e-5
	for i := 0; i < min(np, 12); i++ {
		q := append([]float64(nil), p...)
		q[i] = p[i] + h
		if err := set(q); err != nil {
			t.Fatal(err)
		}
		fp, err1 := f(nil)
		q[i] = p[i] - h
		if err := set(q); err != nil {
			t.Fatal(err)
		}
		fm, err2 := f(nil)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", name, err1, err2)
		}
		want := (fp - fm) / (2 * h)
		if math.Abs(g[i]-want) > 1e-5*(1+math.Abs(want)) {
			t.Errorf("%s: gradient %d = %.8g, finite difference %.8g", name, i, g[i], want)
		}
	}
	if err := set(p); err != nil {
		t.Fatal(err)
	}
}

// TestNewKernelsTrain trains every kernel collapsed (L-BFGS) and in
// mini-batches (SVGP and SOLVE-GP with Adam) and checks that the bounds
// rise and stay finite.
func TestNewKernelsTrain(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	const n = 120
	x, y, z, o := planeData(rng, n, 8, 6)
	for name, mk := range planeKernels(t) {
		lik, _ := likelihood.NewGaussian(0.1)
		cm, err := collapsed.New(mk(), lik, z, o, collapsed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cm.Fit(context.Background(), x, y, train.LBFGSOptions{MaxIter: 30})
		if err != nil {
			t.Fatalf("%s collapsed: %v", name, err)
		}
		if !(res.Bound > res.Initial) {
			t.Errorf("%s collapsed: bound %g not above its start %g", name, res.Bound, res.Initial)
		}
		for _, withO := range []bool{false, true} {
			lik, _ := likelihood.NewGaussian(0.1)
			var mod *gp.Model
			if withO {
				mod, err = gp.NewSOLVEGP(mk(), lik, z, o)
			} else {
				mod, err = gp.NewSVGP(mk(), lik, z)
			}
			if err != nil {
				t.Fatal(err)
			}
			before, _ := mod.Objective(x, y, n, nil)
			_, err := train.Fit(context.Background(), mod, x, y, train.Config{
				MaxSteps: 150, BatchSize: 40, Seed: 1, Schedule: train.StepDecay{Initial: 0.02, Factor: 1, Every: 1000}})
			if err != nil {
				t.Fatalf("%s O=%v: %v", name, withO, err)
			}
			after, err := mod.Objective(x, y, n, nil)
			if err != nil || !(after > before) {
				t.Errorf("%s O=%v: bound %g (error %v) after training, %g before", name, withO, after, err, before)
			}
		}
	}
}

// extrapolationRMSE fits the collapsed SGPR model with kernel k to (x, y)
// and returns the RMSE of its predictive mean against f at xs.
func extrapolationRMSE(t *testing.T, k kernel.Kernel, x *mat.Dense, y []float64, z, xs *mat.Dense, f func(float64) float64) float64 {
	t.Helper()
	lik, _ := likelihood.NewGaussian(0.01)
	cm, err := collapsed.New(k, lik, z, nil, collapsed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cm.Fit(context.Background(), x, y, train.LBFGSOptions{MaxIter: 200}); err != nil {
		t.Fatal(err)
	}
	post, err := cm.Posterior(x, y)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := xs.Dims()
	mean, variance := make([]float64, n), make([]float64, n)
	if err := post.Predict(xs, mean, variance); err != nil {
		t.Fatal(err)
	}
	s := 0.0
	for i, m := range mean {
		d := m - f(xs.At(i, 0))
		s += d * d
	}
	return math.Sqrt(s / float64(n))
}

// TestLinearTrendExtrapolates fits a rising trend with wiggles on [0, 5]
// and checks that linear + RBF follows the trend on [7, 9], where RBF alone
// reverts to the prior mean.
func TestLinearTrendExtrapolates(t *testing.T) {
	rng := rand.New(rand.NewPCG(77, 78))
	const n = 80
	f := func(v float64) float64 { return v + 0.3*math.Sin(3*v) }
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		v := 5 * rng.Float64()
		x.Set(i, 0, v)
		y[i] = f(v) + 0.05*rng.NormFloat64()
	}
	z := mat.NewDense(10, 1, nil)
	for i := 0; i < 10; i++ {
		z.Set(i, 0, 0.5*float64(i))
	}
	xs := mat.NewDense(21, 1, nil)
	for i := 0; i < 21; i++ {
		xs.Set(i, 0, 7+0.1*float64(i))
	}
	lin, _ := kernel.NewLinear(1, 1, 1)
	r1, _ := kernel.NewRBF(1, 0.5, 0.1)
	sum, _ := kernel.NewSum(lin, r1)
	r2, _ := kernel.NewRBF(1, 0.5, 1)
	el, er := extrapolationRMSE(t, sum, x, y, z, xs, f), extrapolationRMSE(t, r2, x, y, z, xs, f)
	t.Logf("extrapolation RMSE: linear+RBF %.4f, RBF %.4f", el, er)
	if el > 0.5 || er < 2 {
		t.Errorf("extrapolation RMSE: linear+RBF %.4f (want < 0.5), RBF %.4f (want > 2)", el, er)
	}
}

// TestPeriodicExtrapolates fits a periodic signal on [0, 6] and checks that
// a periodic kernel predicts it on [9, 12], three periods beyond the data,
// where an RBF kernel reverts to the prior mean.
func TestPeriodicExtrapolates(t *testing.T) {
	rng := rand.New(rand.NewPCG(75, 76))
	const n, period = 80, 1.5
	f := func(v float64) float64 { return math.Sin(2*math.Pi*v/period) + 0.5*math.Cos(4*math.Pi*v/period) }
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		v := 6 * rng.Float64()
		x.Set(i, 0, v)
		y[i] = f(v) + 0.05*rng.NormFloat64()
	}
	z := mat.NewDense(12, 1, nil)
	for i := 0; i < 12; i++ {
		z.Set(i, 0, 0.5*float64(i))
	}
	xs := mat.NewDense(30, 1, nil)
	for i := 0; i < 30; i++ {
		xs.Set(i, 0, 9+0.1*float64(i))
	}
	per, _ := kernel.NewPeriodic(1, 1.4, 1.0, 1.0)
	rbf, _ := kernel.NewRBF(1, 0.5, 1.0)
	ep, er := extrapolationRMSE(t, per, x, y, z, xs, f), extrapolationRMSE(t, rbf, x, y, z, xs, f)
	t.Logf("extrapolation RMSE: periodic %.4f (period %.4f), RBF %.4f", ep, per.Period(), er)
	if ep > 0.1 || er < 0.5 {
		t.Errorf("extrapolation RMSE: periodic %.4f (want < 0.1), RBF %.4f (want > 0.5)", ep, er)
	}
}
