//go:build !purego && !noasm

package vecmath

// The fused radial-profile kernels of radial_avx2_amd64.s. Each sets
// dst[i] = v·g(src[i]) for the first n elements (n a positive multiple of
// 4), radialOne's operations without the underflow guard, and reports
// whether every exponential argument was in [expLo, expHi]; when it was
// not, the elements outside have unspecified values. dst may be src only
// when the caller keeps a copy of src (radialBlocks does). The pure-Go twin
// is radialOne per element; TestRadialProfileTwin compares them bit for bit.
//
//go:noescape
func rbfAVX2(dst, src *float64, n int, v float64) bool

// matern12AVX2 is rbfAVX2 for the Matérn-1/2 profile (radialOne with
// RadialMatern12).
//
//go:noescape
func matern12AVX2(dst, src *float64, n int, v float64) bool

// matern32AVX2 is rbfAVX2 for the Matérn-3/2 profile (radialOne with
// RadialMatern32).
//
//go:noescape
func matern32AVX2(dst, src *float64, n int, v float64) bool

// matern52AVX2 is rbfAVX2 for the Matérn-5/2 profile (radialOne with
// RadialMatern52).
//
//go:noescape
func matern52AVX2(dst, src *float64, n int, v float64) bool

// radialKernelOK is fixed at start-up, like expKernelOK.
var radialKernelOK = expKernelOK

// radialKernel runs the kernel of profile g.
func radialKernel(dst, src *float64, n int, g Radial, v float64) bool {
	switch g {
	case RadialRBF:
		return rbfAVX2(dst, src, n, v)
	case RadialMatern12:
		return matern12AVX2(dst, src, n, v)
	case RadialMatern32:
		return matern32AVX2(dst, src, n, v)
	default:
		return matern52AVX2(dst, src, n, v)
	}
}

// The fused weight kernels of radial_avx2_amd64.s: RadialWeights on the
// first n elements (n a positive multiple of 4), returning the combined
// partial sums. w may be s. The pure-Go twin is radialWeightOne per
// element with the same four partial sums; TestRadialWeightsTwin compares
// them bit for bit.
//
//go:noescape
func rbfWeightsAVX2(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)

// matern12WeightsAVX2 is rbfWeightsAVX2 for the Matérn-1/2 profile.
//
//go:noescape
func matern12WeightsAVX2(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)

// matern32WeightsAVX2 is rbfWeightsAVX2 for the Matérn-3/2 profile.
//
//go:noescape
func matern32WeightsAVX2(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)

// matern52WeightsAVX2 is rbfWeightsAVX2 for the Matérn-5/2 profile.
//
//go:noescape
func matern52WeightsAVX2(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)

// radialWeightsKernel runs the weight kernel of profile g.
func radialWeightsKernel(w, s, dk, kk *float64, n int, g Radial, iv float64) (sumG, sumWs float64) {
	switch g {
	case RadialRBF:
		return rbfWeightsAVX2(w, s, dk, kk, n, iv)
	case RadialMatern12:
		return matern12WeightsAVX2(w, s, dk, kk, n, iv)
	case RadialMatern32:
		return matern32WeightsAVX2(w, s, dk, kk, n, iv)
	default:
		return matern52WeightsAVX2(w, s, dk, kk, n, iv)
	}
}
