package likelihood

import (
	"math"
	"testing"
)

func newHetero(t *testing.T, opts ...Option) *Heteroscedastic {
	t.Helper()
	h, err := NewHeteroscedastic(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// hetLogLik is log N(y; f1, exp(f2)).
func hetLogLik(y, f1, f2 float64) float64 {
	r := y - f1
	return -0.5*math.Log(2*math.Pi) - 0.5*f2 - 0.5*r*r*math.Exp(-f2)
}

// TestHeteroscedasticExpectedLogLik checks the closed form against a
// two-dimensional reference integral (f1 and f2 are independent under q).
func TestHeteroscedasticExpectedLogLik(t *testing.T) {
	h := newHetero(t)
	y := []float64{0.3, -1.5}
	mu := []float64{0.1, -0.7, 0.4, 0.8}
	v := []float64{0.2, 0.3, 0.05, 0.6}
	for i := range y {
		j := 2 * i
		got := h.ExpectedLogLik(y[i:i+1], mu[j:j+2], v[j:j+2], nil, nil, nil, nil)
		want := integrate(func(f2 float64) float64 {
			return integrate(func(f1 float64) float64 { return hetLogLik(y[i], f1, f2) }, mu[j], v[j])
		}, mu[j+1], v[j+1])
		if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
			t.Errorf("point %d: %.12g, reference %.12g", i, got, want)
		}
	}
}

func TestHeteroscedasticGradients(t *testing.T) {
	h := newHetero(t)
	y := []float64{0.3, -1.5, 2}
	mu := []float64{0.1, -0.7, 0.4, 0.8, 2.5, -2}
	v := []float64{0.2, 0.3, 0.05, 0.6, 1e-3, 0.01}
	checkGrad(t, "Heteroscedastic", h, y, mu, v, 1e-6)
}

func TestHeteroscedasticLogPredictive(t *testing.T) {
	h := newHetero(t, QuadraturePoints(100))
	y := []float64{0.3, -1.5}
	mu := []float64{0.1, -0.7, 0.4, 0.8}
	v := []float64{0.2, 0.3, 0.05, 0.6}
	dst := make([]float64, 2)
	h.LogPredictive(dst, y, mu, v, nil)
	for i := range y {
		j := 2 * i
		want := math.Log(integrate(func(f2 float64) float64 {
			s := v[j] + math.Exp(f2)
			r := y[i] - mu[j]
			return math.Exp(-0.5*math.Log(2*math.Pi*s) - 0.5*r*r/s)
		}, mu[j+1], v[j+1]))
		if math.Abs(dst[i]-want) > 1e-9 {
			t.Errorf("point %d: %.12g, reference %.12g", i, dst[i], want)
		}
	}
	// With s2 = 0 it is the Gaussian's with noise exp(μ₂).
	h.LogPredictive(dst[:1], y[:1], []float64{0.1, -0.7}, []float64{0.2, 0}, nil)
	s := 0.2 + math.Exp(-0.7)
	if want := -0.5*math.Log(2*math.Pi*s) - 0.5*0.04/s; math.Abs(dst[0]-want) > 1e-13 {
		t.Errorf("s2 = 0: %.15g, want %.15g", dst[0], want)
	}
}

func TestHeteroscedasticPredictYAndQuantile(t *testing.T) {
	h := newHetero(t)
	mean, vr := make([]float64, 2), make([]float64, 2)
	h.PredictY(mean, vr, []float64{0.4, -1}, []float64{0.2, 0.3}, nil)
	en := math.Exp(-1 + 0.15)
	if mean[0] != 0.4 || math.Abs(vr[0]-(0.2+en)) > 1e-15 || math.Abs(mean[1]-en) > 1e-15 ||
		math.Abs(vr[1]-math.Expm1(0.3)*en*en) > 1e-15 {
		t.Errorf("PredictY = %v, %v", mean, vr)
	}
	for _, p := range []float64{0.025, 0.5, 0.9} {
		q, err := h.PredictiveQuantile(p, 0.4, 0.2, -1, 0.3)
		if err != nil {
			t.Fatal(err)
		}
		c := integrate(func(f2 float64) float64 { return normCDF((q - 0.4) / math.Sqrt(0.2+math.Exp(f2))) }, -1, 0.3)
		if math.Abs(c-p) > 1e-7 {
			t.Errorf("p = %g: quantile %g has CDF %g", p, q, c)
		}
	}
	if _, err := h.PredictiveQuantile(1.2, 0, 1, 0, 1); err == nil {
		t.Error("level 1.2 accepted")
	}
	if _, err := h.PredictiveQuantile(0.5, 0, 1, math.NaN(), 1); err == nil {
		t.Error("NaN mean accepted")
	}
}

func TestHeteroscedasticBadInput(t *testing.T) {
	if _, err := NewHeteroscedastic(Epsilon(0.1)); err == nil {
		t.Error("Epsilon option accepted")
	}
	h := newHetero(t)
	if err := h.SetParams([]float64{1}); err == nil {
		t.Error("a parameter accepted")
	}
	if err := (&Heteroscedastic{}).Validate([]float64{1}); err == nil {
		t.Error("zero value validated")
	}
	checkNoPanicBadLabels(t, "Heteroscedastic", h, h.Validate, []float64{math.NaN(), math.Inf(-1)})
}
