//go:build !purego && !noasm

#include "textflag.h"
#include "exp_avx2_amd64.h"
#include "exp_avx512_amd64.h"

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
