package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
)

type gradCase struct {
	kind   Kind
	whiten bool
	lik    string
	sample int
}

func (c gradCase) String() string {
	return fmt.Sprintf("%v/whiten=%v/%s/sample=%d", c.kind, c.whiten, c.lik, c.sample)
}

func newLik(name string) Likelihood {
	switch name {
	case "gauss":
		return &refGauss{logVar: math.Log(0.3)}
	case "poisson":
		return refPoisson{}
	case "two":
		return &refTwo{logVar: math.Log(0.5)}
	}
	panic(name)
}

// buildModel makes a model of the given case with random, non-prior
// variational parameters.
func buildModel(t testing.TB, c gradCase, rng *rand.Rand, d, m, m2 int) *Model {
	t.Helper()
	k := newRefRBF(d, 1.3, 0.9, 1.2, 1.1)
	z := randDense(rng, m, d, -2, 2)
	o := randDense(rng, m2, d, -2, 2)
	opts := []Option{WithWhitening(c.whiten), WithKuuJitter(chol.NoJitter()), WithCvvJitter(chol.NoJitter())}
	if c.sample > 0 {
		opts = append(opts, WithColumnSample(c.sample))
	}
	var mod *Model
	var err error
	mod, err = newOfKind(c.kind, k, newLik(c.lik), z, o, opts...)
	if err != nil {
		t.Fatal(err)
	}
	perturbQ(mod, rng, 0.3)
	return mod
}

// perturbQ adds noise to the variational parameters (not the mean's).
func perturbQ(mod *Model, rng *rand.Rand, s float64) {
	th := make([]float64, mod.NumParams())
	mod.Params(th)
	lay := mod.layout
	start := lay.O + mod.m2*mod.dz
	for i := start; i < lay.Mean; i++ {
		th[i] += s * rng.NormFloat64()
	}
	if err := mod.SetParams(th); err != nil {
		panic(err)
	}
}

func (mod *Model) resetRNG() { mod.rng = rand.New(rand.NewPCG(11, 12)) }

func checkGrad(t *testing.T, mod *Model, x *mat.Dense, y []float64, nTotal int, idx []int, tol float64) {
	t.Helper()
	th := make([]float64, mod.NumParams())
	mod.Params(th)
	grad := make([]float64, len(th))
	mod.resetRNG()
	f0, err := mod.Objective(x, y, nTotal, grad)
	if err != nil {
		t.Fatal(err)
	}
	mod.resetRNG()
	f1, _ := mod.Objective(x, y, nTotal, nil)
	if f0 != f1 {
		t.Fatalf("objective not deterministic: %v vs %v", f0, f1)
	}
	tp := append([]float64(nil), th...)
	bad := 0
	for _, i := range idx {
		h := 1e-5 * math.Max(1, math.Abs(th[i]))
		tp[i] = th[i] + h
		if err := mod.SetParams(tp); err != nil {
			t.Fatal(err)
		}
		mod.resetRNG()
		fp, err := mod.Objective(x, y, nTotal, nil)
		if err != nil {
			t.Fatal(err)
		}
		tp[i] = th[i] - h
		mod.SetParams(tp)
		mod.resetRNG()
		fm, err := mod.Objective(x, y, nTotal, nil)
		if err != nil {
			t.Fatal(err)
		}
		tp[i] = th[i]
		fd := (fp - fm) / (2 * h)
		if d := math.Abs(fd - grad[i]); d > tol*math.Max(1, math.Max(math.Abs(fd), math.Abs(f0)*1e-3)) {
			if bad < 10 {
				t.Errorf("param %d (%s): analytic %.10g, finite difference %.10g", i, mod.paramGroup(i), grad[i], fd)
			}
			bad++
		}
	}
	mod.SetParams(th)
	if bad > 0 {
		t.Errorf("%d of %d gradient entries wrong", bad, len(idx))
	}
}

func (mod *Model) paramGroup(i int) string {
	lay := mod.layout
	switch {
	case i >= lay.Mean:
		return "mean"
	case i < lay.Lik:
		return "kernel"
	case i < lay.Z:
		return "likelihood"
	case i < lay.O:
		return "Z"
	case i < lay.MU[0]:
		return "O"
	}
	for l := mod.nl - 1; l >= 0; l-- {
		switch {
		case lay.LV[l] >= 0 && i >= lay.LV[l]:
			return fmt.Sprintf("Lv[%d]", l)
		case lay.MV[l] >= 0 && i >= lay.MV[l]:
			return fmt.Sprintf("mv[%d]", l)
		}
	}
	for l := mod.nl - 1; l >= 0; l-- {
		switch {
		case i >= lay.LU[l]:
			return fmt.Sprintf("Lu[%d]", l)
		case i >= lay.MU[l]:
			return fmt.Sprintf("mu[%d]", l)
		}
	}
	return "?"
}

func allCases() []gradCase {
	var cs []gradCase
	for _, k := range []Kind{SVGP, ODVGP, SOLVEGP} {
		for _, w := range []bool{false, true} {
			for _, l := range []string{"gauss", "poisson", "two"} {
				cs = append(cs, gradCase{kind: k, whiten: w, lik: l})
			}
		}
	}
	cs = append(cs, gradCase{kind: ODVGP, lik: "gauss", sample: 2}, gradCase{kind: ODVGP, whiten: true, lik: "two", sample: 2})
	return cs
}

func TestGradientSmall(t *testing.T) {
	for _, c := range allCases() {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			mod := buildModel(t, c, rng, 2, 4, 3)
			x := randDense(rng, 6, 2, -2.5, 2.5)
			y := make([]float64, 6)
			for i := range y {
				y[i] = math.Round(2 + 2*math.Sin(x.At(i, 0)))
			}
			idx := make([]int, mod.NumParams())
			for i := range idx {
				idx[i] = i
			}
			checkGrad(t, mod, x, y, 20, idx, 2e-6)
		})
	}
}

func TestGradientMedium(t *testing.T) {
	for _, c := range []gradCase{
		{kind: SVGP, lik: "gauss"}, {kind: SVGP, whiten: true, lik: "poisson"},
		{kind: SOLVEGP, lik: "gauss"}, {kind: SOLVEGP, whiten: true, lik: "two"},
		{kind: ODVGP, lik: "poisson"}, {kind: ODVGP, whiten: true, lik: "gauss", sample: 7},
	} {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			mod := buildModel(t, c, rng, 3, 18, 14)
			x := randDense(rng, 40, 3, -2.5, 2.5)
			y := make([]float64, 40)
			for i := range y {
				y[i] = math.Round(2 + 2*math.Sin(x.At(i, 0)))
			}
			var idx []int
			for i := 0; i < mod.NumParams(); i += 1 + rng.IntN(17) {
				idx = append(idx, i)
			}
			checkGrad(t, mod, x, y, 100, idx, 1e-5)
		})
	}
}

// TestGradientInputs checks ∂J/∂x through Forward/Backward for
// J = Σ c·μ + e·σ² − KL.
func TestGradientInputs(t *testing.T) {
	for _, c := range []gradCase{{kind: SVGP, lik: "gauss"}, {kind: SOLVEGP, whiten: true, lik: "two"}, {kind: ODVGP, lik: "two"}, {kind: SOLVEGP, lik: "gauss"}} {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			mod := buildModel(t, c, rng, 2, 5, 4)
			n := 7
			x := randDense(rng, n, 2, -2, 2)
			L := mod.nl
			cw := make([]float64, n*L)
			ew := make([]float64, n*L)
			for i := range cw {
				cw[i] = rng.NormFloat64()
				ew[i] = rng.NormFloat64()
			}
			J := func(x *mat.Dense) float64 {
				mu := make([]float64, n*L)
				vr := make([]float64, n*L)
				ku, kv, err := mod.Forward(x, mu, vr)
				if err != nil {
					t.Fatal(err)
				}
				s := -(ku + kv)
				for i := range mu {
					s += cw[i]*mu[i] + ew[i]*vr[i]
				}
				return s
			}
			J(x)
			grad := make([]float64, mod.NumParams())
			dx := mat.NewDense(n, 2, nil)
			if err := mod.Backward(cw, ew, -1, grad, dx); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				for j := 0; j < 2; j++ {
					xp := mat.DenseCopyOf(x)
					h := 1e-5
					xp.Set(i, j, x.At(i, j)+h)
					fp := J(xp)
					xp.Set(i, j, x.At(i, j)-h)
					fm := J(xp)
					fd := (fp - fm) / (2 * h)
					if math.Abs(fd-dx.At(i, j)) > 1e-6*math.Max(1, math.Abs(fd)) {
						t.Errorf("dx[%d][%d] = %g, finite difference %g", i, j, dx.At(i, j), fd)
					}
				}
			}
		})
	}
}

// TestGradientLarge samples gradient entries of models large enough for the
// recursive Cholesky adjoint of package chol (M, M₂ > 96, its recursion
// cutoff).
func TestGradientLarge(t *testing.T) {
	for _, c := range []gradCase{{kind: SVGP, whiten: true, lik: "gauss"}, {kind: SOLVEGP, lik: "gauss"}} {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			mod := buildModel(t, c, rng, 3, 117, 101)
			// Spread the inducing points out so that K_uu and C_vv are well
			// conditioned and finite differences stay accurate.
			th := make([]float64, mod.NumParams())
			mod.Params(th)
			for i := mod.layout.Z; i < mod.layout.MU[0]; i++ {
				th[i] *= 3
			}
			if err := mod.SetParams(th); err != nil {
				t.Fatal(err)
			}
			x := randDense(rng, 30, 3, -6, 6)
			y := make([]float64, 30)
			for i := range y {
				y[i] = math.Round(2 + 2*math.Sin(x.At(i, 0)))
			}
			lay := mod.layout
			idx := []int{0, 1, 2, 3, lay.Lik, lay.Z, lay.Z + 7, lay.Z + 100, lay.O + 3, lay.MU[0] + 5, lay.LU[0] + 77, lay.LU[0] + 5000}
			if lay.MV[0] >= 0 {
				idx = append(idx, lay.MV[0]+3, lay.LV[0]+12, lay.LV[0]+4000)
			}
			checkGrad(t, mod, x, y, 100, idx, 1e-5)
		})
	}
}

// TestGradientTiny covers the degenerate sizes M = M₂ = 1 and a batch of
// one point.
func TestGradientTiny(t *testing.T) {
	for _, c := range []gradCase{{kind: SVGP, lik: "gauss"}, {kind: SOLVEGP, whiten: true, lik: "two"}, {kind: SOLVEGP, lik: "poisson"}, {kind: ODVGP, lik: "gauss", sample: 1}} {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, 9))
			mod := buildModel(t, c, rng, 2, 1, 1)
			x := randDense(rng, 1, 2, -1, 1)
			idx := make([]int, mod.NumParams())
			for i := range idx {
				idx[i] = i
			}
			checkGrad(t, mod, x, []float64{1}, 5, idx, 2e-6)
		})
	}
}

// TestJitterGradient checks the gradient where the jitter policies act:
// a repeated inducing input makes K_uu singular and a repeated orthogonal
// one C_vv, so the evaluations add jitter, which scales with the mean
// diagonal of K_uu (or K_vv) and so with the kernel variance. A finite
// difference is only compared where the same jitter branch was taken at
// θ, θ + h and θ − h: whether a numerically singular matrix factors without
// jitter depends on rounding, and a change of branch moves the objective by
// far more than its gradient says. The kernel parameters must all be
// compared: each case takes the first of a few seeded placements of the
// inducing inputs for which they keep the branch.
func TestJitterGradient(t *testing.T) {
	const d, m, m2, n = 2, 5, 4, 30
	x, y := problem(23, n, d)
	pol := chol.JitterPolicy{Start: 1e-3, Growth: 10, MaxTries: 1}
	for _, c := range []struct {
		kind   Kind
		whiten bool
	}{{SVGP, false}, {SVGP, true}, {SOLVEGP, false}, {SOLVEGP, true}, {ODVGP, false}} {
		t.Run(fmt.Sprintf("%v/whiten=%v", c.kind, c.whiten), func(t *testing.T) {
			for seed := uint64(0); seed < 5; seed++ {
				if jitterGradientCase(t, c.kind, c.whiten, seed, x, y, pol) {
					return
				}
			}
			t.Fatal("no placement kept the jitter branch under changes of the kernel parameters")
		})
	}
}

// jitterGradientCase runs one placement of TestJitterGradient; it returns
// false if a kernel parameter's finite difference changed the jitter
// branch (the placement cannot be used).
func jitterGradientCase(t *testing.T, kind Kind, whiten bool, seed uint64, x *mat.Dense, y []float64, pol chol.JitterPolicy) bool {
	t.Helper()
	const d, m, m2 = 2, 5, 4
	n := len(y)
	rng := rand.New(rand.NewPCG(21, seed))
	{
		{
			k := prodKernel(t, "matern52", d)
			lik, _ := prodLik(t, "gaussian")
			z := randDense(rng, m, d, -2, 2)
			o := randDense(rng, m2, d, -2, 2)
			for j := 0; j < d; j++ {
				z.Set(m-1, j, z.At(0, j))
				o.Set(m2-1, j, o.At(1, j))
			}
			opts := []Option{WithWhitening(whiten), WithKuuJitter(pol), WithCvvJitter(pol)}
			var mod *Model
			var err error
			mod, err = newOfKind(kind, k, lik, z, o, opts...)
			if err != nil {
				t.Fatal(err)
			}
			perturbQ(mod, rng, 0.3)
			th := make([]float64, mod.NumParams())
			mod.Params(th)
			grad := make([]float64, len(th))
			if _, err := mod.Objective(x, y, n, grad); err != nil {
				t.Fatal(err)
			}
			branch := func() [2]bool { tm := mod.LastTerms(); return [2]bool{tm.JitterUU > 0, tm.JitterVV > 0} }
			at := branch()
			if !at[0] || kind == SOLVEGP && !at[1] {
				t.Fatalf("jitter %+v: the test needs K_uu (and C_vv) jittered", mod.LastTerms())
			}
			eval := func(i int, v float64) (float64, [2]bool) {
				tp := append([]float64(nil), th...)
				tp[i] = v
				if err := mod.SetParams(tp); err != nil {
					t.Fatal(err)
				}
				f, err := mod.Objective(x, y, n, nil)
				if err != nil {
					t.Fatal(err)
				}
				return f, branch()
			}
			compared := 0
			for i := range th {
				h := 1e-5 * math.Max(1, math.Abs(th[i]))
				fp, bp := eval(i, th[i]+h)
				fm, bm := eval(i, th[i]-h)
				if bp != at || bm != at {
					if i < mod.Layout().Lik {
						return false
					}
					continue
				}
				compared++
				fd := (fp - fm) / (2 * h)
				if math.Abs(fd-grad[i]) > 2e-5*math.Max(1, math.Abs(fd)) {
					t.Errorf("param %d (%s): analytic %.10g, finite difference %.10g", i, mod.paramGroup(i), grad[i], fd)
				}
			}
			if compared < len(th)/2 {
				t.Errorf("only %d of %d parameters kept the jitter branch", compared, len(th))
			}
		}
	}
	return true
}
