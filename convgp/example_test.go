package convgp_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/solvegp/solvegp/convgp"
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/train"
	"gonum.org/v1/gonum/mat"
)

// blobImages returns n 8×8 single-channel images, each with a bright 2×2
// blob at a random position on a faint noisy background, labelled 1 when
// the blob sits in the bottom half and 0 otherwise.
func blobImages(rng *rand.Rand, n int) (*mat.Dense, []float64) {
	x := mat.NewDense(n, 64, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		img := x.RawRowView(i)
		for j := range img {
			img[j] = 0.1 * rng.Float64()
		}
		r, c := rng.IntN(7), rng.IntN(7)
		for dr := 0; dr < 2; dr++ {
			for dc := 0; dc < 2; dc++ {
				img[(r+dr)*8+c+dc] = 1
			}
		}
		if r+1 >= 4 {
			y[i] = 1
		}
	}
	return x, y
}

// ExampleNewDeep trains a single-layer convolutional SOLVE-GP classifier
// with the TICK kernel (2×2 patches, 6 inducing and 6 orthogonal inducing
// patches with locations) on a toy task that only the patch locations can
// solve, and evaluates it on held-out images. Adding entries to
// DeepConfig.Hidden makes it a deep convolutional GP.
func ExampleNewDeep() {
	rng := rand.New(rand.NewPCG(21, 22))
	x, y := blobImages(rng, 120)
	xTest, yTest := blobImages(rng, 200)

	model, err := convgp.NewDeep(x, convgp.DeepConfig{
		Height: 8, Width: 8, Channels: 1, Classes: 2,
		Kind: gp.SOLVEGP, Whiten: true,
		Variance: 1, Lengthscale: 1, LocLengthscale: 2,
		Output:  convgp.Output{PatchHeight: 2, PatchWidth: 2, M: 6, M2: 6, TICK: true},
		Init:    convgp.InitOptions{Seed: 1},
		Threads: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("layers:", model.NumLayers())

	_, err = train.Fit(context.Background(), model, x, y, train.Config{
		MaxSteps: 100, BatchSize: 40, Schedule: train.Constant(0.05), Seed: 3,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	acc, _, err := model.Evaluate(xTest, yTest, 1, 64)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("test accuracy above 90%:", acc > 0.9)
	// Output:
	// layers: 1
	// test accuracy above 90%: true
}

// ExampleSaveModel trains the classifier of ExampleNewDeep, saves it, and
// loads it back without the training images: the loaded model predicts
// exactly as the trained one.
func ExampleSaveModel() {
	rng := rand.New(rand.NewPCG(21, 22))
	x, y := blobImages(rng, 120)
	xTest, _ := blobImages(rng, 20)
	model, err := convgp.NewDeep(x, convgp.DeepConfig{
		Height: 8, Width: 8, Channels: 1, Classes: 2, Kind: gp.SOLVEGP, Whiten: true,
		Variance: 1, Lengthscale: 1, LocLengthscale: 2,
		Output: convgp.Output{PatchHeight: 2, PatchWidth: 2, M: 6, M2: 6, TICK: true},
		Init:   convgp.InitOptions{Seed: 1}, Threads: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := train.Fit(context.Background(), model, x, y, train.Config{
		MaxSteps: 50, BatchSize: 40, Schedule: train.Constant(0.05), Seed: 3,
	}); err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "convgp-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "blobs.cgp")
	if err := convgp.SaveModel(path, model, map[string]string{"data": "8×8 blob images, pixels as drawn"}); err != nil {
		fmt.Println(err)
		return
	}
	loaded, info, err := convgp.LoadModel(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("data:", info["data"])
	p1, err := model.Predict(xTest, 1, 64)
	if err != nil {
		fmt.Println(err)
		return
	}
	p2, err := loaded.Predict(xTest, 1, 64)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("same predictions:", mat.Equal(p1, p2))
	// Output:
	// data: 8×8 blob images, pixels as drawn
	// same predictions: true
}
