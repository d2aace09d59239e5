//go:build !purego && !noasm

package vecmath

import "golang.org/x/sys/cpu"

// expAVX2 sets dst[i] = eˣ for the first n elements of src (n a positive
// multiple of 4) with expFast's method, four at a time; dst may be src.
// Elements outside [expLo, expHi] (and NaN) give unspecified values, which
// expBlocks replaces. Implemented in exp_avx2_amd64.s. Its pure-Go twin
// is the loop dst[i], _ = expFast(src[i]); TestExpKernelTwin compares them
// bit for bit.
//
//go:noescape
func expAVX2(dst, src *float64, n int)

// expAVX512 is expAVX2 eight elements at a time (n a positive multiple of
// 8); with check it stops before the first group of eight that holds an
// argument outside [expLo, expHi] or NaN and returns the number of elements
// done. Implemented in exp_avx512_amd64.s.
//
//go:noescape
func expAVX512(dst, src *float64, n int, check bool) (done int)

// expKernelOK and expAVX512OK are fixed at start-up from the CPU features
// (which honour GODEBUG=cpu.avx2=off, cpu.fma=off and cpu.avx512f=off).
var (
	expKernelOK = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	expAVX512OK = expKernelOK && cpu.X86.HasAVX512F
)

// expKernel is the kernel of expBlocks: eight elements at a time with
// AVX-512, the last four (or all, without AVX-512) with AVX2.
func expKernel(dst, src []float64) {
	n := len(src)
	if n8 := n &^ 7; expAVX512OK && n8 > 0 {
		expAVX512(&dst[0], &src[0], n8, false)
		if n8 == n {
			return
		}
		dst, src = dst[n8:], src[n8:]
	}
	expAVX2(&dst[0], &src[0], len(src))
}

// expKernelInRange computes the elements of src (a multiple of 4 of them)
// into dst with expKernel up to the first group holding an argument outside
// [expLo, expHi] or NaN, and returns how many it did. With AVX-512 the
// kernel checks the arguments as it goes; otherwise the whole block is
// checked first.
func expKernelInRange(dst, src []float64) int {
	if !expAVX512OK {
		return expScanThenKernel(dst, src)
	}
	n := len(src)
	n8 := n &^ 7
	done := 0
	if n8 > 0 {
		done = expAVX512(&dst[0], &src[0], n8, true)
	}
	if done < n8 || n8 == n {
		return done
	}
	return n8 + expScanThenKernel(dst[n8:], src[n8:])
}
