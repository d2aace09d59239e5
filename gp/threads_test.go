package gp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// TestObjectiveThreadsBitwise checks that an SVGP bound and its gradient
// are the same bit for bit with one, two and three goroutines, at sizes
// where the layer's elementwise passes (rowpar.go) split into several
// ranges, whitened and not, with one and with three latent functions, and
// with a batch of few columns, where the three latent functions' products
// run side by side (latentpar.go).
// (SOLVE-GP's results change in the last bits with the goroutine count
// through its linear algebra on C_vv, so it is not checked here.)
func TestObjectiveThreadsBitwise(t *testing.T) {
	if testing.Short() {
		t.Skip("sizes above the parallel thresholds")
	}
	const d, m = 3, 260
	for _, c := range []struct{ n, classes int }{{300, 1}, {300, 3}, {100, 3}} {
		n, classes := c.n, c.classes
		for _, whiten := range []bool{true, false} {
			var first []float64
			for threads := 1; threads <= 3; threads++ {
				rng := rand.New(rand.NewPCG(61, 62))
				k, err := kernel.NewMatern32(d, 1, 1, kernel.ARD())
				if err != nil {
					t.Fatal(err)
				}
				var lik Likelihood
				if classes == 1 {
					lik, err = likelihood.NewGaussian(0.1)
				} else {
					lik, err = likelihood.NewSoftmax(classes, likelihood.Samples(4))
				}
				if err != nil {
					t.Fatal(err)
				}
				opts := []Option{WithThreads(threads), WithWhitening(whiten), WithSeed(3)}
				z := randDense(rng, m, d, -2, 2)
				mod, err := NewSVGP(k, lik, z, opts...)
				if err != nil {
					t.Fatal(err)
				}
				x := randDense(rng, n, d, -2, 2)
				y := make([]float64, n)
				for i := range y {
					if classes == 1 {
						y[i] = math.Sin(x.At(i, 0))
					} else {
						y[i] = float64(i % classes)
					}
				}
				grad := make([]float64, mod.NumParams())
				bound, err := mod.Objective(x, y, 5000, grad)
				if err != nil {
					t.Fatal(err)
				}
				got := append([]float64{bound}, grad...)
				if first == nil {
					first = got
					continue
				}
				if !slices.EqualFunc(got, first, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
					t.Errorf("whitened %v, %d latent functions, batch %d: %d goroutines differ from one", whiten, classes, n, threads)
				}
			}
		}
	}
}
