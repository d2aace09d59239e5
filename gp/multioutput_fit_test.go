package gp_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// coregData returns n points on [-3, 3] with two outputs that are scaled
// copies of one function, y₁ = sin(2x) + ε and y₂ = −2·sin(2x) + ε (noise
// sd 0.1). Output 2 is observed at every keep-th point only (NaN
// elsewhere).
func coregData(n, keep int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, 2*n)
	for i := 0; i < n; i++ {
		v := -3 + 6*rng.Float64()
		x.Set(i, 0, v)
		y[2*i] = math.Sin(2*v) + 0.1*rng.NormFloat64()
		y[2*i+1] = math.NaN()
		if i%keep == 0 {
			y[2*i+1] = -2*math.Sin(2*v) + 0.1*rng.NormFloat64()
		}
	}
	return x, y
}

// fitTwoOutputs trains an SVGP of two outputs with the likelihood lik on
// (x, y) and returns the RMSE of its output-2 predictions against
// −2·sin(2x) on a grid.
func fitTwoOutputs(t testing.TB, lik gp.Likelihood, x *mat.Dense, y []float64) float64 {
	k, _ := kernel.NewRBF(1, 1, 1)
	z := mat.NewDense(8, 1, []float64{-2.6, -1.9, -1.1, -0.4, 0.4, 1.1, 1.9, 2.6})
	model, err := gp.NewSVGP(k, lik, z, gp.WithWhitening(true))
	if err != nil {
		t.Fatal(err)
	}
	cfg := train.Config{Epochs: 1500, Schedule: train.Constant(0.03), Seed: 1}
	if _, err := train.Fit(context.Background(), model, x, y, cfg); err != nil {
		t.Fatal(err)
	}
	xt := mat.NewDense(61, 1, nil)
	for i := 0; i < 61; i++ {
		xt.Set(i, 0, -2.7+5.4*float64(i)/60)
	}
	p, err := model.Predictor(0)
	if err != nil {
		t.Fatal(err)
	}
	mean, _, err := p.PredictY(xt)
	if err != nil {
		t.Fatal(err)
	}
	var s float64
	for i := 0; i < 61; i++ {
		r := mean.At(i, 1) + 2*math.Sin(2*xt.At(i, 0))
		s += r * r
	}
	return math.Sqrt(s / 61)
}

// TestLMCBorrowsStrength fits two outputs that are scaled copies of one
// function, the second observed at one point in ten: an LMC with one latent
// function learns output 2 from output 1's data and predicts it better than
// independent outputs, which only see its few points.
func TestLMCBorrowsStrength(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two models")
	}
	x, y := coregData(80, 10, 3)
	ind, _ := likelihood.NewIndependentGaussian([]float64{0.1, 0.1})
	lmc, _ := likelihood.NewLMC(1, []float64{1, 1}, []float64{0.1, 0.1})
	ri := fitTwoOutputs(t, ind, x, y)
	rl := fitTwoOutputs(t, lmc, x, y)
	t.Logf("output-2 RMSE: independent %.3f, LMC %.3f", ri, rl)
	if !(rl < 0.5*ri) || !(rl < 0.15) {
		t.Errorf("output-2 RMSE: LMC %.3f, independent %.3f; want the LMC's below half the independent one and below 0.15", rl, ri)
	}
}

// Two outputs, the second a scaled copy of the first and observed at one
// point in ten (NaN marks the missing targets): a linear model of
// coregionalization with one latent function g and a learned 2×1 mixing
// matrix W, f_p = W_p1·g, predicts both.
func ExampleNewSVGP_lmc() {
	x, y := coregData(80, 10, 3) // y holds 2 values per point: y₁, y₂
	k, _ := kernel.NewRBF(1, 1, 1)
	lik, err := likelihood.NewLMC(1, []float64{1, 1}, []float64{0.1, 0.1})
	if err != nil {
		log.Fatal(err)
	}
	z := mat.NewDense(8, 1, []float64{-2.6, -1.9, -1.1, -0.4, 0.4, 1.1, 1.9, 2.6})
	model, err := gp.NewSVGP(k, lik, z, gp.WithWhitening(true))
	if err != nil {
		log.Fatal(err)
	}
	cfg := train.Config{Epochs: 1500, Schedule: train.Constant(0.03), Seed: 1}
	if _, err := train.Fit(context.Background(), model, x, y, cfg); err != nil {
		log.Fatal(err)
	}
	w := lik.Mixing()
	fmt.Printf("W₂/W₁ = %.1f\n", w[1]/w[0])
	p, err := model.Predictor(0)
	if err != nil {
		log.Fatal(err)
	}
	mean, variance, err := p.PredictY(mat.NewDense(1, 1, []float64{0.7}))
	if err != nil {
		log.Fatal(err)
	}
	for o := 0; o < 2; o++ {
		fmt.Printf("y%d(0.7) ≈ %.1f, variance positive: %v\n", o+1, mean.At(0, o), variance.At(0, o) > 0)
	}
	// Output:
	// W₂/W₁ = -2.0
	// y1(0.7) ≈ 1.0, variance positive: true
	// y2(0.7) ≈ -2.0, variance positive: true
}
