package fuzz

import (
	"encoding/binary"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/inducing"
)

// putFloats encodes seed values in the format gpFloats decodes.
func putFloats(v ...float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

// FuzzStandardizer fits a standardizer to arbitrary values: it returns an
// error exactly when a value is not finite, and otherwise finite means,
// positive finite scales, and finite standardized inputs.
func FuzzStandardizer(f *testing.F) {
	// cols%4 + 1 columns.
	f.Add(putFloats(1, 2, 3, 4, 5, 6), uint8(2))
	f.Add(putFloats(1.7e308, 1e200, 1.7e308, -1e200), uint8(1))
	f.Add(putFloats(1.7e308, -1.7e308, -1.7e308), uint8(0))
	f.Add(putFloats(5e-324, 0, -5e-324, 1), uint8(0))
	f.Add(putFloats(math.NaN(), 1), uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, cols uint8) {
		v := gpFloats(b)
		d := int(cols%4) + 1
		n := len(v) / d
		if n == 0 {
			return
		}
		x := mat.NewDense(n, d, v[:n*d])
		finite := true
		for _, e := range v[:n*d] {
			finite = finite && !math.IsNaN(e) && !math.IsInf(e, 0)
		}
		s, err := data.FitStandardizer(x, nil)
		if !finite {
			if err == nil {
				t.Fatal("non-finite input accepted")
			}
			return
		}
		if err != nil {
			t.Fatalf("finite input refused: %v", err)
		}
		for j := 0; j < d; j++ {
			if math.IsNaN(s.XMean[j]) || math.IsInf(s.XMean[j], 0) || !(s.XScale[j] > 0) || math.IsInf(s.XScale[j], 0) {
				t.Fatalf("column %d: mean %v, scale %v", j, s.XMean[j], s.XScale[j])
			}
		}
		xs := mat.DenseCopyOf(x)
		if err := s.TransformX(xs); err != nil {
			t.Fatal(err)
		}
		for i, e := range xs.RawMatrix().Data {
			if math.IsNaN(e) || math.IsInf(e, 0) {
				t.Fatalf("standardized value %d of %v is %v (mean %v, scale %v)", i, v[i], e, s.XMean[i%d], s.XScale[i%d])
			}
		}
	})
}

// FuzzKMeans runs k-means on arbitrary finite points: within MaxKMeansInput
// it returns k distinct finite centres, never hangs or panics; beyond it,
// an error.
func FuzzKMeans(f *testing.F) {
	// cols%3 + 1 columns, k%16 + 1 centres.
	f.Add(putFloats(1e16, 1e16+2), uint8(0), uint8(2), uint64(1))
	f.Add(putFloats(0, 0, 0, 0, 1, 1), uint8(1), uint8(4), uint64(2))
	f.Add(putFloats(1e150, -1e150, 0), uint8(0), uint8(1), uint64(3))
	f.Add(putFloats(1.1e150, 0), uint8(0), uint8(1), uint64(5))
	f.Add(putFloats(5e-324, 0, 5e-324, 0), uint8(0), uint8(3), uint64(4))
	f.Fuzz(func(t *testing.T, b []byte, cols, k uint8, seed uint64) {
		v := gpFloats(b)
		d := int(cols%3) + 1
		n := min(len(v)/d, 64)
		if n == 0 {
			return
		}
		big := false
		for _, e := range v[:n*d] {
			if math.IsNaN(e) || math.IsInf(e, 0) {
				return // refused up front; FuzzStandardizer covers that path
			}
			big = big || math.Abs(e) > inducing.MaxKMeansInput
		}
		kk := int(k%16) + 1
		c, err := inducing.KMeans(mat.NewDense(n, d, v[:n*d]), kk, inducing.KMeansOptions{Seed: seed, Threads: 1})
		if big {
			if err == nil {
				t.Fatal("values beyond MaxKMeansInput accepted")
			}
			return
		}
		if err != nil {
			t.Fatalf("k = %d on %d×%d: %v", kk, n, d, err)
		}
		seen := map[[3]float64]bool{}
		for i := 0; i < kk; i++ {
			var key [3]float64
			for j, e := range c.RawRowView(i) {
				if math.IsNaN(e) || math.IsInf(e, 0) {
					t.Fatalf("centre %d: %v", i, c.RawRowView(i))
				}
				key[j] = e + 0 // −0 and 0 are one point
			}
			if seen[key] {
				t.Fatalf("centre %d repeats: %v", i, c.RawRowView(i))
			}
			seen[key] = true
		}
	})
}
