package likelihood_test

import (
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// Every likelihood satisfies gp.Likelihood.
var (
	_ gp.Likelihood  = (*likelihood.Gaussian)(nil)
	_ gp.Likelihood  = (*likelihood.Bernoulli)(nil)
	_ gp.Likelihood  = (*likelihood.Poisson)(nil)
	_ gp.Likelihood  = (*likelihood.RobustMax)(nil)
	_ gp.Likelihood  = (*likelihood.Softmax)(nil)
	_ gp.Likelihood  = (*likelihood.StudentT)(nil)
	_ gp.Likelihood  = (*likelihood.Heteroscedastic)(nil)
	_ gp.Likelihood  = (*likelihood.MultiGaussian)(nil)
	_ gp.MultiOutput = (*likelihood.MultiGaussian)(nil)
)

// Every likelihood can copy itself for gp.Predictor's snapshots.
var (
	_ gp.Cloner = (*likelihood.Gaussian)(nil)
	_ gp.Cloner = (*likelihood.Bernoulli)(nil)
	_ gp.Cloner = (*likelihood.Poisson)(nil)
	_ gp.Cloner = (*likelihood.RobustMax)(nil)
	_ gp.Cloner = (*likelihood.Softmax)(nil)
	_ gp.Cloner = (*likelihood.StudentT)(nil)
	_ gp.Cloner = (*likelihood.Heteroscedastic)(nil)
	_ gp.Cloner = (*likelihood.MultiGaussian)(nil)
)

// TestZeroValueValidate checks that Validate, which the gp models call on
// their data, refuses the zero values of the likelihoods that need their
// constructors: a zero Bernoulli would otherwise give an expected
// log-likelihood of 0 whatever the labels, and a model would train on
// nothing without an error.
func TestZeroValueValidate(t *testing.T) {
	y := []float64{0, 1, 1}
	for name, l := range map[string]interface{ Validate([]float64) error }{
		"Gaussian": &likelihood.Gaussian{}, "Bernoulli": &likelihood.Bernoulli{}, "Poisson": &likelihood.Poisson{},
	} {
		err := l.Validate(y)
		if err == nil || !strings.Contains(err.Error(), "New"+name) {
			t.Errorf("zero %s: Validate = %v, want an error naming New%s", name, err, name)
		}
	}
	g, _ := likelihood.NewGaussian(0.1)
	b, _ := likelihood.NewBernoulli()
	p, _ := likelihood.NewPoisson()
	for _, l := range []interface{ Validate([]float64) error }{g, b, p} {
		if err := l.Validate(y); err != nil {
			t.Errorf("%T: Validate = %v", l, err)
		}
	}
}
