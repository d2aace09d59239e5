package mean_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/mean"
	"github.com/solvegp/solvegp/gp/train"
)

var _ gp.MeanFunction = &mean.PerLatent{}

// PerLatent's Eval and Grad agree: the gradient of Σ g[n·L+l]·m_l(x_n) in
// the parameters and inputs matches central finite differences, for
// components of every kind mixed.
func TestPerLatentGradFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d, L = 5, 3, 3
	x := mat.NewDense(n, d, nil)
	g := make([]float64, n*L)
	for i := range g {
		g[i] = rng.NormFloat64()
	}
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	z, _ := mean.NewZero(d)
	c, _ := mean.NewConstant(d, 0.4)
	l, _ := mean.NewLinear([]float64{0.5, -1, 2}, 0.3)
	m, err := mean.NewPerLatent(c, l, z)
	if err != nil {
		t.Fatal(err)
	}
	if m.Outputs() != L || m.NumParams() != 5 || m.Dim() != d {
		t.Fatalf("outputs %d, parameters %d, dimension %d", m.Outputs(), m.NumParams(), m.Dim())
	}
	f := func(x *mat.Dense) float64 {
		v := make([]float64, n*L)
		m.Eval(x, v)
		var s float64
		for i := range v {
			s += g[i] * v[i]
		}
		return s
	}
	p := make([]float64, m.NumParams())
	m.Params(p)
	if want := []float64{0.4, 0.5, -1, 2, 0.3}; fmt.Sprint(p) != fmt.Sprint(want) {
		t.Fatalf("Params %v, want %v", p, want)
	}
	dp := make([]float64, len(p))
	dx := mat.NewDense(n, d, nil)
	m.Grad(x, g, dp, dx)
	const h = 1e-6
	for i := range p {
		q := append([]float64(nil), p...)
		q[i] = p[i] + h
		m.SetParams(q)
		fp := f(x)
		q[i] = p[i] - h
		m.SetParams(q)
		fm := f(x)
		m.SetParams(p)
		if fd := (fp - fm) / (2 * h); math.Abs(fd-dp[i]) > 1e-7 {
			t.Errorf("parameter %d: gradient %g, finite difference %g", i, dp[i], fd)
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			xp, xm := mat.DenseCopyOf(x), mat.DenseCopyOf(x)
			xp.Set(i, j, x.At(i, j)+h)
			xm.Set(i, j, x.At(i, j)-h)
			if fd := (f(xp) - f(xm)) / (2 * h); math.Abs(fd-dx.At(i, j)) > 1e-7 {
				t.Errorf("dx[%d][%d] = %g, finite difference %g", i, j, dx.At(i, j), fd)
			}
		}
	}
}

func TestPerLatentErrors(t *testing.T) {
	c2, _ := mean.NewConstant(2, 1)
	c3, _ := mean.NewConstant(3, 1)
	inner, _ := mean.NewPerLatent(c2)
	for name, f := range map[string]func() (*mean.PerLatent, error){
		"none":         func() (*mean.PerLatent, error) { return mean.NewPerLatent() },
		"nil":          func() (*mean.PerLatent, error) { return mean.NewPerLatent(c2, nil) },
		"dimensions":   func() (*mean.PerLatent, error) { return mean.NewPerLatent(c2, c3) },
		"nested":       func() (*mean.PerLatent, error) { return mean.NewPerLatent(inner) },
		"NaN constant": func() (*mean.PerLatent, error) { return mean.NewConstantPerLatent(2, []float64{0, math.NaN()}) },
		"no constants": func() (*mean.PerLatent, error) { return mean.NewConstantPerLatent(2, nil) },
		"biases":       func() (*mean.PerLatent, error) { return mean.NewLinearPerLatent([][]float64{{1}}, nil) },
		"weight lengths": func() (*mean.PerLatent, error) {
			return mean.NewLinearPerLatent([][]float64{{1}, {1, 2}}, []float64{0, 0})
		},
	} {
		if _, err := f(); !errors.Is(err, mean.ErrParams) {
			t.Errorf("%s: %v", name, err)
		}
	}
	m, _ := mean.NewConstantPerLatent(2, []float64{1, 2})
	for _, bad := range [][]float64{{1}, {1, math.Inf(1)}} {
		if err := m.SetParams(bad); !errors.Is(err, mean.ErrParams) {
			t.Errorf("SetParams(%v): %v", bad, err)
		}
	}
	p := []float64{0, 0}
	if m.Params(p); p[0] != 1 || p[1] != 2 {
		t.Errorf("a refused SetParams changed the parameters to %v", p)
	}
}

// NewPerLatent keeps its own components, and Clone shares nothing.
func TestPerLatentOwnsComponents(t *testing.T) {
	c, _ := mean.NewConstant(1, 1)
	m, _ := mean.NewPerLatent(c)
	c.SetParams([]float64{5})
	cl := m.Clone().(*mean.PerLatent)
	cl.SetParams([]float64{7})
	if v := m.Component(0).(*mean.Constant).Value(); v != 1 {
		t.Errorf("component %v, want 1", v)
	}
	if v := cl.Component(0).(*mean.Constant).Value(); v != 7 {
		t.Errorf("clone's component %v, want 7", v)
	}
}

// unbalanced draws n one-dimensional inputs on [−6, 6] with labels 0, 1
// and 2 of probabilities 0.8, 0.15 and 0.05, whatever the input.
func unbalanced(rng *rand.Rand, n int) (*mat.Dense, []float64) {
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range y {
		x.Set(i, 0, -6+12*rng.Float64())
		switch u := rng.Float64(); {
		case u < 0.8:
		case u < 0.95:
			y[i] = 1
		default:
			y[i] = 2
		}
	}
	return x, y
}

// fitUnbalanced trains a whitened softmax SVGP with two inducing points at
// ±3 and the given mean (nil: none) on unbalanced classes and returns its
// mean log predictive probability of held-out labels. The RBF kernel
// (lengthscale 1, variance 1) and the inducing inputs stay fixed: 300 full-batch
// Adam steps train q(u) and the mean's parameters.
func fitUnbalanced(t *testing.T, m gp.MeanFunction) float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	x, y := unbalanced(rng, 200)
	xt, yt := unbalanced(rng, 200)
	k, _ := kernel.NewRBF(1, 1, 1)
	lik, _ := likelihood.NewSoftmax(3)
	opts := []gp.Option{gp.WithWhitening(true), gp.WithSeed(1)}
	if m != nil {
		opts = append(opts, gp.WithMean(m))
	}
	mod, err := gp.NewSVGP(k, lik, mat.NewDense(2, 1, []float64{-3, 3}), opts...)
	if err != nil {
		t.Fatal(err)
	}
	th := make([]float64, mod.NumParams())
	mod.Params(th)
	g := make([]float64, len(th))
	m1, m2 := make([]float64, len(th)), make([]float64, len(th))
	const lr, b1, b2 = 0.05, 0.9, 0.999
	for step := 1; step <= 300; step++ {
		if _, err := mod.Objective(x, y, len(y), g); err != nil {
			t.Fatal(err)
		}
		for i := mod.Layout().MU[0]; i < len(th); i++ { // q(u) and the mean
			m1[i] = b1*m1[i] + (1-b1)*g[i]
			m2[i] = b2*m2[i] + (1-b2)*g[i]*g[i]
			mh := m1[i] / (1 - math.Pow(b1, float64(step)))
			vh := m2[i] / (1 - math.Pow(b2, float64(step)))
			th[i] += lr * mh / (math.Sqrt(vh) + 1e-8) // the bound is maximized
		}
		if err := mod.SetParams(th); err != nil {
			t.Fatal(err)
		}
	}
	p, err := mod.Predictor(0)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := p.LogPredictive(xt, yt)
	if err != nil {
		t.Fatal(err)
	}
	var s float64
	for _, v := range lp {
		s += v
	}
	return s / float64(len(lp))
}

// With unbalanced classes and two inducing points on a wide input range, a
// learned constant per class carries the classes' prior log-odds
// everywhere: the held-out log predictive probability comes close to the
// best possible (minus the entropy of the class frequencies, −0.61),
// while the zero-mean model falls back towards uniform probabilities
// (−1.10) away from its inducing points.
func TestPerLatentConstantHelpsUnbalancedClasses(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two models")
	}
	cst, _ := mean.NewConstantPerLatent(1, make([]float64, 3))
	withMean := fitUnbalanced(t, cst)
	without := fitUnbalanced(t, nil)
	t.Logf("held-out log predictive: constant per class %.4f, zero mean %.4f", withMean, without)
	if !(withMean > -0.7 && withMean > without+0.1) {
		t.Errorf("held-out log predictive: constant per class %.4f, zero mean %.4f", withMean, without)
	}
}

// Give a three-class softmax SVGP a constant prior mean per class, learned
// with the other parameters: on unbalanced classes the constants learn the
// classes' log-odds.
func ExampleNewConstantPerLatent() {
	rng := rand.New(rand.NewPCG(5, 6))
	x, y := unbalanced(rng, 200)
	k, _ := kernel.NewRBF(1, 1, 1)
	lik, _ := likelihood.NewSoftmax(3)
	cst, err := mean.NewConstantPerLatent(1, make([]float64, 3))
	if err != nil {
		log.Fatal(err)
	}
	z := mat.NewDense(2, 1, []float64{-3, 3})
	model, err := gp.NewSVGP(k, lik, z, gp.WithWhitening(true), gp.WithSeed(1), gp.WithMean(cst))
	if err != nil {
		log.Fatal(err)
	}
	cfg := train.Config{Epochs: 150, Schedule: train.Constant(0.05), Seed: 1}
	if _, err := train.Fit(context.Background(), model, x, y, cfg); err != nil {
		log.Fatal(err)
	}
	c := make([]float64, 3)
	model.Mean().Params(c)
	fmt.Printf("class 0 above class 1: %v; class 1 above class 2: %v\n", c[0] > c[1], c[1] > c[2])
	// Output:
	// class 0 above class 1: true; class 1 above class 2: true
}
