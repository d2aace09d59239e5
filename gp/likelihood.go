package gp

import "math/rand/v2"

// Likelihood is an observation model p(y | f) for L latent functions per
// data point (L = 1 for scalar models, L = C for C-class models).
//
// Throughout, mu and variance hold the marginals q(f_n) = N(mu, variance)
// of the latent functions, stored point-major: element n*L+l is latent l
// of point n. Labels of classification models are class indices stored as
// float64 values 0, 1, ..., C-1; Bernoulli labels are 0 or 1.
//
// Likelihood parameters (for example the Gaussian noise variance) are
// exposed in unconstrained form, as for Kernel.
//
// For a likelihood of your own: y holds one value per point (len(y) = n,
// whatever L; n·P for a MultiOutput likelihood of P outputs), and mu and
// variance n·L values; the marginal variances may
// be rounded slightly below zero (see the package documentation, Numerical
// notes), so take a negative one as 0 where a square root or quadrature
// needs it. LogPredictive, PredictY and Params must be safe for
// concurrent use: a Predictor's methods, which are, call them without a
// lock. A likelihood may also have the optional method
//
//	Validate(y []float64) error
//
// (those of package likelihood do): Model.ValidateData (which train.Fit
// calls before training), Model.Objective and the Predictor's
// LogPredictive then call it and return its error, wrapped in ErrValue,
// for labels it cannot model. The model also uses Cloner and WorkerSetter
// when the likelihood implements them.
type Likelihood interface {
	// NumLatent returns L, the number of latent functions per point.
	NumLatent() int

	// NumParams returns the number of unconstrained likelihood parameters.
	NumParams() int
	// Params copies the unconstrained parameters into dst.
	Params(dst []float64)
	// SetParams sets the parameters from unconstrained values, returning an
	// error on a length mismatch or a non-finite value.
	SetParams(src []float64) error

	// ExpectedLogLik returns Σ_n E_{q(f_n)}[log p(y_n | f_n)]. If dmu and
	// dvar are non-nil it writes the gradients of that sum with respect to
	// mu and variance into them (overwriting), and if dparams is non-nil it
	// adds the gradient with respect to the unconstrained parameters.
	// Likelihoods that estimate the expectation by Monte Carlo draw from
	// rng; closed-form and quadrature likelihoods ignore it (it may be nil).
	ExpectedLogLik(y, mu, variance []float64, dmu, dvar, dparams []float64, rng *rand.Rand) float64

	// LogPredictive writes, for each point n, log ∫ p(y_n | f) q(f_n) df
	// into dst (length len(y)).
	LogPredictive(dst, y, mu, variance []float64, rng *rand.Rand)

	// PredictY writes the mean and variance of the predictive distribution
	// of y for each point and latent function layout of the model: for
	// scalar likelihoods one value per point; for C-class likelihoods the C
	// class probabilities per point in mean (variance may be nil).
	PredictY(mean, variance, mu, fvar []float64, rng *rand.Rand)
}

// MultiOutput is implemented by likelihoods that observe P ≥ 1 values per
// point (likelihood.MultiGaussian): several outputs whose latent functions
// are the model's L = NumLatent() latent functions, or mixtures of them.
// For such a likelihood the targets y hold n·P values, point-major
// (element n·P+p is output p of point n), and a NaN target is a missing
// value rather than an error; ExpectedLogLik, LogPredictive (one value per
// point) and PredictY (P values per point) take that layout, and
// Model.NumOutputs and Predictor.NumOutputs return P.
type MultiOutput interface {
	NumOutputs() int
}

// numOutputs returns P for a MultiOutput likelihood and 1 otherwise, and
// whether the likelihood is a MultiOutput.
func numOutputs(lik Likelihood) (int, bool) {
	if mo, ok := lik.(MultiOutput); ok {
		return mo.NumOutputs(), true
	}
	return 1, false
}
