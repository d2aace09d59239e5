package data_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// Train from CSV shards without loading them: one pass for the
// standardization and a k-means sample, then a shuffled Stream per epoch.
func ExampleStream() {
	dir, _ := os.MkdirTemp("", "shards")
	defer os.RemoveAll(dir)
	for s := 0; s < 2; s++ {
		f, _ := os.Create(filepath.Join(dir, fmt.Sprintf("part-%d.csv", s)))
		fmt.Fprintln(f, "x,y")
		for i := 0; i < 20; i++ {
			x := float64(20*s+i) / 8
			fmt.Fprintf(f, "%v,%v\n", x, math.Sin(x))
		}
		f.Close()
	}
	shards, err := data.OpenShards([]string{filepath.Join(dir, "part-*.csv")}, data.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// Welford statistics and a reservoir sample of 30 rows for k-means.
	sum, err := data.Summarize(shards, 30, 1)
	if err != nil {
		log.Fatal(err)
	}
	xs := sum.SampleX
	if err := sum.Std.TransformX(xs); err != nil {
		log.Fatal(err)
	}
	z, _, err := inducing.Init(xs, 5, 0, inducing.KMeansOptions{Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	k, _ := kernel.NewRBF(1, 1, 1)
	lik, _ := likelihood.NewGaussian(0.1)
	model, err := gp.NewSVGP(k, lik, z)
	if err != nil {
		log.Fatal(err)
	}
	// A 16-row shuffle buffer; rows are standardized as they are drawn.
	src, err := data.NewStream(shards, data.StreamOptions{Buffer: 16, Seed: 1, Std: sum.Std})
	if err != nil {
		log.Fatal(err)
	}
	res, err := train.FitSource(context.Background(), model, src, train.Config{Epochs: 3, BatchSize: 10})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d rows of %d column(s) named %v; %d steps in %d epochs\n", sum.Rows, sum.Dim, sum.Names, res.Steps, res.Epochs)
	// Output:
	// 40 rows of 1 column(s) named [x y]; 12 steps in 3 epochs
}
