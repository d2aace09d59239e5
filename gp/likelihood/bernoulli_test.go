package likelihood

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestBernoulli(t *testing.T) {
	b, err := NewBernoulli()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 30
	y, mu, v := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range y {
		y[i] = float64(rng.IntN(2))
		mu[i] = 2 * rng.NormFloat64()
		v[i] = 2 * rng.ExpFloat64()
	}
	// Include hard cases: confident wrong predictions deep in the tail.
	y[0], mu[0], v[0] = 1, -12, 0.5
	y[1], mu[1], v[1] = 0, 9, 3
	y[2], mu[2], v[2] = 1, 0.3, 1e-8
	// Gauss–Hermite with 20 points is accurate to ~1e-10 for v ≤ 1 but only
	// to ~1e-3 at v ≈ 10, where log Φ bends sharply on the scale of the
	// nodes; 100 points reach ~1e-9 there.
	b100, err := NewBernoulli(QuadraturePoints(100))
	if err != nil {
		t.Fatal(err)
	}
	for i := range y {
		s := 2*y[i] - 1
		want := integrate(func(f float64) float64 { return logNormCDF(s * f) }, mu[i], v[i])
		got := b.ExpectedLogLik(y[i:i+1], mu[i:i+1], v[i:i+1], nil, nil, nil, nil)
		tol := 1e-9
		if v[i] > 1 {
			tol = 2e-3
		}
		if math.Abs(got-want) > tol*(1+math.Abs(want)) {
			t.Errorf("ExpectedLogLik(y=%g, mu=%g, v=%g) = %.15g, numerical integral %.15g", y[i], mu[i], v[i], got, want)
		}
		got = b100.ExpectedLogLik(y[i:i+1], mu[i:i+1], v[i:i+1], nil, nil, nil, nil)
		if math.Abs(got-want) > 1e-8*(1+math.Abs(want)) {
			t.Errorf("100 points: ExpectedLogLik(y=%g, mu=%g, v=%g) = %.15g, numerical integral %.15g", y[i], mu[i], v[i], got, want)
		}
	}
	checkGrad(t, "bernoulli", b, y, mu, v, 1e-6)
	// The v = 0 limit of the variance gradient.
	y0, mu0, v0 := []float64{1}, []float64{0.4}, []float64{0}
	dm, dv := []float64{0}, []float64{0}
	b.ExpectedLogLik(y0, mu0, v0, dm, dv, nil, nil)
	v0[0] = 1e-7
	fp := b.ExpectedLogLik(y0, mu0, v0, nil, nil, nil, nil)
	v0[0] = 0
	f0 := b.ExpectedLogLik(y0, mu0, v0, nil, nil, nil, nil)
	if fd := (fp - f0) / 1e-7; math.Abs(dv[0]-fd) > 1e-6 {
		t.Errorf("dvar at v = 0: %g, one-sided difference %g", dv[0], fd)
	}

	lp := make([]float64, n)
	b.LogPredictive(lp, y, mu, v, nil)
	mean, vy := make([]float64, n), make([]float64, n)
	b.PredictY(mean, vy, mu, v, nil)
	for i := range y {
		p1 := integrate(normCDF, mu[i], v[i])
		p := p1
		if y[i] == 0 {
			p = 1 - p1
		}
		if math.Abs(lp[i]-math.Log(p)) > 1e-9*math.Max(1, math.Abs(lp[i])) && i > 1 {
			t.Errorf("LogPredictive[%d] = %g, numerical %g", i, lp[i], math.Log(p))
		}
		if math.Abs(mean[i]-p1) > 1e-10 || math.Abs(vy[i]-p1*(1-p1)) > 1e-10 {
			t.Errorf("PredictY[%d] = %g, %g; want %g", i, mean[i], vy[i], p1)
		}
	}
	if b.QuadraturePoints() != DefaultQuadraturePoints || b100.QuadraturePoints() != 100 {
		t.Errorf("QuadraturePoints() = %d, %d", b.QuadraturePoints(), b100.QuadraturePoints())
	}
	if p, _ := NewPoisson(); p.QuadraturePoints() != DefaultPoissonQuadraturePoints {
		t.Errorf("Poisson QuadraturePoints() = %d", p.QuadraturePoints())
	}
	if _, err := NewBernoulli(QuadraturePoints(1)); err == nil {
		t.Error("1 quadrature point accepted")
	}
	if _, err := NewBernoulli(Samples(3)); err == nil {
		t.Error("Samples option accepted by Bernoulli")
	}
	checkNoPanicBadLabels(t, "bernoulli", b, b.Validate, []float64{-1, 2, 0.5, math.NaN(), math.Inf(1)})
}
