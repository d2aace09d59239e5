//go:build !purego && !noasm

package asm

// expNEON sets dst[i] = eˣ for the first n elements of src (n a positive
// multiple of 4) with expFast's method; dst may be src. Elements outside
// [expLo, expHi] (and NaN) give unspecified values, which expBlocks
// replaces. Implemented in exp_neon_arm64.s. NEON is mandatory on arm64.
//
//go:noescape
func expNEON(dst, src *float64, n int)

// expImpl computes the longest prefix of Exp whose length is a multiple of
// 4 and returns its length.
func expImpl(dst, src []float64) int {
	n := len(src) &^ 3
	if n == 0 {
		return 0
	}
	expBlocks(dst[:n], src[:n])
	return n
}

// expKernel is the kernel of expBlocks.
func expKernel(dst, src *float64, n int) { expNEON(dst, src, n) }
