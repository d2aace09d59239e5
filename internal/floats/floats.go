// Package floats holds the finiteness checks that the training loop and
// the models run over whole parameter and gradient vectors every step.
// They check four values per iteration without a branch per value, which
// matters at ten million parameters.
package floats

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
