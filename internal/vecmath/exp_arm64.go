//go:build !purego && !noasm

package vecmath

// expNEON sets dst[i] = eˣ for the first n elements of src (n a positive
// multiple of 4) with expFast's method; dst may be src. Elements outside
// [expLo, expHi] (and NaN) give unspecified values, which expBlocks
// replaces. Implemented in exp_neon_arm64.s. Its pure-Go twin is the loop
// dst[i], _ = expFast(src[i]) (TestExpKernelTwin).
//
//go:noescape
func expNEON(dst, src *float64, n int)

// expKernelOK: NEON is mandatory on arm64.
const expKernelOK = true

// expKernel is the kernel of expBlocks.
func expKernel(dst, src []float64) { expNEON(&dst[0], &src[0], len(src)) }

// expKernelInRange is expScanThenKernel: the NEON kernel does not check its
// arguments.
func expKernelInRange(dst, src []float64) int { return expScanThenKernel(dst, src) }
