package likelihood

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSoftmax(t *testing.T) {
	const C, n = 3, 6
	rng := rand.New(rand.NewPCG(9, 10))
	y, mu, v := make([]float64, n), make([]float64, n*C), make([]float64, n*C)
	for i := range y {
		y[i] = float64(rng.IntN(C))
		for c := 0; c < C; c++ {
			mu[i*C+c] = rng.NormFloat64()
			v[i*C+c] = 0.1 + rng.ExpFloat64()
		}
	}
	// Reference: the expectation over the first class by a 1-D integral
	// is not available in closed form for C = 3, so use a large
	// independent Monte Carlo run and its standard error.
	const S = 4000
	s, err := NewSoftmax(C, Samples(S))
	if err != nil {
		t.Fatal(err)
	}
	for i := range y {
		yc := int(y[i])
		m, vv := mu[i*C:(i+1)*C], v[i*C:(i+1)*C]
		var sum, sum2 float64
		const R = 50000
		f := make([]float64, C)
		for r := 0; r < R; r++ {
			mx := math.Inf(-1)
			for c := range f {
				f[c] = m[c] + math.Sqrt(vv[c])*rng.NormFloat64()
				mx = math.Max(mx, f[c])
			}
			z := 0.0
			for c := range f {
				z += math.Exp(f[c] - mx)
			}
			l := f[yc] - mx - math.Log(z)
			sum += l
			sum2 += l * l
		}
		ref := sum / R
		sdv := math.Sqrt(sum2/R - ref*ref)
		got := s.ExpectedLogLik(y[i:i+1], m, vv, nil, nil, nil, rand.New(rand.NewPCG(uint64(i), 1)))
		// Combined standard error of the two estimates.
		se := sdv * math.Sqrt(1.0/R+1.0/S)
		if math.Abs(got-ref) > 5*se {
			t.Errorf("point %d: ExpectedLogLik = %g, reference %g ± %g", i, got, ref, se)
		}
	}
	// Two classes reduce to a logistic likelihood of f0 − f1, whose
	// expectation is a 1-D integral.
	s2, _ := NewSoftmax(2, Samples(S))
	m2, v2 := []float64{0.7, -0.4}, []float64{0.9, 0.5}
	ref := integrate(func(d float64) float64 { return -math.Log1p(math.Exp(-d)) }, m2[0]-m2[1], v2[0]+v2[1])
	var sum, sum2 float64
	const R = 20
	for r := 0; r < R; r++ {
		e := s2.ExpectedLogLik([]float64{0}, m2, v2, nil, nil, nil, rand.New(rand.NewPCG(uint64(r), 2)))
		sum += e
		sum2 += e * e
	}
	mean := sum / R
	se := math.Sqrt((sum2/R - mean*mean) / R)
	if math.Abs(mean-ref) > 5*se+1e-12 {
		t.Errorf("2-class ExpectedLogLik %g ± %g, logistic integral %g", mean, se, ref)
	}

	small, _ := NewSoftmax(C, Samples(7))
	checkGrad(t, "softmax", small, y, mu, v, 1e-6)

	// v = 0: Price-theorem gradient, finite.
	dm, dv := make([]float64, C), make([]float64, C)
	e := small.ExpectedLogLik([]float64{1}, []float64{0.1, 0.2, 0.3}, []float64{0, 0.4, 0}, dm, dv, nil, nil)
	for _, g := range append(append([]float64{e}, dm...), dv...) {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			t.Errorf("zero variance: non-finite %g", g)
		}
	}
	// Deterministic with a nil rng.
	if a, b := small.ExpectedLogLik(y, mu, v, nil, nil, nil, nil), small.ExpectedLogLik(y, mu, v, nil, nil, nil, nil); a != b {
		t.Errorf("nil rng not deterministic: %g vs %g", a, b)
	}

	// Predictions: probabilities sum to one; log predictive matches them
	// under common random numbers.
	probs := make([]float64, n*C)
	s.PredictY(probs, nil, mu, v, rand.New(rand.NewPCG(1, 1)))
	lp := make([]float64, n)
	s.LogPredictive(lp, y, mu, v, rand.New(rand.NewPCG(1, 1)))
	for i := 0; i < n; i++ {
		tot := 0.0
		for c := 0; c < C; c++ {
			tot += probs[i*C+c]
		}
		if math.Abs(tot-1) > 1e-12 {
			t.Errorf("point %d: probabilities sum to %g", i, tot)
		}
		if want := math.Log(probs[i*C+int(y[i])]); math.Abs(lp[i]-want) > 1e-12 {
			t.Errorf("point %d: LogPredictive %g, log PredictY %g", i, lp[i], want)
		}
	}
}

func TestSoftmaxErrors(t *testing.T) {
	if _, err := NewSoftmax(1); err == nil {
		t.Error("1 class accepted")
	}
	// A model could not hold more classes (gp.NewSVGP used to panic in
	// makeslice, or try to allocate for a long time).
	for _, c := range []int{MaxClasses + 1, 1 << 31, 1 << 50, math.MaxInt} {
		if _, err := NewSoftmax(c); err == nil {
			t.Errorf("%d classes accepted", c)
		}
	}
	if l, err := NewSoftmax(1 << 16); err != nil || l.NumLatent() != 1<<16 {
		t.Errorf("2¹⁶ classes: %v", err)
	}
	if _, err := NewSoftmax(3, Samples(0)); err == nil {
		t.Error("0 samples accepted")
	}
	if _, err := NewSoftmax(3, Epsilon(0.1)); err == nil {
		t.Error("Epsilon accepted by Softmax")
	}
	s, _ := NewSoftmax(3, Samples(5))
	checkNoPanicBadLabels(t, "softmax", s, s.Validate, []float64{-1, 3, 0.5, math.NaN(), math.Inf(-1)})
}
