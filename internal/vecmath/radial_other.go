//go:build purego || noasm || !(amd64 || arm64)

package vecmath

// radialKernelOK: no fused radial kernels here, so RadialProfile and
// RadialWeights run their pure-Go paths throughout.
const radialKernelOK = false

// radialKernel is never called here (radialKernelOK is false).
func radialKernel(dst, src *float64, n int, g Radial, v float64) bool {
	panic("vecmath: no radial kernel")
}

// radialWeightsKernel is never called here (radialKernelOK is false).
func radialWeightsKernel(w, s, dk, kk *float64, n int, g Radial, iv float64) (sumG, sumWs float64) {
	panic("vecmath: no radial kernel")
}
