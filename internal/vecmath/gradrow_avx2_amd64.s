//go:build !purego && !noasm

#include "textflag.h"

// AVX2 kernel of KernelGradRow (gradrow.go): the AVX-512 kernel's
// operations (gradrow_avx512_amd64.s) on groups of eight elements held as
// two YMM halves, lanes 0–3 and 4–7 of the partial sums. kernelGradGeneric
// is the pure-Go twin, operation for operation, so both give the same bits.
//
// Go signature (gradrow_amd64.go):
//
//	func kernelGradAVX2(e, t, w, dv, cs *float64, n int, a float64, flags int, acc *[8]float64)
//
// n is a positive multiple of 8. The options of flags (gradDV, gradT) are
// branches, taken the same way for every group; dv and t are not touched
// when not asked for.
//
// Register map: DI e, SI t, R8 w, R9 dv, R10 cs (each advanced with the
// elements), CX elements left, BX flags, R11 acc; Y6/Y7 the partial sums
// (lanes 0–3/4–7), Y15 a; Y0 v then h, Y1–Y3 scratch.

// V4 sets Y0 = a·e for the half-group at byte offset off.
#define V4(off) \
	VMULPD off(DI), Y15, Y0

// DV4 adds v (Y0) to dv.
#define DV4(off) \
	VADDPD  off(R9), Y0, Y1 \
	VMOVUPD Y1, off(R9)

// T4 multiplies v (Y0) by t.
#define T4(off) \
	VMULPD off(SI), Y0, Y0

// R4 sets r = w·h, adds it to S and to cs, and stores it into e.
#define R4(off, S) \
	VMULPD  off(R8), Y0, Y2 \
	VADDPD  Y2, S, S \
	VADDPD  off(R10), Y2, Y3 \
	VMOVUPD Y3, off(R10) \
	VMOVUPD Y2, off(DI)

// func kernelGradAVX2(e, t, w, dv, cs *float64, n int, a float64, flags int, acc *[8]float64)
TEXT ·kernelGradAVX2(SB), NOSPLIT, $0-72
	MOVQ         e+0(FP), DI
	MOVQ         t+8(FP), SI
	MOVQ         w+16(FP), R8
	MOVQ         dv+24(FP), R9
	MOVQ         cs+32(FP), R10
	MOVQ         n+40(FP), CX
	VBROADCASTSD a+48(FP), Y15
	MOVQ         flags+56(FP), BX
	MOVQ         acc+64(FP), R11
	VMOVUPD      (R11), Y6
	VMOVUPD      32(R11), Y7

loop:
	CMPQ CX, $8
	JLT  done

	// Lanes 0–3.
	V4(0)
	BTQ $0, BX
	JCC nodv0
	DV4(0)

nodv0:
	BTQ $1, BX
	JCC not0
	T4(0)

not0:
	R4(0, Y6)

	// Lanes 4–7.
	V4(32)
	BTQ $0, BX
	JCC nodv1
	DV4(32)

nodv1:
	BTQ $1, BX
	JCC not1
	T4(32)

not1:
	R4(32, Y7)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $64, R10
	SUBQ $8, CX
	JMP  loop

done:
	VMOVUPD Y6, (R11)
	VMOVUPD Y7, 32(R11)
	VZEROUPPER
	RET
