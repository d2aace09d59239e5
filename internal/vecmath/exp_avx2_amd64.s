//go:build !purego && !noasm

#include "textflag.h"
#include "exp_avx2_amd64.h"

// AVX2 + FMA vector exponential (asm.Exp); expFast in exp.go is its pure-Go
// twin, operation for operation. The constants and EXPREG are in
// exp_avx2_amd64.h.

// CHAIN computes eˣ for the four elements at off(SI) into off(DI), with
// X = x, T = t (then 2ᵏ), R = k (then the polynomial p) and P = r.
#define CHAIN(off, X, T, R, P) \
	VMOVUPD off(SI), X \
	EXPREG(X, T, R, P) \
	VMOVUPD R, off(DI)

// func expAVX2(dst, src *float64, n int)
//
// Register map: DI dst, SI src, CX elements left (a multiple of 4);
// Y0–Y11 three independent chains of four elements (hiding the FMA latency
// of the Horner recurrence).
TEXT ·expAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

loop12:
	CMPQ CX, $12
	JLT  loop4
	CHAIN(0, Y0, Y1, Y2, Y3)
	CHAIN(32, Y4, Y5, Y6, Y7)
	CHAIN(64, Y8, Y9, Y10, Y11)
	ADDQ $96, SI
	ADDQ $96, DI
	SUBQ $12, CX
	JMP  loop12

loop4:
	CMPQ CX, $4
	JLT  done
	CHAIN(0, Y0, Y1, Y2, Y3)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $4, CX
	JMP  loop4

done:
	VZEROUPPER
	RET
