package gp

import "fmt"

// BoundKind selects the evidence lower bound that Model.Objective
// evaluates.
type BoundKind int

const (
	// StandardBound is the ELBO with q(f | u) = p(f | u) (and for SOLVE-GP
	// q(f⊥ | v⊥) = p(f⊥ | v⊥)): Σₙ E_q[log p(yₙ | fₙ)] − KL.
	StandardBound BoundKind = iota
	// TighterBound relaxes that conditional to one whose covariance at the
	// training inputs is R^½·Λ·R^½, R the residual covariance of f given
	// all the inducing variables and Λ = diag(λ) one free scale per point
	// (Titsias, ICML 2025; Bui, Ashman and Turner, TMLR 2025, who apply it
	// to SOLVE-GP). For a Gaussian likelihood the λₙ are optimized in
	// closed form, and each point's expected log-likelihood
	//
	//	log N(yₙ | μₙ, σ²) − (sₙ + dₙ)/(2σ²)
	//
	// becomes
	//
	//	log N(yₙ | μₙ, σ²) − sₙ/(2σ²) − ½·log(1 + dₙ/σ²),
	//
	// with dₙ the residual (Nyström) variance at xₙ and sₙ the variance q(u)
	// (and q(v⊥)) contribute. Since log(1 + x) ≤ x it is never below
	// StandardBound. The relaxed conditional applies at the training inputs
	// only: predictions are those of q(u) (and q(v⊥)) with the prior
	// conditional, as for StandardBound. The likelihood must implement
	// TighterLikelihood (package likelihood's Gaussian does). Other
	// likelihoods would need each marginal variance of the relaxed
	// conditional, [R^½ΛR^½]ₙₙ = Σₖ (R^½)²ₙₖλₖ, which is not λₙdₙ and costs
	// R^½ (N×N). Taking sₙ + λₙdₙ instead is not a bound this family
	// justifies: the covariance with those marginals, Λ^½RΛ^½, has a KL
	// divergence of at least ½·Σₙ(λₙ − 1 − log λₙ), as tr(R⁻¹Λ^½RΛ^½) ≥ tr Λ.
	//
	// The residual dₙ is k(xₙ,xₙ) − Q(xₙ,xₙ) after Z for SVGP, after Z and
	// O for SOLVE-GP (q(v⊥) has a free covariance, which the conditional
	// of f⊥ given v⊥ completes), and after Z for ODVGP: its q(f⊥) is the
	// prior of f⊥ shifted by the mean C_fv·a, and with the relaxed
	// covariance at the training inputs its KL divergence is at most
	// ½·aᵀC_vv·a + ½·Σₙ(λₙ − 1 − log λₙ), because the Schur complement
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
// TighterBound needs a likelihood that implements TighterLikelihood; it
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

// Bound returns the bound Objective evaluates.
func (mod *Model) Bound() BoundKind { return mod.cfg.bound }

// checkBound returns an error if the bound b cannot be used with lik.
func checkBound(b BoundKind, lik Likelihood) error {
	if b != TighterBound {
		return nil
	}
	if _, ok := lik.(TighterLikelihood); !ok || lik.NumLatent() != 1 {
		return fmt.Errorf("%w: the tighter bound needs a likelihood with one latent function and a closed-form tighter term (Gaussian), not %T", ErrValue, lik)
	}
	return nil
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
