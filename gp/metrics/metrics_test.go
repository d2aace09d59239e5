package metrics

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
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

// Residuals too large to square give the representable answer, not +Inf
// or −Inf: the same data scaled by 2^k has RMSE scaled by 2^k and log
// densities shifted by −k·log 2 (variances scaled by 4^k).
func TestMetricsLargeResiduals(t *testing.T) {
	y := []float64{1, 2, 3, -4}
	m := []float64{1, 1, 5, 4}
	v := []float64{1, 0.5, 2, 3}
	r0, _ := RMSE(y, m)
	l0, _ := GaussianLogLik(y, m, v)
	for _, k := range []int{300, 500, 511, 1000, 1020} {
		ys, ms, vs := make([]float64, 4), make([]float64, 4), make([]float64, 4)
		for i := range y {
			ys[i], ms[i] = math.Ldexp(y[i], k), math.Ldexp(m[i], k)
			vs[i] = math.Ldexp(v[i], 2*min(k, 511))
		}
		r, err := RMSE(ys, ms)
		if err != nil || math.Abs(r/math.Ldexp(r0, k)-1) > 1e-15 {
			t.Errorf("k = %d: RMSE %v (%v), want %v", k, r, err, math.Ldexp(r0, k))
		}
		l, err := GaussianLogLik(ys, ms, vs)
		want := l0 - float64(k)*math.Ln2
		if k > 511 {
			// Variances scaled by 4^511 only: the quadratic terms are
			// 4^(k−511) times the unscaled ones.
			want = 0
			for i := range y {
				r := y[i] - m[i]
				want += (-0.5*(math.Log(2*math.Pi*v[i])+1022*math.Ln2) - math.Ldexp(0.5*r*r/v[i], 2*(k-511))) / 4
			}
		}
		if err != nil || math.Abs(l-want) > 1e-12*math.Abs(want) {
			t.Errorf("k = %d: GaussianLogLik %v (%v), want %v", k, l, err, want)
		}
	}
	// One term beyond −MaxFloat64 whose mean over two is not: about −1e308.
	if l, err := GaussianLogLik([]float64{2e154, 0}, []float64{0, 0}, []float64{1, 1}); err != nil || math.IsInf(l, 0) || math.Abs(l/(-1e308)-1) > 1e-12 {
		t.Errorf("GaussianLogLik %v (%v), want about -1e308", l, err)
	}
	// A mean beyond −MaxFloat64 is −Inf.
	if l, err := GaussianLogLik([]float64{1e300, 0}, []float64{-1e300, 0}, []float64{1, 1}); err != nil || !math.IsInf(l, -1) {
		t.Errorf("GaussianLogLik %v (%v), want -Inf", l, err)
	}
	// Terms of −0.6·MaxFloat64 each: their sum overflows, their mean does
	// not.
	r := math.Sqrt(1.2) * math.Sqrt(math.MaxFloat64)
	l, err := GaussianLogLik([]float64{r, -r, r}, []float64{0, 0, 0}, []float64{1, 1, 1})
	if want := -0.6*math.MaxFloat64 - 0.5*math.Log(2*math.Pi); err != nil || math.Abs(l/want-1) > 1e-14 {
		t.Errorf("GaussianLogLik %v (%v), want %v", l, err, want)
	}
}

// multiObj is a model of two targets per row whose objective is the sum
// of its targets, which FullBound must slice by rows.
type multiObj struct{}

func (multiObj) NumOutputs() int { return 2 }
func (multiObj) Objective(x *mat.Dense, y []float64, nTotal int, grad []float64) (float64, error) {
	if r, _ := x.Dims(); len(y) != 2*r {
		return 0, fmt.Errorf("%d targets for %d rows", len(y), r)
	}
	s := 0.0
	for _, v := range y {
		s += v
	}
	return s * float64(nTotal) / float64(len(y)/2), nil
}

// TestFullBoundMultiOutput checks that FullBound hands a multi-output model
// the targets of its rows, batch by batch.
func TestFullBoundMultiOutput(t *testing.T) {
	x := mat.NewDense(5, 1, nil)
	y := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	got, err := FullBound(multiObj{}, x, y, 2)
	if err != nil || math.Abs(got-55) > 1e-12 {
		t.Errorf("FullBound %v, %v; want 55", got, err)
	}
	if _, err := FullBound(multiObj{}, x, y[:5], 2); err == nil {
		t.Error("one target per row accepted")
	}
}
