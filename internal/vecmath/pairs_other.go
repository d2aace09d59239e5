//go:build purego || noasm || !(amd64 || arm64)

package vecmath

// rbfPairsKernelOK: there is no assembly pair kernel here.
const rbfPairsKernelOK = false

// rbfPairsKernel is never called here (rbfPairsKernelOK is false):
// RBFPairRow runs rbfPairsBlocked.
func rbfPairsKernel(acc *[24]float64, lo, n int, g, xn, t, w, dt, gs []float64, np, c, wp float64, flags int) int {
	return 0
}
