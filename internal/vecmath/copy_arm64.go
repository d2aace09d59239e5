//go:build !purego && !noasm

package vecmath

// The arm64 copy kernels take the block geometry as "carry" strides in bytes
// (see copyCarry). NEON (ASIMD) is mandatory on arm64, so it is always used.

// copyBlockNEON copies a block of runs (copy_neon_arm64.s).
// It computes copyBlockGeneric's Go loop, bit for bit
// (TestCopyBlockBackends).
//
//go:noescape
func copyBlockNEON(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copyBlockAddNEON accumulates a block of runs (copy_neon_arm64.s).
// It computes copyBlockAddGeneric's Go loop, bit for bit
// (TestCopyBlockBackends).
//
//go:noescape
func copyBlockAddNEON(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

var copyNEONImpl = copyImpl{"neon",
	func(dst, src []float64, g *CopyGeom) { copyCall(copyBlockNEON, dst, src, g) },
	func(dst, src []float64, g *CopyGeom) { copyCall(copyBlockNEON, dst, src, g) }, // no slack kernels
	func(dst, src []float64, g *CopyGeom) { copyCall(copyBlockAddNEON, dst, src, g) },
	copyStreamGeneric} // plain stores on arm64

// copyImpls lists every backend this CPU can run, generic first.
var copyImpls = []copyImpl{copyGenericImpl, copyNEONImpl}

var copyBackend = "neon"

func copyBlockImpl(dst, src []float64, g *CopyGeom)      { copyCall(copyBlockNEON, dst, src, g) }
func copyBlockSlackImpl(dst, src []float64, g *CopyGeom) { copyCall(copyBlockNEON, dst, src, g) }
func copyBlockAddImpl(dst, src []float64, g *CopyGeom) {
	copyCall(copyBlockAddNEON, dst, src, g)
}

func copyStreamImpl(dst, src []float64) { copyStreamGeneric(dst, src) }
