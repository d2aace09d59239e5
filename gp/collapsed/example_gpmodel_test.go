package collapsed_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
	"github.com/solvegp/solvegp/gp/train"
)

// Fit collapsed SOLVE-GP by L-BFGS, turn it into a gp.Model with the
// optimal q(u), q(v⊥), and save that with package modelfile.
func ExampleModel_GPModel() {
	// 50 noisy samples of sin(2x) on [−3, 3].
	n := 50
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		xi := -3 + 6*float64(i)/float64(n-1)
		x.Set(i, 0, xi)
		y[i] = math.Sin(2*xi) + 0.1*math.Cos(7*xi+float64(i))
	}
	z := mat.NewDense(4, 1, []float64{-2.5, -1, 0.5, 2})
	o := mat.NewDense(4, 1, []float64{-1.8, -0.2, 1.2, 2.7})
	k, _ := kernel.NewRBF(1, 1, 1)
	noise, _ := likelihood.NewGaussian(0.1)
	cm, err := collapsed.New(k, noise, z, o, collapsed.Options{})
	if err != nil {
		log.Fatal(err)
	}
	res, err := cm.Fit(context.Background(), x, y, train.LBFGSOptions{MaxIter: 100})
	if err != nil {
		log.Fatal(err)
	}

	// The equivalent SOLVE-GP model of package gp: its uncollapsed bound
	// on all N points is the collapsed bound.
	mod, err := cm.GPModel(x, y)
	if err != nil {
		log.Fatal(err)
	}
	_, m, m2, _ := mod.Dims()
	fmt.Printf("%v model, M = %d, M2 = %d, whitened %v\n", mod.Kind(), m, m2, mod.Whitened())
	bound, err := mod.Objective(x, y, n, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("bound equals the collapsed bound:", math.Abs(bound-res.Bound) <= 1e-8*math.Abs(res.Bound))

	// Save it, load it back and predict.
	dir, err := os.MkdirTemp("", "collapsed")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "solvegp.json")
	if err := modelfile.Save(path, &modelfile.Bundle{Model: mod}); err != nil {
		log.Fatal(err)
	}
	b, err := modelfile.Load(path)
	if err != nil {
		log.Fatal(err)
	}
	xs := mat.NewDense(3, 1, []float64{-2, -0.5, 1.5})
	mean, _, err := b.Model.PredictF(xs)
	if err != nil {
		log.Fatal(err)
	}
	post, err := cm.Posterior(x, y)
	if err != nil {
		log.Fatal(err)
	}
	want := make([]float64, 3)
	if err := post.Predict(xs, want, nil); err != nil {
		log.Fatal(err)
	}
	for i, v := range want {
		fmt.Printf("f(%v): loaded model %.2f, collapsed posterior %.2f\n", xs.At(i, 0), mean.At(i, 0), v)
	}
	// Output:
	// SOLVE-GP model, M = 4, M2 = 4, whitened false
	// bound equals the collapsed bound: true
	// f(-2): loaded model 0.75, collapsed posterior 0.75
	// f(-0.5): loaded model -0.84, collapsed posterior -0.84
	// f(1.5): loaded model 0.14, collapsed posterior 0.14
}
