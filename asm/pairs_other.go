//go:build purego || noasm || !amd64

package asm

// rbfPairsKernelOK: there is no assembly pair kernel here.
const rbfPairsKernelOK = false

// rbfPairsKernel: there is no assembly pair kernel here; RBFPairRow runs
// rbfPairsGeneric throughout.
func rbfPairsKernel(acc *[24]float64, lo, n int, g, xn, t, w, dt, gs []float64, np, c, wp float64, flags int) int {
	return 0
}
