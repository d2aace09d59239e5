package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp/mean"
)

func newTestMean(t testing.TB, name string, d int) MeanFunction {
	t.Helper()
	var m MeanFunction
	var err error
	switch name {
	case "zero":
		m, err = mean.NewZero(d)
	case "constant":
		m, err = mean.NewConstant(d, 0.7)
	case "linear":
		w := make([]float64, d)
		for j := range w {
			w[j] = 0.3 - 0.4*float64(j)
		}
		m, err = mean.NewLinear(w, -0.2)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// buildMeanModel is buildModel with a mean function.
func buildMeanModel(t testing.TB, c gradCase, meanName string, rng *rand.Rand, d, m, m2 int) *Model {
	t.Helper()
	k := newRefRBF(d, 1.3, 0.9, 1.2, 1.1)
	z := randDense(rng, m, d, -2, 2)
	o := randDense(rng, m2, d, -2, 2)
	opts := []Option{WithWhitening(c.whiten), WithKuuJitter(chol.NoJitter()), WithCvvJitter(chol.NoJitter())}
	if meanName != "" {
		opts = append(opts, WithMean(newTestMean(t, meanName, d)))
	}
	mod, err := newOfKind(c.kind, k, newLik(c.lik), z, o, opts...)
	if err != nil {
		t.Fatal(err)
	}
	perturbQ(mod, rng, 0.3)
	return mod
}

// The gradient of the mini-batch bound with respect to every parameter,
// the mean's included, matches central finite differences for every kind,
// both parameterizations, one and two latent functions.
func TestMeanGrad(t *testing.T) {
	const d, m, m2, n = 2, 4, 3, 9
	for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
		for _, whiten := range []bool{false, true} {
			for _, lik := range []string{"gauss", "two"} {
				for _, mn := range []string{"constant", "linear"} {
					c := gradCase{kind: kind, whiten: whiten, lik: lik}
					t.Run(c.String()+"/"+mn, func(t *testing.T) {
						rng := rand.New(rand.NewPCG(3, 4))
						mod := buildMeanModel(t, c, mn, rng, d, m, m2)
						th := make([]float64, mod.NumParams())
						mod.Params(th)
						lay := mod.Layout()
						for i := lay.Mean; i < lay.Total; i++ {
							th[i] += 0.5 * rng.NormFloat64()
						}
						if err := mod.SetParams(th); err != nil {
							t.Fatal(err)
						}
						x := randDense(rng, n, d, -2.5, 2.5)
						y := make([]float64, n)
						for i := range y {
							y[i] = 1 + x.At(i, 0) + 0.3*rng.NormFloat64()
						}
						idx := make([]int, mod.NumParams())
						for i := range idx {
							idx[i] = i
						}
						checkGrad(t, mod, x, y, 3*n, idx, 1e-5)
					})
				}
			}
		}
	}
}

// Backward's input gradient includes the linear mean's slope: checked
// against finite differences of Σ dmu·mu in x.
func TestMeanInputGrad(t *testing.T) {
	const d, n = 2, 5
	rng := rand.New(rand.NewPCG(5, 6))
	mod := buildMeanModel(t, gradCase{kind: SOLVEGP, whiten: true, lik: "gauss"}, "linear", rng, d, 4, 3)
	x := randDense(rng, n, d, -2, 2)
	w := make([]float64, n)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	f := func(x *mat.Dense) float64 {
		mu, vr := make([]float64, n), make([]float64, n)
		if _, _, err := mod.Forward(x, mu, vr); err != nil {
			t.Fatal(err)
		}
		var s float64
		for i := range mu {
			s += w[i] * mu[i]
		}
		return s
	}
	f(x)
	dx := mat.NewDense(n, d, nil)
	grad := make([]float64, mod.NumParams())
	if err := mod.Backward(w, make([]float64, n), 0, grad, dx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			xp, xm := mat.DenseCopyOf(x), mat.DenseCopyOf(x)
			const h = 1e-6
			xp.Set(i, j, x.At(i, j)+h)
			xm.Set(i, j, x.At(i, j)-h)
			fd := (f(xp) - f(xm)) / (2 * h)
			if math.Abs(fd-dx.At(i, j)) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("dx[%d][%d] = %g, finite difference %g", i, j, dx.At(i, j), fd)
			}
		}
	}
}

// A model with the zero mean computes bit for bit what a model without a
// mean does: the bound, its gradient and the predictions.
func TestZeroMeanBitIdentical(t *testing.T) {
	for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
		for _, whiten := range []bool{false, true} {
			c := gradCase{kind: kind, whiten: whiten, lik: "two"}
			a := buildMeanModel(t, c, "", rand.New(rand.NewPCG(7, 8)), 2, 5, 4)
			b := buildMeanModel(t, c, "zero", rand.New(rand.NewPCG(7, 8)), 2, 5, 4)
			rng := rand.New(rand.NewPCG(9, 10))
			x := randDense(rng, 11, 2, -2, 2)
			y := make([]float64, 11)
			for i := range y {
				y[i] = rng.NormFloat64()
			}
			ga, gb := make([]float64, a.NumParams()), make([]float64, b.NumParams())
			a.resetRNG()
			b.resetRNG()
			fa, err1 := a.Objective(x, y, 20, ga)
			fb, err2 := b.Objective(x, y, 20, gb)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if math.Float64bits(fa) != math.Float64bits(fb) {
				t.Errorf("%v: bound %v with zero mean, %v without", c, fb, fa)
			}
			for i := range ga {
				if math.Float64bits(ga[i]) != math.Float64bits(gb[i]) {
					t.Fatalf("%v: gradient %d: %v with zero mean, %v without", c, i, gb[i], ga[i])
				}
			}
			ma, va, err1 := a.PredictF(x)
			mb, vb, err2 := b.PredictF(x)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if !mat.Equal(ma, mb) || !mat.Equal(va, vb) {
				t.Errorf("%v: predictions differ", c)
			}
		}
	}
}

// A constant mean c fitted to y + c is the zero-mean model fitted to y:
// same bound and same gradients of the shared parameters (to rounding),
// and predictions shifted by c.
func TestConstantMeanShift(t *testing.T) {
	const cst = 0.7 // newTestMean's constant
	for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
		for _, whiten := range []bool{false, true} {
			c := gradCase{kind: kind, whiten: whiten, lik: "gauss"}
			a := buildMeanModel(t, c, "", rand.New(rand.NewPCG(7, 8)), 2, 5, 4)
			b := buildMeanModel(t, c, "constant", rand.New(rand.NewPCG(7, 8)), 2, 5, 4)
			rng := rand.New(rand.NewPCG(9, 10))
			x := randDense(rng, 11, 2, -2, 2)
			y, ys := make([]float64, 11), make([]float64, 11)
			for i := range y {
				y[i] = rng.NormFloat64()
				ys[i] = y[i] + cst
			}
			ga, gb := make([]float64, a.NumParams()), make([]float64, b.NumParams())
			fa, err1 := a.Objective(x, y, 20, ga)
			fb, err2 := b.Objective(x, ys, 20, gb)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if math.Abs(fa-fb) > 1e-12*math.Max(1, math.Abs(fa)) {
				t.Errorf("%v: bound %v on shifted y with constant mean, %v unshifted", c, fb, fa)
			}
			for i := range ga {
				if math.Abs(ga[i]-gb[i]) > 1e-10*math.Max(1, math.Abs(ga[i])) {
					t.Errorf("%v: gradient %d: %v vs %v", c, i, gb[i], ga[i])
				}
			}
			ma, va, _ := a.PredictF(x)
			mb, vb, _ := b.PredictF(x)
			for i := 0; i < 11; i++ {
				if math.Abs(mb.At(i, 0)-ma.At(i, 0)-cst) > 1e-12 || va.At(i, 0) != vb.At(i, 0) {
					t.Errorf("%v: point %d: mean %v vs %v + %v, variance %v vs %v", c, i, mb.At(i, 0), ma.At(i, 0), cst, vb.At(i, 0), va.At(i, 0))
				}
			}
		}
	}
}

func TestWithMeanErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	z := randDense(rng, 3, 2, -1, 1)
	k := newRefRBF(2, 1, 1, 1)
	if _, err := NewSVGP(k, newLik("gauss"), z, WithMean(nil)); err == nil {
		t.Error("nil mean accepted")
	}
	m3, _ := mean.NewConstant(3, 0)
	if _, err := NewSVGP(k, newLik("gauss"), z, WithMean(m3)); err == nil {
		t.Error("mean of the wrong dimension accepted")
	}
	mc, _ := mean.NewConstant(2, 0)
	mod, err := NewSVGP(k, newLik("gauss"), z, WithMean(mc))
	if err != nil {
		t.Fatal(err)
	}
	th := make([]float64, mod.NumParams())
	mod.Params(th)
	if lay := mod.Layout(); lay.Mean != lay.Total-1 {
		t.Errorf("Layout.Mean = %d, want %d", lay.Mean, lay.Total-1)
	}
}
