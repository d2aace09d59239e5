// Package stability holds the numerical-stability, concurrency and resource
// tests of the gp models and their training loop; it has no API of its own.
//
// The stability tests drive SVGP, ODVGP and SOLVE-GP models (package gp)
// through gp/train.Fit into the regions where sparse variational GPs break:
// inducing points collapsing onto each other (K_uu singular), orthogonal
// inducing points approaching inducing points (C_vv = K_vv − K_vu·K_uu⁻¹·K_uv
// near singular), lengthscales driven huge or tiny, learning rates far too
// large and extreme noise levels. In every case training must end with finite
// parameters whose bound is finite: a non-finite bound or gradient is
// detected, the step is rejected and retaken with a halved learning rate
// (reported through Config.Logf), and when that cannot help Fit stops with an
// error wrapping train.ErrDiverged that says why, keeping the last good model.
// Each guard has a test showing what happens without it (no jitter policy:
// the typed *chol.NotPositiveDefiniteError; no back-off: divergence).
//
// The concurrency tests share one gp.Predictor between many goroutines (run
// them with -race), and the resource tests check that the memory of training
// is independent of the number of data points N (it grows with M² and with
// batch·M only) and that neither a canceled Fit nor the parallel BLAS leaves
// goroutines behind.
package stability
