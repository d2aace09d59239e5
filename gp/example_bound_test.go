package gp_test

import (
	"context"
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// Train SVGP with the tighter bound of Titsias (2025) on mini-batches and
// compare it, at the same parameters, with the standard bound: it is never
// lower, and the difference is Σₙ [dₙ/(2σ²) − ½·log(1 + dₙ/σ²)].
func ExampleWithBound() {
	x, y := toyData(60)
	k, _ := kernel.NewRBF(1, 1.0, 1.0)
	lik, _ := likelihood.NewGaussian(0.1)
	z := mat.NewDense(5, 1, []float64{-2.5, -1.2, 0, 1.2, 2.5})
	model, err := gp.NewSVGP(k, lik, z, gp.WithWhitening(true), gp.WithBound(gp.TighterBound))
	if err != nil {
		log.Fatal(err)
	}
	cfg := train.Config{Epochs: 100, BatchSize: 20, Schedule: train.Constant(0.05), Seed: 1}
	if _, err := train.Fit(context.Background(), model, x, y, cfg); err != nil {
		log.Fatal(err)
	}
	tighter, _ := model.Objective(x, y, 60, nil)

	// The same parameters under the standard bound.
	params := make([]float64, model.NumParams())
	model.Params(params)
	k2, _ := kernel.NewRBF(1, 1.0, 1.0)
	lik2, _ := likelihood.NewGaussian(0.1)
	std, err := gp.NewSVGP(k2, lik2, z, gp.WithWhitening(true))
	if err != nil {
		log.Fatal(err)
	}
	if err := std.SetParams(params); err != nil {
		log.Fatal(err)
	}
	standard, _ := std.Objective(x, y, 60, nil)
	fmt.Println("bound:", model.Bound(), "tighter ≥ standard:", tighter >= standard)
	// Output:
	// bound: tighter tighter ≥ standard: true
}
