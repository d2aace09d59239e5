//go:build !purego && !noasm

#include "textflag.h"
#include "vec_neon_arm64.h"

// NEON kernel of KernelGradRow (gradrow.go): the AVX2 kernel's operations
// (gradrow_avx2_amd64.s) on groups of eight elements held in four registers
// of two lanes, the partial sums in four more. kernelGradGeneric is the
// pure-Go twin, operation for operation, so both give the same bits. The
// arithmetic is written with the macros of vec_neon_arm64.h over register
// numbers.
//
// Go signature (gradrow_arm64.go):
//
//	func kernelGradNEON(e, t, w, dv, cs *float64, n int, a float64, flags int, acc *[8]float64)
//
// n is a positive multiple of 8. The options of flags (gradDV, gradT) are
// branches, taken the same way for every group; dv and t are not touched
// when not asked for.
//
// Register map: R0 e, R1 t, R2 w, R3 dv, R4 cs (each advanced with the
// elements), R5 elements left, R6 acc, R7 flags; V0–V3 v then h, V4–V7 dv,
// V8–V11 t, V12–V15 w, V16–V19 r, V20–V23 cs, V24–V27 the partial sums
// (lanes 0–1, 2–3, 4–5, 6–7), V31 a.

// MUL4 sets d+i = n+i · m+i (i = 0 … 3); MULA4 the same with m for all.
#define MUL4(d, n, m) \
	VFMUL(d, n, m) \
	VFMUL(d+1, n+1, m+1) \
	VFMUL(d+2, n+2, m+2) \
	VFMUL(d+3, n+3, m+3)
#define MULA4(d, n, m) \
	VFMUL(d, n, m) \
	VFMUL(d+1, n+1, m) \
	VFMUL(d+2, n+2, m) \
	VFMUL(d+3, n+3, m)

// ADD4 sets d+i = n+i + m+i (i = 0 … 3).
#define ADD4(d, n, m) \
	VFADD(d, n, m) \
	VFADD(d+1, n+1, m+1) \
	VFADD(d+2, n+2, m+2) \
	VFADD(d+3, n+3, m+3)

// func kernelGradNEON(e, t, w, dv, cs *float64, n int, a float64, flags int, acc *[8]float64)
TEXT ·kernelGradNEON(SB), NOSPLIT, $0-72
	MOVD  e+0(FP), R0
	MOVD  t+8(FP), R1
	MOVD  w+16(FP), R2
	MOVD  dv+24(FP), R3
	MOVD  cs+32(FP), R4
	MOVD  n+40(FP), R5
	FMOVD a+48(FP), F31
	VDUP  V31.D[0], V31.D2
	MOVD  flags+56(FP), R7
	MOVD  acc+64(FP), R6
	VLD1  (R6), [V24.D2, V25.D2, V26.D2, V27.D2]

loop:
	CMP $8, R5
	BLT done

	// v = a·e.
	VLD1 (R0), [V0.D2, V1.D2, V2.D2, V3.D2]
	MULA4(0, 0, 31)
	TBZ  $0, R7, nodv

	// dv += v.
	VLD1 (R3), [V4.D2, V5.D2, V6.D2, V7.D2]
	ADD4(4, 4, 0)
	VST1 [V4.D2, V5.D2, V6.D2, V7.D2], (R3)

nodv:
	TBZ $1, R7, not

	// h = t·v.
	VLD1 (R1), [V8.D2, V9.D2, V10.D2, V11.D2]
	MUL4(0, 8, 0)

not:
	// r = w·h into the partial sums, cs and e.
	VLD1.P 64(R2), [V12.D2, V13.D2, V14.D2, V15.D2]
	MUL4(16, 12, 0)
	ADD4(24, 24, 16)
	VLD1   (R4), [V20.D2, V21.D2, V22.D2, V23.D2]
	ADD4(20, 20, 16)
	VST1.P [V20.D2, V21.D2, V22.D2, V23.D2], 64(R4)
	VST1.P [V16.D2, V17.D2, V18.D2, V19.D2], 64(R0)
	ADD    $64, R1
	ADD    $64, R3
	SUB    $8, R5
	B      loop

done:
	VST1 [V24.D2, V25.D2, V26.D2, V27.D2], (R6)
	RET
