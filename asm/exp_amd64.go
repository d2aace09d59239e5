//go:build !purego && !noasm

package asm

import "golang.org/x/sys/cpu"

// expAVX2 sets dst[i] = eˣ for the first n elements of src (n a positive
// multiple of 4) with expFast's method, four at a time; dst may be src.
// Elements outside [expLo, expHi] (and NaN) give unspecified values, which
// expBlocks replaces. Implemented in exp_avx2_amd64.s.
//
//go:noescape
func expAVX2(dst, src *float64, n int)

// expKernelOK is fixed at start-up from the CPU features (which honour
// GODEBUG=cpu.avx2=off and cpu.fma=off).
var expKernelOK = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// expKernel is the kernel of expBlocks.
func expKernel(dst, src *float64, n int) { expAVX2(dst, src, n) }
