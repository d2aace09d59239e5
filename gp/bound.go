package gp

import "fmt"

// BoundKind selects the evidence lower bound that Model.Objective
// evaluates.
type BoundKind int

const (
	// StandardBound is the ELBO with q(f | u) = p(f | u) (and for SOLVE-GP
	// q(f⊥ | v⊥) = p(f⊥ | v⊥)): Σₙ E_q[log p(yₙ | fₙ)] − KL.
	StandardBound BoundKind = iota
	// TighterBound relaxes that conditional to one with the same mean and
	// a smaller covariance at the training inputs, one free scale per
	// point (Titsias, ICML 2025; Bui, Ashman and Turner, TMLR 2025, who
	// apply it to SOLVE-GP). With dₙ the residual (Nyström) variance at xₙ
	// and sₙ the variance q(u) (and q(v⊥)) contribute, each point's
	// expected log-likelihood E_{N(mₙ, sₙ+dₙ)}[log p(yₙ | fₙ)] becomes
	//
	//	max over αₙ ∈ (0, 1] of E_{N(mₙ, sₙ+αₙdₙ)}[log p(yₙ | fₙ)] − ½·(αₙ − 1 − log αₙ).
	//
	// αₙ = 1 gives StandardBound's term, so the bound is never below it.
	// The relaxed conditional applies at the training inputs only:
	// predictions are those of q(u) (and q(v⊥)) with the prior conditional,
	// as for StandardBound. Two kinds of likelihood have it:
	//
	//   - A TighterLikelihood (package likelihood's Gaussian) optimizes αₙ
	//     in closed form: for the Gaussian αₙ = σ²/(σ² + dₙ) and the term is
	//     log N(yₙ | mₙ, σ²) − sₙ/(2σ²) − ½·log(1 + dₙ/σ²). This is a bound
	//     for any likelihood whose expected log-likelihood depends on the
	//     variances through their sum only, with the conditional covariance
	//     R^½·diag(α)·R^½ (R the residual covariance of f at the training
	//     inputs given all the inducing variables), whose KL divergence
	//     from the prior conditional is ½·Σₙ(αₙ − 1 − log αₙ).
	//   - A ConcaveLikelihood (package likelihood's Bernoulli and Poisson:
	//     log p(y | f) concave in f) with one latent function: αₙ is found
	//     per point inside Objective, and the term is a bound because the
	//     expected log-likelihood of a concave log-density does not grow
	//     with the variance, and there is a conditional q(f | u) with the
	//     prior's mean, marginal variances at most αₙdₙ and a KL divergence
	//     of at most ½·Σₙ(αₙ − 1 − log αₙ): condition the prior conditional,
	//     one point after another, on a pseudo-observation at its mean that
	//     brings that point's variance down to αₙdₙ (none if it is already
	//     lower); by Cauchy–Schwarz each step adds at most
	//     ½(αₙ − 1 − log αₙ). See concaveTighter for the solve and its cost.
	//
	// Without concavity the per-point form is not a bound: for a Student-t
	// likelihood and repeated inputs it can exceed log p(y) (the points'
	// conditional variances cannot shrink independently when the points
	// are perfectly correlated), so StudentT, multi-latent likelihoods
	// (Softmax, RobustMax, heteroscedastic, multi-output) and others are
	// refused with an error wrapping ErrValue.
	//
	// The residual dₙ is k(xₙ,xₙ) − Q(xₙ,xₙ) after Z for SVGP, after Z and
	// O for SOLVE-GP (q(v⊥) has a free covariance, which the conditional
	// of f⊥ given v⊥ completes), and after Z for ODVGP: its q(f⊥) is the
	// prior of f⊥ shifted by the mean C_fv·a, and with the relaxed
	// covariance at the training inputs its KL divergence is at most
	// ½·aᵀC_vv·a + ½·Σₙ(αₙ − 1 − log αₙ), because the Schur complement
	// C_vv − C_vX·C_XX⁻¹·C_Xv is positive semi-definite; so the bound needs
	// no factorization of C_vv.
	TighterBound
)

// String returns "standard" or "tighter".
func (b BoundKind) String() string {
	switch b {
	case StandardBound:
		return "standard"
	case TighterBound:
		return "tighter"
	}
	return fmt.Sprintf("BoundKind(%d)", int(b))
}

// ParseBound returns the BoundKind named s ("standard" or "tighter").
func ParseBound(s string) (BoundKind, error) {
	switch s {
	case "standard":
		return StandardBound, nil
	case "tighter":
		return TighterBound, nil
	}
	return 0, fmt.Errorf("%w: unknown bound %q (want standard or tighter)", ErrValue, s)
}

// WithBound selects the bound Objective evaluates (default StandardBound).
// TighterBound needs a likelihood that implements TighterLikelihood, or a
// ConcaveLikelihood with one latent function (see TighterBound); it
// changes Objective (and so training) only: Forward, Backward and
// predictions are the same for both bounds.
func WithBound(b BoundKind) Option {
	return func(c *config) error {
		if b != StandardBound && b != TighterBound {
			return fmt.Errorf("%w: bound %v", ErrValue, b)
		}
		c.bound = b
		return nil
	}
}

// TighterLikelihood is implemented by likelihoods whose TighterBound term
// has a closed form (package likelihood's Gaussian).
type TighterLikelihood interface {
	// TighterTerm returns Σₙ tₙ, where tₙ is what the optimal scale λₙ of
	// the conditional's residual variance dₙ = d[n] adds to the expected
	// log-likelihood evaluated without that variance; for a Gaussian
	// likelihood tₙ = −½·log(1 + dₙ/σ²). If dd is non-nil it writes ∂tₙ/∂dₙ
	// into dd[n] (overwriting); if dparams is non-nil it adds the
	// gradient with respect to the unconstrained parameters. A residual
	// for which tₙ is undefined (dₙ ≤ −σ² for the Gaussian) gives NaN.
	TighterTerm(d, dd, dparams []float64) float64
}

// ConcaveLikelihood is implemented by likelihoods that know whether their
// log-density log p(y | f) is concave in f for every label (package
// likelihood's Gaussian, Bernoulli and Poisson). TighterBound accepts such
// a likelihood with one latent function when ConcaveLogLik returns true;
// its ExpectedLogLik must then be deterministic (closed form or
// quadrature), as the per-point scales are solved from it.
type ConcaveLikelihood interface {
	ConcaveLogLik() bool
}

// Bound returns the bound Objective evaluates.
func (mod *Model) Bound() BoundKind { return mod.cfg.bound }

// checkBound returns an error if the bound b cannot be used with lik.
func checkBound(b BoundKind, lik Likelihood) error {
	if b != TighterBound {
		return nil
	}
	if lik.NumLatent() != 1 {
		return fmt.Errorf("%w: the tighter bound needs a likelihood with one latent function, not %T with %d", ErrValue, lik, lik.NumLatent())
	}
	if _, multi := numOutputs(lik); multi {
		return fmt.Errorf("%w: the tighter bound does not support the multi-output likelihood %T", ErrValue, lik)
	}
	if _, ok := lik.(TighterLikelihood); ok {
		return nil
	}
	if c, ok := lik.(ConcaveLikelihood); ok && c.ConcaveLogLik() {
		return nil
	}
	return fmt.Errorf("%w: the tighter bound needs a likelihood whose log-density is concave in f (Gaussian, Bernoulli, Poisson), not %T", ErrValue, lik)
}

// splitResidual fills ws.res with the residual variances dₙ of the batch
// and ws.sv with the marginal variances less dₙ (what q(u) and q(v⊥)
// contribute), after a forward pass: dₙ = k(xₙ,xₙ) − ‖bₙ‖² (− ‖dₙ‖² for
// SOLVE-GP, whose v⊥ block's basis D = L0v⁻¹·C_vf carries the rest of the
// Nyström approximation after Z and O).
func (mod *Model) splitResidual() {
	ws := &mod.ws
	N, L := ws.n, mod.nl
	ws.res = grow(ws.res, N)
	ws.sv = grow(ws.sv, N*L)
	for n := 0; n < N; n++ {
		d := ws.kff[n] - ws.bsq[n]
		if mod.kind == SOLVEGP {
			d -= ws.dsq[n]
		}
		ws.res[n] = d
		for l := 0; l < L; l++ {
			ws.sv[n*L+l] = ws.vr[n*L+l] - d
		}
	}
}
