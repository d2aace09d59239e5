//go:build !purego && !noasm

package asm

import "golang.org/x/sys/cpu"

// Flags of the KernelGradRow kernel.
const (
	gradDV = 1 << iota // dv[j] += v_j
	gradT              // h_j = t[j]·v_j
)

// kernelGradAVX512 does elements 0 ≤ j < n of KernelGradRow (n a positive
// multiple of 8), eight per ZMM register, adding r_j into acc[j mod 8].
// flags has gradDV for dv and gradT for t; when they are absent dv and t
// must still point at n valid elements, which the kernel neither reads nor
// writes (masked out). Implemented in gradrow_avx512_amd64.s.
//
//go:noescape
func kernelGradAVX512(e, t, w, dv, cs *float64, n int, a float64, flags int, acc *[8]float64)

// kernelGradKernelOK reports whether kernelGradKernel has an assembly
// kernel (fixed at start-up from the CPU features; the kernel needs
// AVX-512F only, unlike the pair kernel, whose exponential follows Exp's
// AVX2+FMA kernels).
var kernelGradKernelOK = cpu.X86.HasAVX512F

// kernelGradKernel runs kernelGradAVX512 on the first n elements (n a
// positive multiple of 8) if the CPU has AVX-512 and returns the number of
// elements done.
func kernelGradKernel(acc *[8]float64, n int, e, t, w, dv, cs []float64, a float64) int {
	if !kernelGradKernelOK {
		return 0
	}
	// Absent operands point at w (read) and cs (written anyway); see
	// rbfPairsKernel: an unmapped address would make every masked-out
	// access a microcode assist.
	pt, pdv, flags := &w[0], &cs[0], 0
	if t != nil {
		pt, flags = &t[0], flags|gradT
	}
	if dv != nil {
		pdv, flags = &dv[0], flags|gradDV
	}
	kernelGradAVX512(&e[0], pt, &w[0], pdv, &cs[0], n, a, flags, acc)
	return n
}
