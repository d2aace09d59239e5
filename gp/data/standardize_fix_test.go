package data

import (
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestStandardizerConstantThreshold pins the documented rule: a spread of
// at most 1e-12 × max|v| counts as constant (scale 1), a larger one does
// not.
func TestStandardizerConstantThreshold(t *testing.T) {
	for _, tc := range []struct {
		eps      float64 // half the spread of a two-row column around 1e6
		constant bool
	}{
		{1e-7, true},  // std 1e-7 ≤ 1e-12 × 1e6
		{1e-5, false}, // std 1e-5 > 1e-12 × 1e6
	} {
		x := mat.NewDense(2, 1, []float64{1e6 - tc.eps, 1e6 + tc.eps})
		s, err := FitStandardizer(x, []float64{1, 2})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.XScale[0] == 1; got != tc.constant {
			t.Errorf("spread ±%g around 1e6: scale %g, constant %v, want %v", tc.eps, s.XScale[0], got, tc.constant)
		}
	}
}
