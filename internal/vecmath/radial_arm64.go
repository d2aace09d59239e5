//go:build !purego && !noasm

package vecmath

// The fused radial-profile kernels of radial_neon_arm64.s, with the
// contract of their AVX2 counterparts (radial_amd64.go).
//
//go:noescape
func rbfNEON(dst, src *float64, n int, v float64) bool

// matern12NEON is matern12AVX2 on arm64.
//
//go:noescape
func matern12NEON(dst, src *float64, n int, v float64) bool

// matern32NEON is matern32AVX2 on arm64.
//
//go:noescape
func matern32NEON(dst, src *float64, n int, v float64) bool

// matern52NEON is matern52AVX2 on arm64.
//
//go:noescape
func matern52NEON(dst, src *float64, n int, v float64) bool

// radialKernelOK: NEON is mandatory on arm64.
const radialKernelOK = true

// radialKernel runs the kernel of profile g.
func radialKernel(dst, src *float64, n int, g Radial, v float64) bool {
	switch g {
	case RadialRBF:
		return rbfNEON(dst, src, n, v)
	case RadialMatern12:
		return matern12NEON(dst, src, n, v)
	case RadialMatern32:
		return matern32NEON(dst, src, n, v)
	default:
		return matern52NEON(dst, src, n, v)
	}
}

// The fused weight kernels of radial_neon_arm64.s (see radial_amd64.go).
//
//go:noescape
func rbfWeightsNEON(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)

// matern12WeightsNEON is matern12WeightsAVX2 on arm64.
//
//go:noescape
func matern12WeightsNEON(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)

// matern32WeightsNEON is matern32WeightsAVX2 on arm64.
//
//go:noescape
func matern32WeightsNEON(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)

// matern52WeightsNEON is matern52WeightsAVX2 on arm64.
//
//go:noescape
func matern52WeightsNEON(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)

// radialWeightsKernel runs the weight kernel of profile g.
func radialWeightsKernel(w, s, dk, kk *float64, n int, g Radial, iv float64) (sumG, sumWs float64) {
	switch g {
	case RadialRBF:
		return rbfWeightsNEON(w, s, dk, kk, n, iv)
	case RadialMatern12:
		return matern12WeightsNEON(w, s, dk, kk, n, iv)
	case RadialMatern32:
		return matern32WeightsNEON(w, s, dk, kk, n, iv)
	default:
		return matern52WeightsNEON(w, s, dk, kk, n, iv)
	}
}
