package gp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestElemPasses checks the layer's elementwise passes, split over 1 to 5
// goroutines, bit for bit against plain loops, on blocks above elemParMin
// with strided vectors.
func TestElemPasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	const r, c, inc = 97, 401, 3
	if r*c < elemParMin {
		t.Fatal("block too small to split the passes")
	}
	vec := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	same := func(name string, threads int, got, want []float64) {
		t.Helper()
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%s, %d goroutines: element %d = %v, want %v", name, threads, i, got[i], want[i])
			}
		}
	}
	a, b, v := vec(r*c), vec(r*c), vec((c-1)*inc+1)
	for threads := 1; threads <= 5; threads++ {
		// Column sums of squares into a strided vector.
		s := vec((c-1)*inc + 1)
		want := append([]float64(nil), s...)
		for i := 0; i < r; i++ {
			for n := 0; n < c; n++ {
				want[n*inc] += -0.5 * a[i*c+n] * a[i*c+n]
			}
		}
		colSumSq(threads, s, inc, -0.5, r, c, a)
		same("colSumSq", threads, s, want)

		dst := vec(r * c)
		want = make([]float64, r*c)
		for i := 0; i < r; i++ {
			for n := 0; n < c; n++ {
				want[i*c+n] = -2 * a[i*c+n] * v[n*inc]
			}
		}
		scaleCols(threads, r, c, -2, a, v, inc, dst)
		same("scaleCols", threads, dst, want)

		want = append([]float64(nil), dst...)
		for i := range want {
			want[i] += b[i]
		}
		addTo(threads, r, c, b, dst)
		same("addTo", threads, dst, want)
	}
}

// TestFinite checks finite with one NaN or infinity at every position of
// slices of several lengths (each lane of its four partial sums, and the
// tail).
func TestFinite(t *testing.T) {
	for n := 0; n <= 11; n++ {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(i) - 3.5
		}
		if !finite(s) {
			t.Fatalf("n=%d: finite values reported non-finite", n)
		}
		for i := 0; i < n; i++ {
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				old := s[i]
				s[i] = bad
				if finite(s) {
					t.Fatalf("n=%d: %v at %d not detected", n, bad, i)
				}
				s[i] = old
			}
		}
	}
	if !finite([]float64{math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, math.Copysign(0, -1)}) {
		t.Fatal("extreme finite values reported non-finite")
	}
}
