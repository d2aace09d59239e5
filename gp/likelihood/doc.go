// Package likelihood provides observation models for sparse variational
// GPs: Gaussian, Bernoulli (probit), multi-class RobustMax and Softmax,
// Poisson (exponential link), robust Student-t regression, and the
// heteroscedastic Gaussian whose log noise variance is a second latent
// function; and MultiGaussian for P real outputs per point, independent or
// mixed from L latent functions by a learned matrix (a linear model of
// coregionalization). Every type satisfies gp.Likelihood.
//
// Each likelihood computes the expected log-likelihood
// Σ_n E_{q(f_n)}[log p(y_n | f_n)] under Gaussian marginals
// q(f_n) = N(mu_n, variance_n) — in closed form where one exists, by
// Gauss–Hermite quadrature for Bernoulli and RobustMax, and by
// reparameterised Monte Carlo for Softmax — together with its exact
// gradients with respect to mu, variance and the likelihood parameters.
// For quadrature and Monte Carlo the gradients are those of the computed
// approximation itself, so they agree with finite differences of
// ExpectedLogLik (for Monte Carlo, under common random numbers).
//
// Layout: mu and variance are point-major, element n*L+l holding latent l
// of point n, where L = NumLatent(). Labels are float64 values: any finite
// number for Gaussian, P per point for MultiGaussian (NaN: missing), 0 or 1 for Bernoulli, a non-negative integer count
// for Poisson, and a class index 0..C−1 for RobustMax and Softmax.
//
// Label validation: every likelihood has a Validate(y) method that returns
// a descriptive error for labels it cannot model; models should call it
// once on their data. The evaluation methods never panic on bad label
// values: a label outside the support has probability zero, so it
// contributes −Inf to ExpectedLogLik and LogPredictive and zero to every
// gradient (no NaN is produced from a label). Mismatched slice lengths are
// programming errors and panic with a message, as in gonum.
//
// Variances: the marginal variances of a GP can be rounded slightly below
// zero, or be tiny. Expressions that are smooth in v (the Gaussian and
// Poisson expected log-likelihoods) take v as it is; everywhere else a
// negative v is taken as 0. The variance gradients of the quadratures
// (Bernoulli, RobustMax) at zero and tiny v are their v → 0 limits, and
// Softmax's at v ≤ 0 its Price-theorem estimate (see each type), so that
// every result is finite.
//
// Positive parameters (the Gaussian noise variance) are stored in
// unconstrained form, see package transform.
package likelihood
