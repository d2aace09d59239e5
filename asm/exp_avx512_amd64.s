//go:build !purego && !noasm

#include "textflag.h"
#include "exp_avx2_amd64.h"

// AVX-512F vector exponential (asm.Exp on AVX-512 machines): EXPREG's
// operations on eight elements per ZMM register, with the constants of
// exp_avx2_amd64.h as embedded broadcasts; expFast in exp.go is the pure-Go
// twin, operation for operation, so every path gives the same bits.
//
// Go signature (exp_amd64.go):
//
//	func expAVX512(dst, src *float64, n int, check bool) (done int)
//
// n is a positive multiple of 8. Without check it computes all n elements
// (those outside [expLo, expHi] and NaN give unspecified values) and returns
// n. With check it stops before the first group of eight elements that holds
// an argument outside [expLo, expHi] or NaN, writing nothing of that group,
// and returns the number of elements done: then expBlocks needs no scan of
// its own for blocks that are all in range.
//
// Register map: DI dst, SI src, CX elements left, AX elements done;
// BX check; DX mask bits; Z0–Z11 three chains of eight elements (X, T, R, P
// each, as in exp_avx2_amd64.s); K1–K3 range masks.

DATA expLimits<>+0(SB)/8, $0xc086200000000000 // expLo = -708
DATA expLimits<>+8(SB)/8, $0x4086280000000000 // expHi = 709
GLOBL expLimits<>(SB), RODATA|NOPTR, $16

#define EXPLO expLimits<>+0(SB)
#define EXPHI expLimits<>+8(SB)

// EXPREG8 is EXPREG (exp_avx2_amd64.h) on eight elements: R = eˣ for X,
// with T and P as scratch.
#define EXPREG8(X, T, R, P) \
	VBROADCASTSD MAGIC, T \
	VFMADD231PD.BCST LOG2E, X, T \
	VSUBPD.BCST MAGIC, T, R \
	VMOVAPD X, P \
	VFMADD231PD.BCST NLN2HI, R, P \
	VFMADD231PD.BCST NLN2LO, R, P \
	VBROADCASTSD C13, R \
	VFMADD213PD.BCST C12, P, R \
	VFMADD213PD.BCST C11, P, R \
	VFMADD213PD.BCST C10, P, R \
	VFMADD213PD.BCST C9, P, R \
	VFMADD213PD.BCST C8, P, R \
	VFMADD213PD.BCST C7, P, R \
	VFMADD213PD.BCST C6, P, R \
	VFMADD213PD.BCST C5, P, R \
	VFMADD213PD.BCST C4, P, R \
	VFMADD213PD.BCST C3, P, R \
	VFMADD213PD.BCST C2, P, R \
	VFMADD213PD.BCST C1, P, R \
	VFMADD213PD.BCST C0, P, R \
	VPSLLQ $52, T, T \
	VPADDQ.BCST BIAS, T, T \
	VMULPD T, R, R

// INRANGE sets K to the lanes of X with expLo <= x <= expHi (false for NaN)
// and DX to those eight mask bits.
#define INRANGE(X, K) \
	VCMPPD.BCST $0x1d, EXPLO, X, K \
	VCMPPD.BCST $0x12, EXPHI, X, K, K \
	KMOVW K, DX

// func expAVX512(dst, src *float64, n int, check bool) (done int)
TEXT ·expAVX512(SB), NOSPLIT, $0-40
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    n+16(FP), CX
	MOVBLZX check+24(FP), BX
	XORQ    AX, AX

loop24:
	CMPQ CX, $24
	JLT  loop8
	VMOVUPD (SI), Z0
	VMOVUPD 64(SI), Z4
	VMOVUPD 128(SI), Z8
	TESTQ   BX, BX
	JZ      compute24
	INRANGE(Z0, K1)
	CMPB    DX, $0xff
	JNE     loop8
	INRANGE(Z4, K2)
	CMPB    DX, $0xff
	JNE     loop8
	INRANGE(Z8, K3)
	CMPB    DX, $0xff
	JNE     loop8

compute24:
	EXPREG8(Z0, Z1, Z2, Z3)
	EXPREG8(Z4, Z5, Z6, Z7)
	EXPREG8(Z8, Z9, Z10, Z11)
	VMOVUPD Z2, (DI)
	VMOVUPD Z6, 64(DI)
	VMOVUPD Z10, 128(DI)
	ADDQ    $192, SI
	ADDQ    $192, DI
	ADDQ    $24, AX
	SUBQ    $24, CX
	JMP     loop24

loop8:
	CMPQ    CX, $8
	JLT     done
	VMOVUPD (SI), Z0
	TESTQ   BX, BX
	JZ      compute8
	INRANGE(Z0, K1)
	CMPB    DX, $0xff
	JNE     done

compute8:
	EXPREG8(Z0, Z1, Z2, Z3)
	VMOVUPD Z2, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	ADDQ    $8, AX
	SUBQ    $8, CX
	JMP     loop8

done:
	MOVQ AX, done+32(FP)
	VZEROUPPER
	RET
