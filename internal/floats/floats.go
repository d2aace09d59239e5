// Package floats holds the finiteness checks that the training loop and
// the models run over whole parameter and gradient vectors every step.
// They check four values per iteration without a branch per value, which
// matters at ten million parameters. EqualBits is the bit-for-bit
// comparison that reproducibility checks and tests use.
package floats

import "math"

// AllFinite reports whether every element of s is finite (neither NaN nor
// ±Inf).
func AllFinite(s []float64) bool {
	// v·0 is ±0 for finite v and NaN for NaN or ±Inf; four sums of them
	// check four values per step without a branch per value.
	var a0, a1, a2, a3 float64
	i := 0
	for ; i+4 <= len(s); i += 4 {
		a0 += s[i] * 0
		a1 += s[i+1] * 0
		a2 += s[i+2] * 0
		a3 += s[i+3] * 0
	}
	for ; i < len(s); i++ {
		a0 += s[i] * 0
	}
	return (a0+a1)+(a2+a3) == 0
}

// FirstNonFinite returns the index of the first element of s that is NaN or
// ±Inf, or -1 if every element is finite.
func FirstNonFinite(s []float64) int {
	if AllFinite(s) {
		return -1
	}
	for i, v := range s {
		if v*0 != 0 {
			return i
		}
	}
	return -1 // not reached
}

// EqualBits reports whether a and b have the same length and the same
// bits in every element: NaNs of the same payload are equal, and 0 and
// −0 are not.
func EqualBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}
