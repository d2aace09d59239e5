//go:build !purego && !noasm

package vecmath

// kernelGradNEON is kernelGradAVX2 (gradrow_amd64.go) on arm64: the same
// operations and contract, eight elements per group in four registers.
// Implemented in gradrow_neon_arm64.s.
//
//go:noescape
func kernelGradNEON(e, t, w, dv, cs *float64, n int, a float64, flags int, acc *[8]float64)

// kernelGradKernel runs kernelGradNEON on the first n elements (n a
// positive multiple of 8) and returns n.
func kernelGradKernel(acc *[8]float64, n int, e, t, w, dv, cs []float64, a float64) int {
	pt, pdv, flags := gradOperands(t, w, dv, cs)
	kernelGradNEON(&e[0], pt, &w[0], pdv, &cs[0], n, a, flags, acc)
	return n
}
