package vecmath

import (
	"encoding/binary"
	"math"
	"testing"
)

// float64Bytes encodes vals as little-endian float64 bits, the fuzz
// targets' seed format.
func float64Bytes(vals ...float64) []byte {
	b := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return b
}

// FuzzRadial checks RadialProfile and RadialWeights against their pure-Go
// twins bit for bit (NaN payloads aside) on fuzzer-chosen squared
// distances, gradients, scales and lengths, in place and out of place.
func FuzzRadial(f *testing.F) {
	f.Add(float64Bytes(0, 1, 2.5, 30, 1e-300, 708*708/3, 5e5, 9), uint8(2), 1.3, 0.7)
	f.Add(float64Bytes(math.Inf(1), math.NaN(), -1e-12, math.Copysign(0, -1), 1416, 1417, 3, 4, 5), uint8(0), 2.0, 0.5)
	f.Add(float64Bytes(1e308, 1e-310, 0.25), uint8(3), 1e300, 1e-300)
	f.Add(float64Bytes(4, 9, 16, 25, 36), uint8(1), 1.0, 1.0)
	f.Fuzz(func(t *testing.T, data []byte, gsel uint8, v, iv float64) {
		g := Radial(gsel % 4)
		n := len(data) / 8
		s := make([]float64, n)
		for i := range s {
			s[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
		}
		out := make([]float64, n)
		RadialProfile(out, s, g, v)
		for i, si := range s {
			if want := radialOne(si, g, v); !sameBits(out[i], want) {
				t.Fatalf("profile %d: s=%v v=%v gives %v, twin %v", g, si, v, out[i], want)
			}
		}
		in := append([]float64(nil), s...)
		RadialProfile(in, in, g, v)
		for i := range in {
			if !sameBits(in[i], out[i]) {
				t.Fatalf("profile %d in place: element %d differs", g, i)
			}
		}
		// Weights with kk = out and dk taken from the distances reversed.
		dk := make([]float64, n)
		for i := range dk {
			dk[i] = s[n-1-i]
		}
		want := make([]float64, n)
		wg, ww := radialWeightsGeneric(want, s, dk, out, g, iv)
		got := append([]float64(nil), s...)
		sg, sw := RadialWeights(got, got, dk, out, g, iv)
		for j := range want {
			if !sameBits(got[j], want[j]) {
				t.Fatalf("weights %d: element %d = %v, twin %v", g, j, got[j], want[j])
			}
		}
		if !sameBits(sg, wg) || !sameBits(sw, ww) {
			t.Fatalf("weights %d: sums %v, %v, twin %v, %v", g, sg, sw, wg, ww)
		}
	})
}
