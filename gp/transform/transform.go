// Package transform maps constrained model parameters (positive scales,
// variances, Cholesky diagonals) to and from the unconstrained values that
// optimizers update.
//
// Positive parameters use the softplus map p = log(1 + exp(u)), which is
// close to the identity for large values and to exp(u) for small ones, so
// that gradient steps stay well scaled at both ends. Softplus and its
// inverse are evaluated without overflow or cancellation for every finite
// argument.
package transform

import "math"

// Softplus returns log(1 + exp(u)), the positive value of an unconstrained u.
func Softplus(u float64) float64 {
	if u > 0 {
		return u + math.Log1p(math.Exp(-u))
	}
	return math.Log1p(math.Exp(u))
}

// SoftplusDeriv returns d Softplus(u) / du = 1 / (1 + exp(-u)).
func SoftplusDeriv(u float64) float64 {
	if u >= 0 {
		return 1 / (1 + math.Exp(-u))
	}
	e := math.Exp(u)
	return e / (1 + e)
}

// InvSoftplus returns the unconstrained u with Softplus(u) = p, for p > 0.
// It returns NaN for p <= 0 or NaN, and +Inf for p = +Inf.
func InvSoftplus(p float64) float64 {
	switch {
	case !(p > 0):
		return math.NaN()
	case p > 30:
		// log(exp(p) - 1) = p + log(1 - exp(-p)).
		return p + math.Log1p(-math.Exp(-p))
	default:
		return math.Log(math.Expm1(p))
	}
}
