package likelihood

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestGaussianExpectedLogLik(t *testing.T) {
	g, err := NewGaussian(0.3)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(g.NoiseVariance()-0.3) > 1e-15 {
		t.Fatalf("noise %g", g.NoiseVariance())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 20
	y, mu, v := make([]float64, n), make([]float64, n), make([]float64, n)
	want := 0.0
	for i := range y {
		y[i] = rng.NormFloat64()
		mu[i] = rng.NormFloat64()
		v[i] = rng.ExpFloat64()
		yi := y[i]
		want += integrate(func(f float64) float64 {
			return -0.5*math.Log(2*math.Pi*0.3) - 0.5*(yi-f)*(yi-f)/0.3
		}, mu[i], v[i])
	}
	got := g.ExpectedLogLik(y, mu, v, nil, nil, nil, nil)
	if math.Abs(got-want) > 1e-10*math.Abs(want) {
		t.Errorf("ExpectedLogLik = %.15g, numerical integral %.15g", got, want)
	}
	checkGrad(t, "gaussian", g, y, mu, v, 1e-7)

	lp := make([]float64, n)
	g.LogPredictive(lp, y, mu, v, nil)
	for i := range y {
		yi := y[i]
		w := math.Log(integrate(func(f float64) float64 {
			return math.Exp(-0.5*(yi-f)*(yi-f)/0.3) / math.Sqrt(2*math.Pi*0.3)
		}, mu[i], v[i]))
		if math.Abs(lp[i]-w) > 1e-10 {
			t.Errorf("LogPredictive[%d] = %g, numerical %g", i, lp[i], w)
		}
	}
	mean, vy := make([]float64, n), make([]float64, n)
	g.PredictY(mean, vy, mu, v, nil)
	for i := range mean {
		if mean[i] != mu[i] || math.Abs(vy[i]-(v[i]+0.3)) > 1e-15 {
			t.Errorf("PredictY[%d] = %g, %g", i, mean[i], vy[i])
		}
	}
}

func TestGaussianFloorAndErrors(t *testing.T) {
	g, err := NewGaussian(1, NoiseFloor(1e-4))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetParams([]float64{-1e4}); err != nil {
		t.Fatal(err)
	}
	if g.NoiseVariance() != 1e-4 {
		t.Errorf("noise at u = -1e4 is %g, want the floor 1e-4", g.NoiseVariance())
	}
	for _, bad := range [][]float64{{math.NaN()}, {math.Inf(1)}, {}, {1, 2}} {
		if err := g.SetParams(bad); err == nil {
			t.Errorf("SetParams(%v) accepted", bad)
		}
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1), 1e-7} {
		if _, err := NewGaussian(bad); err == nil {
			t.Errorf("NewGaussian(%g) accepted", bad)
		}
	}
	if _, err := NewGaussian(1, NoiseFloor(-1)); err == nil {
		t.Error("negative floor accepted")
	}
	checkNoPanicBadLabels(t, "gaussian", g, g.Validate, []float64{math.NaN(), math.Inf(1)})
	if err := g.Validate([]float64{1, -3.5}); err != nil {
		t.Error(err)
	}
}

// TestGaussianTighterTerm checks TighterTerm against its definition, the
// maximum over λ of −λd/(2σ²) − ½(λ − 1 − log λ) found by a fine grid, and
// its gradients against central finite differences.
func TestGaussianTighterTerm(t *testing.T) {
	g, err := NewGaussian(0.3)
	if err != nil {
		t.Fatal(err)
	}
	d := []float64{0, 0.01, 0.5, 2, 40}
	dd := make([]float64, len(d))
	dp := []float64{0}
	got := g.TighterTerm(d, dd, dp)
	var want float64
	for _, v := range d {
		best := math.Inf(-1)
		for i := 1; i <= 200000; i++ {
			lam := float64(i) / 200000
			best = math.Max(best, -lam*v/(2*0.3)-0.5*(lam-1-math.Log(lam)))
		}
		want += best
	}
	if math.Abs(got-want) > 1e-8 {
		t.Errorf("TighterTerm = %.12g, grid maximum %.12g", got, want)
	}
	const h = 1e-6
	for i := range d {
		dp1, dm1 := append([]float64(nil), d...), append([]float64(nil), d...)
		dp1[i] += h
		dm1[i] -= h
		fd := (g.TighterTerm(dp1, nil, nil) - g.TighterTerm(dm1, nil, nil)) / (2 * h)
		if math.Abs(fd-dd[i]) > 1e-7 {
			t.Errorf("∂/∂d[%d] = %g, finite difference %g", i, dd[i], fd)
		}
	}
	var u [1]float64
	g.Params(u[:])
	eval := func(v float64) float64 {
		c, _ := NewGaussian(0.3)
		if err := c.SetParams([]float64{v}); err != nil {
			t.Fatal(err)
		}
		return c.TighterTerm(d, nil, nil)
	}
	if fd := (eval(u[0]+h) - eval(u[0]-h)) / (2 * h); math.Abs(fd-dp[0]) > 1e-6 {
		t.Errorf("∂/∂u = %g, finite difference %g", dp[0], fd)
	}
	if v := g.TighterTerm([]float64{-0.4}, nil, nil); !math.IsNaN(v) {
		t.Errorf("residual below −σ²: %g, want NaN", v)
	}
}
