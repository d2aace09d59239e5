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

// The tighter bound for a Bernoulli classifier: the likelihood is a
// gp.ConcaveLikelihood, so each point's scale αₙ of its residual variance
// is solved inside Objective; LastTerms reports the penalty
// −Σₙ ½(αₙ − 1 − log αₙ) in Tighter. At the same parameters the bound is
// above the standard one, whose terms are those of αₙ = 1.
func ExampleWithBound_bernoulli() {
	x := mat.NewDense(40, 1, nil)
	y := make([]float64, 40)
	for i := range y {
		v := float64(i)/8 - 2.5
		x.Set(i, 0, v)
		if v > 0 {
			y[i] = 1
		}
	}
	z := mat.NewDense(3, 1, []float64{-2, 0, 2})
	var bounds [2]float64
	for i, b := range []gp.BoundKind{gp.StandardBound, gp.TighterBound} {
		k, _ := kernel.NewRBF(1, 1.0, 1.0)
		lik, _ := likelihood.NewBernoulli()
		model, err := gp.NewSVGP(k, lik, z, gp.WithWhitening(true), gp.WithBound(b))
		if err != nil {
			log.Fatal(err)
		}
		if bounds[i], err = model.Objective(x, y, 40, nil); err != nil {
			log.Fatal(err)
		}
		if b == gp.TighterBound {
			fmt.Println("penalty below 0:", model.LastTerms().Tighter < 0)
		}
	}
	fmt.Println("tighter > standard:", bounds[1] > bounds[0])
	// Output:
	// penalty below 0: true
	// tighter > standard: true
}
