// Package gp implements sparse variational Gaussian processes: SVGP,
// ODVGP and SOLVE-GP (Shi, Titsias & Mnih, "Sparse Orthogonal Variational
// Inference for Gaussian Processes", AISTATS 2020), with exact reverse-mode
// gradients and prediction.
//
// Fit and predict (the package Example runs this):
//
//	k, _ := kernel.NewRBF(1, 1.0, 1.0)
//	lik, _ := likelihood.NewGaussian(0.1)
//	model, _ := gp.NewSOLVEGP(k, lik, z, o)   // z, o: inducing and orthogonal inputs
//	train.Fit(ctx, model, x, y, train.Config{Epochs: 200, BatchSize: 20, Schedule: train.Constant(0.05)})
//	p, _ := model.Predictor(0); mean, variance, _ := p.PredictF(xTest)
//
// All computation is in float64. Matrices are gonum mat types; the heavy
// linear algebra runs on this module's blas and chol packages.
//
// # Models
//
// NewSVGP, NewODVGP and NewSOLVEGP return a *Model: one layer engine in
// which SVGP is the model without an orthogonal block, SOLVE-GP adds
// q(v⊥) = N(m_v, S_v) on the orthogonal inducing inputs O, and ODVGP is
// SOLVE-GP with S_v = C_vv (mean-only orthogonal block, optionally with
// the paper's random column subsets of K_vv, see WithColumnSample). The
// whitened parameterization of Appendix E is an option (WithWhitening).
// Models with a C-class likelihood have C latent functions sharing the
// kernel and the inducing inputs, each with its own q(u) (and q(v⊥)).
//
// All parameters form one flat vector of unconstrained values (Layout,
// Params, SetParams), and Objective returns the mini-batch ELBO and its
// gradient (WithBound(TighterBound) selects the tighter bound of Titsias
// (2025) and Bui et al. (2025), for Gaussian, Bernoulli and Poisson
// likelihoods: any single-latent likelihood whose log-density is concave
// in f; see TighterBound). Forward and Backward expose the layer itself — from inputs to
// the marginals q(f(x_n)) = N(μ_n, σ²_n) of eqs. (D.2)–(D.3) and back to
// every parameter and to the inputs — so that layers can be stacked.
// Predictor returns an immutable, concurrency-safe snapshot for batched
// prediction of marginals, joint covariances, observations and log
// predictive densities.
//
// # Cost profile
//
// Every evaluation records its cubic-cost operations (matrix products,
// Cholesky factorizations, triangular solves, with sizes, flops and
// measured time) in a CostProfile (Model.LastProfile). The forward bound
// follows Algorithm 1 and, for unwhitened SVGP and SOLVE-GP with one latent
// function, performs exactly the operations of the paper's Table 3. The
// full count, forward and backward, is in docs/operation-counts.md.
//
// # Threads
//
// A model's evaluations run on up to GOMAXPROCS goroutines, or on the budget
// given by WithThreads: its linear algebra, its elementwise passes, and its
// kernel and likelihood when they implement WorkerSetter (the kernels and
// likelihoods of this module that parallelize do). Results do not depend on
// the goroutines' scheduling; with one thread, the same seed gives the same
// parameters bit for bit. A Model is not safe for concurrent use; its
// Predictor is.
//
// # Numerical notes
//
// K_uu and C_vv are factorized with their own jitter policies
// (WithKuuJitter, WithCvvJitter); the jitter used is reported in Terms.
// The gradient includes the jitter's dependence on the parameters (a
// policy's jitter is proportional to the mean diagonal of K_uu, or of K_vv
// for C_vv), so it is the exact gradient of the jittered bound; only the
// choice of jitter attempt is piecewise constant. (In the degenerate case
// of a K_vv whose mean diagonal is not positive, C_vv's jitter is taken
// relative to its own diagonal and treated as a constant.) Marginal variances are
// not clamped: with an (almost) degenerate q they may be rounded slightly
// below zero.
package gp
