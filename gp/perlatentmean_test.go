package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/mean"
)

// perLatentLik returns a likelihood with several latent functions: the
// two-function reference likelihood, or robust-max or softmax on three
// classes.
func perLatentLik(t testing.TB, name string) Likelihood {
	t.Helper()
	switch name {
	case "robustmax":
		l, err := likelihood.NewRobustMax(3)
		if err != nil {
			t.Fatal(err)
		}
		return l
	case "softmax":
		l, err := likelihood.NewSoftmax(3)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	return newLik(name)
}

// newPerLatentMean returns a per-latent mean of L components on d inputs:
// constants or linear means, with the given scale of their parameters
// (0: every parameter 0).
func newPerLatentMean(t testing.TB, name string, d, L int, scale float64) *mean.PerLatent {
	t.Helper()
	var m *mean.PerLatent
	var err error
	switch name {
	case "constant":
		c := make([]float64, L)
		for l := range c {
			c[l] = scale * (0.6 - 0.5*float64(l))
		}
		m, err = mean.NewConstantPerLatent(d, c)
	case "linear":
		w, b := make([][]float64, L), make([]float64, L)
		for l := range w {
			w[l] = make([]float64, d)
			for j := range w[l] {
				w[l][j] = scale * (0.3 - 0.2*float64(j) + 0.25*float64(l))
			}
			b[l] = scale * (0.4 - 0.3*float64(l))
		}
		m, err = mean.NewLinearPerLatent(w, b)
	default:
		t.Fatalf("mean %q", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// buildPerLatentModel builds a model of kind c.kind with likelihood c.lik
// and, unless meanName is "", a per-latent mean of that kind.
func buildPerLatentModel(t testing.TB, c gradCase, meanName string, scale float64, rng *rand.Rand, d, m, m2 int) *Model {
	t.Helper()
	k := newRefRBF(d, 1.3, 0.9, 1.2, 1.1)
	z := randDense(rng, m, d, -2, 2)
	o := randDense(rng, m2, d, -2, 2)
	lik := perLatentLik(t, c.lik)
	opts := []Option{WithWhitening(c.whiten), WithKuuJitter(chol.NoJitter()), WithCvvJitter(chol.NoJitter())}
	if meanName != "" {
		opts = append(opts, WithMean(newPerLatentMean(t, meanName, d, lik.NumLatent(), scale)))
	}
	mod, err := newOfKind(c.kind, k, lik, z, o, opts...)
	if err != nil {
		t.Fatal(err)
	}
	perturbQ(mod, rng, 0.3)
	return mod
}

// classLabels returns n labels in 0..L−1 (as float64); for the reference
// likelihood (L = 0) Gaussian targets.
func classLabels(rng *rand.Rand, n, L int) []float64 {
	y := make([]float64, n)
	for i := range y {
		if L == 0 {
			y[i] = rng.NormFloat64()
		} else {
			y[i] = float64(rng.IntN(L))
		}
	}
	return y
}

// The gradient of the bound with respect to every parameter, a per-latent
// mean's included, matches central finite differences: every kind, both
// parameterizations, a constant and a linear mean per latent function,
// with the two-function reference likelihood, robust-max and softmax.
func TestPerLatentMeanGrad(t *testing.T) {
	const d, m, m2, n = 2, 4, 3, 8
	for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
		for _, whiten := range []bool{false, true} {
			for _, lik := range []string{"two", "robustmax", "softmax"} {
				for _, mn := range []string{"constant", "linear"} {
					c := gradCase{kind: kind, whiten: whiten, lik: lik}
					t.Run(c.String()+"/"+mn, func(t *testing.T) {
						rng := rand.New(rand.NewPCG(13, 14))
						mod := buildPerLatentModel(t, c, mn, 1, rng, d, m, m2)
						x := randDense(rng, n, d, -2.5, 2.5)
						classes := 3
						if lik == "two" {
							classes = 0
						}
						y := classLabels(rng, n, classes)
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

// Backward's input gradient includes the slopes of a linear mean per
// latent function: checked against finite differences of Σ dmu·mu in x.
func TestPerLatentMeanInputGrad(t *testing.T) {
	const d, n = 2, 5
	rng := rand.New(rand.NewPCG(15, 16))
	mod := buildPerLatentModel(t, gradCase{kind: SOLVEGP, whiten: true, lik: "robustmax"}, "linear", 1, rng, d, 4, 3)
	L := mod.nl
	x := randDense(rng, n, d, -2, 2)
	w := make([]float64, n*L)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	f := func(x *mat.Dense) float64 {
		mu, vr := make([]float64, n*L), make([]float64, n*L)
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
	if err := mod.Backward(w, make([]float64, n*L), 0, grad, dx); err != nil {
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

// A per-latent mean whose parameters are all 0 computes bit for bit what a
// model without a mean does: the bound, the gradient of every other
// parameter and the predictions.
func TestPerLatentZeroMeanBitIdentical(t *testing.T) {
	for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
		for _, lik := range []string{"robustmax", "softmax"} {
			for _, mn := range []string{"constant", "linear"} {
				c := gradCase{kind: kind, whiten: kind != ODVGP, lik: lik}
				a := buildPerLatentModel(t, c, "", 0, rand.New(rand.NewPCG(7, 8)), 2, 5, 4)
				b := buildPerLatentModel(t, c, mn, 0, rand.New(rand.NewPCG(7, 8)), 2, 5, 4)
				rng := rand.New(rand.NewPCG(9, 10))
				x := randDense(rng, 11, 2, -2, 2)
				y := classLabels(rng, 11, 3)
				ga, gb := make([]float64, a.NumParams()), make([]float64, b.NumParams())
				a.resetRNG()
				b.resetRNG()
				fa, err1 := a.Objective(x, y, 20, ga)
				fb, err2 := b.Objective(x, y, 20, gb)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if math.Float64bits(fa) != math.Float64bits(fb) {
					t.Errorf("%v/%s: bound %v with the zero per-latent mean, %v without", c, mn, fb, fa)
				}
				if len(gb) != len(ga)+b.Mean().NumParams() {
					t.Fatalf("%v/%s: %d parameters with the mean, %d without", c, mn, len(gb), len(ga))
				}
				for i := range ga {
					if math.Float64bits(ga[i]) != math.Float64bits(gb[i]) {
						t.Fatalf("%v/%s: gradient %d: %v with the zero mean, %v without", c, mn, i, gb[i], ga[i])
					}
				}
				ma, va, err1 := a.PredictF(x)
				mb, vb, err2 := b.PredictF(x)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if !mat.Equal(ma, mb) || !mat.Equal(va, vb) {
					t.Errorf("%v/%s: predictions differ", c, mn)
				}
			}
		}
	}
}

// A per-latent constant mean shifts latent function l by c_l: the
// predicted latent means are those of the model without a mean plus c_l.
func TestPerLatentConstantShiftsPredictions(t *testing.T) {
	c := gradCase{kind: SOLVEGP, whiten: true, lik: "robustmax"}
	a := buildPerLatentModel(t, c, "", 0, rand.New(rand.NewPCG(7, 8)), 2, 5, 4)
	b := buildPerLatentModel(t, c, "constant", 1, rand.New(rand.NewPCG(7, 8)), 2, 5, 4)
	x := randDense(rand.New(rand.NewPCG(9, 10)), 6, 2, -2, 2)
	ma, va, err1 := a.PredictF(x)
	mb, vb, err2 := b.PredictF(x)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	cst := make([]float64, 3)
	b.Mean().Params(cst)
	for i := 0; i < 6; i++ {
		for l := 0; l < 3; l++ {
			if d := mb.At(i, l) - ma.At(i, l) - cst[l]; math.Abs(d) > 1e-12 {
				t.Errorf("point %d, class %d: mean %v, without the mean %v, constant %v", i, l, mb.At(i, l), ma.At(i, l), cst[l])
			}
		}
	}
	if !mat.Equal(va, vb) {
		t.Error("a constant mean changed the predicted variances")
	}
}

// A per-latent mean must have one output or one per latent function.
func TestPerLatentMeanOutputsChecked(t *testing.T) {
	k := newRefRBF(2, 1.3, 0.9, 1.2, 1.1)
	z := randDense(rand.New(rand.NewPCG(1, 2)), 4, 2, -1, 1)
	lik := perLatentLik(t, "robustmax") // 3 latent functions
	for _, L := range []int{2, 4} {
		if _, err := NewSVGP(k, lik, z, WithMean(newPerLatentMean(t, "constant", 2, L, 1))); err == nil {
			t.Errorf("%d outputs for 3 latent functions: no error", L)
		}
	}
	if _, err := NewSVGP(k, lik, z, WithMean(newPerLatentMean(t, "constant", 2, 1, 1))); err != nil {
		t.Errorf("one output: %v", err)
	}
}
