package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// multiData returns n random inputs in 2D and n·P targets, every fifth
// missing (NaN).
func multiData(rng *rand.Rand, n, P int) (*mat.Dense, []float64) {
	x := randDense(rng, n, 2, -2, 2)
	y := make([]float64, n*P)
	for i := range y {
		y[i] = math.Sin(x.At(i/P, 0)+float64(i%P)) + 0.2*rng.NormFloat64()
		if i%5 == 3 {
			y[i] = math.NaN()
		}
	}
	return x, y
}

func multiModel(t *testing.T, kind Kind, whiten bool, lik Likelihood, z, o mat.Matrix) *Model {
	t.Helper()
	mod, err := newOfKind(kind, newRefRBF(2, 1.3, 0.9, 1.2), lik, z, o,
		WithWhitening(whiten), WithKuuJitter(chol.NoJitter()), WithCvvJitter(chol.NoJitter()))
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// TestGradientMultiOutput checks every gradient entry of the mini-batch
// objective (mixing matrix W and noise variances included) against central
// finite differences, with missing targets, for SVGP, ODVGP and SOLVE-GP,
// whitened and not, with independent outputs and with an LMC.
func TestGradientMultiOutput(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x, y := multiData(rng, 9, 3)
	z := randDense(rng, 4, 2, -2, 2)
	o := randDense(rng, 3, 2, -2, 2)
	liks := map[string]func() Likelihood{
		"independent": func() Likelihood {
			g, _ := likelihood.NewIndependentGaussian([]float64{0.3, 0.5, 0.2})
			return g
		},
		"lmc": func() Likelihood {
			g, _ := likelihood.NewLMC(2, []float64{0.8, -0.3, 0.2, 1.1, -0.6, 0.5}, []float64{0.3, 0.5, 0.2})
			return g
		},
	}
	for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
		for _, whiten := range []bool{false, true} {
			for name, newLik := range liks {
				t.Run(kind.String()+"/"+name+map[bool]string{false: "", true: "/whitened"}[whiten], func(t *testing.T) {
					mod := multiModel(t, kind, whiten, newLik(), z, o)
					perturbQ(mod, rng, 0.3)
					idx := make([]int, mod.NumParams())
					for i := range idx {
						idx[i] = i
					}
					checkGrad(t, mod, x, y, 20, idx, 1e-5)
				})
			}
		}
	}
}

// TestIndependentOutputsEqualSingle checks that a model of P independent
// outputs has the bound of P single-output models with the same kernel,
// inducing inputs and q(u), q(v⊥), each fitted to the points where its
// output is observed: the bounds add up, and the gradients with respect to
// each output's variational and noise parameters are those of its single
// model, and the shared ones (kernel, Z, O) their sum.
func TestIndependentOutputsEqualSingle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, P = 11, 3
	x, y := multiData(rng, n, P)
	z := randDense(rng, 4, 2, -2, 2)
	o := randDense(rng, 3, 2, -2, 2)
	noise := []float64{0.3, 0.5, 0.2}
	for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
		for _, whiten := range []bool{false, true} {
			g, _ := likelihood.NewIndependentGaussian(noise)
			multi := multiModel(t, kind, whiten, g, z, o)
			perturbQ(multi, rng, 0.3)
			th := make([]float64, multi.NumParams())
			multi.Params(th)
			grad := make([]float64, len(th))
			bound, err := multi.Objective(x, y, n, grad)
			if err != nil {
				t.Fatal(err)
			}
			lay := multi.layout
			var sum float64
			shared := make([]float64, lay.MU[0])
			for p := 0; p < P; p++ {
				gp, _ := likelihood.NewGaussian(noise[p])
				single := multiModel(t, kind, whiten, gp, z, o)
				sl := single.layout
				st := make([]float64, single.NumParams())
				single.Params(st)
				nu := firstV(sl) - sl.MU[0] // m_u and L_u
				copy(st[sl.MU[0]:], th[lay.MU[p]:lay.MU[p]+nu])
				if kind != SVGP {
					copy(st[sl.MV[0]:sl.Mean], th[lay.MV[p]:lay.MV[p]+sl.Mean-sl.MV[0]])
				}
				if err := single.SetParams(st); err != nil {
					t.Fatal(err)
				}
				var rows []int
				var yp []float64
				for i := 0; i < n; i++ {
					if v := y[i*P+p]; !math.IsNaN(v) {
						rows = append(rows, i)
						yp = append(yp, v)
					}
				}
				xp := mat.NewDense(len(rows), 2, nil)
				for k, i := range rows {
					xp.SetRow(k, x.RawRowView(i))
				}
				sg := make([]float64, len(st))
				b, err := single.Objective(xp, yp, len(rows), sg)
				if err != nil {
					t.Fatal(err)
				}
				sum += b
				near := func(what string, got, want []float64) {
					for i := range got {
						if math.Abs(got[i]-want[i]) > 1e-9*math.Max(1, math.Abs(want[i])) {
							t.Errorf("%v whiten=%v output %d %s[%d]: %g, single model %g", kind, whiten, p, what, i, got[i], want[i])
							return
						}
					}
				}
				near("noise", grad[lay.Lik+p:lay.Lik+p+1], sg[sl.Lik:sl.Z])
				near("q(u)", grad[lay.MU[p]:lay.MU[p]+nu], sg[sl.MU[0]:firstV(sl)])
				if kind != SVGP {
					near("q(v)", grad[lay.MV[p]:lay.MV[p]+sl.Mean-sl.MV[0]], sg[sl.MV[0]:sl.Mean])
				}
				for i := 0; i < sl.Lik; i++ {
					shared[i] += sg[i]
				}
				for i := sl.Z; i < sl.MU[0]; i++ {
					shared[lay.Z+i-sl.Z] += sg[i]
				}
			}
			if math.Abs(bound-sum) > 1e-9*math.Abs(sum) {
				t.Errorf("%v whiten=%v: bound %g, sum of single bounds %g", kind, whiten, bound, sum)
			}
			for i := range shared {
				if i >= lay.Lik && i < lay.Z {
					continue
				}
				if math.Abs(grad[i]-shared[i]) > 1e-9*math.Max(1, math.Abs(shared[i])) {
					t.Errorf("%v whiten=%v: shared gradient %d (%s) %g, sum of single models' %g", kind, whiten, i, multi.paramGroup(i), grad[i], shared[i])
				}
			}
		}
	}
}

// firstV returns the offset of the first orthogonal block of a
// single-latent layout (its Mean offset for SVGP).
func firstV(l Layout) int {
	if l.MV[0] >= 0 {
		return l.MV[0]
	}
	return l.Mean
}

// TestLMCIdentityEqualsIndependent checks that an LMC with W = I (L = P)
// has the bound and gradients of independent outputs, and that its
// predictions agree.
func TestLMCIdentityEqualsIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n, P = 10, 2
	x, y := multiData(rng, n, P)
	z := randDense(rng, 4, 2, -2, 2)
	o := randDense(rng, 3, 2, -2, 2)
	noise := []float64{0.3, 0.6}
	for _, kind := range []Kind{SVGP, SOLVEGP} {
		gi, _ := likelihood.NewIndependentGaussian(noise)
		gl, _ := likelihood.NewLMC(P, []float64{1, 0, 0, 1}, noise)
		ind := multiModel(t, kind, true, gi, z, o)
		lmc := multiModel(t, kind, true, gl, z, o)
		perturbQ(ind, rng, 0.3)
		ti := make([]float64, ind.NumParams())
		ind.Params(ti)
		tl := make([]float64, lmc.NumParams())
		lmc.Params(tl)
		li, ll := ind.layout, lmc.layout
		copy(tl[ll.Z:], ti[li.Z:])
		if err := lmc.SetParams(tl); err != nil {
			t.Fatal(err)
		}
		gI := make([]float64, len(ti))
		gL := make([]float64, len(tl))
		bI, err := ind.Objective(x, y, 30, gI)
		if err != nil {
			t.Fatal(err)
		}
		bL, err := lmc.Objective(x, y, 30, gL)
		if err != nil {
			t.Fatal(err)
		}
		if bI != bL {
			t.Errorf("%v: LMC bound %v, independent %v", kind, bL, bI)
		}
		for i := range gI {
			j := i
			if i >= li.Z {
				j = i - li.Z + ll.Z
			}
			if math.Abs(gI[i]-gL[j]) > 1e-12*math.Max(1, math.Abs(gI[i])) {
				t.Errorf("%v: gradient %d (%s): LMC %g, independent %g", kind, i, ind.paramGroup(i), gL[j], gI[i])
			}
		}
		pi, err := ind.Predictor(0)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := lmc.Predictor(0)
		if err != nil {
			t.Fatal(err)
		}
		mi, vi, err := pi.PredictY(x)
		if err != nil {
			t.Fatal(err)
		}
		ml, vl, _ := pl.PredictY(x)
		if r, c := mi.Dims(); r != n || c != P {
			t.Fatalf("PredictY is %d×%d, want %d×%d", r, c, n, P)
		}
		if !mat.EqualApprox(mi, ml, 1e-12) || !mat.EqualApprox(vi, vl, 1e-12) {
			t.Errorf("%v: predictions differ", kind)
		}
		lp, err := pl.LogPredictive(x, y)
		if err != nil || len(lp) != n {
			t.Fatalf("LogPredictive: %v, %d values", err, len(lp))
		}
	}
}

// TestMultiOutputTargetErrors checks the shape and value errors of
// multi-output targets.
func TestMultiOutputTargetErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := multiData(rng, 5, 2)
	g, _ := likelihood.NewIndependentGaussian([]float64{0.1, 0.1})
	mod := multiModel(t, SVGP, true, g, randDense(rng, 3, 2, -1, 1), nil)
	if mod.NumOutputs() != 2 {
		t.Fatalf("NumOutputs %d", mod.NumOutputs())
	}
	if _, err := mod.Objective(x, y[:5], 5, nil); err == nil {
		t.Error("5 targets for 5 points of 2 outputs accepted")
	}
	y[0] = math.Inf(1)
	if _, err := mod.Objective(x, y, 5, nil); err == nil {
		t.Error("infinite target accepted")
	}
	if err := mod.ValidateData(x, y); err == nil {
		t.Error("ValidateData accepted an infinite target")
	}
	y[0] = math.NaN()
	if err := mod.ValidateData(x, y); err != nil {
		t.Errorf("missing target refused: %v", err)
	}
}

// TestNaturalStepIndependentOutputs checks that natural-gradient steps of
// size 1 on the full data set put every q(u) (and q(v⊥)) of independent
// Gaussian outputs, missing targets included, at its optimum, as for the
// single-output Gaussian (see Model.NaturalStep): one step for SVGP, and
// for SOLVE-GP, whose two means step as one block-Jacobi sweep, repeated
// steps; the bound's gradient with respect to them then vanishes.
func TestNaturalStepIndependentOutputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n, P = 12, 2
	x, y := multiData(rng, n, P)
	z := randDense(rng, 4, 2, -2, 2)
	o := randDense(rng, 3, 2, -2, 2)
	for _, kind := range []Kind{SVGP, SOLVEGP} {
		for _, whiten := range []bool{false, true} {
			g, _ := likelihood.NewIndependentGaussian([]float64{0.2, 0.4})
			mod := multiModel(t, kind, whiten, g, z, o)
			perturbQ(mod, rng, 0.3)
			steps := 1
			if kind == SOLVEGP {
				steps = 200
			}
			for s := 0; s < steps; s++ {
				if err := mod.NaturalStep(x, y, n, 1); err != nil {
					t.Fatal(err)
				}
			}
			grad := make([]float64, mod.NumParams())
			if _, err := mod.Objective(x, y, n, grad); err != nil {
				t.Fatal(err)
			}
			lay := mod.layout
			for i := lay.MU[0]; i < lay.Mean; i++ {
				if math.Abs(grad[i]) > 1e-6 {
					t.Errorf("%v whiten=%v: gradient %d (%s) = %g after a natural step of 1", kind, whiten, i, mod.paramGroup(i), grad[i])
					break
				}
			}
		}
	}
}
