package chol

import (
	"fmt"
	"math"
)

// JitterPolicy controls the diagonal jitter added when a matrix fails to
// factor. The first attempt always uses the matrix as given; attempt
// t = 1, …, MaxTries then factors A + jitter_t·I with
//
//	jitter_t = Start · scale · Growth^(t-1),
//
// where scale = mean(diag(A)) (or 1 if that mean is not positive). The zero
// value is the no-jitter policy.
type JitterPolicy struct {
	// Start is the first relative jitter; it must be positive and finite
	// when MaxTries > 0.
	Start float64
	// Growth multiplies the jitter after each failed attempt. Zero means
	// the default 10; otherwise it must be finite and > 1.
	Growth float64
	// MaxTries bounds the number of jittered attempts (0: never jitter).
	MaxTries int
	// MinPivot, when positive, is a relative floor on the pivots: an
	// attempt whose factor has a squared diagonal entry L_ii² below
	// MinPivot · scale fails at pivot i as a non-positive pivot would (the
	// error's Floor then says why). A Cholesky factorization that succeeds
	// with such a pivot is dominated by rounding: solves with the factor
	// amplify the rounding errors of their right-hand sides by up to
	// 1/L_ii², so K_vu·K_uu⁻¹·K_uv loses all accuracy as L_ii² nears
	// ε·mean(diag(A)). It must be finite and not negative; 0 accepts any
	// positive pivot.
	MinPivot float64
}

// DefaultJitter returns the policy recommended for GP kernel matrices: no
// jitter if the matrix factors with every squared pivot at least 1e-11
// times the mean diagonal, else relative jitter 1e-10, 1e-9, …, 1e-4 times
// the mean diagonal (7 tries, growth 10).
func DefaultJitter() JitterPolicy {
	return JitterPolicy{Start: 1e-10, Growth: 10, MaxTries: 7, MinPivot: 1e-11}
}

// NoJitter returns the policy that never adds jitter (the zero value).
func NoJitter() JitterPolicy { return JitterPolicy{} }

// Validate reports whether p is a valid policy; the error wraps ErrPolicy.
func (p JitterPolicy) Validate() error {
	switch {
	case !(p.MinPivot >= 0) || math.IsInf(p.MinPivot, 0):
		return fmt.Errorf("%w: MinPivot = %g must be finite and not negative", ErrPolicy, p.MinPivot)
	case p.MaxTries < 0:
		return fmt.Errorf("%w: MaxTries = %d < 0", ErrPolicy, p.MaxTries)
	case p.MaxTries == 0:
		return nil
	case !(p.Start > 0) || math.IsInf(p.Start, 0):
		return fmt.Errorf("%w: Start = %g must be positive and finite", ErrPolicy, p.Start)
	case p.Growth != 0 && (!(p.Growth > 1) || math.IsInf(p.Growth, 0)):
		return fmt.Errorf("%w: Growth = %g must be 0 (default 10) or finite and > 1", ErrPolicy, p.Growth)
	}
	return nil
}

// growth returns the effective growth factor.
func (p JitterPolicy) growth() float64 {
	if p.Growth == 0 {
		return 10
	}
	return p.Growth
}

// MeanDiag returns mean(diag(A)) of the n×n matrix (a, lda), as Factor
// computes it for its jitter scale: the diagonal's sum divided by n, or,
// when that sum overflows, the sum of a_ii/n.
func MeanDiag(n int, a []float64, lda int) float64 {
	if n <= 0 {
		return 0
	}
	var s float64
	for i := 0; i < n; i++ {
		s += a[i*lda+i]
	}
	mean := s / float64(n)
	if math.IsInf(mean, 0) {
		mean = 0
		for i := 0; i < n; i++ {
			mean += a[i*lda+i] / float64(n)
		}
	}
	return mean
}

// AddJitterAdjoint accounts for a jitter's dependence on the matrix it is
// relative to when back-propagating through a factorization. A policy adds
// jit = c·mean(diag(R)) to the diagonal, with c fixed by the policy and
// the attempt that succeeded, and R the factored matrix A itself (or, for
// a caller that rescales the policy, another reference matrix). With Ā the
// adjoint of the jittered matrix (abar, n×n, stride ldabar; only its
// diagonal is read), the gradient with respect to R gains
// tr(Ā)·jit/(n·mean(diag(R))) on every diagonal entry; AddJitterAdjoint
// adds that to the diagonal of rbar (n×n, stride ldrbar, which may be
// abar). mean is mean(diag(R)) as MeanDiag computes it. Nothing is added if
// jit is zero (no jitter was needed) or mean is not positive and finite
// (the policy then scales by 1, a constant).
func AddJitterAdjoint(n int, jit, mean float64, abar []float64, ldabar int, rbar []float64, ldrbar int) {
	if !(jit > 0) || !(mean > 0) || math.IsInf(mean, 0) || n <= 0 {
		return
	}
	if err := checkMat("abar", n, n, abar, ldabar); err != nil {
		panic(err)
	}
	if err := checkMat("rbar", n, n, rbar, ldrbar); err != nil {
		panic(err)
	}
	var tr float64
	for i := 0; i < n; i++ {
		tr += abar[i*ldabar+i]
	}
	g := tr * (jit / mean / float64(n))
	for i := 0; i < n; i++ {
		rbar[i*ldrbar+i] += g
	}
}
