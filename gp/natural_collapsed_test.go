package gp_test

// Tests of package gp's natural gradients against the collapsed bounds of
// package collapsed. They are external tests because collapsed imports gp
// (collapsed.Model.GPModel), so gp's internal tests cannot import it; the
// internal helpers they use are exported in export_test.go.

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

// TestNaturalStepSVGPIsSGPROptimum: for a Gaussian likelihood one
// full-batch natural step of size 1 from any q(u) lands on the optimal q(u)
// of Titsias' collapsed bound, whitened or not.
func TestNaturalStepSVGPIsSGPROptimum(t *testing.T) {
	x, y, z, _ := gp.NatData(1, 50)
	for _, whiten := range []bool{false, true} {
		mod := gp.NatModel(t, gp.SVGP, whiten, nil, z, nil, 2)
		cm, err := collapsed.New(mod.Kernel().(kernel.Kernel), mod.Likelihood().(*likelihood.Gaussian), z, nil, collapsed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		target, err := cm.Bound(x, y)
		if err != nil {
			t.Fatal(err)
		}
		before, _ := mod.Objective(x, y, len(y), nil)
		if err := mod.NaturalStep(x, y, len(y), 1); err != nil {
			t.Fatal(err)
		}
		after, err := mod.Objective(x, y, len(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(after-target) > 1e-9*math.Abs(target) || !(before < target-1) {
			t.Errorf("whiten=%v: bound %v → %v after one step, collapsed SGPR bound %v", whiten, before, after, target)
		}
		f := mod.NaturalFactors()[0]
		for _, mean := range []bool{true, false} {
			if g := gp.FactorGrad(t, mod, x, y, f, mean); g > 1e-8 {
				t.Errorf("whiten=%v: relative gradient %g on q(u) (mean %v) after the step", whiten, g, mean)
			}
		}
		// q(u) itself, in the unwhitened coordinates u = L_uu·u′.
		p := make([]float64, mod.NumParams())
		mod.Params(p)
		m, s := gp.FactorQ(p, f)
		if whiten {
			kuu := gp.Kmat(mod.Kernel(), z, z)
			for i := 0; i < 6; i++ {
				kuu.Set(i, i, kuu.At(i, i)+mod.LastTerms().JitterUU)
			}
			luu := gp.CholLower(kuu)
			var mu mat.VecDense
			mu.MulVec(luu, mat.NewVecDense(6, m))
			m = mu.RawVector().Data
			ls := gp.Mul(luu, gp.CholLower(s))
			s = mat.NewSymDense(6, nil)
			s.SymOuterK(1, ls)
		}
		wantM, wantS, _, _, err := cm.OptimalQ(x, y)
		if err != nil {
			t.Fatal(err)
		}
		if !gp.CloseVec(m, wantM, 1e-7) || !gp.CloseSym(s, wantS, 1e-7) {
			t.Errorf("whiten=%v: q(u) = N(%v, %v), optimum N(%v, %v)", whiten, m, mat.Formatted(s), wantM, mat.Formatted(wantS))
		}
	}
}

// TestNaturalStepSOLVEGP checks what a step of size 1 does for SOLVE-GP
// with a Gaussian likelihood: both covariances reach their collapsed
// optimum (Appendix C) at once; each mean reaches its optimum given the
// other's old value (a block-Jacobi sweep, so the joint optimum is not
// reached in one step); and repeated steps converge to the collapsed
// SOLVE-GP bound (eq. 10) and its optimal q.
func TestNaturalStepSOLVEGP(t *testing.T) {
	x, y, z, o := gp.NatData(3, 60)
	for _, whiten := range []bool{false, true} {
		mod := gp.NatModel(t, gp.SOLVEGP, whiten, nil, z, o, 4)
		cm, err := collapsed.New(mod.Kernel().(kernel.Kernel), mod.Likelihood().(*likelihood.Gaussian), z, o, collapsed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		target, err := cm.Bound(x, y)
		if err != nil {
			t.Fatal(err)
		}
		fs := mod.NaturalFactors()
		if len(fs) != 2 {
			t.Fatalf("factors %+v", fs)
		}
		old := make([]float64, mod.NumParams())
		mod.Params(old)
		if err := mod.NaturalStep(x, y, len(y), 1); err != nil {
			t.Fatal(err)
		}
		one := make([]float64, mod.NumParams())
		mod.Params(one)
		first, _ := mod.Objective(x, y, len(y), nil)
		for i, f := range fs {
			if g := gp.FactorGrad(t, mod, x, y, f, false); g > 1e-8 {
				t.Errorf("whiten=%v: factor %d: relative covariance gradient %g after one step", whiten, i, g)
			}
		}
		// m_u is optimal given the old q(v⊥), m_v given the old q(u).
		for i, f := range fs {
			mixed := append([]float64(nil), old...)
			copy(mixed[f.Mean:f.Mean+f.N], one[f.Mean:f.Mean+f.N])
			if err := mod.SetParams(mixed); err != nil {
				t.Fatal(err)
			}
			if g := gp.FactorGrad(t, mod, x, y, f, true); g > 1e-8 {
				t.Errorf("whiten=%v: factor %d: new mean not optimal given the other's old mean (relative gradient %g)", whiten, i, g)
			}
		}
		// The joint optimum is not reached in one step, but iterating gets
		// there with a bound that never exceeds the collapsed one.
		if err := mod.SetParams(one); err != nil {
			t.Fatal(err)
		}
		if first > target-1e-6*math.Abs(target) {
			t.Errorf("whiten=%v: one step reached %v, collapsed optimum %v: the test data do not couple the means", whiten, first, target)
		}
		var v float64
		for s := 0; s < 100; s++ {
			if err := mod.NaturalStep(x, y, len(y), 1); err != nil {
				t.Fatal(err)
			}
			if v, err = mod.Objective(x, y, len(y), nil); err != nil {
				t.Fatal(err)
			}
			if v > target+1e-9*math.Abs(target) {
				t.Fatalf("whiten=%v: step %d: uncollapsed %v above the collapsed bound %v", whiten, s, v, target)
			}
		}
		if math.Abs(v-target) > 1e-9*math.Abs(target) {
			t.Errorf("whiten=%v: after 101 steps %v, collapsed SOLVE-GP bound %v (first step %v)", whiten, v, target, first)
		}
		if !whiten {
			p := make([]float64, mod.NumParams())
			mod.Params(p)
			mu, su, mv, sv, err := cm.OptimalQ(x, y)
			if err != nil {
				t.Fatal(err)
			}
			gu, gsu := gp.FactorQ(p, fs[0])
			gv, gsv := gp.FactorQ(p, fs[1])
			if !gp.CloseVec(gu, mu, 1e-6) || !gp.CloseSym(gsu, su, 1e-6) || !gp.CloseVec(gv, mv, 1e-6) || !gp.CloseSym(gsv, sv, 1e-6) {
				t.Errorf("converged q differs from the collapsed optimum: m_u %v vs %v, m_v %v vs %v", gu, mu, gv, mv)
			}
		}
	}
}

// TestNaturalGradientFit trains SVGP and SOLVE-GP with train.Fit's
// natural-gradient option directly on the model: full-batch steps of size 1
// for q and Adam for the kernel and noise (inducing inputs frozen) reach
// the collapsed bound maximized over the same hyperparameters by L-BFGS,
// with two evaluations per step or one (NaturalSharedGradient).
func TestNaturalGradientFit(t *testing.T) {
	if testing.Short() {
		t.Skip("18000 training steps; skipped with -short (race detector, qemu)")
	}
	rng := rand.New(rand.NewPCG(13, 13))
	n := 60
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		x.Set(i, 0, 6*rng.Float64()-3)
		y[i] = math.Sin(2*x.At(i, 0)) + 0.2*rng.NormFloat64()
	}
	z := mat.NewDense(5, 1, []float64{-2.5, -1.2, 0, 1.2, 2.5})
	o := mat.NewDense(4, 1, []float64{-1.9, -0.6, 0.6, 1.9})
	for _, kind := range []gp.Kind{gp.SVGP, gp.SOLVEGP} {
		for _, c := range []struct{ whiten, shared bool }{{false, false}, {true, false}, {false, true}} {
			whiten := c.whiten
			var oo *mat.Dense
			if kind == gp.SOLVEGP {
				oo = o
			}
			k1, _ := kernel.NewRBF(1, 1, 1)
			l1, _ := likelihood.NewGaussian(0.1)
			cm, err := collapsed.New(k1, l1, z, oo, collapsed.Options{FixInducing: true})
			if err != nil {
				t.Fatal(err)
			}
			cres, err := cm.Fit(context.Background(), x, y, train.LBFGSOptions{})
			if err != nil {
				t.Fatal(err)
			}
			k2, _ := kernel.NewRBF(1, 1, 1)
			l2, _ := likelihood.NewGaussian(0.1)
			var mod *gp.Model
			if kind == gp.SVGP {
				mod, err = gp.NewSVGP(k2, l2, z, gp.WithWhitening(whiten), gp.WithThreads(1))
			} else {
				mod, err = gp.NewSOLVEGP(k2, l2, z, o, gp.WithWhitening(whiten), gp.WithThreads(1))
			}
			if err != nil {
				t.Fatal(err)
			}
			lay := mod.Layout()
			frozen := make([]bool, mod.NumParams())
			for i := lay.Z; i < lay.MU[0]; i++ {
				frozen[i] = true
			}
			res, err := train.Fit(context.Background(), mod, x, y, train.Config{MaxSteps: 3000, NaturalStep: 1,
				Schedule: train.StepDecay{Initial: 0.05, Factor: 0.3, Every: 1000}, Frozen: frozen, NaturalSharedGradient: c.shared})
			if err != nil {
				t.Fatal(err)
			}
			final, err := mod.Objective(x, y, n, nil)
			if err != nil {
				t.Fatal(err)
			}
			if final > cres.Bound+1e-6*math.Abs(cres.Bound) || cres.Bound-final > 1e-5*math.Abs(cres.Bound) {
				t.Errorf("%v whiten=%v shared=%v: natural gradients + Adam reached %v in %d steps, collapsed optimum %v", kind, whiten, c.shared, final, res.Steps, cres.Bound)
			}
		}
	}
}

// TestNaturalStepTighterIsCollapsedTighter: with the tighter bound
// (gp.WithBound) and a Gaussian likelihood the optimal q(u) is that of the
// standard bound, so one full-batch natural step of size 1 from the prior
// lands where the uncollapsed tighter bound equals package collapsed's
// tighter bound, whitened or not.
func TestNaturalStepTighterIsCollapsedTighter(t *testing.T) {
	x, y, z, _ := gp.NatData(3, 50)
	for _, whiten := range []bool{false, true} {
		k, _ := kernel.NewRBF(2, 0.9, 1.2)
		lik, _ := likelihood.NewGaussian(0.05)
		mod, err := gp.NewSVGP(k, lik, z, gp.WithWhitening(whiten), gp.WithBound(gp.TighterBound), gp.WithThreads(1))
		if err != nil {
			t.Fatal(err)
		}
		cm, err := collapsed.New(k, lik, z, nil, collapsed.Options{Bound: collapsed.Tighter})
		if err != nil {
			t.Fatal(err)
		}
		target, err := cm.Bound(x, y)
		if err != nil {
			t.Fatal(err)
		}
		before, _ := mod.Objective(x, y, len(y), nil)
		if err := mod.NaturalStep(x, y, len(y), 1); err != nil {
			t.Fatal(err)
		}
		after, err := mod.Objective(x, y, len(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(after-target) > 1e-8*math.Abs(target) || !(before < target-1) {
			t.Errorf("whiten=%v: tighter bound %v → %v after one natural step, collapsed tighter bound %v", whiten, before, after, target)
		}
	}
}
