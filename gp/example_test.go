package gp_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// toyData returns n points on [-3, 3] with y = sin(2x).
func toyData(n int) (*mat.Dense, []float64) {
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		v := -3 + 6*float64(i)/float64(n-1)
		x.Set(i, 0, v)
		y[i] = math.Sin(2 * v)
	}
	return x, y
}

// Fit a small SOLVE-GP regression model with train.Fit (Adam on shuffled
// mini-batches), then predict.
func Example() {
	x, y := toyData(60)
	k, _ := kernel.NewRBF(1, 1.0, 1.0)
	lik, _ := likelihood.NewGaussian(0.1)
	z := mat.NewDense(4, 1, []float64{-2.5, -1, 0.5, 2})
	o := mat.NewDense(4, 1, []float64{-1.8, -0.2, 1.2, 2.7})
	model, err := gp.NewSOLVEGP(k, lik, z, o, gp.WithWhitening(true))
	if err != nil {
		log.Fatal(err)
	}
	first, _ := model.Objective(x, y, 60, nil)
	// 200 epochs of mini-batches of 20, learning rate 0.05, seeded: the
	// same seed gives the same parameters, bit for bit.
	cfg := train.Config{Epochs: 200, BatchSize: 20, Schedule: train.Constant(0.05), Seed: 1}
	res, err := train.Fit(context.Background(), model, x, y, cfg)
	if err != nil {
		log.Fatal(err)
	}
	last, _ := model.Objective(x, y, 60, nil)
	fmt.Println("steps:", res.Steps, "bound improved:", last > first)

	p, err := model.Predictor(0)
	if err != nil {
		log.Fatal(err)
	}
	mean, variance, err := p.PredictF(mat.NewDense(1, 1, []float64{0.7}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("f(0.7) ≈ %.2f (true %.2f), variance positive: %v\n", mean.At(0, 0), math.Sin(1.4), variance.At(0, 0) > 0)
	// Output:
	// steps: 600 bound improved: true
	// f(0.7) ≈ 1.00 (true 0.99), variance positive: true
}

// Binary classification: SVGP with a Bernoulli (probit) likelihood,
// trained with train.Fit; PredictY gives the class-1 probability.
func ExampleNewSVGP() {
	// Label 1 where sin(2x) > 0.
	x, f := toyData(80)
	y := make([]float64, len(f))
	for i, v := range f {
		if v > 0 {
			y[i] = 1
		}
	}
	k, _ := kernel.NewMatern52(1, 1.0, 1.0)
	lik, err := likelihood.NewBernoulli()
	if err != nil {
		log.Fatal(err)
	}
	z := mat.NewDense(8, 1, []float64{-2.8, -2, -1.2, -0.4, 0.4, 1.2, 2, 2.8})
	model, err := gp.NewSVGP(k, lik, z, gp.WithWhitening(true))
	if err != nil {
		log.Fatal(err)
	}
	cfg := train.Config{Epochs: 300, BatchSize: 40, Schedule: train.Constant(0.03), Seed: 1}
	if _, err := train.Fit(context.Background(), model, x, y, cfg); err != nil {
		log.Fatal(err)
	}
	p, err := model.Predictor(0)
	if err != nil {
		log.Fatal(err)
	}
	prob, _, err := p.PredictY(mat.NewDense(2, 1, []float64{0.8, -0.8}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("p(y = 1 | x = 0.8) > 0.9: %v\np(y = 1 | x = -0.8) < 0.1: %v\n", prob.At(0, 0) > 0.9, prob.At(1, 0) < 0.1)
	// Output:
	// p(y = 1 | x = 0.8) > 0.9: true
	// p(y = 1 | x = -0.8) < 0.1: true
}

// The pieces of the bound and the cubic operations it performed.
func ExampleModel_LastProfile() {
	x, y := toyData(50)
	k, _ := kernel.NewMatern32(1, 1.0, 1.0)
	lik, _ := likelihood.NewGaussian(0.1)
	z := mat.NewDense(5, 1, []float64{-2, -1, 0, 1, 2})
	model, _ := gp.NewSVGP(k, lik, z)
	if _, err := model.Objective(x, y, 50, nil); err != nil {
		fmt.Println(err)
		return
	}
	cp := model.LastProfile()
	fmt.Println("matmul:", cp.Count(gp.MatMul, gp.Forward),
		"cholesky:", cp.Count(gp.Cholesky, gp.Forward),
		"trisolve:", cp.Count(gp.TriSolve, gp.Forward))
	t := model.LastTerms()
	fmt.Println("q(u) starts at the prior (KL_u ≈ 0):", math.Abs(t.KLU) < 1e-9)
	// Output:
	// matmul: 1 cholesky: 1 trisolve: 3
	// q(u) starts at the prior (KL_u ≈ 0): true
}

// Multi-class classification: SOLVE-GP with the robust-max likelihood
// (one latent function per class), trained with train.Fit; PredictY gives
// the class probabilities, one column per class.
func ExampleNewSOLVEGP_multiclass() {
	// Three classes on a line: x < −1, −1 ≤ x < 1, x ≥ 1.
	x, _ := toyData(90)
	y := make([]float64, 90)
	for i := range y {
		switch v := x.At(i, 0); {
		case v >= 1:
			y[i] = 2
		case v >= -1:
			y[i] = 1
		}
	}
	k, _ := kernel.NewMatern32(1, 1.0, 1.0)
	lik, err := likelihood.NewRobustMax(3)
	if err != nil {
		log.Fatal(err)
	}
	z := mat.NewDense(6, 1, []float64{-2.5, -1.5, -0.5, 0.5, 1.5, 2.5})
	o := mat.NewDense(6, 1, []float64{-3, -2, -1, 0, 1, 2})
	model, err := gp.NewSOLVEGP(k, lik, z, o, gp.WithWhitening(true))
	if err != nil {
		log.Fatal(err)
	}
	cfg := train.Config{Epochs: 300, BatchSize: 30, Schedule: train.Constant(0.03), Seed: 1}
	if _, err := train.Fit(context.Background(), model, x, y, cfg); err != nil {
		log.Fatal(err)
	}
	p, err := model.Predictor(0)
	if err != nil {
		log.Fatal(err)
	}
	prob, _, err := p.PredictY(mat.NewDense(3, 1, []float64{-2, 0, 2}))
	if err != nil {
		log.Fatal(err)
	}
	for i, xi := range []float64{-2, 0, 2} {
		best := 0
		for c := 1; c < 3; c++ {
			if prob.At(i, c) > prob.At(i, best) {
				best = c
			}
		}
		fmt.Printf("x = %g: class %d (p > 0.8: %v)\n", xi, best, prob.At(i, best) > 0.8)
	}
	// Output:
	// x = -2: class 0 (p > 0.8: true)
	// x = 0: class 1 (p > 0.8: true)
	// x = 2: class 2 (p > 0.8: true)
}
