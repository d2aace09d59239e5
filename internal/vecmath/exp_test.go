package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulps returns the distance between a and b in units in the last place of
// b (both finite and of the same sign).
func ulps(a, b float64) float64 {
	if a == b {
		return 0
	}
	_, e := math.Frexp(b)
	return math.Abs(a-b) / math.Ldexp(1, e-53)
}

// TestExpAccuracy compares Exp with math.Exp over the whole fast range, in
// place and out of place, at lengths that leave every tail size.
func TestExpAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	worst := 0.0
	for _, n := range []int{1, 3, 4, 5, 11, 12, 13, 16, 27, 1000} {
		for rep := 0; rep < 50; rep++ {
			src := make([]float64, n)
			for i := range src {
				switch rng.IntN(3) {
				case 0:
					src[i] = expLo + (expHi-expLo)*rng.Float64()
				case 1:
					src[i] = -40 * rng.Float64() // kernel arguments
				default:
					src[i] = 2*rng.Float64() - 1
				}
			}
			dst := make([]float64, n)
			Exp(dst, src)
			inPlace := append([]float64(nil), src...)
			Exp(inPlace, inPlace)
			for i, x := range src {
				want := math.Exp(x)
				if u := ulps(dst[i], want); u > worst {
					worst = u
				}
				if math.Float64bits(inPlace[i]) != math.Float64bits(dst[i]) {
					t.Fatalf("Exp in place differs at x = %v: %v, out of place %v", x, inPlace[i], dst[i])
				}
			}
		}
	}
	if worst > 2 {
		t.Errorf("Exp is %v ulp from math.Exp at worst, want ≤ 2", worst)
	}
	t.Logf("worst error against math.Exp: %.2f ulp", worst)
}

// TestExpSpecial checks the values where Exp falls back to math.Exp:
// infinities, NaN, overflow and (gradual) underflow, and the range edges.
func TestExpSpecial(t *testing.T) {
	xs := []float64{math.Inf(-1), math.Inf(1), math.NaN(), -1e308, -800, -745.2, -745.1, -720, -708.5, expLo,
		math.Nextafter(expLo, 0), 0, math.Copysign(0, -1), 1e-300, expHi, math.Nextafter(expHi, 800), 709.78, 709.8, 710, 1e308}
	for _, n := range []int{len(xs), 4} { // the full set, and one AVX2 group at a time
		for start := 0; start < len(xs); start += n {
			src := xs[start:min(start+n, len(xs))]
			dst := make([]float64, len(src))
			Exp(dst, src)
			// In place too: the fallback must still see the arguments.
			inPlace := append([]float64(nil), src...)
			Exp(inPlace, inPlace)
			for i, x := range src {
				if math.Float64bits(inPlace[i]) != math.Float64bits(dst[i]) {
					t.Errorf("Exp(%v) in place = %v, out of place %v", x, inPlace[i], dst[i])
				}
				want := math.Exp(x)
				switch {
				case math.IsNaN(want):
					if !math.IsNaN(dst[i]) {
						t.Errorf("Exp(%v) = %v, want NaN", x, dst[i])
					}
				case x >= expLo && x <= expHi:
					if ulps(dst[i], want) > 2 {
						t.Errorf("Exp(%v) = %v, want %v", x, dst[i], want)
					}
				case dst[i] != want:
					t.Errorf("Exp(%v) = %v, want math.Exp's %v", x, dst[i], want)
				}
			}
		}
	}
}

// TestExpMixedBlocks checks Exp against its pure-Go twin, bit for bit, on
// long inputs where a few arguments in a block fall outside the kernel's
// range (far-apart points of a kernel matrix, overflow, NaN): those
// elements must come out as math.Exp's and the others as the kernel's, in
// place and out of place.
func TestExpMixedBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 6))
	outside := []float64{-800, -745.2, -720, -708.5, 709.8, 710, math.Inf(-1), math.Inf(1), math.NaN()}
	for _, n := range []int{5, 255, 256, 257, 1000, 1027} {
		for _, rate := range []int{2, 20, 1000} {
			src := make([]float64, n)
			for i := range src {
				if rng.IntN(rate) == 0 {
					src[i] = outside[rng.IntN(len(outside))]
				} else {
					src[i] = -40 * rng.Float64()
				}
			}
			want := make([]float64, n)
			expGeneric(want, src)
			got := make([]float64, n)
			Exp(got, src)
			inPlace := append([]float64(nil), src...)
			Exp(inPlace, inPlace)
			for i, x := range src {
				for _, v := range []float64{got[i], inPlace[i]} {
					if math.Float64bits(v) != math.Float64bits(want[i]) && !(math.IsNaN(v) && math.IsNaN(want[i])) {
						t.Fatalf("n=%d: Exp(%v) = %v, twin %v", n, x, v, want[i])
					}
				}
			}
		}
	}
}

// TestExpKernelTwin checks the assembly kernel (AVX2 + FMA on amd64, NEON
// on arm64) against its pure-Go twin bit for bit, where the build and CPU
// have one.
func TestExpKernelTwin(t *testing.T) {
	if !expKernelOK {
		t.Skip("no exp kernel on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(7, 9))
	for _, n := range []int{4, 8, 12, 16, 24, 28, 400} {
		src := make([]float64, n)
		for i := range src {
			if i%2 == 0 {
				src[i] = expLo + (expHi-expLo)*rng.Float64()
			} else {
				src[i] = 1 - 41*rng.Float64() // kernel-matrix arguments
			}
		}
		src[0], src[n-1] = expLo, expHi
		got := make([]float64, n)
		expKernel(got, src)
		for i, x := range src {
			want, _ := expFast(x)
			if math.Float64bits(got[i]) != math.Float64bits(want) {
				t.Fatalf("n=%d: kernel(%v) = %v (%#x), twin %v (%#x)", n, x, got[i], math.Float64bits(got[i]), want, math.Float64bits(want))
			}
		}
		// In place, as the kernels of package gp call it.
		expKernel(src, src)
		for i := range src {
			if math.Float64bits(got[i]) != math.Float64bits(src[i]) {
				t.Fatalf("n=%d: in-place result %d differs", n, i)
			}
		}
	}
}

func BenchmarkExp(b *testing.B) {
	src := make([]float64, 4096)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range src {
		src[i] = -20 * rng.Float64()
	}
	dst := make([]float64, len(src))
	b.Run("vecmath.Exp", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Exp(dst, src)
		}
		b.ReportMetric(float64(b.N)*float64(len(src))/b.Elapsed().Seconds()/1e6, "Mexp/s")
	})
	// One argument in 100 below expLo (a kernel matrix with some points
	// far apart): those fall back to math.Exp.
	mixed := append([]float64(nil), src...)
	for i := 0; i < len(mixed); i += 100 {
		mixed[i] = -800
	}
	b.Run("vecmath.Exp/mixed", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Exp(dst, mixed)
		}
		b.ReportMetric(float64(b.N)*float64(len(src))/b.Elapsed().Seconds()/1e6, "Mexp/s")
	})
	b.Run("expGeneric", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			expGeneric(dst, src)
		}
		b.ReportMetric(float64(b.N)*float64(len(src))/b.Elapsed().Seconds()/1e6, "Mexp/s")
	})
	b.Run("math.Exp", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for j, x := range src {
				dst[j] = math.Exp(x)
			}
		}
		b.ReportMetric(float64(b.N)*float64(len(src))/b.Elapsed().Seconds()/1e6, "Mexp/s")
	})
}
