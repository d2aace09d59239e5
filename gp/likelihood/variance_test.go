package likelihood

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestTinyAndNegativeVariance evaluates every method of every likelihood
// at marginal variances that are zero, rounded slightly below zero (as a
// GP's can be) or tiny and positive (down to subnormal). All results must
// be finite and agree with those at v = 0: the values and the gradients
// (to within O(√v) for Monte Carlo, O(v) otherwise) with their v → 0
// limits.
func TestTinyAndNegativeVariance(t *testing.T) {
	gauss, _ := NewGaussian(0.1, NoiseFloor(0))
	bern, _ := NewBernoulli()
	pois, _ := NewPoisson()
	rmax, _ := NewRobustMax(3)
	smax, _ := NewSoftmax(3, Samples(20))
	stud, _ := NewStudentT(0.4, 3)
	het, _ := NewHeteroscedastic()
	cases := []struct {
		name string
		l    lik
		y    []float64
		mu   []float64
		// tinyGrad is false for Softmax, whose variance gradient at a
		// tiny positive v is exactly the derivative of its Monte Carlo
		// estimate through √v, which grows as 1/√v.
		tinyGrad bool
		// density: LogPredictive is a log density, not a log probability
		// (not bounded by 0).
		density bool
		// others, if set, holds fixed variances for the latent functions
		// where it is positive (the labelled ones take v).
		others []float64
	}{
		{"gaussian", gauss, []float64{0.4, -1}, []float64{0.3, 2}, true, true, nil},
		{"bernoulli", bern, []float64{1, 0}, []float64{0.3, -3}, true, false, nil},
		{"poisson", pois, []float64{2, 0}, []float64{0.3, -3}, true, false, nil},
		{"robustmax", rmax, []float64{0, 2}, []float64{0.3, 0.1, -0.2, -1, 0.5, 2}, true, false, nil},
		{"robustmax/others", rmax, []float64{0, 2}, []float64{0.3, 0.1, -0.2, -1, 0.5, 2}, true, false, []float64{0, 0.5, 0.4, 0.3, 0.6, 0}},
		{"softmax", smax, []float64{0, 2}, []float64{0.3, 0.1, -0.2, -1, 0.5, 2}, false, false, nil},
		{"studentt", stud, []float64{0.4, -1}, []float64{0.3, 2}, true, true, nil},
		{"heteroscedastic", het, []float64{0.4, -1}, []float64{0.3, -1, 2, 0.5}, true, true, nil},
	}
	type result struct {
		ell            float64
		dmu, dvar, lp  []float64
		mean, variance []float64
	}
	eval := func(l lik, y, mu, others []float64, v float64) result {
		n, L := len(y), l.NumLatent()
		vr := make([]float64, len(mu))
		for i := range vr {
			vr[i] = v
			if others != nil && others[i] > 0 {
				vr[i] = others[i]
			}
		}
		r := result{dmu: make([]float64, n*L), dvar: make([]float64, n*L), lp: make([]float64, n)}
		r.ell = l.ExpectedLogLik(y, mu, vr, r.dmu, r.dvar, make([]float64, l.NumParams()), rand.New(rand.NewPCG(1, 2)))
		l.LogPredictive(r.lp, y, mu, vr, rand.New(rand.NewPCG(1, 2)))
		out := 1
		if L > 1 {
			out = L
		}
		r.mean, r.variance = make([]float64, n*out), make([]float64, n*out)
		l.PredictY(r.mean, r.variance, mu, vr, rand.New(rand.NewPCG(1, 2)))
		return r
	}
	near := func(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }
	for _, c := range cases {
		ref := eval(c.l, c.y, c.mu, c.others, 0)
		for _, v := range []float64{-1e-17, 5e-324, 1e-300, 1e-40, 1e-20} {
			name := fmt.Sprintf("%s v=%g", c.name, v)
			r := eval(c.l, c.y, c.mu, c.others, v)
			all := append(append(append(append(append([]float64{r.ell}, r.dmu...), r.dvar...), r.lp...), r.mean...), r.variance...)
			for _, x := range all {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("%s: non-finite result: ELL %g dmu %v dvar %v LogPredictive %v PredictY %v %v",
						name, r.ell, r.dmu, r.dvar, r.lp, r.mean, r.variance)
				}
			}
			if !near(r.ell, ref.ell, 1e-9) {
				t.Errorf("%s: ExpectedLogLik %.17g, at v = 0 %.17g", name, r.ell, ref.ell)
			}
			for i := range r.dmu {
				if !near(r.dmu[i], ref.dmu[i], 1e-9) {
					t.Errorf("%s: dmu[%d] = %.17g, at v = 0 %.17g", name, i, r.dmu[i], ref.dmu[i])
				}
				if (c.tinyGrad || v < 0) && !near(r.dvar[i], ref.dvar[i], 1e-9) {
					t.Errorf("%s: dvar[%d] = %.17g, at v = 0 %.17g", name, i, r.dvar[i], ref.dvar[i])
				}
			}
			for i := range r.lp {
				if !near(r.lp[i], ref.lp[i], 1e-9) || (!c.density && r.lp[i] > 0) {
					t.Errorf("%s: LogPredictive[%d] = %.17g, at v = 0 %.17g", name, i, r.lp[i], ref.lp[i])
				}
			}
			for i := range r.mean {
				if !near(r.mean[i], ref.mean[i], 1e-9) || !near(r.variance[i], ref.variance[i], 1e-9) || r.variance[i] < 0 {
					t.Errorf("%s: PredictY[%d] = %g, %g; at v = 0 %g, %g", name, i, r.mean[i], r.variance[i], ref.mean[i], ref.variance[i])
				}
			}
		}
	}
	// A negative variance is taken as 0 even where it exceeds the noise.
	tiny, err := NewGaussian(1e-20, NoiseFloor(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{0, -1e-17} {
		lp, mean, vy := []float64{0}, []float64{0}, []float64{0}
		tiny.LogPredictive(lp, []float64{0.3}, []float64{0.3}, []float64{v}, nil)
		tiny.PredictY(mean, vy, []float64{0.3}, []float64{v}, nil)
		if want := -0.5 * math.Log(2*math.Pi*1e-20); !near(lp[0], want, 1e-12) || vy[0] != tiny.NoiseVariance() {
			t.Errorf("gaussian, noise 1e-20, v=%g: LogPredictive %g, want %g; PredictY variance %g, want %g",
				v, lp[0], want, vy[0], tiny.NoiseVariance())
		}
	}
}
