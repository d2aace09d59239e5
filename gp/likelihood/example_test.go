package likelihood_test

import (
	"fmt"
	"math"

	"github.com/solvegp/solvegp/gp/likelihood"
)

func ExampleGaussian_ExpectedLogLik() {
	g, err := likelihood.NewGaussian(0.1)
	if err != nil {
		fmt.Println(err)
		return
	}
	y := []float64{0.5, -1}
	mu := []float64{0.4, -0.8}
	v := []float64{0.05, 0.2}
	dmu := make([]float64, 2)
	dvar := make([]float64, 2)
	e := g.ExpectedLogLik(y, mu, v, dmu, dvar, nil, nil)
	fmt.Printf("%.4f %.4f %.4f\n", e, dmu[0], dvar[1])
	// Output:
	// -1.0353 1.0000 -5.0000
}

func ExampleRobustMax_PredictY() {
	r, err := likelihood.NewRobustMax(3)
	if err != nil {
		fmt.Println(err)
		return
	}
	// One point, three latent functions (point-major layout).
	mu := []float64{2, 0, -1}
	fvar := []float64{0.1, 0.1, 0.1}
	probs := make([]float64, 3)
	r.PredictY(probs, nil, mu, fvar, nil)
	fmt.Printf("%.3f\n", probs)
	// Output:
	// [0.999 0.001 0.001]
}

// A Student-t likelihood's expected log-likelihood under q(f) = N(μ, v),
// and the 5% and 95% quantiles of its predictive distribution.
func ExampleStudentT_PredictiveQuantile() {
	s, err := likelihood.NewStudentT(0.5, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	e := s.ExpectedLogLik([]float64{3}, []float64{0}, []float64{0.1}, nil, nil, nil, nil)
	lo, _ := s.PredictiveQuantile(0.05, 0, 0.1)
	hi, _ := s.PredictiveQuantile(0.95, 0, 0.1)
	fmt.Printf("E[log p(y=3|f)] = %.3f, 90%% interval [%.3f, %.3f]\n", e, lo, hi)
	// Output:
	// E[log p(y=3|f)] = -6.024, 90% interval [-1.187, 1.187]
}

// The heteroscedastic likelihood takes two latent functions per point (the
// mean and the log noise variance, point-major) and predicts y with the
// noise that the second implies.
func ExampleHeteroscedastic_PredictY() {
	h, err := likelihood.NewHeteroscedastic()
	if err != nil {
		fmt.Println(err)
		return
	}
	mu := []float64{1.5, math.Log(0.25)} // f1: mean 1.5; f2: log noise variance log 0.25
	fvar := []float64{0.01, 0.04}
	mean, variance := make([]float64, 2), make([]float64, 2)
	h.PredictY(mean, variance, mu, fvar, nil)
	fmt.Printf("y: mean %.3f, variance %.4f; noise variance %.4f\n", mean[0], variance[0], mean[1])
	q, _ := h.PredictiveQuantile(0.975, mu[0], fvar[0], mu[1], fvar[1])
	fmt.Printf("97.5%% quantile %.3f\n", q)
	// Output:
	// y: mean 1.500, variance 0.2651; noise variance 0.2551
	// 97.5% quantile 2.513
}
