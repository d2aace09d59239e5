package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestColumnChunks checks the column-chunked backward loop against the
// loop over whole rows: the same bound and gradient to rounding for chunk
// widths that do and do not divide the batch, one and two goroutines, and
// one and two latent functions; and the chunked gradient against finite
// differences.
func TestColumnChunks(t *testing.T) {
	const n = 53
	for _, c := range []gradCase{
		{kind: SVGP, lik: "gauss"}, {kind: SVGP, whiten: true, lik: "two"},
		{kind: SOLVEGP, lik: "two"}, {kind: SOLVEGP, whiten: true, lik: "gauss"},
		{kind: ODVGP, lik: "two"},
	} {
		rng := rand.New(rand.NewPCG(31, 32))
		mod := buildModel(t, c, rng, 3, 9, 7)
		x := randDense(rng, n, 3, -2.5, 2.5)
		y := make([]float64, n)
		for i := range y {
			y[i] = math.Round(2 + 2*math.Sin(x.At(i, 0)))
		}
		eval := func(chunk, threads int) (float64, []float64) {
			mod.cfg.colChunk, mod.cfg.threads = chunk, threads
			grad := make([]float64, mod.NumParams())
			mod.resetRNG()
			f, err := mod.Objective(x, y, 200, grad)
			if err != nil {
				t.Fatal(err)
			}
			return f, grad
		}
		f0, g0 := eval(-1, 1)
		for _, chunk := range []int{1, 8, 13, 26, 52} {
			for _, threads := range []int{1, 2} {
				t.Run(fmt.Sprintf("%v/chunk=%d/threads=%d", c, chunk, threads), func(t *testing.T) {
					f, g := eval(chunk, threads)
					if got := mod.chunkCols(9, n); got != chunk {
						t.Fatalf("chunkCols = %d, want %d", got, chunk)
					}
					if math.Abs(f-f0) > 1e-12*math.Abs(f0) {
						t.Errorf("bound %v, unchunked %v", f, f0)
					}
					for i := range g {
						if d := math.Abs(g[i] - g0[i]); d > 1e-10*math.Max(1, math.Abs(g0[i])) {
							t.Errorf("gradient %d (%s): %v, unchunked %v", i, mod.paramGroup(i), g[i], g0[i])
						}
					}
				})
			}
		}
		t.Run(fmt.Sprintf("%v/finite-differences", c), func(t *testing.T) {
			mod.cfg.colChunk, mod.cfg.threads = 8, 2
			var idx []int // every third parameter, each group included
			for i := 0; i < mod.NumParams(); i += 3 {
				idx = append(idx, i)
			}
			checkGrad(t, mod, x, y, 200, idx, 1e-5)
		})
	}
}

// TestChunkCols checks the automatic choice of column chunks.
func TestChunkCols(t *testing.T) {
	mod := &Model{}
	for _, c := range []struct{ m, n, want int }{
		{64, 36864, 256},  // a convolutional hidden layer
		{100, 36864, 168}, // 16384/100 rounded up to a multiple of 8
		{256, 36864, 64},  // the largest chunked block
		{257, 36864, 0},   // compute-bound: whole rows
		{1024, 1024, 0},   // regression SVGP
		{64, 511, 0},      // fewer than two chunks
		{64, 512, 256},    // two chunks
		{16, 100000, 512}, // widest chunk
	} {
		if got := mod.chunkCols(c.m, c.n); got != c.want {
			t.Errorf("chunkCols(%d, %d) = %d, want %d", c.m, c.n, got, c.want)
		}
	}
	mod.cfg.colChunk = -1
	if got := mod.chunkCols(64, 36864); got != 0 {
		t.Errorf("chunks off: %d", got)
	}
	mod.cfg.colChunk = 40
	if got := mod.chunkCols(64, 40); got != 0 {
		t.Errorf("forced chunk as wide as the batch: %d, want 0", got)
	}
}
