//go:build !purego && !noasm

package asm

import (
	"math"

	"golang.org/x/sys/cpu"
)

// expAVX2 sets dst[i] = eˣ for the first n elements of src (n a positive
// multiple of 4) with expFast's method, four at a time; dst may be src. The
// caller guarantees every element is within [expLo, expHi]. Implemented in
// exp_avx2_amd64.s.
//
//go:noescape
func expAVX2(dst, src *float64, n int)

// useExpAVX2 is fixed at start-up from the CPU features (which honour
// GODEBUG=cpu.avx2=off and cpu.fma=off).
var useExpAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// expBlock is the number of elements whose range expImpl checks before
// handing them to the kernel.
const expBlock = 256

// expImpl computes the longest prefix of Exp whose length is a multiple of
// 4 and returns its length. Blocks with an argument outside the fast range
// (or NaN) still go through the kernel, from a copy of the block (dst may be
// src), and those elements are then recomputed with math.Exp, as
// expGeneric does: kernel matrices of points far apart have many arguments
// below expLo, and sending their whole blocks to the scalar loop cost more
// than the exponentials in range.
func expImpl(dst, src []float64) int {
	n := len(src) &^ 3
	if !useExpAVX2 || n == 0 {
		return 0
	}
	var buf [expBlock]float64
	for i := 0; i < n; i += expBlock {
		s := src[i:min(i+expBlock, n)]
		d := dst[i : i+len(s)]
		ok := true
		for _, x := range s {
			if !(x >= expLo && x <= expHi) {
				ok = false
				break
			}
		}
		if ok {
			expAVX2(&d[0], &s[0], len(s))
			continue
		}
		b := buf[:len(s)]
		copy(b, s)
		expAVX2(&d[0], &b[0], len(b))
		for j, x := range b {
			if !(x >= expLo && x <= expHi) {
				d[j] = math.Exp(x)
			}
		}
	}
	return n
}
