package gp

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp/transform"
	"github.com/solvegp/solvegp/internal/floats"
	"github.com/solvegp/solvegp/internal/nilcheck"
)

// ObjectiveModel is the part of a trainable model a NaturalGradient needs:
// its flat parameters and the gradient of its objective. It has the method
// set of train.Model, so any model train.Fit accepts can be wrapped.
type ObjectiveModel interface {
	NumParams() int
	Params(dst []float64)
	SetParams(src []float64) error
	Objective(x *mat.Dense, y []float64, nTotal int, grad []float64) (float64, error)
}

// randomStater is train.RandomStater: a model that draws random numbers
// and can save and restore its generators' state.
type randomStater interface {
	RandomState() []byte
	SetRandomState(state []byte) error
}

// GaussianFactor locates one Gaussian variational factor q = N(m, L·Lᵀ)
// in a model's flat parameter vector: N mean values starting at Mean, and
// the lower triangle of L packed row by row (N(N+1)/2 values) starting at
// Chol, with each diagonal entry stored in unconstrained form — as
// softplus⁻¹(L_ii), package gp's convention, or as log(L_ii) if LogDiag.
// For a gp.Model the factors of latent l are
// {Mean: lay.MU[l], Chol: lay.LU[l], N: M} and, for SOLVE-GP,
// {Mean: lay.MV[l], Chol: lay.LV[l], N: M₂}, with lay = model.Layout().
type GaussianFactor struct {
	Mean, Chol, N int
	LogDiag       bool
}

// NaturalGradient adds natural-gradient steps for Gaussian variational
// factors to any ObjectiveModel, so that train.Fit with Config.NaturalStep updates those
// factors by natural gradients and everything else by Adam. It needs
// nothing from the model but its flat parameters and gradient.
//
// A step of size γ on a factor with natural parameters θ₁ = S⁻¹m,
// θ₂ = −½S⁻¹ moves them along the gradient with respect to the
// expectation parameters (m, S + mmᵀ), which is their natural gradient:
//
//	S⁻¹ ← S⁻¹ − 2γ·∂F/∂S,   S⁻¹m ← S⁻¹m + γ·(∂F/∂m − 2·∂F/∂S·m),
//
// with ∂F/∂S obtained from the model's gradient with respect to L by the
// Cholesky adjoint (package chol). For a conjugate factor (a Gaussian
// likelihood) F is linear in the expectation parameters plus the
// log-normalizer, so a step of size 1 on the full data gives the optimal
// q in one step (for SVGP, q(u) at its collapsed optimum). All factors
// are updated from one gradient evaluation; when the bound couples them
// (the means of q(u) and q(v⊥) in SOLVE-GP) a step of size 1 is one sweep
// of a fixed-point iteration that converges to the joint optimum.
//
// A step that would make a precision matrix lose positive definiteness
// returns an error, which train.Fit treats as a rejected step.
type NaturalGradient struct {
	ObjectiveModel
	Factors []GaussianFactor
	// Threads bounds the goroutines of the linear algebra (0: GOMAXPROCS).
	Threads int
}

// RandomState returns the wrapped model's random state if it implements
// train.RandomStater, and nil otherwise, so that train.Fit's checkpoints of a wrapped
// model that draws random numbers hold its state.
func (ng *NaturalGradient) RandomState() []byte {
	if rs, ok := ng.ObjectiveModel.(randomStater); ok {
		return rs.RandomState()
	}
	return nil
}

// SetRandomState restores the wrapped model's random state; it is an error
// if the wrapped model does not implement train.RandomStater.
func (ng *NaturalGradient) SetRandomState(state []byte) error {
	rs, ok := ng.ObjectiveModel.(randomStater)
	if !ok {
		return errors.New("gp: NaturalGradient: the wrapped model does not implement RandomStater")
	}
	return rs.SetRandomState(state)
}

// VariationalParams marks the entries of every factor. If a factor does
// not fit in len(mask) parameters it marks nothing: NaturalStep and
// NaturalUpdate then return the error, and so does train.Fit before its first
// step.
func (ng *NaturalGradient) VariationalParams(mask []bool) {
	if ng.check(len(mask)) != nil {
		return
	}
	for _, f := range ng.Factors {
		for i := 0; i < f.N; i++ {
			mask[f.Mean+i] = true
		}
		for i := 0; i < f.N*(f.N+1)/2; i++ {
			mask[f.Chol+i] = true
		}
	}
}

// CheckLayout returns an error for a nil model and, if factors, validates
// the factor layout against the model's size; train.Fit calls it (through
// an interface, as the method is promoted to types that embed a
// NaturalGradient) before its first step, with factors when it will take
// natural steps.
func (ng *NaturalGradient) CheckLayout(factors bool) error {
	if nilcheck.IsNil(ng.ObjectiveModel) {
		return errors.New("gp: NaturalGradient: nil Model")
	}
	if !factors {
		return nil
	}
	return ng.check(ng.NumParams())
}

// check validates the factor layout against a model of p parameters.
func (ng *NaturalGradient) check(p int) error {
	if len(ng.Factors) == 0 {
		return errors.New("gp: NaturalGradient: no factors")
	}
	for i, f := range ng.Factors {
		// The sums and the triangle's size are checked without overflow.
		hi, tri := bits.Mul64(uint64(max(f.N, 0)), uint64(max(f.N, 0))+1)
		if f.N < 1 || f.Mean < 0 || f.Chol < 0 || f.N > p || f.Mean > p-f.N || f.Chol > p || hi != 0 || tri/2 > uint64(p-f.Chol) {
			return fmt.Errorf("gp: NaturalGradient: factor %d (%+v) does not fit in %d parameters", i, f, p)
		}
	}
	return nil
}

// NaturalStep takes one natural-gradient step of size gamma on every
// factor, using the gradient of the model's objective on the batch.
func (ng *NaturalGradient) NaturalStep(x *mat.Dense, y []float64, nTotal int, gamma float64) error {
	if !(gamma > 0 && gamma <= 1) {
		return fmt.Errorf("gp: NaturalStep: step size %v outside (0, 1]", gamma)
	}
	if err := ng.CheckLayout(true); err != nil {
		return err
	}
	p := ng.NumParams()
	params := make([]float64, p)
	ng.Params(params)
	grad := make([]float64, p)
	f, err := ng.Objective(x, y, nTotal, grad)
	if err != nil {
		return err
	}
	if why := checkEval(f, grad); why != "" {
		return errors.New("gp: NaturalStep: " + why)
	}
	next := make([]float64, p)
	if err := ng.NaturalUpdate(params, grad, next, gamma); err != nil {
		return err
	}
	return ng.SetParams(next)
}

// NaturalUpdate writes into next the parameters after a natural-gradient
// step of size gamma ∈ (0, 1] from params, where grad is the gradient of
// the objective at params: the entries of every factor get their natural
// step and all other entries are copied from params. It does not evaluate
// or change the model, which is how train.Fit takes the natural step and Adam's
// step from one evaluation (see train.NaturalUpdater). next must not overlap
// params or grad.
func (ng *NaturalGradient) NaturalUpdate(params, grad, next []float64, gamma float64) error {
	if !(gamma > 0 && gamma <= 1) {
		return fmt.Errorf("gp: NaturalUpdate: step size %v outside (0, 1]", gamma)
	}
	if err := ng.CheckLayout(true); err != nil {
		return err
	}
	p := ng.NumParams()
	if len(params) != p || len(grad) != p || len(next) != p {
		return fmt.Errorf("gp: NaturalUpdate: lengths %d, %d, %d for %d parameters", len(params), len(grad), len(next), p)
	}
	for i := range params {
		if math.IsNaN(params[i]) || math.IsInf(params[i], 0) || math.IsNaN(grad[i]) || math.IsInf(grad[i], 0) {
			return fmt.Errorf("gp: NaturalUpdate: parameter or gradient entry %d is not finite (%v, %v)", i, params[i], grad[i])
		}
	}
	copy(next, params)
	for i, fac := range ng.Factors {
		if err := ng.stepFactor(fac, params, grad, next, gamma); err != nil {
			return fmt.Errorf("gp: natural step: factor %d: %w", i, err)
		}
	}
	return nil
}

// stepFactor writes the updated mean and packed factor of fac into next.
func (ng *NaturalGradient) stepFactor(fac GaussianFactor, params, grad, next []float64, gamma float64) error {
	n := fac.N
	bi := blas.Implementation{Threads: ng.Threads}
	l := make([]float64, n*n)    // L
	lbar := make([]float64, n*n) // ∂F/∂L (lower)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			k := fac.Chol + i*(i+1)/2 + j
			v, g := params[k], grad[k]
			if i == j {
				if fac.LogDiag {
					v = math.Exp(v)
					g /= v // d exp(u)/du = L_ii
				} else {
					d := transform.SoftplusDeriv(v)
					v = transform.Softplus(v)
					g /= d
				}
			}
			l[i*n+j], lbar[i*n+j] = v, g
		}
	}
	// ∂F/∂S (full symmetric) from ∂F/∂L.
	sbar := make([]float64, n*n)
	if err := chol.Adjoint(n, l, n, lbar, n, sbar, n, ng.Threads); err != nil {
		return err
	}
	// Λ = S⁻¹ = L⁻ᵀL⁻¹ (triangular inverse, then Lᵀ·L product).
	lapack := chol.Implementation{Threads: ng.Threads}
	lam := append([]float64(nil), l...)
	if !lapack.Dtrtri(gblas.Lower, gblas.NonUnit, n, lam, n) {
		return errors.New("singular Cholesky factor")
	}
	lapack.Dlauum(gblas.Lower, n, lam, n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			lam[j*n+i] = lam[i*n+j]
		}
	}
	m := params[fac.Mean : fac.Mean+n]
	mbar := grad[fac.Mean : fac.Mean+n]
	// rhs = Λm + γ(∂F/∂m − 2·∂F/∂S·m), Λ ← Λ − 2γ·∂F/∂S.
	rhs := make([]float64, n)
	bi.Dgemv(gblas.NoTrans, n, n, 1, lam, n, m, 1, 0, rhs, 1)
	bi.Dgemv(gblas.NoTrans, n, n, -2*gamma, sbar, n, m, 1, 1, rhs, 1)
	for i := range rhs {
		rhs[i] += gamma * mbar[i]
	}
	// The new covariance is S = Λ⁻¹. Its lower Cholesky factor comes from
	// an upper-lower factorization of Λ: with J the reversal permutation
	// and J·Λ·J = L'·L'ᵀ, S = J·L'⁻ᵀ·L'⁻¹·J, so L_S = J·L'⁻ᵀ·J, which is
	// lower triangular. No explicit inverse of Λ is formed.
	rev := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			rev[(n-1-j)*n+(n-1-i)] = lam[i*n+j] - 2*gamma*sbar[i*n+j]
		}
	}
	var cl chol.Cholesky
	if _, err := cl.Factor(n, rev, n, chol.NoJitter(), ng.Threads); err != nil {
		return fmt.Errorf("new precision matrix: %w", err)
	}
	// New mean: Λ⁻¹·rhs = J·(L'L'ᵀ)⁻¹·J·rhs.
	rr := make([]float64, n)
	for i := range rr {
		rr[i] = rhs[n-1-i]
	}
	if err := cl.Solve(1, rr, 1); err != nil {
		return err
	}
	for i := range rhs {
		rhs[i] = rr[n-1-i]
	}
	lp := append([]float64(nil), cl.RawL()...)
	if !lapack.Dtrtri(gblas.Lower, gblas.NonUnit, n, lp, n) {
		return errors.New("singular factor of the new precision matrix")
	}
	lnew := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			lnew[i*n+j] = lp[(n-1-j)*n+(n-1-i)]
		}
	}
	copy(next[fac.Mean:fac.Mean+n], rhs)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := lnew[i*n+j]
			if i == j {
				if fac.LogDiag {
					v = math.Log(v)
				} else {
					v = transform.InvSoftplus(v)
				}
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("new Cholesky diagonal %v cannot be stored", lnew[i*n+j])
				}
			}
			next[fac.Chol+i*(i+1)/2+j] = v
		}
	}
	return nil
}

// checkEval returns why an evaluation is unusable, or "" if it is fine.
func checkEval(f float64, grad []float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Sprintf("objective is %v", f)
	}
	if i := floats.FirstNonFinite(grad); i >= 0 {
		return fmt.Sprintf("gradient entry %d is %v", i, grad[i])
	}
	return ""
}
