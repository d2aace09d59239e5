//go:build !purego && !noasm

#include "textflag.h"

// Slack copy kernels (CopyBlockSlack) for strided blocks of short float64
// runs whose destinations come in increasing order in dst. Each run is moved
// with a fixed number of full-width vector loads and stores, v elements with
// v >= run, and no tail handling: the v-run values stored past the end of a
// run land in the gap before the next run or are overwritten by the next
// run (which starts at or after the end of this one), and past the last run
// they land in the caller's slack. The loads likewise read up to v-run
// elements past each source run.
//
// Go signatures (copy_amd64.go), arguments as for copyBlockAVX2 (run is
// unused; the kernel's width bounds it):
//
//	func copySlack1AVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)   // run <= 4:  1 YMM
//	func copySlack2AVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)   // run <= 8:  2 YMM
//	func copySlack3AVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)   // run <= 12: 3 YMM
//	func copySlack4AVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)   // run <= 16: 4 YMM
//	func copySlack1AVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int) // run <= 8:  1 ZMM
//	func copySlack2AVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int) // run <= 16: 2 ZMM
//
// Register map: SI/DI source/destination run pointers; R8 n0, BX n1; R9,
// R10, R11 level countdowns; R12 s0, R13 s1, R14 d0, R15 d1 (s2, d2 from the
// frame); Y0-Y3 or Z0-Z1 data.

// func copySlack1AVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
TEXT ·copySlack1AVX2(SB), NOSPLIT, $0-96
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n0+24(FP), R8
	MOVQ n1+32(FP), BX
	MOVQ n2+40(FP), R11
	MOVQ s0+48(FP), R12
	MOVQ s1+56(FP), R13
	MOVQ d0+72(FP), R14
	MOVQ d1+80(FP), R15

level2:
	MOVQ BX, R10

level1:
	MOVQ R8, R9

level0:
	VMOVUPD (SI), Y0
	VMOVUPD Y0, (DI)
	ADDQ    R12, SI
	ADDQ    R14, DI
	DECQ    R9
	JNZ     level0
	ADDQ    R13, SI
	ADDQ    R15, DI
	DECQ    R10
	JNZ     level1
	ADDQ    s2+64(FP), SI
	ADDQ    d2+88(FP), DI
	DECQ    R11
	JNZ     level2

	VZEROUPPER
	RET

// func copySlack2AVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
TEXT ·copySlack2AVX2(SB), NOSPLIT, $0-96
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n0+24(FP), R8
	MOVQ n1+32(FP), BX
	MOVQ n2+40(FP), R11
	MOVQ s0+48(FP), R12
	MOVQ s1+56(FP), R13
	MOVQ d0+72(FP), R14
	MOVQ d1+80(FP), R15

level2:
	MOVQ BX, R10

level1:
	MOVQ R8, R9

level0:
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	ADDQ    R12, SI
	ADDQ    R14, DI
	DECQ    R9
	JNZ     level0
	ADDQ    R13, SI
	ADDQ    R15, DI
	DECQ    R10
	JNZ     level1
	ADDQ    s2+64(FP), SI
	ADDQ    d2+88(FP), DI
	DECQ    R11
	JNZ     level2

	VZEROUPPER
	RET

// func copySlack3AVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
TEXT ·copySlack3AVX2(SB), NOSPLIT, $0-96
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n0+24(FP), R8
	MOVQ n1+32(FP), BX
	MOVQ n2+40(FP), R11
	MOVQ s0+48(FP), R12
	MOVQ s1+56(FP), R13
	MOVQ d0+72(FP), R14
	MOVQ d1+80(FP), R15

level2:
	MOVQ BX, R10

level1:
	MOVQ R8, R9

level0:
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD 64(SI), Y2
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	ADDQ    R12, SI
	ADDQ    R14, DI
	DECQ    R9
	JNZ     level0
	ADDQ    R13, SI
	ADDQ    R15, DI
	DECQ    R10
	JNZ     level1
	ADDQ    s2+64(FP), SI
	ADDQ    d2+88(FP), DI
	DECQ    R11
	JNZ     level2

	VZEROUPPER
	RET

// func copySlack4AVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
TEXT ·copySlack4AVX2(SB), NOSPLIT, $0-96
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n0+24(FP), R8
	MOVQ n1+32(FP), BX
	MOVQ n2+40(FP), R11
	MOVQ s0+48(FP), R12
	MOVQ s1+56(FP), R13
	MOVQ d0+72(FP), R14
	MOVQ d1+80(FP), R15

level2:
	MOVQ BX, R10

level1:
	MOVQ R8, R9

level0:
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD 64(SI), Y2
	VMOVUPD 96(SI), Y3
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ    R12, SI
	ADDQ    R14, DI
	DECQ    R9
	JNZ     level0
	ADDQ    R13, SI
	ADDQ    R15, DI
	DECQ    R10
	JNZ     level1
	ADDQ    s2+64(FP), SI
	ADDQ    d2+88(FP), DI
	DECQ    R11
	JNZ     level2

	VZEROUPPER
	RET

// func copySlack1AVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
TEXT ·copySlack1AVX512(SB), NOSPLIT, $0-96
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n0+24(FP), R8
	MOVQ n1+32(FP), BX
	MOVQ n2+40(FP), R11
	MOVQ s0+48(FP), R12
	MOVQ s1+56(FP), R13
	MOVQ d0+72(FP), R14
	MOVQ d1+80(FP), R15

level2:
	MOVQ BX, R10

level1:
	MOVQ R8, R9

level0:
	VMOVUPD (SI), Z0
	VMOVUPD Z0, (DI)
	ADDQ    R12, SI
	ADDQ    R14, DI
	DECQ    R9
	JNZ     level0
	ADDQ    R13, SI
	ADDQ    R15, DI
	DECQ    R10
	JNZ     level1
	ADDQ    s2+64(FP), SI
	ADDQ    d2+88(FP), DI
	DECQ    R11
	JNZ     level2

	VZEROUPPER
	RET

// func copySlack2AVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
TEXT ·copySlack2AVX512(SB), NOSPLIT, $0-96
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n0+24(FP), R8
	MOVQ n1+32(FP), BX
	MOVQ n2+40(FP), R11
	MOVQ s0+48(FP), R12
	MOVQ s1+56(FP), R13
	MOVQ d0+72(FP), R14
	MOVQ d1+80(FP), R15

level2:
	MOVQ BX, R10

level1:
	MOVQ R8, R9

level0:
	VMOVUPD (SI), Z0
	VMOVUPD 64(SI), Z1
	VMOVUPD Z0, (DI)
	VMOVUPD Z1, 64(DI)
	ADDQ    R12, SI
	ADDQ    R14, DI
	DECQ    R9
	JNZ     level0
	ADDQ    R13, SI
	ADDQ    R15, DI
	DECQ    R10
	JNZ     level1
	ADDQ    s2+64(FP), SI
	ADDQ    d2+88(FP), DI
	DECQ    R11
	JNZ     level2

	VZEROUPPER
	RET
