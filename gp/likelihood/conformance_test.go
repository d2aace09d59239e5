package likelihood_test

import (
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// Every likelihood satisfies gp.Likelihood.
var (
	_ gp.Likelihood = (*likelihood.Gaussian)(nil)
	_ gp.Likelihood = (*likelihood.Bernoulli)(nil)
	_ gp.Likelihood = (*likelihood.Poisson)(nil)
	_ gp.Likelihood = (*likelihood.RobustMax)(nil)
	_ gp.Likelihood = (*likelihood.Softmax)(nil)
)

// Every likelihood can copy itself for gp.Predictor's snapshots.
var (
	_ gp.Cloner = (*likelihood.Gaussian)(nil)
	_ gp.Cloner = (*likelihood.Bernoulli)(nil)
	_ gp.Cloner = (*likelihood.Poisson)(nil)
	_ gp.Cloner = (*likelihood.RobustMax)(nil)
	_ gp.Cloner = (*likelihood.Softmax)(nil)
)
