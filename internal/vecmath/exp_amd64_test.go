//go:build !purego && !noasm

package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpAVX512Check checks expAVX512's checked mode: it stops at the first
// group of eight holding an argument outside [expLo, expHi] (or NaN),
// returns the elements done, computes those exactly as expFast does and
// leaves the rest of dst alone.
func TestExpAVX512Check(t *testing.T) {
	if !expAVX512OK {
		t.Skip("no AVX-512 on this CPU")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	bad := []float64{expLo - 0.5, expHi + 0.5, math.NaN(), math.Inf(1), math.Inf(-1), -1000}
	for _, n := range []int{8, 16, 24, 32, 48, 64, 256} {
		for trial := 0; trial < 40; trial++ {
			src := make([]float64, n)
			for i := range src {
				src[i] = -40 + 45*rng.Float64()
			}
			first := n // no bad argument
			if trial%4 != 0 {
				first = rng.IntN(n)
				src[first] = bad[rng.IntN(len(bad))]
			}
			if trial%8 == 1 {
				src[first] = expLo // the limits themselves are in range
				if trial%16 == 1 {
					src[first] = expHi
				}
				first = n
			}
			dst := make([]float64, n)
			for i := range dst {
				dst[i] = -1
			}
			done := expAVX512(&dst[0], &src[0], n, true)
			if want := first &^ 7; done != want {
				t.Fatalf("n=%d, first bad %d: done %d, want %d", n, first, done, want)
			}
			for i := 0; i < n; i++ {
				want := -1.0
				if i < done {
					want, _ = expFast(src[i])
				}
				if math.Float64bits(dst[i]) != math.Float64bits(want) {
					t.Fatalf("n=%d, first bad %d: dst[%d] = %v, want %v", n, first, i, dst[i], want)
				}
			}
			if got := expAVX512(&dst[0], &src[0], n, false); got != n {
				t.Fatalf("unchecked: done %d, want %d", got, n)
			}
		}
	}
}
