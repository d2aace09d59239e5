package likelihood

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMultiGaussianGradients checks dμ, dv and the gradients with respect
// to the noise parameters and W of ExpectedLogLik against central finite
// differences, with missing targets, for independent outputs and an LMC.
func TestMultiGaussianGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, P, L = 7, 3, 2
	w := []float64{0.8, -0.3, 0.2, 1.1, -0.6, 0.5}
	lmc, err := NewLMC(L, w, []float64{0.3, 0.5, 0.2})
	if err != nil {
		t.Fatal(err)
	}
	ind, err := NewIndependentGaussian([]float64{0.3, 0.5, 0.2})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*MultiGaussian{lmc, ind} {
		l := g.NumLatent()
		y := make([]float64, n*P)
		for i := range y {
			y[i] = rng.NormFloat64()
			if i%4 == 1 {
				y[i] = math.NaN()
			}
		}
		mu := make([]float64, n*l)
		vr := make([]float64, n*l)
		for i := range mu {
			mu[i], vr[i] = rng.NormFloat64(), 0.1+rng.Float64()
		}
		dmu := make([]float64, n*l)
		dvar := make([]float64, n*l)
		dp := make([]float64, g.NumParams())
		f0 := g.ExpectedLogLik(y, mu, vr, dmu, dvar, dp, nil)
		if math.IsNaN(f0) || math.IsInf(f0, 0) {
			t.Fatalf("bound %v", f0)
		}
		fd := func(v []float64, i int) float64 {
			const h = 1e-6
			old := v[i]
			v[i] = old + h
			fp := g.ExpectedLogLik(y, mu, vr, nil, nil, nil, nil)
			v[i] = old - h
			fm := g.ExpectedLogLik(y, mu, vr, nil, nil, nil, nil)
			v[i] = old
			return (fp - fm) / (2 * h)
		}
		for i := range mu {
			if d := fd(mu, i); math.Abs(d-dmu[i]) > 1e-6 {
				t.Errorf("lmc=%v dmu[%d] = %g, finite difference %g", g.IsLMC(), i, dmu[i], d)
			}
			if d := fd(vr, i); math.Abs(d-dvar[i]) > 1e-6 {
				t.Errorf("lmc=%v dvar[%d] = %g, finite difference %g", g.IsLMC(), i, dvar[i], d)
			}
		}
		th := make([]float64, g.NumParams())
		g.Params(th)
		for i := range th {
			const h = 1e-6
			old := th[i]
			th[i] = old + h
			_ = g.SetParams(th)
			fp := g.ExpectedLogLik(y, mu, vr, nil, nil, nil, nil)
			th[i] = old - h
			_ = g.SetParams(th)
			fm := g.ExpectedLogLik(y, mu, vr, nil, nil, nil, nil)
			th[i] = old
			_ = g.SetParams(th)
			if d := (fp - fm) / (2 * h); math.Abs(d-dp[i]) > 1e-5*math.Max(1, math.Abs(d)) {
				t.Errorf("lmc=%v dparams[%d] = %g, finite difference %g", g.IsLMC(), i, dp[i], d)
			}
		}
	}
}

// TestMultiGaussianPredictive checks PredictY and LogPredictive against the
// single-output Gaussian on the marginals Σ_l W_pl·μ_l, Σ_l W_pl²·v_l.
func TestMultiGaussianPredictive(t *testing.T) {
	w := []float64{2, -1, 0.5, 3}
	g, err := NewLMC(2, w, []float64{0.4, 0.1})
	if err != nil {
		t.Fatal(err)
	}
	mu := []float64{0.3, -0.7}
	vr := []float64{0.2, 0.5}
	mean := make([]float64, 2)
	variance := make([]float64, 2)
	g.PredictY(mean, variance, mu, vr, nil)
	wantM := []float64{2*0.3 + 0.7, 0.5*0.3 - 3*0.7}
	wantV := []float64{4*0.2 + 0.5 + 0.4, 0.25*0.2 + 9*0.5 + 0.1}
	for p := range mean {
		if math.Abs(mean[p]-wantM[p]) > 1e-14 || math.Abs(variance[p]-wantV[p]) > 1e-14 {
			t.Errorf("output %d: %g, %g, want %g, %g", p, mean[p], variance[p], wantM[p], wantV[p])
		}
	}
	y := []float64{1.2, math.NaN()}
	dst := make([]float64, 1)
	g.LogPredictive(dst, y, mu, vr, nil)
	r := 1.2 - wantM[0]
	if want := -0.5*math.Log(2*math.Pi*wantV[0]) - 0.5*r*r/wantV[0]; math.Abs(dst[0]-want) > 1e-14 {
		t.Errorf("log predictive %g, want %g", dst[0], want)
	}
}

// TestMultiGaussianErrors checks the constructors and Validate.
func TestMultiGaussianErrors(t *testing.T) {
	if _, err := NewIndependentGaussian(nil); err == nil {
		t.Error("no outputs accepted")
	}
	if _, err := NewIndependentGaussian([]float64{0.1, -1}); err == nil {
		t.Error("negative noise accepted")
	}
	if _, err := NewLMC(2, []float64{1, 2, 3}, []float64{0.1, 0.1}); err == nil {
		t.Error("mixing matrix of the wrong size accepted")
	}
	if _, err := NewLMC(1, []float64{1, math.NaN()}, []float64{0.1, 0.1}); err == nil {
		t.Error("NaN mixing matrix accepted")
	}
	if _, err := NewLMC(0, []float64{}, []float64{0.1}); err == nil {
		t.Error("no latent functions accepted")
	}
	g, _ := NewIndependentGaussian([]float64{0.1, 0.2})
	if err := g.Validate([]float64{1, math.NaN(), 2}); err == nil {
		t.Error("odd number of targets accepted")
	}
	if err := g.Validate([]float64{1, math.Inf(1)}); err == nil {
		t.Error("infinite target accepted")
	}
	if err := g.Validate([]float64{1, math.NaN()}); err != nil {
		t.Errorf("missing target refused: %v", err)
	}
	if err := (&MultiGaussian{}).Validate(nil); err == nil {
		t.Error("zero value accepted")
	}
	c := g.Clone().(*MultiGaussian)
	if err := c.SetParams([]float64{3, 3}); err != nil {
		t.Fatal(err)
	}
	if g.NoiseVariances()[0] == c.NoiseVariances()[0] {
		t.Error("clone shares its parameters")
	}
}
