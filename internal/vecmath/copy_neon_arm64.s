//go:build !purego && !noasm

#include "textflag.h"

// NEON copy kernels for strided blocks of contiguous float64 runs.
//
// Go signatures (copy_arm64.go):
//
//	func copyBlockNEON(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
//	func copyBlockAddNEON(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
//
// Arguments as for the amd64 kernels: run length in elements, level counts
// n0..n2 (all >= 1, innermost first), source and destination carry strides in
// bytes (see copyCarry in copy_asm.go).
//
// Register map:
//
//	R0  destination pointer (start of the current run)
//	R1  source pointer (start of the current run)
//	R3  level-0 countdown, R4 level-1 countdown, R5 level-2 countdown
//	R6  s0, R7 s1, R8 s2 (source carry strides)
//	R9  d0, R10 d1, R11 d2 (destination carry strides)
//	R19 run >> 3: 8-element chunks (4 x 128-bit registers)
//	R20 (run >> 1) & 3: 2-element chunks
//	R21 run & 1: trailing scalar
//	R14 source cursor, R15 destination cursor, R22 chunk countdown
//	V0-V7 data, V31 = {1.0, 1.0} (add kernel)
//
// The add kernel accumulates with VFMLA by the constant 1.0: fma(s, 1, d)
// rounds s*1 + d = s + d once, exactly as FADD does, so results are
// bit-identical to the pure-Go loop (Go's arm64 assembler has no vector FADD
// mnemonic).

// func copyBlockNEON(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
TEXT ·copyBlockNEON(SB), NOSPLIT, $0-96
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD run+16(FP), R2
	MOVD n2+40(FP), R5
	MOVD s0+48(FP), R6
	MOVD s1+56(FP), R7
	MOVD s2+64(FP), R8
	MOVD d0+72(FP), R9
	MOVD d1+80(FP), R10
	MOVD d2+88(FP), R11
	LSR  $3, R2, R19
	LSR  $1, R2, R20
	AND  $3, R20, R20
	AND  $1, R2, R21

level2:
	MOVD n1+32(FP), R4

level1:
	MOVD n0+24(FP), R3

level0:
	MOVD R1, R14
	MOVD R0, R15
	CBZ  R19, chunk2
	MOVD R19, R22

chunk8:
	VLD1.P 64(R14), [V0.D2, V1.D2, V2.D2, V3.D2]
	VST1.P [V0.D2, V1.D2, V2.D2, V3.D2], 64(R15)
	SUBS   $1, R22, R22
	BNE    chunk8

chunk2:
	CBZ  R20, tail
	MOVD R20, R22

chunk2loop:
	VLD1.P 16(R14), [V0.D2]
	VST1.P [V0.D2], 16(R15)
	SUBS   $1, R22, R22
	BNE    chunk2loop

tail:
	CBZ   R21, next
	FMOVD (R14), F0
	FMOVD F0, (R15)

next:
	ADD  R6, R1
	ADD  R9, R0
	SUBS $1, R3, R3
	BNE  level0
	ADD  R7, R1
	ADD  R10, R0
	SUBS $1, R4, R4
	BNE  level1
	ADD  R8, R1
	ADD  R11, R0
	SUBS $1, R5, R5
	BNE  level2
	RET

// func copyBlockAddNEON(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)
TEXT ·copyBlockAddNEON(SB), NOSPLIT, $0-96
	MOVD  dst+0(FP), R0
	MOVD  src+8(FP), R1
	MOVD  run+16(FP), R2
	MOVD  n2+40(FP), R5
	MOVD  s0+48(FP), R6
	MOVD  s1+56(FP), R7
	MOVD  s2+64(FP), R8
	MOVD  d0+72(FP), R9
	MOVD  d1+80(FP), R10
	MOVD  d2+88(FP), R11
	LSR   $3, R2, R19
	LSR   $1, R2, R20
	AND   $3, R20, R20
	AND   $1, R2, R21
	FMOVD $1.0, F31
	VDUP  V31.D[0], V31.D2

addLevel2:
	MOVD n1+32(FP), R4

addLevel1:
	MOVD n0+24(FP), R3

addLevel0:
	MOVD R1, R14
	MOVD R0, R15
	CBZ  R19, addChunk2
	MOVD R19, R22

addChunk8:
	VLD1   (R15), [V4.D2, V5.D2, V6.D2, V7.D2]
	VLD1.P 64(R14), [V0.D2, V1.D2, V2.D2, V3.D2]
	VFMLA  V31.D2, V0.D2, V4.D2
	VFMLA  V31.D2, V1.D2, V5.D2
	VFMLA  V31.D2, V2.D2, V6.D2
	VFMLA  V31.D2, V3.D2, V7.D2
	VST1.P [V4.D2, V5.D2, V6.D2, V7.D2], 64(R15)
	SUBS   $1, R22, R22
	BNE    addChunk8

addChunk2:
	CBZ  R20, addTail
	MOVD R20, R22

addChunk2loop:
	VLD1   (R15), [V4.D2]
	VLD1.P 16(R14), [V0.D2]
	VFMLA  V31.D2, V0.D2, V4.D2
	VST1.P [V4.D2], 16(R15)
	SUBS   $1, R22, R22
	BNE    addChunk2loop

addTail:
	CBZ   R21, addNext
	FMOVD (R14), F0
	FMOVD (R15), F1
	FADDD F0, F1
	FMOVD F1, (R15)

addNext:
	ADD  R6, R1
	ADD  R9, R0
	SUBS $1, R3, R3
	BNE  addLevel0
	ADD  R7, R1
	ADD  R10, R0
	SUBS $1, R4, R4
	BNE  addLevel1
	ADD  R8, R1
	ADD  R11, R0
	SUBS $1, R5, R5
	BNE  addLevel2
	RET
