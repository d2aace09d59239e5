//go:build purego || noasm || !(amd64 || arm64)

package vecmath

// kernelGradKernel: there is no assembly kernel here; KernelGradRow runs
// kernelGradGeneric throughout.
func kernelGradKernel(acc *[8]float64, n int, e, t, w, dv, cs []float64, a float64) int {
	return 0
}
