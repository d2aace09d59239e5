// Package metrics scores fitted models: the paper's test metrics (RMSE
// and the Gaussian predictive log-likelihood, GaussianLogLik) and the
// evidence lower bound on a whole data set evaluated in batches
// (FullBound), which the CLI and the benchmark programs share.
package metrics
