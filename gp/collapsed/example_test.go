package collapsed_test

import (
	"context"
	"fmt"

	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/data/snelson"
	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// Fit SGPR with 5 inducing points and collapsed SOLVE-GP with 5 + 5 on
// Snelson's data, both initialized by k-means, and predict.
func Example() {
	x, y, xtest := snelson.Load()
	fit := func(m, m2 int) (*collapsed.Model, float64) {
		z, o, err := inducing.Init(x, m, m2, inducing.KMeansOptions{Seed: 1})
		if err != nil {
			panic(err)
		}
		k, _ := kernel.NewRBF(1, 1, 1)
		noise, _ := likelihood.NewGaussian(0.1)
		md, err := collapsed.New(k, noise, z, o, collapsed.Options{})
		if err != nil {
			panic(err)
		}
		res, err := md.Fit(context.Background(), x, y, train.LBFGSOptions{MaxIter: 300})
		if err != nil {
			panic(err)
		}
		return md, res.Bound
	}
	_, sgpr := fit(5, 0)
	solve, bound := fit(5, 5)
	fmt.Println("SOLVE-GP 5+5 bound above SGPR 5:", bound > sgpr)

	post, err := solve.Posterior(x, y)
	if err != nil {
		panic(err)
	}
	n, _ := xtest.Dims()
	mean, variance := make([]float64, n), make([]float64, n)
	if err := post.Predict(xtest, mean, variance); err != nil {
		panic(err)
	}
	fmt.Println("predictions:", len(mean))
	// Output:
	// SOLVE-GP 5+5 bound above SGPR 5: true
	// predictions: 301
}
