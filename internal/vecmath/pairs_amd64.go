//go:build !purego && !noasm

package vecmath

// rbfPairsAVX512 adds elements 0 ≤ j < n of RBFPairRow (n a positive
// multiple of 8; the slices start at the first of them) into the partial
// sums acc, eight elements per ZMM register, and returns the number of
// elements done: it stops before the first group of eight that holds an
// exponential argument outside [expLo, expHi] and not below −746 (where
// math.Exp gives +0, which the kernel writes), or NaN, writing nothing of
// that group. When flags does not ask for dt or gs they must still point at
// n readable elements, which the kernel neither reads nor writes.
// Implemented in pairs_avx512_amd64.s. Its pure-Go twin is
// rbfPairsGeneric(acc, 0, n, …); TestRBFPairRowTwin compares them bit for
// bit.
//
//go:noescape
func rbfPairsAVX512(ip, xn, t, w, dt, gs *float64, n int, np, c, wp float64, flags int, acc *[24]float64) (done int)

// rbfPairsAVX2 is rbfPairsAVX512 on AVX2+FMA machines: the same
// operations on groups of eight held as two YMM halves (lanes 0–3 and 4–7),
// the options as branches. Implemented in pairs_avx2_amd64.s.
//
//go:noescape
func rbfPairsAVX2(ip, xn, t, w, dt, gs *float64, n int, np, c, wp float64, flags int, acc *[24]float64) (done int)

// rbfPairsKernelOK reports whether rbfPairsKernel has an assembly kernel
// (fixed at start-up, like Exp's kernels: AVX-512, else AVX2+FMA).
var rbfPairsKernelOK = expKernelOK

// rbfPairsKernel runs rbfPairsAVX512 (or rbfPairsAVX2) on elements
// lo ≤ j < lo+n (lo a multiple of 8, so that lanes stay j mod 8) and
// returns the number of elements done. Only RBFPairRow calls it, when
// rbfPairsKernelOK.
func rbfPairsKernel(acc *[24]float64, lo, n int, g, xn, t, w, dt, gs []float64, np, c, wp float64, flags int) int {
	pdt, pgs := pairOperands(lo, g, t, dt, gs, flags)
	if expAVX512OK {
		return rbfPairsAVX512(&g[lo], &xn[lo], &t[lo], &w[lo], pdt, pgs, n, np, c, wp, flags, acc)
	}
	return rbfPairsAVX2(&g[lo], &xn[lo], &t[lo], &w[lo], pdt, pgs, n, np, c, wp, flags, acc)
}
