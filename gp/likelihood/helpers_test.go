package likelihood

import (
	"math"
	"math/rand/v2"
	"testing"
)

// lik is the method set of gp.Likelihood (not imported to keep the test
// free of package gp).
type lik interface {
	NumLatent() int
	NumParams() int
	Params(dst []float64)
	SetParams(src []float64) error
	ExpectedLogLik(y, mu, variance []float64, dmu, dvar, dparams []float64, rng *rand.Rand) float64
	LogPredictive(dst, y, mu, variance []float64, rng *rand.Rand)
	PredictY(mean, variance, mu, fvar []float64, rng *rand.Rand)
}

// integrate returns ∫ f(x) N(x; mu, v) dx by the trapezoidal rule on
// ±14 standard deviations with 6001 points, which is accurate to rounding
// for smooth integrands (the rule is spectrally accurate for them).
func integrate(f func(float64) float64, mu, v float64) float64 {
	if v == 0 {
		return f(mu)
	}
	sd := math.Sqrt(v)
	const k = 6000
	lo, hi := -14.0, 14.0
	h := (hi - lo) / k
	s := 0.0
	for i := 0; i <= k; i++ {
		t := lo + float64(i)*h
		w := math.Exp(-0.5*t*t) / math.Sqrt(2*math.Pi)
		if i == 0 || i == k {
			w *= 0.5
		}
		s += w * f(mu+sd*t)
	}
	return s * h
}

// checkGrad compares the gradients of ExpectedLogLik with central finite
// differences with respect to every mu, every variance and every parameter.
// The rng for Monte Carlo likelihoods is re-seeded identically for every
// evaluation (common random numbers).
func checkGrad(t *testing.T, name string, l lik, y, mu, variance []float64, tol float64) {
	t.Helper()
	newRng := func() *rand.Rand { return rand.New(rand.NewPCG(42, 43)) }
	dmu := make([]float64, len(mu))
	dvar := make([]float64, len(mu))
	for i := range dmu {
		// ExpectedLogLik overwrites dmu and dvar.
		dmu[i], dvar[i] = math.NaN(), math.NaN()
	}
	np := l.NumParams()
	dp := make([]float64, np)
	for i := range dp {
		dp[i] = 0.5 // gradients accumulate into dparams
	}
	f0 := l.ExpectedLogLik(y, mu, variance, dmu, dvar, dp, newRng())
	if f1 := l.ExpectedLogLik(y, mu, variance, nil, nil, nil, newRng()); f1 != f0 {
		t.Errorf("%s: value depends on whether gradients are requested: %v vs %v", name, f0, f1)
	}
	f := func() float64 { return l.ExpectedLogLik(y, mu, variance, nil, nil, nil, newRng()) }
	for i := range mu {
		h := 1e-6 * math.Max(1, math.Abs(mu[i]))
		old := mu[i]
		mu[i] = old + h
		fp := f()
		mu[i] = old - h
		fm := f()
		mu[i] = old
		want := (fp - fm) / (2 * h)
		if math.Abs(dmu[i]-want) > tol*(1+math.Abs(want)) {
			t.Errorf("%s: dmu[%d] = %.12g, finite difference %.12g", name, i, dmu[i], want)
		}
		hv := math.Min(1e-6*math.Max(variance[i], 1), 0.5*variance[i])
		oldv := variance[i]
		variance[i] = oldv + hv
		fp = f()
		variance[i] = oldv - hv
		fm = f()
		variance[i] = oldv
		want = (fp - fm) / (2 * hv)
		if math.Abs(dvar[i]-want) > tol*(1+math.Abs(want)) {
			t.Errorf("%s: dvar[%d] = %.12g, finite difference %.12g (mu %g var %g)", name, i, dvar[i], want, mu[i], variance[i])
		}
	}
	if np == 0 {
		return
	}
	u := make([]float64, np)
	l.Params(u)
	for p := 0; p < np; p++ {
		const h = 1e-6
		v := append([]float64(nil), u...)
		v[p] = u[p] + h
		if err := l.SetParams(v); err != nil {
			t.Fatal(err)
		}
		fp := f()
		v[p] = u[p] - h
		if err := l.SetParams(v); err != nil {
			t.Fatal(err)
		}
		fm := f()
		if err := l.SetParams(u); err != nil {
			t.Fatal(err)
		}
		want := (fp - fm) / (2 * h)
		if got := dp[p] - 0.5; math.Abs(got-want) > tol*(1+math.Abs(want)) {
			t.Errorf("%s: dparams[%d] = %.12g, finite difference %.12g", name, p, got, want)
		}
	}
}

// checkNoPanicBadLabels evaluates every method on labels that Validate
// rejects and checks that nothing panics and no NaN appears.
func checkNoPanicBadLabels(t *testing.T, name string, l lik, validate func([]float64) error, bad []float64) {
	t.Helper()
	L := l.NumLatent()
	for _, b := range bad {
		y := []float64{b}
		if validate(y) == nil {
			t.Errorf("%s: Validate accepted label %g", name, b)
		}
		mu := make([]float64, L)
		v := make([]float64, L)
		for i := range mu {
			mu[i] = 0.3 * float64(i)
			v[i] = 0.5
		}
		dmu := make([]float64, L)
		dvar := make([]float64, L)
		dp := make([]float64, l.NumParams())
		e := l.ExpectedLogLik(y, mu, v, dmu, dvar, dp, rand.New(rand.NewPCG(1, 1)))
		if !math.IsInf(e, -1) {
			t.Errorf("%s: label %g gives expected log-likelihood %g, want -Inf", name, b, e)
		}
		for _, g := range append(append(dmu, dvar...), dp...) {
			if g != 0 {
				t.Errorf("%s: label %g gives gradient %g, want 0", name, b, g)
			}
		}
		lp := []float64{0}
		l.LogPredictive(lp, y, mu, v, rand.New(rand.NewPCG(1, 1)))
		if !math.IsInf(lp[0], -1) {
			t.Errorf("%s: label %g gives log predictive %g, want -Inf", name, b, lp[0])
		}
	}
}
