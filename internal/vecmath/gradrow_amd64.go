//go:build !purego && !noasm

package vecmath

import "golang.org/x/sys/cpu"

// kernelGradAVX512 does elements 0 ≤ j < n of KernelGradRow (n a positive
// multiple of 8), eight per ZMM register, adding r_j into acc[j mod 8].
// flags has gradDV for dv and gradT for t; when they are absent dv and t
// must still point at n valid elements, which the kernel neither reads nor
// writes (masked out). Implemented in gradrow_avx512_amd64.s. Its pure-Go
// twin is kernelGradGeneric(acc, 0, n, …); TestKernelGradRowTwin compares
// them bit for bit.
//
//go:noescape
func kernelGradAVX512(e, t, w, dv, cs *float64, n int, a float64, flags int, acc *[8]float64)

// kernelGradAVX2 is kernelGradAVX512 on AVX2 machines: the same operations
// on groups of eight held as two YMM halves (lanes 0–3 and 4–7), the
// options as branches. Implemented in gradrow_avx2_amd64.s.
//
//go:noescape
func kernelGradAVX2(e, t, w, dv, cs *float64, n int, a float64, flags int, acc *[8]float64)

// The kernels of kernelGradKernel, fixed at start-up from the CPU features
// (which honour GODEBUG=cpu.avx512f=off and cpu.avx2=off).
var (
	kernelGradAVX512OK = cpu.X86.HasAVX512F
	kernelGradAVX2OK   = cpu.X86.HasAVX2
)

// kernelGradKernel runs kernelGradAVX512 (or kernelGradAVX2) on the first
// n elements (n a positive multiple of 8) if the CPU has one of them, and
// returns the number of elements done.
func kernelGradKernel(acc *[8]float64, n int, e, t, w, dv, cs []float64, a float64) int {
	if !kernelGradAVX512OK && !kernelGradAVX2OK {
		return 0
	}
	pt, pdv, flags := gradOperands(t, w, dv, cs)
	if kernelGradAVX512OK {
		kernelGradAVX512(&e[0], pt, &w[0], pdv, &cs[0], n, a, flags, acc)
	} else {
		kernelGradAVX2(&e[0], pt, &w[0], pdv, &cs[0], n, a, flags, acc)
	}
	return n
}
