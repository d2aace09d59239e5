// Package train fits the gp models: Adam with constant or step-decay
// learning rates on shuffled mini-batches (Fit), early stopping on a
// validation score with best-model keeping, cancellation through
// context.Context, and per-step and per-epoch callbacks. It also
// has a full-batch L-BFGS maximizer (MaximizeLBFGS, used by package
// collapsed). The inducing inputs are initialized by package gp/inducing
// and models are scored by package gp/metrics.
//
// Fit depends only on the small Model interface (a flat parameter vector
// and a mini-batch objective with its gradient), so any model with that
// shape can be trained. Training is reproducible: with the same seed,
// data, initial parameters and thread count, Fit gives bit-for-bit the
// same parameters.
//
// Fit checks its data before the first step: inputs and targets must be
// finite, and a model that implements DataValidator (package gp's Model
// and convgp's Deep do) must accept them, so that a bad label is an error
// rather than a string of rejected steps.
//
// Fit never leaves non-finite parameters behind. A step whose objective
// or gradient is not finite is rejected and Fit backs off (see Fit); if it
// cannot recover it returns an error wrapping ErrDiverged with the model
// at its last good parameters.
//
// Natural-gradient updates of q(u) and q(v⊥): a model opts in by
// implementing NaturalGradientModel (package gp's Model does), and Fit then
// combines natural steps on the variational parameters with Adam steps on
// the rest (Config.NaturalStep), from two evaluations of the objective per
// step or, for a NaturalUpdater, one (Config.NaturalSharedGradient).
// gp.NaturalGradient implements both interfaces for any Model whose
// variational factors are Gaussians stored as a mean and a packed Cholesky
// factor (package gp's layout), from the model's ordinary gradient alone;
// with a Gaussian likelihood a full-batch step of size 1 gives SVGP's
// optimal q(u).
//
// Long runs can be stopped and resumed exactly: EpochInfo.Checkpoint (at
// the end of an epoch) and StepInfo.Checkpoint (after any step) return the
// loop's state (Adam's moments, step, epoch and mini-batch counts, the
// back-off, and the random state of a model that implements RandomStater),
// which Config.Resume continues from.
package train
