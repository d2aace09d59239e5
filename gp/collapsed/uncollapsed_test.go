package collapsed_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
	"github.com/solvegp/solvegp/gp/transform"
)

// setQ writes q(u) = N(mu, su) and q(v⊥) = N(mv, sv) into the flat
// parameters of an unwhitened gp model (Cholesky factors packed row by
// row, diagonal through softplus⁻¹).
func setQ(t *testing.T, mod *gp.Model, mu []float64, su *mat.SymDense, mv []float64, sv *mat.SymDense) {
	t.Helper()
	p := make([]float64, mod.NumParams())
	mod.Params(p)
	lay := mod.Layout()
	pack := func(off int, s *mat.SymDense) {
		var c mat.Cholesky
		if !c.Factorize(s) {
			t.Fatal("covariance not positive definite")
		}
		var l mat.TriDense
		c.LTo(&l)
		n := s.SymmetricDim()
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				v := l.At(i, j)
				if i == j {
					v = transform.InvSoftplus(v)
				}
				p[off+i*(i+1)/2+j] = v
			}
		}
	}
	copy(p[lay.MU[0]:], mu)
	pack(lay.LU[0], su)
	if mv != nil {
		copy(p[lay.MV[0]:], mv)
		pack(lay.LV[0], sv)
	}
	if err := mod.SetParams(p); err != nil {
		t.Fatal(err)
	}
}

// planeData draws from rng n inputs in the plane with targets
// sin(2x₀) + 0.3x₁ + 0.1ε, then nz inducing inputs z and (count no)
// orthogonal inducing inputs o, all standard normal and in that order, so that each
// test's seed fixes its problem.
func planeData(rng *rand.Rand, n, nz, no int) (x *mat.Dense, y []float64, z, o *mat.Dense) {
	x = mat.NewDense(n, 2, nil)
	y = make([]float64, n)
	for i := 0; i < n; i++ {
		x.Set(i, 0, rng.NormFloat64())
		x.Set(i, 1, rng.NormFloat64())
		y[i] = math.Sin(2*x.At(i, 0)) + 0.3*x.At(i, 1) + 0.1*rng.NormFloat64()
	}
	z = mat.NewDense(nz, 2, nil)
	o = mat.NewDense(no, 2, nil)
	for _, m := range []*mat.Dense{z, o} {
		for i := range m.RawMatrix().Data {
			m.RawMatrix().Data[i] = rng.NormFloat64()
		}
	}
	return x, y, z, o
}

// newGPModel returns package gp's model with the same inducing points as
// a collapsed model built with z and o: SOLVE-GP, or SVGP when o is nil.
func newGPModel(k gp.Kernel, lik gp.Likelihood, z, o *mat.Dense, whiten bool) (*gp.Model, error) {
	if o != nil {
		return gp.NewSOLVEGP(k, lik, z, o, gp.WithWhitening(whiten))
	}
	return gp.NewSVGP(k, lik, z, gp.WithWhitening(whiten))
}

// TestCollapsedVersusUncollapsed checks, with package gp's SVGP and
// SOLVE-GP models, that the collapsed bound is at least the uncollapsed
// bound at any q, with equality at the q returned by OptimalQ.
func TestCollapsedVersusUncollapsed(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 31))
	n := 40
	x, y, z, o := planeData(rng, n, 5, 4)
	for _, withO := range []bool{false, true} {
		k, _ := kernel.NewRBF(2, 0.9, 1.2)
		lik, _ := likelihood.NewGaussian(0.05)
		var oo *mat.Dense
		if withO {
			oo = o
		}
		cm, err := collapsed.New(k, lik, z, oo, collapsed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cb, err := cm.Bound(x, y)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := newGPModel(k, lik, z, oo, false)
		if err != nil {
			t.Fatal(err)
		}
		// At the prior q the uncollapsed bound is lower.
		prior, err := mod.Objective(x, y, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !(prior < cb) {
			t.Errorf("O=%v: uncollapsed bound at the prior %v not below the collapsed %v", withO, prior, cb)
		}
		mu, su, mv, sv, err := cm.OptimalQ(x, y)
		if err != nil {
			t.Fatal(err)
		}
		setQ(t, mod, mu, su, mv, sv)
		atOpt, err := mod.Objective(x, y, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("O=%v: collapsed %.12f, uncollapsed at the optimal q %.12f, at the prior %.6f", withO, cb, atOpt, prior)
		if math.Abs(atOpt-cb) > 1e-7*math.Abs(cb) {
			t.Errorf("O=%v: uncollapsed bound at the optimal q %v, collapsed %v", withO, atOpt, cb)
		}
		// Perturbed q: lower again.
		for trial := 0; trial < 3; trial++ {
			mu2 := append([]float64(nil), mu...)
			for i := range mu2 {
				mu2[i] += 0.05 * rng.NormFloat64()
			}
			var mv2 []float64
			if mv != nil {
				mv2 = append([]float64(nil), mv...)
				mv2[0] += 0.05
			}
			// Covariances: scaled up or down and given extra spread.
			scale := 0.7 + 0.6*rng.Float64()
			su2 := mat.NewSymDense(su.SymmetricDim(), nil)
			su2.ScaleSym(scale, su)
			for i := 0; i < su2.SymmetricDim(); i++ {
				su2.SetSym(i, i, su2.At(i, i)+1e-3)
			}
			var sv2 *mat.SymDense
			if sv != nil {
				sv2 = mat.NewSymDense(sv.SymmetricDim(), nil)
				sv2.ScaleSym(2-scale, sv)
			}
			setQ(t, mod, mu2, su2, mv2, sv2)
			v, err := mod.Objective(x, y, n, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !(v < cb) {
				t.Errorf("O=%v: uncollapsed bound at a perturbed q %v not below the collapsed %v", withO, v, cb)
			}
		}
	}
}

// TestAdamReachesCollapsedOptimum trains q(u) and q(v⊥) of package gp's
// SOLVE-GP model with train.Fit (full batch, hyperparameters and inducing
// inputs frozen) and checks that the uncollapsed bound rises to the
// collapsed optimum, which it can never exceed.
func TestAdamReachesCollapsedOptimum(t *testing.T) {
	if testing.Short() {
		t.Skip("long training run; skipped with -short")
	}
	rng := rand.New(rand.NewPCG(41, 41))
	n := 50
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		x.Set(i, 0, 6*rng.Float64()-3)
		y[i] = math.Sin(2*x.At(i, 0)) + 0.1*rng.NormFloat64()
	}
	z := mat.NewDense(4, 1, []float64{-2.5, -1, 0.5, 2})
	o := mat.NewDense(4, 1, []float64{-1.8, -0.2, 1.2, 2.7})
	k, _ := kernel.NewRBF(1, 1, 1)
	lik, _ := likelihood.NewGaussian(0.1)
	cm, err := collapsed.New(k, lik, z, o, collapsed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	target, err := cm.Bound(x, y)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := gp.NewSOLVEGP(k, lik, z, o, gp.WithWhitening(false))
	if err != nil {
		t.Fatal(err)
	}
	lay := mod.Layout()
	frozen := make([]bool, mod.NumParams())
	for i := 0; i < lay.MU[0]; i++ {
		frozen[i] = true // kernel, likelihood, Z, O
	}
	var bounds []float64
	res, err := train.Fit(context.Background(), mod, x, y, train.Config{
		MaxSteps: 6000, Schedule: train.StepDecay{Initial: 0.02, Factor: 0.3, Every: 2000}, Frozen: frozen,
		OnStep: func(s train.StepInfo) error {
			if s.Step%500 == 0 {
				bounds = append(bounds, s.Objective)
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	final, err := mod.Objective(x, y, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("collapsed optimum %.6f; uncollapsed every 500 steps %v; final %.6f (%d steps)", target, bounds, final, res.Steps)
	if final > target+1e-6*math.Abs(target) {
		t.Errorf("uncollapsed bound %v exceeds the collapsed optimum %v", final, target)
	}
	if gap := target - final; gap > 1e-4 {
		t.Errorf("uncollapsed bound %v is %v below the collapsed optimum %v", final, gap, target)
	}
	for i := 1; i < len(bounds); i++ {
		if bounds[i] < bounds[i-1]-1e-3*math.Abs(bounds[i-1]) {
			t.Errorf("bound decreased: %v", bounds)
			break
		}
	}
}

// TestFitReproducibleWithGPModel trains package gp's SOLVE-GP model twice
// with the same seed and one thread and checks that the parameters agree
// bit for bit (and differ for another seed).
func TestFitReproducibleWithGPModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 61))
	n := 120
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		x.Set(i, 0, rng.NormFloat64())
		x.Set(i, 1, rng.NormFloat64())
		y[i] = math.Sin(x.At(i, 0)) + 0.1*rng.NormFloat64()
	}
	run := func(seed uint64) []float64 {
		z, o, err := inducing.Init(x, 6, 6, inducing.KMeansOptions{Seed: 1, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		k, _ := kernel.NewMatern32(2, 1, 1)
		lik, _ := likelihood.NewGaussian(0.1)
		mod, err := gp.NewSOLVEGP(k, lik, z, o, gp.WithThreads(1))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := train.Fit(context.Background(), mod, x, y, train.Config{Epochs: 5, BatchSize: 16, Seed: seed}); err != nil {
			t.Fatal(err)
		}
		p := make([]float64, mod.NumParams())
		mod.Params(p)
		return p
	}
	a, b, c := run(3), run(3), run(4)
	differ := false
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("same seed: parameter %d differs: %v vs %v", i, a[i], b[i])
		}
		differ = differ || a[i] != c[i]
	}
	if !differ {
		t.Error("different seeds gave identical parameters")
	}
}

// TestNaturalGradientOnGPModels checks gp.NaturalGradient on package
// gp's models with a Gaussian likelihood: for SVGP (unwhitened and
// whitened) one full-batch step of size 1 reaches the collapsed SGPR
// bound; for SOLVE-GP, whose bound couples the means of q(u) and q(v⊥),
// repeated steps of size 1 rise to the collapsed SOLVE-GP bound.
func TestNaturalGradientOnGPModels(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 71))
	n := 60
	x, y, z, o := planeData(rng, n, 6, 5)
	for _, c := range []struct {
		name    string
		o       *mat.Dense
		whiten  bool
		sweeps  int
		tolRel  float64
		monoton bool
	}{
		{"SVGP", nil, false, 1, 1e-9, false},
		{"SVGP whitened", nil, true, 1, 1e-9, false},
		{"SOLVE-GP", o, false, 60, 1e-6, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, _ := kernel.NewRBF(2, 0.9, 1.2)
			lik, _ := likelihood.NewGaussian(0.05)
			cm, err := collapsed.New(k, lik, z, c.o, collapsed.Options{})
			if err != nil {
				t.Fatal(err)
			}
			target, _ := cm.Bound(x, y)
			mod, err := newGPModel(k, lik, z, c.o, c.whiten)
			if err != nil {
				t.Fatal(err)
			}
			lay := mod.Layout()
			_, m, m2, _ := mod.Dims()
			factors := []gp.GaussianFactor{{Mean: lay.MU[0], Chol: lay.LU[0], N: m}}
			if c.o != nil {
				factors = append(factors, gp.GaussianFactor{Mean: lay.MV[0], Chol: lay.LV[0], N: m2})
			}
			ng := &gp.NaturalGradient{ObjectiveModel: mod, Factors: factors}
			prev := math.Inf(-1)
			for s := 0; s < c.sweeps; s++ {
				if err := ng.NaturalStep(x, y, n, 1); err != nil {
					t.Fatal(err)
				}
				v, err := mod.Objective(x, y, n, nil)
				if err != nil {
					t.Fatal(err)
				}
				if c.monoton && v < prev-1e-9*math.Abs(prev) {
					t.Errorf("sweep %d: bound fell from %v to %v", s, prev, v)
				}
				prev = v
			}
			if math.Abs(prev-target) > c.tolRel*math.Abs(target) || prev > target+1e-9*math.Abs(target) {
				t.Errorf("after %d steps: uncollapsed %v, collapsed optimum %v", c.sweeps, prev, target)
			}
			t.Logf("%s: after %d natural steps %.10f, collapsed %.10f", c.name, c.sweeps, prev, target)
		})
	}
}

// TestNaturalGradientPlusAdamReachesCollapsedFit trains package gp's
// SVGP and SOLVE-GP with natural-gradient steps on q and Adam on the
// kernel and noise (inducing inputs frozen), and compares the final bound
// with the collapsed bound maximized over the same hyperparameters by
// L-BFGS.
func TestNaturalGradientPlusAdamReachesCollapsedFit(t *testing.T) {
	if testing.Short() {
		t.Skip("long training run; skipped with -short")
	}
	rng := rand.New(rand.NewPCG(81, 81))
	n := 80
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		x.Set(i, 0, 6*rng.Float64()-3)
		y[i] = math.Sin(2*x.At(i, 0)) + 0.2*rng.NormFloat64()
	}
	z := mat.NewDense(5, 1, []float64{-2.5, -1.2, 0, 1.2, 2.5})
	o := mat.NewDense(5, 1, []float64{-1.9, -0.6, 0.6, 1.9, 2.9})
	for _, withO := range []bool{false, true} {
		var oo *mat.Dense
		if withO {
			oo = o
		}
		k1, _ := kernel.NewRBF(1, 1, 1)
		l1, _ := likelihood.NewGaussian(0.1)
		cm, _ := collapsed.New(k1, l1, z, oo, collapsed.Options{FixInducing: true})
		cres, err := cm.Fit(context.Background(), x, y, train.LBFGSOptions{})
		if err != nil {
			t.Fatal(err)
		}
		k2, _ := kernel.NewRBF(1, 1, 1)
		l2, _ := likelihood.NewGaussian(0.1)
		mod, err := newGPModel(k2, l2, z, oo, false)
		if err != nil {
			t.Fatal(err)
		}
		lay := mod.Layout()
		_, m, m2, _ := mod.Dims()
		factors := []gp.GaussianFactor{{Mean: lay.MU[0], Chol: lay.LU[0], N: m}}
		if withO {
			factors = append(factors, gp.GaussianFactor{Mean: lay.MV[0], Chol: lay.LV[0], N: m2})
		}
		frozen := make([]bool, mod.NumParams())
		for i := lay.Z; i < lay.MU[0]; i++ {
			frozen[i] = true // Z and O
		}
		ng := &gp.NaturalGradient{ObjectiveModel: mod, Factors: factors}
		if _, err := train.Fit(context.Background(), ng, x, y, train.Config{MaxSteps: 3000, NaturalStep: 1,
			Schedule: train.StepDecay{Initial: 0.05, Factor: 0.3, Every: 1000}, Frozen: frozen}); err != nil {
			t.Fatal(err)
		}
		final, err := mod.Objective(x, y, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("O=%v: collapsed L-BFGS optimum %.6f, natural gradients + Adam %.6f", withO, cres.Bound, final)
		if final > cres.Bound+1e-6*math.Abs(cres.Bound) || cres.Bound-final > 1e-5*math.Abs(cres.Bound) {
			t.Errorf("O=%v: natural gradients + Adam reached %v, collapsed optimum %v", withO, final, cres.Bound)
		}
	}
}
