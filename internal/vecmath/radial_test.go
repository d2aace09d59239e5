package vecmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var radials = []Radial{RadialRBF, RadialMatern12, RadialMatern32, RadialMatern52}

// sameBits reports whether a and b have the same bits, or are both NaN
// (NaN payloads depend on which NaN an instruction propagates, which
// differs between scalar and vector code and is not part of the contract).
func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

// radialInputs returns n squared distances: typical kernel-matrix values,
// values whose exponential argument is near or beyond expLo, and special
// values (0, −0, +Inf, NaN, negative, huge) at random places.
func radialInputs(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		switch rng.IntN(12) {
		case 0:
			s[i] = 0
		case 1:
			s[i] = math.Copysign(0, -1)
		case 2:
			s[i] = math.Inf(1)
		case 3:
			s[i] = math.NaN()
		case 4:
			s[i] = -rng.Float64() // invalid, but must match the twin
		case 5:
			s[i] = 1e300 * rng.Float64()
		case 6:
			// around the boundary of the fast range for every profile
			s[i] = []float64{1416, 708 * 708, 708 * 708 / 3, 708 * 708 / 5}[rng.IntN(4)] * (1 + 0.01*(rng.Float64()-0.5))
		default:
			s[i] = 30 * rng.Float64() * rng.Float64()
		}
	}
	return s
}

// TestRadialProfileTwin checks every path of RadialProfile bit for bit
// against radialOne, in place and out of place, at lengths that leave every
// tail size, with and without special values.
func TestRadialProfileTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	for _, g := range radials {
		for _, n := range []int{1, 3, 4, 5, 8, 9, 12, 255, 256, 257, 1000} {
			for rep := 0; rep < 20; rep++ {
				var src []float64
				if rep%2 == 0 {
					src = make([]float64, n)
					for i := range src {
						src[i] = 30 * rng.Float64() * rng.Float64()
					}
				} else {
					src = radialInputs(rng, n)
				}
				v := 0.5 + 2*rng.Float64()
				check := func(name string, got []float64) {
					t.Helper()
					for i, s := range src {
						want := radialOne(s, g, v)
						if !sameBits(got[i], want) {
							t.Fatalf("%s, g=%d, n=%d: s=%v gives %v (%#x), twin %v (%#x)", name, g, n, s, got[i], math.Float64bits(got[i]), want, math.Float64bits(want))
						}
					}
				}
				dst := make([]float64, n)
				RadialProfile(dst, src, g, v)
				check("RadialProfile", dst)
				in := append([]float64(nil), src...)
				RadialProfile(in, in, g, v)
				check("in place", in)
				gen := make([]float64, n)
				radialGeneric(gen, src, g, v)
				check("radialGeneric", gen)
			}
		}
	}
}

// TestRadialProfileValues checks the profiles against their closed forms
// with math.Exp, and the limits: g(0) = 1, g(+Inf) = 0, NaN in, NaN out, and
// a slightly negative squared distance (rounding) clamped to g(0).
func TestRadialProfileValues(t *testing.T) {
	closed := map[Radial]func(s float64) float64{
		RadialRBF:      func(s float64) float64 { return math.Exp(-s / 2) },
		RadialMatern12: func(s float64) float64 { return math.Exp(-math.Sqrt(s)) },
		RadialMatern32: func(s float64) float64 {
			a := math.Sqrt(3 * s)
			return (1 + a) * math.Exp(-a)
		},
		RadialMatern52: func(s float64) float64 {
			a := math.Sqrt(5 * s)
			return (1 + a + a*a/3) * math.Exp(-a)
		},
	}
	rng := rand.New(rand.NewPCG(5, 1))
	for _, g := range radials {
		src := make([]float64, 403)
		for i := range src {
			src[i] = 50 * rng.Float64() * rng.Float64()
		}
		src[0], src[1], src[2], src[3] = 0, math.Inf(1), math.NaN(), -1e-13
		dst := make([]float64, len(src))
		const v = 1.7
		RadialProfile(dst, src, g, v)
		if dst[0] != v || dst[1] != 0 || !math.IsNaN(dst[2]) || dst[3] != v {
			t.Fatalf("g=%d: limits give %v, %v, %v, %v", g, dst[0], dst[1], dst[2], dst[3])
		}
		for i := 4; i < len(src); i++ {
			want := v * closed[g](src[i])
			if math.Abs(dst[i]-want) > 1e-14*want+1e-300 {
				t.Fatalf("g=%d: s=%v gives %v, closed form %v", g, src[i], dst[i], want)
			}
		}
	}
}

func TestRadialProfileUnknown(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for an unknown profile")
		}
	}()
	RadialProfile(make([]float64, 4), make([]float64, 4), Radial(7), 1)
}

func BenchmarkRadialProfile(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	src := make([]float64, 4096)
	for i := range src {
		src[i] = 20 * rng.Float64() * rng.Float64()
	}
	dst := make([]float64, len(src))
	for _, g := range radials {
		b.Run(fmt.Sprintf("g=%d/RadialProfile", g), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				RadialProfile(dst, src, g, 1.3)
			}
			b.ReportMetric(float64(b.N)*float64(len(src))/b.Elapsed().Seconds()/1e6, "Melem/s")
		})
		b.Run(fmt.Sprintf("g=%d/radialGeneric", g), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				radialGeneric(dst, src, g, 1.3)
			}
			b.ReportMetric(float64(b.N)*float64(len(src))/b.Elapsed().Seconds()/1e6, "Melem/s")
		})
	}
}

// TestRadialWeightsTwin checks RadialWeights bit for bit against its
// definition: radialWeightOne for each element, the sums in four
// interleaved partial sums over the prefix and in order over the tail; in
// place and out of place, with special values.
func TestRadialWeightsTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 19))
	for _, g := range radials {
		for _, n := range []int{1, 3, 4, 5, 7, 8, 9, 12, 13, 64, 1001} {
			for rep := 0; rep < 20; rep++ {
				var s []float64
				if rep%2 == 0 {
					s = make([]float64, n)
					for i := range s {
						s[i] = 30 * rng.Float64() * rng.Float64()
					}
				} else {
					s = radialInputs(rng, n)
				}
				dk := make([]float64, n)
				kk := make([]float64, n)
				RadialProfile(kk, s, g, 1.4)
				for i := range dk {
					dk[i] = 2*rng.Float64() - 1
					if rep%4 == 1 && rng.IntN(5) == 0 {
						dk[i] = 0
					}
				}
				iv := 1 / 1.4
				// The definition.
				want := make([]float64, n)
				wg, ww := radialWeightsGeneric(want, s, dk, kk, g, iv)
				check := func(name string, got []float64, sg, sw float64) {
					t.Helper()
					for j := range want {
						if !sameBits(got[j], want[j]) {
							t.Fatalf("%s, g=%d, n=%d: w[%d] = %v (s=%v, dk=%v, kk=%v), want %v", name, g, n, j, got[j], s[j], dk[j], kk[j], want[j])
						}
					}
					if !sameBits(sg, wg) || !sameBits(sw, ww) {
						t.Fatalf("%s, g=%d, n=%d: sums %v, %v, want %v, %v", name, g, n, sg, sw, wg, ww)
					}
				}
				got := make([]float64, n)
				sg, sw := RadialWeights(got, s, dk, kk, g, iv)
				check("RadialWeights", got, sg, sw)
				in := append([]float64(nil), s...)
				sg, sw = RadialWeights(in, in, dk, kk, g, iv)
				check("in place", in, sg, sw)
			}
		}
	}
}

// TestRadialWeightsValues checks the weights against the derivative of
// the profile: w = dk·∂k/∂s with k = v·g(s), by central differences.
func TestRadialWeightsValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 29))
	for _, g := range radials {
		n := 37
		s := make([]float64, n)
		for i := range s {
			s[i] = 0.05 + 8*rng.Float64()
		}
		const v = 1.9
		kk := make([]float64, n)
		RadialProfile(kk, s, g, v)
		dk := make([]float64, n)
		for i := range dk {
			dk[i] = 2*rng.Float64() - 1
		}
		w := make([]float64, n)
		sumG, sumWs := RadialWeights(w, s, dk, kk, g, 1/v)
		var wantG, wantWs float64
		for i, si := range s {
			const h = 1e-6
			var kp, km [1]float64
			RadialProfile(kp[:], []float64{si + h}, g, v)
			RadialProfile(km[:], []float64{si - h}, g, v)
			// w_i = dk_i·(k_i/v)·g′/g = dk_i·∂g/∂s (the caller's scale iv = 1/v).
			want := dk[i] * (kp[0] - km[0]) / (2 * h) / v
			if math.Abs(w[i]-want) > 1e-7*(1+math.Abs(want)) {
				t.Fatalf("g=%d: s=%v: w = %v, finite difference %v", g, si, w[i], want)
			}
			wantG += dk[i] * kk[i] / v
			wantWs += w[i] * si
		}
		if math.Abs(sumG-wantG) > 1e-12*(1+math.Abs(wantG)) || math.Abs(sumWs-wantWs) > 1e-12*(1+math.Abs(wantWs)) {
			t.Fatalf("g=%d: sums %v, %v, want %v, %v", g, sumG, sumWs, wantG, wantWs)
		}
	}
}

func BenchmarkRadialWeights(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	n := 4096
	s := make([]float64, n)
	dk := make([]float64, n)
	kk := make([]float64, n)
	for i := range s {
		s[i] = 20 * rng.Float64() * rng.Float64()
		dk[i] = rng.Float64() - 0.5
	}
	w := make([]float64, n)
	for _, g := range radials {
		RadialProfile(kk, s, g, 1.3)
		b.Run(fmt.Sprintf("g=%d/RadialWeights", g), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				RadialWeights(w, s, dk, kk, g, 1/1.3)
			}
			b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds()/1e6, "Melem/s")
		})
		b.Run(fmt.Sprintf("g=%d/radialWeightsLanes", g), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				radialWeightsLanes(w, s, dk, kk, g, 1/1.3)
			}
			b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds()/1e6, "Melem/s")
		})
	}
}
