package collapsed_test

import (
	"fmt"

	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/data/snelson"
	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// Evaluate the Standard, Tighter and block-diagonal (Bui and Titsias 2025)
// collapsed bounds of SGPR with 6 inducing points on Snelson's data at the
// same hyperparameters: each is at least the one before. The blocks are
// 20 neighbouring points each, in the order BlockOrder gives.
func ExampleBlockOrder() {
	x, y, _ := snelson.Load()
	z, _, err := inducing.Init(x, 6, 0, inducing.KMeansOptions{Seed: 1})
	if err != nil {
		panic(err)
	}
	bound := func(opts collapsed.Options) float64 {
		k, _ := kernel.NewRBF(1, 0.5, 1)
		noise, _ := likelihood.NewGaussian(0.1)
		md, err := collapsed.New(k, noise, z, nil, opts)
		if err != nil {
			panic(err)
		}
		f, err := md.Bound(x, y)
		if err != nil {
			panic(err)
		}
		return f
	}
	order, _ := collapsed.BlockOrder(x, 20)
	fmt.Println("blocks:", len(order)/20)
	standard := bound(collapsed.Options{})
	tighter := bound(collapsed.Options{Bound: collapsed.Tighter})
	blockdiag := bound(collapsed.Options{Bound: collapsed.BlockDiagonal, BlockSize: 20})
	fmt.Println("standard < tighter < blockdiag:", standard < tighter && tighter < blockdiag)
	// Output:
	// blocks: 10
	// standard < tighter < blockdiag: true
}
