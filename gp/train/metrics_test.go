package train

import (
	"math"
	"testing"
)

func TestMetrics(t *testing.T) {
	y := []float64{1, 2, 3}
	m := []float64{1, 1, 5}
	if r, err := RMSE(y, m); err != nil || math.Abs(r-math.Sqrt(5.0/3)) > 1e-15 {
		t.Errorf("RMSE %v %v", r, err)
	}
	v := []float64{1, 0.5, 2}
	want := (-0.5*math.Log(2*math.Pi) + (-0.5*math.Log(math.Pi) - 1) + (-0.5*math.Log(4*math.Pi) - 1)) / 3
	if l, err := GaussianLogLik(y, m, v); err != nil || math.Abs(l-want) > 1e-15 {
		t.Errorf("GaussianLogLik %v, want %v (%v)", l, want, err)
	}
	if _, err := RMSE(y, m[:2]); err == nil {
		t.Error("RMSE length mismatch accepted")
	}
	if _, err := GaussianLogLik(y, m, []float64{1, 0, 1}); err == nil {
		t.Error("zero variance accepted")
	}
	if _, err := GaussianLogLik(nil, nil, nil); err == nil {
		t.Error("empty input accepted")
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		yb := []float64{1, bad, 3}
		if _, err := RMSE(yb, m); err == nil {
			t.Errorf("RMSE with target %v accepted", bad)
		}
		if _, err := RMSE(y, yb); err == nil {
			t.Errorf("RMSE with mean %v accepted", bad)
		}
		if _, err := GaussianLogLik(yb, m, v); err == nil {
			t.Errorf("GaussianLogLik with target %v accepted", bad)
		}
		if _, err := GaussianLogLik(y, yb, v); err == nil {
			t.Errorf("GaussianLogLik with mean %v accepted", bad)
		}
	}
}
