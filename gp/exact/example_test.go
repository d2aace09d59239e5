package exact_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/data/snelson"
	"github.com/solvegp/solvegp/gp/exact"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// Fit an exact GP to Snelson's 1D data by maximizing the log marginal
// likelihood with L-BFGS, then predict at two inputs.
func Example() {
	x, y, _ := snelson.Load()
	k, err := kernel.NewRBF(1, 1, 1)
	if err != nil {
		log.Fatal(err)
	}
	lik, err := likelihood.NewGaussian(0.1)
	if err != nil {
		log.Fatal(err)
	}
	md, err := exact.New(k, lik, exact.Options{Threads: 1})
	if err != nil {
		log.Fatal(err)
	}
	res, err := md.Fit(context.Background(), x, y, train.LBFGSOptions{MaxIter: 200})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("log marginal likelihood: %.1f → %.2f\n", res.Initial, res.LogMarginal)
	fmt.Printf("noise variance: %.3f\n", lik.NoiseVariance())

	post, err := md.Posterior(x, y)
	if err != nil {
		log.Fatal(err)
	}
	xs := mat.NewDense(2, 1, []float64{1, 3})
	mean, variance := make([]float64, 2), make([]float64, 2)
	if err := post.Predict(xs, mean, variance); err != nil {
		log.Fatal(err)
	}
	for i := range mean {
		sd := math.Sqrt(variance[i] + post.NoiseVariance())
		fmt.Printf("f(%g): y = %.2f ± %.2f\n", xs.At(i, 0), mean[i], 2*sd)
	}
	// Output:
	// log marginal likelihood: -88.5 → -55.90
	// noise variance: 0.080
	// f(1): y = -1.43 ± 0.58
	// f(3): y = 0.38 ± 0.58
}
