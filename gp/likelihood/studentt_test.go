package likelihood

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func newStudentT(t *testing.T, sigma, nu float64, opts ...Option) *StudentT {
	t.Helper()
	s, err := NewStudentT(sigma, nu, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// studentLogPDF is log p(y | f) from gonum's distuv, an independent
// implementation of the density.
func studentLogPDF(y, f, sigma, nu float64) float64 {
	return distuv.StudentsT{Mu: f, Sigma: sigma, Nu: nu}.LogProb(y)
}

// TestStudentTExpectedLogLik compares the 30-point rule with a 200-point
// one and with the trapezoidal reference integral of gonum's density.
func TestStudentTExpectedLogLik(t *testing.T) {
	s := newStudentT(t, 0.7, 4)
	ref := newStudentT(t, 0.7, 4, QuadraturePoints(200))
	y := []float64{0.3, -1.2, 4, 0}
	mu := []float64{0.1, 0.5, -0.3, 0}
	v := []float64{0.2, 0.05, 0.4, 0}
	for i := range y {
		got := s.ExpectedLogLik(y[i:i+1], mu[i:i+1], v[i:i+1], nil, nil, nil, nil)
		hi := ref.ExpectedLogLik(y[i:i+1], mu[i:i+1], v[i:i+1], nil, nil, nil, nil)
		want := integrate(func(f float64) float64 { return studentLogPDF(y[i], f, 0.7, 4) }, mu[i], v[i])
		if math.Abs(got-want) > 1e-7 || math.Abs(hi-want) > 1e-9 {
			t.Errorf("point %d: 30-point %.12g, 200-point %.12g, reference %.12g", i, got, hi, want)
		}
	}
}

func TestStudentTGradients(t *testing.T) {
	for _, c := range []struct{ sigma, nu float64 }{{0.7, 4}, {0.2, 1.5}, {1.3, 30}} {
		s := newStudentT(t, c.sigma, c.nu)
		y := []float64{0.3, -1.2, 4, 0.5, 2}
		mu := []float64{0.1, 0.5, -0.3, 0.4, 2}
		v := []float64{0.2, 0.05, 0.4, 1e-3, 1.5}
		checkGrad(t, "StudentT", s, y, mu, v, 1e-6)
	}
}

// TestStudentTGaussianLimit: as ν → ∞ the expected log-likelihood tends
// to the Gaussian's with noise variance σ², and so does the predictive
// density.
func TestStudentTGaussianLimit(t *testing.T) {
	s := newStudentT(t, 0.6, 1e6)
	g, err := NewGaussian(0.36, NoiseFloor(0))
	if err != nil {
		t.Fatal(err)
	}
	y := []float64{0.3, -1.2, 1.5}
	mu := []float64{0.1, 0.5, -0.3}
	v := []float64{0.2, 0.05, 0.4}
	es := s.ExpectedLogLik(y, mu, v, nil, nil, nil, nil)
	eg := g.ExpectedLogLik(y, mu, v, nil, nil, nil, nil)
	if math.Abs(es-eg) > 1e-4 {
		t.Errorf("ν = 1e6: Student-t %.10g, Gaussian %.10g", es, eg)
	}
	ls, lg := make([]float64, 3), make([]float64, 3)
	s.LogPredictive(ls, y, mu, v, nil)
	g.LogPredictive(lg, y, mu, v, nil)
	for i := range ls {
		if math.Abs(ls[i]-lg[i]) > 1e-4 {
			t.Errorf("point %d: log predictive %.10g, Gaussian %.10g", i, ls[i], lg[i])
		}
	}
}

func TestStudentTLogPredictive(t *testing.T) {
	s := newStudentT(t, 0.5, 3, QuadraturePoints(100))
	y := []float64{0.3, 2.5}
	mu := []float64{0.1, -0.2}
	v := []float64{0.3, 0.1}
	dst := make([]float64, 2)
	s.LogPredictive(dst, y, mu, v, nil)
	for i := range y {
		want := math.Log(integrate(func(f float64) float64 { return math.Exp(studentLogPDF(y[i], f, 0.5, 3)) }, mu[i], v[i]))
		if math.Abs(dst[i]-want) > 1e-8 {
			t.Errorf("point %d: %.12g, reference %.12g", i, dst[i], want)
		}
	}
}

func TestStudentTPredictYAndQuantile(t *testing.T) {
	s := newStudentT(t, 0.5, 5)
	mean, vr := make([]float64, 1), make([]float64, 1)
	s.PredictY(mean, vr, []float64{0.4}, []float64{0.2}, nil)
	if mean[0] != 0.4 || math.Abs(vr[0]-(0.2+0.25*5/3)) > 1e-15 {
		t.Errorf("PredictY = %g, %g", mean[0], vr[0])
	}
	heavy := newStudentT(t, 0.5, 1.5)
	heavy.PredictY(mean, vr, []float64{0.4}, []float64{0.2}, nil)
	if !math.IsInf(vr[0], 1) {
		t.Errorf("ν = 1.5: variance %g, want +Inf", vr[0])
	}
	// v = 0: the quantile is the t distribution's own.
	q, err := s.PredictiveQuantile(0.9, 0.4, 0)
	want := distuv.StudentsT{Mu: 0.4, Sigma: 0.5, Nu: 5}.Quantile(0.9)
	if err != nil || math.Abs(q-want) > 1e-9 {
		t.Errorf("quantile at v = 0: %g (%v), want %g", q, err, want)
	}
	// v > 0: the CDF of the predictive (by the reference integral) at the
	// quantile is p; the median is μ by symmetry.
	for _, p := range []float64{0.05, 0.5, 0.975} {
		q, err := s.PredictiveQuantile(p, 0.4, 0.3)
		if err != nil {
			t.Fatal(err)
		}
		c := integrate(func(f float64) float64 { return distuv.StudentsT{Mu: f, Sigma: 0.5, Nu: 5}.CDF(q) }, 0.4, 0.3)
		if math.Abs(c-p) > 1e-7 {
			t.Errorf("p = %g: quantile %g has CDF %g", p, q, c)
		}
	}
	for _, p := range []float64{0, 1, math.NaN()} {
		if _, err := s.PredictiveQuantile(p, 0, 1); err == nil {
			t.Errorf("level %g accepted", p)
		}
	}
	if _, err := s.PredictiveQuantile(0.5, math.Inf(1), 1); err == nil {
		t.Error("infinite mean accepted")
	}
}

func TestStudentTBadInput(t *testing.T) {
	for _, c := range [][2]float64{{0, 3}, {1, 0}, {-1, 3}, {math.Inf(1), 3}, {1, math.NaN()}} {
		if _, err := NewStudentT(c[0], c[1]); err == nil {
			t.Errorf("NewStudentT(%g, %g) accepted", c[0], c[1])
		}
	}
	if _, err := NewStudentT(1, 3, Samples(4)); err == nil {
		t.Error("Samples option accepted")
	}
	s := newStudentT(t, 1, 3)
	if err := s.SetParams([]float64{math.NaN(), 1}); err == nil {
		t.Error("NaN parameter accepted")
	}
	if err := s.SetParams([]float64{-800, 1}); err == nil {
		t.Error("zero scale accepted")
	}
	if err := (&StudentT{}).Validate([]float64{1}); err == nil {
		t.Error("zero value validated")
	}
	checkNoPanicBadLabels(t, "StudentT", s, s.Validate, []float64{math.NaN(), math.Inf(1)})
}

// TestStudentTSmallVarianceLimit: below the quotient's cancellation scale
// dv is the v → 0 limit, which the quotient approaches continuously.
func TestStudentTSmallVarianceLimit(t *testing.T) {
	s := newStudentT(t, 0.7, 4)
	y, mu := []float64{0.9}, []float64{0.2}
	dm, dvTiny, dvSmall := make([]float64, 1), make([]float64, 1), make([]float64, 1)
	s.ExpectedLogLik(y, mu, []float64{1e-14}, dm, dvTiny, nil, nil)
	s.ExpectedLogLik(y, mu, []float64{1e-8}, dm, dvSmall, nil, nil)
	if math.Abs(dvTiny[0]-dvSmall[0]) > 1e-6*math.Abs(dvSmall[0]) {
		t.Errorf("dv at v = 1e-14: %.12g, at 1e-8: %.12g", dvTiny[0], dvSmall[0])
	}
}

// TestStudentTDoFFloor: with a floor of 2, ν = 2 + softplus(u_ν) keeps the
// predictive variance finite for any u_ν, and the gradients still match
// finite differences.
func TestStudentTDoFFloor(t *testing.T) {
	s := newStudentT(t, 0.5, 3, DegreesOfFreedomFloor(2))
	if s.DegreesOfFreedomFloor() != 2 || math.Abs(s.DegreesOfFreedom()-3) > 1e-12 {
		t.Fatalf("floor %g, ν %g", s.DegreesOfFreedomFloor(), s.DegreesOfFreedom())
	}
	checkGrad(t, "StudentT floor 2", s, []float64{0.3, 2}, []float64{0.1, -0.4}, []float64{0.2, 0.7}, 1e-6)
	if err := s.SetParams([]float64{0, -30}); err != nil {
		t.Fatal(err)
	}
	mean, vr := make([]float64, 1), make([]float64, 1)
	s.PredictY(mean, vr, []float64{0}, []float64{0.1}, nil)
	if math.IsInf(vr[0], 0) || math.IsNaN(vr[0]) || !(s.DegreesOfFreedom() > 2) {
		t.Errorf("ν %g: variance %g", s.DegreesOfFreedom(), vr[0])
	}
	if _, err := NewStudentT(0.5, 2, DegreesOfFreedomFloor(2)); err == nil {
		t.Error("ν at the floor accepted")
	}
	if _, err := NewStudentT(0.5, 3, DegreesOfFreedomFloor(-1)); err == nil {
		t.Error("negative floor accepted")
	}
}
