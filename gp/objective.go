package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/internal/floats"
)

// Terms are the pieces of the last evaluated bound.
type Terms struct {
	// ExpLogLik is Σ_n E_q[log p(y_n | f_n)] over the batch (unscaled).
	// For TighterBound the marginal variances of q exclude the residual
	// variances dₙ, which Tighter accounts for.
	ExpLogLik float64
	// Tighter is Σ_n of the TighterBound term over the batch (unscaled;
	// −½·Σ log(1 + dₙ/σ²) for a Gaussian likelihood, −½·Σ(αₙ − 1 − log αₙ)
	// for a ConcaveLikelihood, whose ExpLogLik is then taken at the
	// variances sₙ + αₙdₙ), 0 for StandardBound.
	Tighter float64
	// Scale is nTotal / batch size, the factor applied to ExpLogLik.
	Scale float64
	// KLU is Σ_l KL(q(u_l) ‖ p(u_l)).
	KLU float64
	// KLV is Σ_l KL(q(v⊥_l) ‖ p⊥(v⊥_l)) (0 for SVGP). For ODVGP with column
	// sampling it is the unbiased estimate used by the step.
	KLV float64
	// JitterUU and JitterVV are the diagonal jitters added to K_uu and C_vv
	// by their policies (0 when none was needed).
	JitterUU, JitterVV float64
	// Bound is Scale·(ExpLogLik + Tighter) − KLU − KLV.
	Bound float64
}

// LastTerms returns the pieces of the last bound evaluated by Objective.
func (mod *Model) LastTerms() Terms { return mod.last }

// LastProfile returns a copy of the cost profile of the last Objective,
// Forward or Backward call (Forward resets it; Backward appends).
func (mod *Model) LastProfile() CostProfile {
	return CostProfile{Ops: mod.ws.ops}.clone()
}

func (mod *Model) checkX(x *mat.Dense) error {
	if x == nil {
		return fmt.Errorf("%w: nil inputs", ErrShape)
	}
	n, d := x.Dims()
	if n < 1 || d != mod.d {
		return fmt.Errorf("%w: inputs are %d×%d, want n×%d with n ≥ 1", ErrShape, n, d, mod.d)
	}
	raw := x.RawMatrix()
	for i := 0; i < n; i++ {
		if !floats.AllFinite(raw.Data[i*raw.Stride : i*raw.Stride+d]) {
			return fmt.Errorf("%w: input row %d holds NaN or Inf", ErrValue, i)
		}
	}
	return nil
}

// ValidateData checks a training set before training (train.Fit calls it
// once): x must be n×d with finite entries, y must hold n finite values
// that the likelihood accepts as labels. Errors wrap ErrShape or ErrValue.
func (mod *Model) ValidateData(x *mat.Dense, y []float64) error {
	if err := mod.checkX(x); err != nil {
		return err
	}
	n, _ := x.Dims()
	if err := checkTargets(y, n, mod.nout, mod.multi); err != nil {
		return err
	}
	return validateLabels(mod.lik, y)
}

// Objective returns the mini-batch estimate of the evidence lower bound
// for the batch (x, y) drawn from a data set of nTotal points,
//
//	(nTotal/n)·Σ_n E_q[log p(y_n | f_n)] − KL_u − KL_v,
//
// to be maximized (for TighterBound, see WithBound, each point's term is
// that of the relaxed conditional: the estimate stays unbiased), and if grad is non-nil writes its gradient with respect
// to the flat parameter vector into grad (len NumParams). x is n×d with one
// point per row; y holds n observations (n·P, point-major, for a
// MultiOutput likelihood of P outputs, NaN marking a missing one). A bound
// or gradient that is not finite (for example from overflowing inputs) is
// reported as an error wrapping ErrValue.
func (mod *Model) Objective(x *mat.Dense, y []float64, nTotal int, grad []float64) (float64, error) {
	if err := mod.checkX(x); err != nil {
		return 0, err
	}
	n, _ := x.Dims()
	if err := checkTargets(y, n, mod.nout, mod.multi); err != nil {
		return 0, err
	}
	if nTotal < 1 {
		return 0, fmt.Errorf("%w: nTotal = %d", ErrValue, nTotal)
	}
	return mod.scaledObjective(x, y, float64(nTotal)/float64(n), grad)
}

// scaledObjective is Objective with the factor applied to the batch's
// expected log-likelihood given as scale (nTotal/n for Objective) rather
// than derived from nTotal, for Separate, whose outputs each see only their
// observed rows of a batch. x must have passed checkX and y checkTargets.
func (mod *Model) scaledObjective(x *mat.Dense, y []float64, scale float64, grad []float64) (float64, error) {
	n, _ := x.Dims()
	if err := validateLabels(mod.lik, y); err != nil {
		return 0, err
	}
	if grad != nil && len(grad) != mod.layout.Total {
		return 0, fmt.Errorf("%w: gradient has length %d, want %d", ErrShape, len(grad), mod.layout.Total)
	}
	if err := mod.forward(x); err != nil {
		return 0, err
	}
	ws := &mod.ws
	L := mod.nl
	var dmu, dvar, dlik []float64
	if grad != nil {
		ws.dmu = grow(ws.dmu, n*L)
		ws.dvar = grow(ws.dvar, n*L)
		ws.dlik = growZero(ws.dlik, mod.lik.NumParams())
		dmu, dvar, dlik = ws.dmu, ws.dvar, ws.dlik
	}
	variance := ws.vr
	var tl TighterLikelihood
	var dres []float64
	if mod.cfg.bound == TighterBound {
		tl, _ = mod.lik.(TighterLikelihood) // else a ConcaveLikelihood (checkBound)
		mod.splitResidual()
		variance = ws.sv
		if grad != nil {
			ws.dres = grow(ws.dres, n)
			dres = ws.dres
		}
	}
	var ell, tight float64
	switch {
	case mod.cfg.bound == TighterBound && tl == nil:
		ell, tight = mod.concaveTighter(y, dmu, dvar, dres, dlik)
	case tl != nil:
		ell = mod.lik.ExpectedLogLik(y, ws.mu, variance, dmu, dvar, dlik, mod.rng)
		tight = tl.TighterTerm(ws.res, dres, dlik)
	default:
		ell = mod.lik.ExpectedLogLik(y, ws.mu, variance, dmu, dvar, dlik, mod.rng)
	}
	bound := scale*(ell+tight) - ws.klu - ws.klv
	mod.last = Terms{ExpLogLik: ell, Tighter: tight, Scale: scale, KLU: ws.klu, KLV: ws.klv, JitterUU: ws.jitU, JitterVV: ws.jitV, Bound: bound}
	if math.IsNaN(bound) || math.IsInf(bound, 0) {
		return bound, fmt.Errorf("%w: bound is %g", ErrValue, bound)
	}
	if grad == nil {
		return bound, nil
	}
	clearVec(mod.cfg.threads, grad)
	lo := mod.layout.Lik
	for i, v := range dlik {
		grad[lo+i] += scale * v
	}
	for i := range dmu {
		dmu[i] *= scale
		dvar[i] *= scale
	}
	for i := range dres {
		dres[i] *= scale
	}
	if err := mod.backward(dmu, dvar, dres, -1, grad, nil); err != nil {
		return bound, err
	}
	if !floats.AllFinite(grad) {
		return bound, fmt.Errorf("%w: gradient holds NaN or Inf", ErrValue)
	}
	return bound, nil
}

// checkTargets checks that y holds nout targets for each of n points, all
// finite, or for a MultiOutput likelihood (multi) finite or NaN (missing).
func checkTargets(y []float64, n, nout int, multi bool) error {
	if len(y) != n*nout {
		if nout > 1 {
			return fmt.Errorf("%w: %d targets for %d inputs of %d outputs", ErrShape, len(y), n, nout)
		}
		return fmt.Errorf("%w: %d targets for %d inputs", ErrShape, len(y), n)
	}
	for i, v := range y {
		if math.IsInf(v, 0) || (math.IsNaN(v) && !multi) {
			return fmt.Errorf("%w: targets hold NaN or Inf (target %d is %g)", ErrValue, i, v)
		}
	}
	return nil
}

// labelValidator is implemented by likelihoods that can check labels.
type labelValidator interface {
	Validate(y []float64) error
}

// validateLabels checks y with the likelihood's Validate method, if any.
func validateLabels(lik Likelihood, y []float64) error {
	if v, ok := lik.(labelValidator); ok {
		if err := v.Validate(y); err != nil {
			return fmt.Errorf("%w: %w", ErrValue, err)
		}
	}
	return nil
}

// Forward computes the marginals q(f_l(x_n)) = N(mu, variance) of every
// latent function at the rows of x (eqs. D.2–D.3), point-major: element
// n·C+l is latent l of point n; mu and variance must have length n·C. It
// returns the KL terms Σ_l KL(q(u_l)‖p(u_l)) and Σ_l KL(q(v⊥_l)‖p⊥(v⊥_l)).
//
// Forward keeps the intermediate results (and a reference to x, which must
// not be modified) for a following Backward call, which is how layers are
// stacked in deep models.
func (mod *Model) Forward(x *mat.Dense, mu, variance []float64) (klU, klV float64, err error) {
	if err := mod.checkX(x); err != nil {
		return 0, 0, err
	}
	n, _ := x.Dims()
	if len(mu) != n*mod.nl || len(variance) != n*mod.nl {
		return 0, 0, fmt.Errorf("%w: marginals have lengths %d, %d, want %d", ErrShape, len(mu), len(variance), n*mod.nl)
	}
	if err := mod.forward(x); err != nil {
		return 0, 0, err
	}
	copy(mu, mod.ws.mu)
	copy(variance, mod.ws.vr)
	return mod.ws.klu, mod.ws.klv, nil
}

// Backward back-propagates through the last Forward call. dmu and dvar are
// the gradients of an outer objective J with respect to the marginals
// (point-major, as in Forward) and dKL is J's derivative with respect to
// klU + klV (−1 for an ELBO). It adds ∂J/∂θ into grad (len NumParams) and,
// if dx is non-nil, ∂J/∂x into dx (same shape as x). It returns an error
// if there was no successful Forward (or Objective) since the model was
// built or its parameters were last set by SetParams.
func (mod *Model) Backward(dmu, dvar []float64, dKL float64, grad []float64, dx *mat.Dense) error {
	ws := &mod.ws
	if !ws.valid {
		return fmt.Errorf("gp: Backward without a successful Forward")
	}
	n := ws.n
	if len(dmu) != n*mod.nl || len(dvar) != n*mod.nl {
		return fmt.Errorf("%w: marginal gradients have lengths %d, %d, want %d", ErrShape, len(dmu), len(dvar), n*mod.nl)
	}
	if len(grad) != mod.layout.Total {
		return fmt.Errorf("%w: gradient has length %d, want %d", ErrShape, len(grad), mod.layout.Total)
	}
	if dx != nil {
		if r, c := dx.Dims(); r != n || c != mod.d {
			return fmt.Errorf("%w: dx is %d×%d, want %d×%d", ErrShape, r, c, n, mod.d)
		}
	}
	if !floats.AllFinite(dmu) || !floats.AllFinite(dvar) || math.IsNaN(dKL) || math.IsInf(dKL, 0) {
		return fmt.Errorf("%w: non-finite marginal gradients", ErrValue)
	}
	return mod.backward(dmu, dvar, nil, dKL, grad, dx)
}

// SampleMarginals draws f = mu + sqrt(variance)·eps elementwise (the
// reparameterization used to propagate samples through deep models) into
// dst; a negative variance (rounding) is taken as 0. All slices must have
// the same length: like a slice index, it panics if they do not, as that
// is a programming error.
func SampleMarginals(dst, mu, variance, eps []float64) {
	if len(mu) != len(dst) || len(variance) != len(dst) || len(eps) != len(dst) {
		panic(fmt.Sprintf("gp: SampleMarginals slices have lengths %d (dst), %d (mu), %d (variance), %d (eps), want equal",
			len(dst), len(mu), len(variance), len(eps)))
	}
	for i := range dst {
		dst[i] = mu[i] + math.Sqrt(math.Max(variance[i], 0))*eps[i]
	}
}

// SampleMarginalsGrad maps the gradient df of a loss with respect to the
// samples of SampleMarginals to gradients with respect to mu and variance,
// adding into dmu and dvar (the variance gradient is 0 where variance ≤ 0).
// All slices must have the same length: like a slice index, it panics if
// they do not, as that is a programming error.
func SampleMarginalsGrad(dmu, dvar, df, variance, eps []float64) {
	if len(dmu) != len(df) || len(dvar) != len(df) || len(variance) != len(df) || len(eps) != len(df) {
		panic(fmt.Sprintf("gp: SampleMarginalsGrad slices have lengths %d (dmu), %d (dvar), %d (df), %d (variance), %d (eps), want equal",
			len(dmu), len(dvar), len(df), len(variance), len(eps)))
	}
	for i := range df {
		dmu[i] += df[i]
		if variance[i] > 0 {
			dvar[i] += df[i] * eps[i] / (2 * math.Sqrt(variance[i]))
		}
	}
}
