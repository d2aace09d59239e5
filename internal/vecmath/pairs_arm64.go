//go:build !purego && !noasm

package vecmath

// rbfPairsNEON is rbfPairsAVX2 (pairs_amd64.go) on arm64: the same
// operations and contract, groups of eight done as two halves of four
// elements. Implemented in pairs_neon_arm64.s.
//
//go:noescape
func rbfPairsNEON(ip, xn, t, w, dt, gs *float64, n int, np, c, wp float64, flags int, acc *[24]float64) (done int)

// rbfPairsKernelOK: NEON is mandatory on arm64.
const rbfPairsKernelOK = true

// rbfPairsKernel runs rbfPairsNEON on elements lo ≤ j < lo+n (lo a
// multiple of 8, so that lanes stay j mod 8) and returns the number of
// elements done. Only RBFPairRow calls it.
func rbfPairsKernel(acc *[24]float64, lo, n int, g, xn, t, w, dt, gs []float64, np, c, wp float64, flags int) int {
	pdt, pgs := pairOperands(lo, g, t, dt, gs, flags)
	return rbfPairsNEON(&g[lo], &xn[lo], &t[lo], &w[lo], pdt, pgs, n, np, c, wp, flags, acc)
}
