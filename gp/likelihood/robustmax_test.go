package likelihood

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestRobustMax(t *testing.T) {
	const C, n = 4, 12
	r, err := NewRobustMax(C, Epsilon(0.01))
	if err != nil {
		t.Fatal(err)
	}
	r100, err := NewRobustMax(C, Epsilon(0.01), QuadraturePoints(100))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	y, mu, v := make([]float64, n), make([]float64, n*C), make([]float64, n*C)
	for i := range y {
		y[i] = float64(rng.IntN(C))
		for c := 0; c < C; c++ {
			mu[i*C+c] = rng.NormFloat64()
			v[i*C+c] = 0.05 + 0.8*rng.ExpFloat64()
		}
	}
	a, b := math.Log(0.99), math.Log(0.01/3)
	for i := range y {
		yc := int(y[i])
		m, s := mu[i*C:(i+1)*C], v[i*C:(i+1)*C]
		p := integrate(func(x float64) float64 {
			prod := 1.0
			for c := 0; c < C; c++ {
				if c != yc {
					prod *= normCDF((x - m[c]) / math.Sqrt(s[c]))
				}
			}
			return prod
		}, m[yc], s[yc])
		want := a*p + b*(1-p)
		// The integrand is a product of normal CDFs of widths σ_c, which
		// 20 nodes on the scale σ_y resolve only to ~1e-4 in P when σ_c ≪ σ_y
		// (as in GPflow); 100 nodes resolve it to ~1e-8.
		got := r.ExpectedLogLik(y[i:i+1], m, s, nil, nil, nil, nil)
		if math.Abs(got-want) > 2e-3*(1+math.Abs(want)) {
			t.Errorf("point %d: ExpectedLogLik = %.15g, numerical %.15g", i, got, want)
		}
		got = r100.ExpectedLogLik(y[i:i+1], m, s, nil, nil, nil, nil)
		if math.Abs(got-want) > 1e-7*(1+math.Abs(want)) {
			t.Errorf("100 points, point %d: ExpectedLogLik = %.15g, numerical %.15g", i, got, want)
		}
	}
	// Brute-force Monte Carlo check of the argmax probabilities, and
	// PredictY probabilities summing to one.
	probs := make([]float64, C)
	r100.PredictY(probs, nil, mu[:C], v[:C], nil)
	counts := make([]float64, C)
	const S = 200000
	for s := 0; s < S; s++ {
		best, arg := math.Inf(-1), 0
		for c := 0; c < C; c++ {
			f := mu[c] + math.Sqrt(v[c])*rng.NormFloat64()
			if f > best {
				best, arg = f, c
			}
		}
		counts[arg]++
	}
	total := 0.0
	for c := 0; c < C; c++ {
		pc := counts[c] / S
		want := 0.99*pc + 0.01/3*(1-pc)
		if math.Abs(probs[c]-want) > 5*math.Sqrt(pc*(1-pc)/S)+1e-4 {
			t.Errorf("class %d: PredictY %g, Monte Carlo %g", c, probs[c], want)
		}
		total += probs[c]
	}
	if math.Abs(total-1) > 1e-8 {
		t.Errorf("class probabilities sum to %g", total)
	}
	lp := make([]float64, 1)
	r100.LogPredictive(lp, y[:1], mu[:C], v[:C], nil)
	if want := math.Log(probs[int(y[0])]); math.Abs(lp[0]-want) > 1e-12 {
		t.Errorf("LogPredictive %g, log of PredictY %g", lp[0], want)
	}
	checkGrad(t, "robustmax", r, y, mu, v, 1e-6)
}

func TestRobustMaxDegenerateVariances(t *testing.T) {
	r, _ := NewRobustMax(3)
	y := []float64{1}
	mu := []float64{0.2, 0.5, -0.1}
	// Zero variance of the labelled class: gradient is the v → 0 limit.
	v := []float64{0.3, 0, 0.7}
	dm, dv := make([]float64, 3), make([]float64, 3)
	r.ExpectedLogLik(y, mu, v, dm, dv, nil, nil)
	f0 := r.ExpectedLogLik(y, mu, v, nil, nil, nil, nil)
	const h = 1e-7
	v[1] = h
	fp := r.ExpectedLogLik(y, mu, v, nil, nil, nil, nil)
	v[1] = 0
	if fd := (fp - f0) / h; math.Abs(dv[1]-fd) > 1e-5*(1+math.Abs(fd)) {
		t.Errorf("dvar at v_y = 0: %g, one-sided difference %g", dv[1], fd)
	}
	// Zero variances everywhere, and ties: finite results.
	for _, vv := range [][]float64{{0, 0, 0}, {0, 0.5, 0}} {
		for _, mm := range [][]float64{mu, {0.5, 0.5, 0.5}} {
			e := r.ExpectedLogLik(y, mm, vv, dm, dv, nil, nil)
			for _, g := range append(append([]float64{e}, dm...), dv...) {
				if math.IsNaN(g) || math.IsInf(g, 0) {
					t.Errorf("v=%v mu=%v: non-finite result %v (dm %v dv %v)", vv, mm, e, dm, dv)
				}
			}
		}
	}
}

func TestRobustMaxErrors(t *testing.T) {
	if _, err := NewRobustMax(1); err == nil {
		t.Error("1 class accepted")
	}
	// A model could not hold more classes (gp.NewSVGP used to panic in
	// makeslice, or try to allocate for a long time).
	for _, c := range []int{MaxClasses + 1, 1 << 31, 1 << 50, math.MaxInt} {
		if _, err := NewRobustMax(c); err == nil {
			t.Errorf("%d classes accepted", c)
		}
	}
	if l, err := NewRobustMax(1 << 16); err != nil || l.NumLatent() != 1<<16 {
		t.Errorf("2¹⁶ classes: %v", err)
	}
	for _, e := range []float64{0, 1, -0.1, math.NaN()} {
		if _, err := NewRobustMax(3, Epsilon(e)); err == nil {
			t.Errorf("epsilon %g accepted", e)
		}
	}
	if _, err := NewRobustMax(3, NoiseFloor(1)); err == nil {
		t.Error("NoiseFloor accepted by RobustMax")
	}
	r, _ := NewRobustMax(3)
	checkNoPanicBadLabels(t, "robustmax", r, r.Validate, []float64{-1, 3, 1.5, math.NaN(), math.Inf(1)})
}

// TestRobustMaxZeroVarianceManyClasses checks that the v → 0 limit of the
// labelled class's variance gradient, used for every zero or tiny
// variance (as at the inducing points of a near-degenerate q(u)), costs
// O(C) and not O(C³): with 1500 classes the latter takes seconds per
// point.
func TestRobustMaxZeroVarianceManyClasses(t *testing.T) {
	const C = 1500
	r, err := NewRobustMax(C)
	if err != nil {
		t.Fatal(err)
	}
	mu, v := make([]float64, C), make([]float64, C)
	for k := range v {
		mu[k], v[k] = -3, 1
	}
	mu[0], v[0] = 0, 1e-20
	dmu, dvar := make([]float64, C), make([]float64, C)
	start := processCPUTime()
	e := r.ExpectedLogLik([]float64{0}, mu, v, dmu, dvar, nil, nil)
	if d := processCPUTime() - start; d > time.Second {
		t.Errorf("one point of %d classes took %v of CPU time", C, d)
	}
	// Π(x) = F(x)^n, F(x) = Φ(x + 3), n = C − 1:
	// Π''(0) = n(n − 1)F^(n−2)F'² + nF^(n−1)F'' with F' = φ(3),
	// F'' = −3φ(3), and dvar_y = (log(1 − ε) − log(ε/n))·Π''(0)/2.
	n := float64(C - 1)
	f, f1 := normCDF(3), normPDF(3)
	pdd := n*(n-1)*math.Pow(f, n-2)*f1*f1 + n*math.Pow(f, n-1)*(-3*f1)
	want := (math.Log1p(-r.Epsilon()) - math.Log(r.Epsilon()/n)) * pdd / 2
	if math.IsNaN(e) || math.Abs(dvar[0]-want) > 1e-10*math.Abs(want) {
		t.Errorf("ExpectedLogLik %g, dvar[0] = %g, want %g", e, dvar[0], want)
	}
}
