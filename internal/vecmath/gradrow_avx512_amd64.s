//go:build !purego && !noasm

#include "textflag.h"

// AVX-512F kernel of KernelGradRow (gradrow.go): eight elements per ZMM
// register, two groups of eight per iteration. kernelGradGeneric is the
// pure-Go twin, operation for operation (no fused multiply-add; element j
// added into lane j mod 8 of acc), so both give the same bits.
//
// Go signature (gradrow_amd64.go):
//
//	func kernelGradAVX512(e, t, w, dv, cs *float64, n int, a float64, flags int, acc *[8]float64)
//
// n is a positive multiple of 8. The options of flags become opmasks
// (all eight lanes or none): gradDV (bit 0) K4 for the dv updates, gradT
// (bit 1) K5 for the multiplication by t. Masked-out loads and stores neither
// read nor write memory.
//
// Register map: DI e, SI t, R8 w, R9 dv, R10 cs (each advanced with the
// elements), CX elements left, BX flags, R11 acc, DX and R12 scratch;
// Z24 the partial sums, Z28 a; per group of eight: V, H, R and G.

// GRAD8 does the group at byte offset off: V = a·e; dv += V under K4;
// H = V, then H = t·V under K5; R = w·H; s += R; cs += R; e = R.
#define GRAD8(off, V, H, R, G) \
	VMULPD    off(DI), Z28, V \
	VMOVUPD.Z off(R9), K4, G \
	VADDPD    V, G, G \
	VMOVUPD   G, K4, off(R9) \
	VMOVAPD   V, H \
	VMULPD    off(SI), V, K5, H \
	VMULPD    off(R8), H, R \
	VADDPD    R, Z24, Z24 \
	VADDPD    off(R10), R, G \
	VMOVUPD   G, off(R10) \
	VMOVUPD   R, off(DI)

// FLAGMASK sets K to all eight lanes if flags (BX) has bit B, else none.
#define FLAGMASK(B, K) \
	XORL    R12, R12 \
	BTQ     $B, BX \
	CMOVLCS DX, R12 \
	KMOVW   R12, K

// func kernelGradAVX512(e, t, w, dv, cs *float64, n int, a float64, flags int, acc *[8]float64)
TEXT ·kernelGradAVX512(SB), NOSPLIT, $0-72
	MOVQ         e+0(FP), DI
	MOVQ         t+8(FP), SI
	MOVQ         w+16(FP), R8
	MOVQ         dv+24(FP), R9
	MOVQ         cs+32(FP), R10
	MOVQ         n+40(FP), CX
	VBROADCASTSD a+48(FP), Z28
	MOVQ         flags+56(FP), BX
	MOVQ         acc+64(FP), R11
	VMOVUPD      (R11), Z24
	MOVL         $0xff, DX
	FLAGMASK(0, K4)
	FLAGMASK(1, K5)

loop16:
	CMPQ CX, $16
	JLT  loop8
	GRAD8(0, Z0, Z1, Z2, Z3)
	GRAD8(64, Z4, Z5, Z6, Z7)
	ADDQ $128, DI
	ADDQ $128, SI
	ADDQ $128, R8
	ADDQ $128, R9
	ADDQ $128, R10
	SUBQ $16, CX
	JMP  loop16

loop8:
	CMPQ CX, $8
	JLT  done
	GRAD8(0, Z0, Z1, Z2, Z3)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $64, R10
	SUBQ $8, CX
	JMP  loop8

done:
	VMOVUPD Z24, (R11)
	VZEROUPPER
	RET
