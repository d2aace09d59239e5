package data

import (
	"math"
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

// TestStandardizerOutputs checks per-output statistics: each column's mean
// and scale over its observed (non-NaN) values, TransformY and InverseY
// column by column, and the errors.
func TestStandardizerOutputs(t *testing.T) {
	x := mat.NewDense(4, 1, []float64{1, 2, 3, 4})
	nan := math.NaN()
	y := []float64{1, 10, 3, nan, 5, 30, 7, nan}
	s, err := FitStandardizerOutputs(x, y, 2)
	if err != nil {
		t.Fatal(err)
	}
	if s.NumOutputs() != 2 || s.YMeans[0] != 4 || s.YMeans[1] != 20 || s.YScales[1] != 10 || math.Abs(s.YScales[0]-math.Sqrt(5)) > 1e-15 {
		t.Fatalf("statistics %v %v", s.YMeans, s.YScales)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	ys := append([]float64(nil), y...)
	s.TransformY(ys)
	if ys[1] != -1 || ys[5] != 1 || !math.IsNaN(ys[3]) {
		t.Errorf("standardized %v", ys)
	}
	v := []float64{1, 1}
	m := []float64{0, 0}
	s.InverseY(m, v)
	if m[0] != 4 || m[1] != 20 || v[1] != 100 || math.Abs(v[0]-5) > 1e-14 {
		t.Errorf("inverse %v %v", m, v)
	}
	if got := s.OutputLogDensityOffset(1); got != -math.Log(10) {
		t.Errorf("offset %g", got)
	}
	if _, err := FitStandardizerOutputs(x, []float64{1, nan, 2, nan, 3, nan, 4, nan}, 2); err == nil {
		t.Error("a column without observed values accepted")
	}
	if _, err := FitStandardizerOutputs(x, y[:6], 2); err == nil {
		t.Error("wrong number of targets accepted")
	}
	bad := *s
	bad.YScale = 2
	if err := bad.Validate(); err == nil {
		t.Error("per-output statistics with YScale 2 accepted")
	}
	bad = *s
	bad.YScales = []float64{1, 0}
	if err := bad.Validate(); err == nil {
		t.Error("zero target scale accepted")
	}
}
