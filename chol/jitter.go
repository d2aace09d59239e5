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
}

// DefaultJitter returns the policy recommended for GP kernel matrices: no
// jitter if the matrix factors, else relative jitter 1e-10, 1e-9, …, 1e-4
// times the mean diagonal (7 tries, growth 10).
func DefaultJitter() JitterPolicy {
	return JitterPolicy{Start: 1e-10, Growth: 10, MaxTries: 7}
}

// NoJitter returns the policy that never adds jitter (the zero value).
func NoJitter() JitterPolicy { return JitterPolicy{} }

// Validate reports whether p is a valid policy; the error wraps ErrPolicy.
func (p JitterPolicy) Validate() error {
	switch {
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
