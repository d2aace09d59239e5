package likelihood_test

import (
	"errors"
	"math"
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

// TestValidateLabelError checks that Validate reports the first bad label
// of each discrete likelihood as a *LabelError with its index, value and
// rule, which the command line and the Beam pipeline turn into file
// positions.
func TestValidateLabelError(t *testing.T) {
	b, _ := likelihood.NewBernoulli()
	p, _ := likelihood.NewPoisson()
	r, _ := likelihood.NewRobustMax(3)
	s, _ := likelihood.NewSoftmax(3)
	for _, c := range []struct {
		lik  interface{ Validate([]float64) error }
		y    []float64
		idx  int
		rule string
	}{
		{b, []float64{0, 1, 2, -1}, 2, "Bernoulli labels must be 0 or 1"},
		{b, []float64{1, math.NaN()}, 1, "Bernoulli labels must be 0 or 1"},
		{p, []float64{0, 3, 2.5}, 2, "Poisson targets must be non-negative integers"},
		{p, []float64{-1}, 0, "Poisson targets must be non-negative integers"},
		{r, []float64{0, 2, 3}, 2, "class labels must be integers in [0, 3)"},
		{s, []float64{1.5}, 0, "class labels must be integers in [0, 3)"},
	} {
		err := c.lik.Validate(c.y)
		var le *likelihood.LabelError
		if !errors.As(err, &le) {
			t.Errorf("%T.Validate(%v) = %v, want a *LabelError", c.lik, c.y, err)
			continue
		}
		v := c.y[c.idx]
		if le.Index != c.idx || math.Float64bits(le.Value) != math.Float64bits(v) || le.Rule != c.rule {
			t.Errorf("%T.Validate(%v) = %+v, want index %d, value %g, rule %q", c.lik, c.y, *le, c.idx, v, c.rule)
		}
		if want := "likelihood: label"; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), c.rule) {
			t.Errorf("error %q does not start with %q and give the rule", err, want)
		}
	}
}
