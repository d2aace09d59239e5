package gp

import (
	"gonum.org/v1/gonum/mat"
)

// Natural gradients for the variational distributions. A Model implements
// train.NaturalGradientModel and train.NaturalUpdater, so that
// train.Fit with Config.NaturalStep > 0 updates q(u) — and for SOLVE-GP
// q(v⊥) — by natural-gradient steps and the kernel, likelihood and inducing
// inputs by Adam (the variational parameters of ODVGP's orthogonal block,
// a = C_vv⁻¹·m_v, stay with Adam too). The steps are taken by NaturalGradient on the
// factors listed by NaturalFactors, in whichever parameterization the
// model uses: for a whitened model the Gaussian q(u′) of u′ = L_uu⁻¹·u
// (and q(v⊥′)), which is as conjugate as q(u) since f stays linear in u′.
//
// What a step of size 1 on the full data set does with a Gaussian
// likelihood (the bound is then, for each factor with the others fixed, a
// linear function of its expectation parameters plus its entropy):
//
//   - SVGP: q(u) becomes the optimal q(u) of Titsias' collapsed bound, so
//     the bound equals the collapsed SGPR bound (eq. 4).
//   - ODVGP: q(u) becomes the optimal q(u) for the current orthogonal mean
//     a; a and S_v = C_vv are not natural-gradient parameters (Adam moves a).
//   - SOLVE-GP: both factors step at once from one gradient. The optimal
//     covariances S_u and S_v do not depend on the means, so one step puts
//     them at the optimum of the collapsed SOLVE-GP bound (eq. 10,
//     Appendix C). The means are coupled through the data term: the step
//     sets m_u to its optimum given the old m_v and m_v to its optimum given
//     the old m_u (one block-Jacobi sweep). Repeated steps converge
//     geometrically to the joint optimum, where the bound equals the
//     collapsed SOLVE-GP bound; the rate is the largest canonical
//     correlation between the u and v⊥ blocks of the joint posterior
//     precision of (u, v⊥), which is below 1.
//
// With other likelihoods, or mini-batches, a step of size γ < 1 is a
// natural-gradient ascent step: for small γ it increases the bound.

// NaturalFactors returns the Gaussian variational factors that natural
// gradients update, in the flat parameter vector: q(u_l) for every latent
// function l and, for SOLVE-GP, q(v⊥_l). The Cholesky diagonals are stored
// through softplus (LogDiag false).
func (mod *Model) NaturalFactors() []GaussianFactor {
	lay := mod.layout
	fs := make([]GaussianFactor, 0, 2*mod.nl)
	for l := 0; l < mod.nl; l++ {
		fs = append(fs, GaussianFactor{Mean: lay.MU[l], Chol: lay.LU[l], N: mod.m})
	}
	if mod.kind == SOLVEGP {
		for l := 0; l < mod.nl; l++ {
			fs = append(fs, GaussianFactor{Mean: lay.MV[l], Chol: lay.LV[l], N: mod.m2})
		}
	}
	return fs
}

// natural returns the natural-gradient stepper over the model's factors.
func (mod *Model) natural() *NaturalGradient {
	return &NaturalGradient{ObjectiveModel: mod, Factors: mod.NaturalFactors(), Threads: max(mod.cfg.threads, 0)}
}

// VariationalParams sets mask[i] for every entry of the variational
// factors listed by NaturalFactors (len(mask) must be NumParams; it panics
// if mask is shorter); Adam leaves them to the natural-gradient steps. It
// implements train.NaturalGradientModel.
func (mod *Model) VariationalParams(mask []bool) {
	mod.natural().VariationalParams(mask)
}

// NaturalStep takes one natural-gradient step of size gamma ∈ (0, 1] on
// every factor of NaturalFactors, from the gradient of Objective on the
// batch x, y drawn from nTotal points. It returns an error, leaving the
// model unchanged, for bad inputs, a non-finite bound or gradient, or a
// step that makes a precision matrix indefinite (a step too long for a
// non-conjugate likelihood). It implements train.NaturalGradientModel.
func (mod *Model) NaturalStep(x *mat.Dense, y []float64, nTotal int, gamma float64) error {
	return mod.natural().NaturalStep(x, y, nTotal, gamma)
}

// NaturalUpdate writes into next the parameters after a natural-gradient
// step of size gamma ∈ (0, 1] on the factors of NaturalFactors from params,
// where grad is the gradient of the objective at params (all of length
// NumParams); the other entries are copied. The model is not changed. It
// implements train.NaturalUpdater, which lets train.Fit take the natural
// step and Adam's step from one evaluation (Config.NaturalSharedGradient).
func (mod *Model) NaturalUpdate(params, grad, next []float64, gamma float64) error {
	return mod.natural().NaturalUpdate(params, grad, next, gamma)
}
