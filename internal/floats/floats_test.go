package floats

import (
	"math"
	"testing"
)

func TestAllFinite(t *testing.T) {
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	for n := 0; n <= 9; n++ {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(i) - 3.5
		}
		if n >= 3 {
			s[0], s[1], s[2] = math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64
		}
		if !AllFinite(s) || FirstNonFinite(s) != -1 {
			t.Errorf("n = %d: finite values reported as not finite", n)
		}
		for i := 0; i < n; i++ {
			for _, v := range special {
				c := append([]float64(nil), s...)
				c[i] = v
				if AllFinite(c) {
					t.Errorf("n = %d: %v at %d not seen", n, v, i)
				}
				if j := FirstNonFinite(c); j != i {
					t.Errorf("n = %d: %v at %d reported at %d", n, v, i, j)
				}
			}
		}
	}
	// Large finite values whose products with 0 stay 0, and many of them:
	// the sums must not overflow.
	big := make([]float64, 1000)
	for i := range big {
		big[i] = math.MaxFloat64
	}
	if !AllFinite(big) {
		t.Error("MaxFloat64 values reported as not finite")
	}
}

func BenchmarkAllFinite(b *testing.B) {
	s := make([]float64, 1<<20)
	b.SetBytes(8 << 20)
	for i := 0; i < b.N; i++ {
		if !AllFinite(s) {
			b.Fatal("zeros reported as not finite")
		}
	}
}

func TestEqualBits(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		a, b []float64
		want bool
	}{
		{nil, nil, true},
		{[]float64{}, nil, true},
		{[]float64{1, 2}, []float64{1, 2}, true},
		{[]float64{1, 2}, []float64{1}, false},
		{[]float64{1, nan}, []float64{1, nan}, true},
		{[]float64{0}, []float64{math.Copysign(0, -1)}, false},
		{[]float64{1, 2}, []float64{1, math.Nextafter(2, 3)}, false},
	} {
		if got := EqualBits(c.a, c.b); got != c.want {
			t.Errorf("EqualBits(%v, %v) = %v", c.a, c.b, got)
		}
	}
}
