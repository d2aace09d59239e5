package likelihood

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestPoisson(t *testing.T) {
	p, err := NewPoisson()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 25
	y, mu, v := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range y {
		y[i] = float64(rng.IntN(30))
		mu[i] = 1.5 * rng.NormFloat64()
		v[i] = rng.ExpFloat64()
	}
	y[0], mu[0], v[0] = 0, -3, 4 // wide posterior, zero count
	y[1], mu[1], v[1] = 200, 5.3, 2
	y[2], mu[2], v[2] = 3, 1, 0
	for i := range y {
		yi := y[i]
		lg, _ := math.Lgamma(yi + 1)
		logp := func(f float64) float64 { return yi*f - math.Exp(f) - lg }
		want := integrate(logp, mu[i], v[i])
		got := p.ExpectedLogLik(y[i:i+1], mu[i:i+1], v[i:i+1], nil, nil, nil, nil)
		if math.Abs(got-want) > 1e-10*(1+math.Abs(want)) {
			t.Errorf("ExpectedLogLik(y=%g mu=%g v=%g) = %.15g, numerical %.15g", yi, mu[i], v[i], got, want)
		}
		lp := []float64{0}
		p.LogPredictive(lp, y[i:i+1], mu[i:i+1], v[i:i+1], nil)
		wantLP := math.Log(integrate(func(f float64) float64 { return math.Exp(logp(f)) }, mu[i], v[i]))
		if math.Abs(lp[0]-wantLP) > 1e-8*(1+math.Abs(wantLP)) {
			t.Errorf("LogPredictive(y=%g mu=%g v=%g) = %.15g, numerical %.15g", yi, mu[i], v[i], lp[0], wantLP)
		}
		m, vy := []float64{0}, []float64{0}
		p.PredictY(m, vy, mu[i:i+1], v[i:i+1], nil)
		wm := integrate(math.Exp, mu[i], v[i])
		w2 := integrate(func(f float64) float64 { return math.Exp(f) + math.Exp(2*f) }, mu[i], v[i])
		if math.Abs(m[0]-wm) > 1e-10*wm || math.Abs(vy[0]-(w2-wm*wm)) > 1e-9*(w2-wm*wm) {
			t.Errorf("PredictY(mu=%g v=%g) = %g, %g; numerical %g, %g", mu[i], v[i], m[0], vy[0], wm, w2-wm*wm)
		}
	}
	v[2] = 0.3
	checkGrad(t, "poisson", p, y, mu, v, 1e-7)
	checkNoPanicBadLabels(t, "poisson", p, p.Validate, []float64{-1, 2.5, math.NaN(), math.Inf(1)})
}

// TestPoissonLogPredictiveLargeCounts checks the log predictive density of
// large counts under wide posteriors, whose mode search used to stop far
// above the mode (Newton's steps on e^f shrink f by about 1 each) and
// returned values such as −1e130.
func TestPoissonLogPredictiveLargeCounts(t *testing.T) {
	p, err := NewPoisson()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ y, mu, v float64 }{
		{200, 0.3, 4}, {200, 5, 10}, {200, -5, 10}, {1000, 0, 1}, {1000, 5, 4}, {1000, -1, 10},
	} {
		lg, _ := math.Lgamma(c.y + 1)
		want := math.Log(integrate(func(f float64) float64 { return math.Exp(c.y*f - math.Exp(f) - lg) }, c.mu, c.v))
		lp := []float64{0}
		p.LogPredictive(lp, []float64{c.y}, []float64{c.mu}, []float64{c.v}, nil)
		if math.Abs(lp[0]-want) > 1e-8*(1+math.Abs(want)) {
			t.Errorf("LogPredictive(y=%g mu=%g v=%g) = %.15g, numerical %.15g", c.y, c.mu, c.v, lp[0], want)
		}
	}
	// A count of a million at its mean, f narrow on the grid of integrate:
	// the count is about N(y, y + y²v).
	y, v := 1e6, 1e-3
	lp := []float64{0}
	p.LogPredictive(lp, []float64{y}, []float64{math.Log(y)}, []float64{v}, nil)
	if want := -0.5 * math.Log(2*math.Pi*(y+y*y*v)); math.Abs(lp[0]-want) > 1e-2 {
		t.Errorf("LogPredictive(y=%g mu=log y v=%g) = %.15g, about %.15g", y, v, lp[0], want)
	}
}

// TestPoissonHugeCounts: for counts above about 1e15 the terms of
// y·f − e^f − log Γ(y + 1) are ~y·log y and their sum ~−log(2πy)/2, so
// that form keeps no correct digit; the values must follow Stirling's
// formula instead. At f = log y the log probability is
// −log(2πy)/2 − 1/(12y) + …; the log predictive of a posterior much wider
// than the likelihood (which is ~N(log y, 1/y) in f) is
// log N(log y; μ, v) − log y up to O(1/(y·v)); and the expected
// log-likelihood's v-dependence is exactly −y·(e^{v/2} − 1) at μ = log y.
func TestPoissonHugeCounts(t *testing.T) {
	p, err := NewPoisson()
	if err != nil {
		t.Fatal(err)
	}
	for _, y := range []float64{1e5, 1e9, 1e15, 1e16, 1 << 60, 1e20} {
		ly := math.Log(y)
		near := func(what string, got, want, tol float64) {
			t.Helper()
			if math.Abs(got-want) > tol {
				t.Errorf("y = %g: %s = %.15g, want %.15g", y, what, got, want)
			}
		}
		stirling := -0.5*math.Log(2*math.Pi*y) - 1/(12*y)
		// ExpectedLogLik and LogPredictive at v = 0: log Poisson(y; e^f).
		dmu, dv := []float64{0}, []float64{0}
		got := p.ExpectedLogLik([]float64{y}, []float64{ly}, []float64{0}, dmu, dv, nil, nil)
		near("ExpectedLogLik(μ = log y, v = 0)", got, stirling, 1e-12*math.Abs(stirling))
		// y − e^μ: only the rounding of log y is left.
		near("dμ", dmu[0], -y*math.Expm1(ly-math.Log(y)), 1e-9)
		lp := []float64{0}
		p.LogPredictive(lp, []float64{y}, []float64{ly}, []float64{0}, nil)
		near("LogPredictive(μ = log y, v = 0)", lp[0], stirling, 1e-12*math.Abs(stirling))
		// Away from the mode: log Poisson(y; y·e^d) = stirling − y·(e^d − 1 − d).
		d := (ly + 3e-6) - ly // exact: the offset the rounded mean carries
		want := stirling - y*(d*d/2+d*d*d/6+d*d*d*d/24)
		p.LogPredictive(lp, []float64{y}, []float64{ly + 3e-6}, []float64{0}, nil)
		near("LogPredictive(μ = log y + 3e-6, v = 0)", lp[0], want, 1e-10*math.Abs(want))
		// Expected log-likelihood at v > 0.
		v := 0.02
		got = p.ExpectedLogLik([]float64{y}, []float64{ly}, []float64{v}, nil, nil, nil, nil)
		near("ExpectedLogLik(μ = log y, v = 0.02)", got, stirling-y*math.Expm1(v/2), 1e-12*y*v)
		// Log predictive of a wide posterior.
		for _, c := range []struct{ dmu, v float64 }{{0, 0.01}, {0.05, 0.01}, {-0.3, 0.5}} {
			want := -0.5*math.Log(2*math.Pi*c.v) - c.dmu*c.dmu/(2*c.v) - ly
			p.LogPredictive(lp, []float64{y}, []float64{ly + c.dmu}, []float64{c.v}, nil)
			near(fmt.Sprintf("LogPredictive(μ = log y %+g, v = %g)", c.dmu, c.v), lp[0], want, 1e-9+10/(y*c.v))
		}
	}
}

// TestPoissonLogPredictiveOrdinary checks the mode-centred quadrature
// against numerical integration over ordinary counts, means and variances
// (where Newton's method reaches the mode exactly and must stop there),
// and that a NaN variance gives NaN rather than a value.
func TestPoissonLogPredictiveOrdinary(t *testing.T) {
	p, err := NewPoisson()
	if err != nil {
		t.Fatal(err)
	}
	for _, y := range []float64{0, 1, 3, 10, 50} {
		for _, mu := range []float64{-4, -1, 0, 0.3, 2, 5} {
			for _, v := range []float64{1e-3, 0.05, 0.5, 2, 5} {
				if math.Abs(math.Log(y+0.5)-mu) > 8*math.Sqrt(v) {
					// The integrand's mass lies beyond the ±14 standard
					// deviations that integrate covers.
					continue
				}
				lg, _ := math.Lgamma(y + 1)
				want := math.Log(integrate(func(f float64) float64 { return math.Exp(y*f - math.Exp(f) - lg) }, mu, v))
				lp := []float64{0}
				p.LogPredictive(lp, []float64{y}, []float64{mu}, []float64{v}, nil)
				if math.Abs(lp[0]-want) > 1e-6*(1+math.Abs(want)) {
					t.Errorf("LogPredictive(y=%g mu=%g v=%g) = %.15g, numerical %.15g", y, mu, v, lp[0], want)
				}
			}
		}
	}
	lp := []float64{0}
	p.LogPredictive(lp, []float64{2}, []float64{0.3}, []float64{math.NaN()}, nil)
	if !math.IsNaN(lp[0]) {
		t.Errorf("LogPredictive with a NaN variance = %v, want NaN", lp[0])
	}
}
