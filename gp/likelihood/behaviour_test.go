package likelihood_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// fitSVGP trains a whitened SVGP with an RBF kernel and m inducing points
// spread over [lo, hi] by full-batch Adam.
func fitSVGP(t *testing.T, lik gp.Likelihood, x *mat.Dense, y []float64, m int, lo, hi float64, epochs int) *gp.Model {
	t.Helper()
	z := mat.NewDense(m, 1, nil)
	for i := 0; i < m; i++ {
		z.Set(i, 0, lo+(hi-lo)*float64(i)/float64(m-1))
	}
	k, err := kernel.NewRBF(1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	model, err := gp.NewSVGP(k, lik, z, gp.WithWhitening(true), gp.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	cfg := train.Config{Epochs: epochs, Schedule: train.Constant(0.03), Seed: 1}
	if _, err := train.Fit(context.Background(), model, x, y, cfg); err != nil {
		t.Fatal(err)
	}
	return model
}

// TestStudentTOutliers: on a clean sine with 5% gross outliers the
// Student-t model's posterior mean is much closer to the clean function
// than the Gaussian model's.
func TestStudentTOutliers(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two models")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 200
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		xi := 6 * rng.Float64()
		x.Set(i, 0, xi)
		y[i] = math.Sin(xi) + 0.1*rng.NormFloat64()
		if i%20 == 0 { // 5% gross outliers, 5 to 10 away, one-sided
			y[i] += 5 + 5*rng.Float64()
		}
	}
	st, err := likelihood.NewStudentT(0.3, 4)
	if err != nil {
		t.Fatal(err)
	}
	g, err := likelihood.NewGaussian(0.1)
	if err != nil {
		t.Fatal(err)
	}
	rmse := map[string]float64{}
	for name, lik := range map[string]gp.Likelihood{"studentt": st, "gaussian": g} {
		model := fitSVGP(t, lik, x, y, 15, 0, 6, 1500)
		p, err := model.Predictor(0)
		if err != nil {
			t.Fatal(err)
		}
		grid := mat.NewDense(101, 1, nil)
		for i := 0; i <= 100; i++ {
			grid.Set(i, 0, 0.06*float64(i))
		}
		fm, _, err := p.PredictF(grid)
		if err != nil {
			t.Fatal(err)
		}
		se := 0.0
		for i := 0; i <= 100; i++ {
			r := fm.At(i, 0) - math.Sin(grid.At(i, 0))
			se += r * r
		}
		rmse[name] = math.Sqrt(se / 101)
	}
	t.Logf("RMSE to the clean sine: Student-t %.4f (σ %.3f, ν %.2f), Gaussian %.4f", rmse["studentt"], st.Scale(), st.DegreesOfFreedom(), rmse["gaussian"])
	if !(rmse["studentt"] < 0.5*rmse["gaussian"]) || !(rmse["studentt"] < 0.1) {
		t.Errorf("Student-t RMSE %.4f, Gaussian %.4f: want the Student-t's below 0.1 and half the Gaussian's", rmse["studentt"], rmse["gaussian"])
	}
}

// TestHeteroscedasticGrowingNoise: on data whose noise standard deviation
// grows with x from 0.05 to 1.55, the heteroscedastic model has a better
// test log-likelihood than the homoscedastic Gaussian.
func TestHeteroscedasticGrowingNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two models")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	sample := func(n int) (*mat.Dense, []float64) {
		x := mat.NewDense(n, 1, nil)
		y := make([]float64, n)
		for i := 0; i < n; i++ {
			xi := 5 * rng.Float64()
			x.Set(i, 0, xi)
			y[i] = math.Sin(xi) + (0.05+0.3*xi)*rng.NormFloat64()
		}
		return x, y
	}
	xTrain, yTrain := sample(300)
	xTest, yTest := sample(300)
	h, err := likelihood.NewHeteroscedastic()
	if err != nil {
		t.Fatal(err)
	}
	g, err := likelihood.NewGaussian(0.3)
	if err != nil {
		t.Fatal(err)
	}
	ll := map[string]float64{}
	for name, lik := range map[string]gp.Likelihood{"heteroscedastic": h, "gaussian": g} {
		model := fitSVGP(t, lik, xTrain, yTrain, 15, 0, 5, 1500)
		p, err := model.Predictor(0)
		if err != nil {
			t.Fatal(err)
		}
		lp, err := p.LogPredictive(xTest, yTest)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range lp {
			ll[name] += v / float64(len(lp))
		}
	}
	t.Logf("test log-likelihood: heteroscedastic %.4f, Gaussian %.4f", ll["heteroscedastic"], ll["gaussian"])
	if !(ll["heteroscedastic"] > ll["gaussian"]+0.1) {
		t.Errorf("heteroscedastic %.4f, Gaussian %.4f: want the heteroscedastic model better by 0.1 nat", ll["heteroscedastic"], ll["gaussian"])
	}
}
