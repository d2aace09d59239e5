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
