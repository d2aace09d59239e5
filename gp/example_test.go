package gp_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
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

// Fit a small SOLVE-GP regression model by gradient ascent on its bound,
// then predict.
func Example() {
	x, y := toyData(60)
	k, _ := kernel.NewRBF(1, 1.0, 1.0)
	lik, _ := likelihood.NewGaussian(0.1)
	z := mat.NewDense(4, 1, []float64{-2.5, -1, 0.5, 2})
	o := mat.NewDense(4, 1, []float64{-1.8, -0.2, 1.2, 2.7})
	model, err := gp.NewSOLVEGP(k, lik, z, o, gp.WithWhitening(true))
	if err != nil {
		fmt.Println(err)
		return
	}
	theta := make([]float64, model.NumParams())
	grad := make([]float64, model.NumParams())
	model.Params(theta)
	first, _ := model.Objective(x, y, 60, nil)
	// Plain gradient ascent with a small step (use gp/train for Adam).
	for step := 0; step < 300; step++ {
		if _, err := model.Objective(x, y, 60, grad); err != nil {
			fmt.Println(err)
			return
		}
		for i, g := range grad {
			theta[i] += 2e-3 * g
		}
		if err := model.SetParams(theta); err != nil {
			fmt.Println(err)
			return
		}
	}
	last, _ := model.Objective(x, y, 60, nil)
	fmt.Println("bound improved:", last > first)

	p, _ := model.Predictor(0)
	mean, variance, _ := p.PredictF(mat.NewDense(1, 1, []float64{0.7}))
	fmt.Printf("f(0.7) ≈ %.1f (true %.1f), variance positive: %v\n", mean.At(0, 0), math.Sin(1.4), variance.At(0, 0) > 0)
	// Output:
	// bound improved: true
	// f(0.7) ≈ 1.0 (true 1.0), variance positive: true
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
