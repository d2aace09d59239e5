//go:build !purego && !noasm

#include "textflag.h"
#include "exp_avx2_amd64.h"

// AVX2 + FMA fused radial profiles (asm.RadialProfile): squared distance
// to covariance in registers. radialOne in radial.go is their pure-Go twin,
// operation for operation (VSQRTPD and VDIVPD round as math.Sqrt and / do).

DATA radialConsts<>+0(SB)/8, $0x4008000000000000
DATA radialConsts<>+8(SB)/8, $0x4008000000000000
DATA radialConsts<>+16(SB)/8, $0x4008000000000000
DATA radialConsts<>+24(SB)/8, $0x4008000000000000
DATA radialConsts<>+32(SB)/8, $0x4014000000000000
DATA radialConsts<>+40(SB)/8, $0x4014000000000000
DATA radialConsts<>+48(SB)/8, $0x4014000000000000
DATA radialConsts<>+56(SB)/8, $0x4014000000000000
DATA radialConsts<>+64(SB)/8, $0xbfe0000000000000
DATA radialConsts<>+72(SB)/8, $0xbfe0000000000000
DATA radialConsts<>+80(SB)/8, $0xbfe0000000000000
DATA radialConsts<>+88(SB)/8, $0xbfe0000000000000
DATA radialConsts<>+96(SB)/8, $0x8000000000000000
DATA radialConsts<>+104(SB)/8, $0x8000000000000000
DATA radialConsts<>+112(SB)/8, $0x8000000000000000
DATA radialConsts<>+120(SB)/8, $0x8000000000000000
DATA radialConsts<>+128(SB)/8, $0xc086200000000000
DATA radialConsts<>+136(SB)/8, $0xc086200000000000
DATA radialConsts<>+144(SB)/8, $0xc086200000000000
DATA radialConsts<>+152(SB)/8, $0xc086200000000000
DATA radialConsts<>+160(SB)/8, $0x4086280000000000
DATA radialConsts<>+168(SB)/8, $0x4086280000000000
DATA radialConsts<>+176(SB)/8, $0x4086280000000000
DATA radialConsts<>+184(SB)/8, $0x4086280000000000
DATA radialConsts<>+192(SB)/8, $0xbff8000000000000
DATA radialConsts<>+200(SB)/8, $0xbff8000000000000
DATA radialConsts<>+208(SB)/8, $0xbff8000000000000
DATA radialConsts<>+216(SB)/8, $0xbff8000000000000
DATA radialConsts<>+224(SB)/8, $0xbfeaaaaaaaaaaaab
DATA radialConsts<>+232(SB)/8, $0xbfeaaaaaaaaaaaab
DATA radialConsts<>+240(SB)/8, $0xbfeaaaaaaaaaaaab
DATA radialConsts<>+248(SB)/8, $0xbfeaaaaaaaaaaaab
GLOBL radialConsts<>(SB), RODATA|NOPTR, $256

// 3, 5, −0.5, the sign bit, the bounds expLo and expHi of EXPREG, −1.5 and
// −5/6.
#define THREE radialConsts<>+0(SB)
#define FIVE radialConsts<>+32(SB)
#define NHALF radialConsts<>+64(SB)
#define SIGN radialConsts<>+96(SB)
#define LO radialConsts<>+128(SB)
#define HI radialConsts<>+160(SB)
#define NTHREEHALF radialConsts<>+192(SB)
#define NFIVESIXTHS radialConsts<>+224(SB)

// CHECK clears lanes of the mask Y14 where X is outside [LO, HI] or NaN
// (both comparisons are ordered, so NaN fails them), using M as scratch.
#define CHECK(X, M) \
	VCMPPD $0x1d, LO, X, M \
	VANDPD M, Y14, Y14 \
	VCMPPD $0x12, HI, X, M \
	VANDPD M, Y14, Y14

// The per-profile steps for four elements at off(SI) into off(DI), with
// X the exponential's argument, A = a, T, R and P scratch (EXPREG's), and
// Y15 = v broadcast. Each first clamps s at 0: VMAXPD with zero as the first
// source returns s itself when s is NaN or −0, as the twin's s < 0 test.

// RBF: x = −0.5·s; result v·eˣ.
#define RBF4(off, X, A, T, R, P) \
	VMOVUPD off(SI), X \
	VMAXPD X, Y13, X \
	VMULPD NHALF, X, X \
	CHECK(X, T) \
	EXPREG(X, T, R, P) \
	VMULPD Y15, R, R \
	VMOVUPD R, off(DI)

// Matérn-1/2: x = −√s; result v·eˣ.
#define M12_4(off, X, A, T, R, P) \
	VMOVUPD off(SI), A \
	VMAXPD A, Y13, A \
	VSQRTPD A, A \
	VXORPD SIGN, A, X \
	CHECK(X, T) \
	EXPREG(X, T, R, P) \
	VMULPD Y15, R, R \
	VMOVUPD R, off(DI)

// Matérn-3/2: a = √(3s), x = −a; result v·(e·(1 + a)).
#define M32_4(off, X, A, T, R, P) \
	VMOVUPD off(SI), A \
	VMAXPD A, Y13, A \
	VMULPD THREE, A, A \
	VSQRTPD A, A \
	VXORPD SIGN, A, X \
	CHECK(X, T) \
	EXPREG(X, T, R, P) \
	VADDPD C0, A, P \
	VMULPD P, R, R \
	VMULPD Y15, R, R \
	VMOVUPD R, off(DI)

// Matérn-5/2: a = √(5s), x = −a; result v·(e·((1 + a) + a·a/3)).
#define M52_4(off, X, A, T, R, P) \
	VMOVUPD off(SI), A \
	VMAXPD A, Y13, A \
	VMULPD FIVE, A, A \
	VSQRTPD A, A \
	VXORPD SIGN, A, X \
	CHECK(X, T) \
	EXPREG(X, T, R, P) \
	VMULPD A, A, T \
	VDIVPD THREE, T, T \
	VADDPD C0, A, P \
	VADDPD T, P, P \
	VMULPD P, R, R \
	VMULPD Y15, R, R \
	VMOVUPD R, off(DI)

// RADIAL defines func name(dst, src *float64, n int, v float64) bool with
// the four-element step STEP: two independent chains of four elements per
// iteration, then single steps.
//
// Register map: DI dst, SI src, CX elements left (a multiple of 4), AX the
// result mask; Y0–Y4 and Y5–Y9 the two chains (X, A, T, R, P), Y13 zero,
// Y14 the in-range mask, Y15 v.
#define RADIAL(name, STEP) \
TEXT name(SB), NOSPLIT, $0-33 \
	MOVQ dst+0(FP), DI \
	MOVQ src+8(FP), SI \
	MOVQ n+16(FP), CX \
	VBROADCASTSD v+24(FP), Y15 \
	VPCMPEQQ Y14, Y14, Y14 \
	VXORPD Y13, Y13, Y13 \
loop8: \
	CMPQ CX, $8 \
	JLT loop4 \
	STEP(0, Y0, Y1, Y2, Y3, Y4) \
	STEP(32, Y5, Y6, Y7, Y8, Y9) \
	ADDQ $64, SI \
	ADDQ $64, DI \
	SUBQ $8, CX \
	JMP loop8 \
loop4: \
	CMPQ CX, $4 \
	JLT done \
	STEP(0, Y0, Y1, Y2, Y3, Y4) \
	ADDQ $32, SI \
	ADDQ $32, DI \
	SUBQ $4, CX \
	JMP loop4 \
done: \
	VMOVMSKPD Y14, AX \
	CMPQ AX, $15 \
	SETEQ ret+32(FP) \
	VZEROUPPER \
	RET

// func rbfAVX2(dst, src *float64, n int, v float64) bool
RADIAL(·rbfAVX2, RBF4)

// func matern12AVX2(dst, src *float64, n int, v float64) bool
RADIAL(·matern12AVX2, M12_4)

// func matern32AVX2(dst, src *float64, n int, v float64) bool
RADIAL(·matern32AVX2, M32_4)

// func matern52AVX2(dst, src *float64, n int, v float64) bool
RADIAL(·matern52AVX2, M52_4)

// The weight kernels (asm.RadialWeights): for four elements at off, with
// G = γ, S = s, W = w, M a mask and A, Q scratch; Y12 and Y13 the partial
// sums of γ and w·s, Y14 zero, Y15 iv. WHEAD loads and accumulates γ and
// loads s clamped at 0 (as in the profiles),
// WTAIL accumulates w·s where w ≠ 0 and stores w (after S was loaded, so
// w may be s).
#define WHEAD(off, G, S) \
	VMOVUPD off(R8), G \
	VMULPD Y15, G, G \
	VMULPD off(DX), G, G \
	VADDPD G, Y12, Y12 \
	VMOVUPD off(SI), S \
	VMAXPD S, Y14, S

#define WTAIL(off, S, A, W, M) \
	VCMPPD $0x04, Y14, W, M \
	VMULPD S, W, A \
	VANDPD M, A, A \
	VADDPD A, Y13, Y13 \
	VMOVUPD W, off(DI)

// RBF: w = −0.5·γ.
#define WRBF(off, G, S, A, W, M, Q) \
	WHEAD(off, G, S) \
	VMULPD NHALF, G, W \
	WTAIL(off, S, A, W, M)

// Matérn-1/2: w = (−0.5·γ)/√s where s > 0, else 0.
#define WM12(off, G, S, A, W, M, Q) \
	WHEAD(off, G, S) \
	VSQRTPD S, A \
	VMULPD NHALF, G, W \
	VDIVPD A, W, W \
	VCMPPD $0x1e, Y14, S, M \
	VANDPD M, W, W \
	WTAIL(off, S, A, W, M)

// Matérn-3/2: w = (−1.5·γ)/(1 + √(3s)) where γ ≠ 0, else 0.
#define WM32(off, G, S, A, W, M, Q) \
	WHEAD(off, G, S) \
	VMULPD THREE, S, A \
	VSQRTPD A, A \
	VADDPD C0, A, A \
	VMULPD NTHREEHALF, G, W \
	VDIVPD A, W, W \
	VCMPPD $0x04, Y14, G, M \
	VANDPD M, W, W \
	WTAIL(off, S, A, W, M)

// Matérn-5/2: w = (−5/6·γ)·((1 + a)/((1 + a) + a·a/3)), a = √(5s), where
// γ ≠ 0, else 0.
#define WM52(off, G, S, A, W, M, Q) \
	WHEAD(off, G, S) \
	VMULPD FIVE, S, A \
	VSQRTPD A, A \
	VMULPD A, A, Q \
	VDIVPD THREE, Q, Q \
	VADDPD C0, A, A \
	VADDPD A, Q, Q \
	VDIVPD Q, A, A \
	VMULPD NFIVESIXTHS, G, W \
	VMULPD A, W, W \
	VCMPPD $0x04, Y14, G, M \
	VANDPD M, W, W \
	WTAIL(off, S, A, W, M)

// WEIGHTS defines func name(w, s, dk, kk *float64, n int, iv float64)
// (sumG, sumWs float64) with the four-element step STEP: two chains of
// four elements per iteration (both adding into the same partial sums, in
// element order), then single steps; the partial sums p0…p3 are combined
// as (p0 + p2) + (p1 + p3).
//
// Register map: DI w, SI s, DX dk, R8 kk, CX elements left (a multiple of
// 4); Y0–Y5 and Y6–Y11 the two chains (G, S, A, W, M, Q), Y12 and Y13 the
// partial sums, Y14 zero, Y15 iv.
#define WEIGHTS(name, STEP) \
TEXT name(SB), NOSPLIT, $0-64 \
	MOVQ w+0(FP), DI \
	MOVQ s+8(FP), SI \
	MOVQ dk+16(FP), DX \
	MOVQ kk+24(FP), R8 \
	MOVQ n+32(FP), CX \
	VBROADCASTSD iv+40(FP), Y15 \
	VXORPD Y14, Y14, Y14 \
	VXORPD Y12, Y12, Y12 \
	VXORPD Y13, Y13, Y13 \
wloop8: \
	CMPQ CX, $8 \
	JLT wloop4 \
	STEP(0, Y0, Y1, Y2, Y3, Y4, Y5) \
	STEP(32, Y6, Y7, Y8, Y9, Y10, Y11) \
	ADDQ $64, DI \
	ADDQ $64, SI \
	ADDQ $64, DX \
	ADDQ $64, R8 \
	SUBQ $8, CX \
	JMP wloop8 \
wloop4: \
	CMPQ CX, $4 \
	JLT wdone \
	STEP(0, Y0, Y1, Y2, Y3, Y4, Y5) \
	ADDQ $32, DI \
	ADDQ $32, SI \
	ADDQ $32, DX \
	ADDQ $32, R8 \
	SUBQ $4, CX \
	JMP wloop4 \
wdone: \
	VEXTRACTF128 $1, Y12, X0 \
	VADDPD X0, X12, X0 \
	VPERMILPD $1, X0, X1 \
	VADDSD X1, X0, X0 \
	MOVSD X0, sumG+48(FP) \
	VEXTRACTF128 $1, Y13, X0 \
	VADDPD X0, X13, X0 \
	VPERMILPD $1, X0, X1 \
	VADDSD X1, X0, X0 \
	MOVSD X0, sumWs+56(FP) \
	VZEROUPPER \
	RET

// func rbfWeightsAVX2(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)
WEIGHTS(·rbfWeightsAVX2, WRBF)

// func matern12WeightsAVX2(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)
WEIGHTS(·matern12WeightsAVX2, WM12)

// func matern32WeightsAVX2(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)
WEIGHTS(·matern32WeightsAVX2, WM32)

// func matern52WeightsAVX2(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)
WEIGHTS(·matern52WeightsAVX2, WM52)
