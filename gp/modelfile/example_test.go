package modelfile_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/data/snelson"
	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
	"github.com/solvegp/solvegp/gp/train"
)

// Fit a SOLVE-GP regression model, predict with it, save it and load it
// back. This is the quick start of the README.
func Example() {
	// Snelson's 1D data set (200 points) ships with the module.
	x, y, _ := snelson.Load()

	// Standardize inputs and targets with statistics of the training data.
	std, err := data.FitStandardizer(x, y)
	if err != nil {
		log.Fatal(err)
	}
	if err := std.TransformX(x); err != nil {
		log.Fatal(err)
	}
	std.TransformY(y)

	// SOLVE-GP with M = 5 inducing points and M2 = 5 orthogonal ones,
	// placed by k-means; RBF kernel, Gaussian noise.
	z, o, err := inducing.Init(x, 5, 5, inducing.KMeansOptions{Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	k, _ := kernel.NewRBF(1, 1, 1)
	lik, _ := likelihood.NewGaussian(0.1)
	model, err := gp.NewSOLVEGP(k, lik, z, o, gp.WithWhitening(true))
	if err != nil {
		log.Fatal(err)
	}

	// Adam on the full data set (no BatchSize) for 3000 steps, with a
	// learning rate of 0.05 divided by 10 every 1000 steps.
	cfg := train.Config{Epochs: 3000, Schedule: train.StepDecay{Initial: 0.05, Factor: 0.1, Every: 1000}, Seed: 1}
	if _, err := train.Fit(context.Background(), model, x, y, cfg); err != nil {
		log.Fatal(err)
	}

	// Save the model with its standardization, then load it back.
	dir, _ := os.MkdirTemp("", "solvegp")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "snelson.json")
	if err := modelfile.Save(path, &modelfile.Bundle{Model: model, Standardizer: std}); err != nil {
		log.Fatal(err)
	}
	loaded, err := modelfile.Load(path)
	if err != nil {
		log.Fatal(err)
	}

	// Predict in the original units at x = 1.5, 3 and 4.5.
	pred, err := loaded.Predict(mat.NewDense(3, 1, []float64{1.5, 3, 4.5}))
	if err != nil {
		log.Fatal(err)
	}
	for i, xi := range []float64{1.5, 3, 4.5} {
		fmt.Printf("y(%g) = %.1f (sd %.1f)\n", xi, pred.YMean.At(i, 0), math.Sqrt(pred.YVar.At(i, 0)))
	}
	// Output:
	// y(1.5) = -1.8 (sd 0.3)
	// y(3) = 0.4 (sd 0.3)
	// y(4.5) = 0.7 (sd 0.3)
}
