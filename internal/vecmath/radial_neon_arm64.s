//go:build !purego && !noasm

#include "textflag.h"
#include "exp_neon_arm64.h"

// NEON fused radial profiles and gradient weights (asm.RadialProfile and
// asm.RadialWeights on arm64); radialOne and radialWeightOne in radial.go are
// their pure-Go twins, operation for operation. The exponential (EXP2) is in
// exp_neon_arm64.h, the instruction macros in vec_neon_arm64.h.

// Constant registers besides the exponential's 16–20 (broadcast to both
// lanes).
#define ONE 21
#define SC 22
#define LO 23
#define HI 24
#define VB 25
#define THREE 26
#define OK 27

// Profile registers, chain 0 and chain 1 (two lanes each), besides the
// exponential's X, T, K, H and G (2–11; K then serves as polynomial
// scratch): A0/A1 s, then a; M0/M1 comparison masks.
#define A0 0
#define A1 1
#define M0 12
#define M1 13

// CHECK clears lanes of OK where x is outside [expLo, expHi] or NaN (the
// compares are ordered, so NaN fails them).
#define CHECK(x, m) \
	VFCMGE(m, x, LO) \
	VANDV(OK, OK, m) \
	VFCMGE(m, HI, x) \
	VANDV(OK, OK, m)

// The per-profile steps on one chain: ARG forms x (and a) from s in a;
// POLY multiplies e in g by the Matérn polynomial in a, with k and h scratch.
#define ARG_RBF(a, x) VFMUL(x, a, SC)
#define ARG_SQRT(a, x) \
	VFSQRT(a, a) \
	VFNEG(x, a)
#define ARG_SCALED_SQRT(a, x) \
	VFMUL(a, a, SC) \
	VFSQRT(a, a) \
	VFNEG(x, a)
#define POLY_NONE(a, g, k, h)
#define POLY_M32(a, g, k, h) \
	VFADD(k, a, ONE) \
	VFMUL(g, g, k)
#define POLY_M52(a, g, k, h) \
	VFMUL(k, a, a) \
	VFDIV(k, k, THREE) \
	VFADD(h, a, ONE) \
	VFADD(k, h, k) \
	VFMUL(g, g, k)

// PROFILE defines func name(dst, src *float64, n int, v float64) bool: four
// elements per iteration, two chains of two lanes; scale is the factor of
// s in x or a (−0.5, 3 or 5; 1 for Matérn-1/2, unused there). It returns
// whether every x was in [expLo, expHi].
//
// Register map: R0 dst, R1 src, R2 elements left (a positive multiple of 4),
// R3 scratch for constants, R5 expCoef, R6 the running coefficient
// pointer, R7 and R8 the result; vector registers as above.
#define PROFILE(name, scale, ARG, POLY) \
TEXT name(SB), NOSPLIT, $0-33 \
	MOVD dst+0(FP), R0 \
	MOVD src+8(FP), R1 \
	MOVD n+16(FP), R2 \
	FMOVD v+24(FP), F25 \
	VDUP V25.D[0], V25.D2 \
	EXPCONSTS \
	MOVD $0x3ff0000000000000, R3 \
	VDUP R3, V21.D2 \
	MOVD $scale, R3 \
	VDUP R3, V22.D2 \
	MOVD $0xc086200000000000, R3 \
	VDUP R3, V23.D2 \
	MOVD $0x4086280000000000, R3 \
	VDUP R3, V24.D2 \
	MOVD $0x4008000000000000, R3 \
	VDUP R3, V26.D2 \
	MOVD $-1, R3 \
	VDUP R3, V27.D2 \
loop: \
	VLD1.P 32(R1), [V0.D2, V1.D2] \
	CLAMP(A0, M0) \
	CLAMP(A1, M1) \
	ARG(A0, X0) \
	ARG(A1, X1) \
	CHECK(X0, M0) \
	CHECK(X1, M1) \
	EXP2 \
	POLY(A0, G0, K0, H0) \
	POLY(A1, G1, K1, H1) \
	VFMUL(G0, G0, VB) \
	VFMUL(G1, G1, VB) \
	VST1.P [V10.D2, V11.D2], 32(R0) \
	SUBS $4, R2, R2 \
	BNE loop \
	VMOV V27.D[0], R7 \
	VMOV V27.D[1], R8 \
	AND R7, R8, R7 \
	CMN $1, R7 \
	CSET EQ, R7 \
	MOVB R7, ret+32(FP) \
	RET

// func rbfNEON(dst, src *float64, n int, v float64) bool
PROFILE(·rbfNEON, 0xbfe0000000000000, ARG_RBF, POLY_NONE)

// func matern12NEON(dst, src *float64, n int, v float64) bool
PROFILE(·matern12NEON, 0x3ff0000000000000, ARG_SQRT, POLY_NONE)

// func matern32NEON(dst, src *float64, n int, v float64) bool
PROFILE(·matern32NEON, 0x4008000000000000, ARG_SCALED_SQRT, POLY_M32)

// func matern52NEON(dst, src *float64, n int, v float64) bool
PROFILE(·matern52NEON, 0x4014000000000000, ARG_SCALED_SQRT, POLY_M52)

// Weight registers, chain 0 and chain 1: WG γ (first kk), WS s, WW w, WM dk
// then masks, WQ and WP scratch; the partial sums of γ in 12 (lanes p0, p1)
// and 15 (p2, p3), of w·s in 13 and 14.
#define WG0 0
#define WG1 1
#define WS0 2
#define WS1 3
#define WW0 4
#define WW1 5
#define WM0 6
#define WM1 7
#define WQ0 8
#define WQ1 9
#define WP0 10
#define WP1 11
#define IV 20
#define N15 23
#define N56 24
#define NHALF 25

// The per-profile weight of one chain from γ in g and s in s into w, with
// m a mask and q, p scratch (see radialWeightOne).
#define W_RBF(g, s, w, m, q, p) VFMUL(w, g, NHALF)
#define W_M12(g, s, w, m, q, p) \
	VFSQRT(q, s) \
	VFMUL(w, g, NHALF) \
	VFDIV(w, w, q) \
	VFCMGTZ(m, s) \
	VANDV(w, w, m)
#define W_M32(g, s, w, m, q, p) \
	VFMUL(q, s, SC) \
	VFSQRT(q, q) \
	VFADD(q, q, ONE) \
	VFMUL(w, g, N15) \
	VFDIV(w, w, q) \
	VFCMEQZ(m, g) \
	VBICV(w, w, m)
#define W_M52(g, s, w, m, q, p) \
	VFMUL(q, s, SC) \
	VFSQRT(q, q) \
	VFMUL(p, q, q) \
	VFDIV(p, p, THREE) \
	VFADD(q, q, ONE) \
	VFADD(p, q, p) \
	VFDIV(q, q, p) \
	VFMUL(w, g, N56) \
	VFMUL(w, w, q) \
	VFCMEQZ(m, g) \
	VBICV(w, w, m)

// WCHAIN is one chain: clamp s, γ = dk·(kk·iv) into the partial sums ag,
// the weight, and w·s (0 where w = 0) into the partial sums aw.
#define WCHAIN(W, g, s, w, m, q, p, ag, aw) \
	CLAMP(s, q) \
	VFMUL(g, g, IV) \
	VFMUL(g, m, g) \
	VFADD(ag, ag, g) \
	W(g, s, w, m, q, p) \
	VFCMEQZ(m, w) \
	VFMUL(q, w, s) \
	VBICV(q, q, m) \
	VFADD(aw, aw, q)

// WEIGHTS defines func name(w, s, dk, kk *float64, n int, iv float64)
// (sumG, sumWs float64): four elements per iteration, elements 4i and 4i+1
// in chain 0, 4i+2 and 4i+3 in chain 1, so the partial sums combine as
// (p0 + p2) + (p1 + p3).
//
// Register map: R0 w, R1 s, R2 dk, R4 kk, R5 elements left (a positive
// multiple of 4), R3 scratch; vector registers as above, with iv in 20, 1
// in 21, the scale of s in 22, −1.5 in 23, −5/6 in 24, −0.5 in 25, 3 in 26.
#define WEIGHTS(name, scale, W) \
TEXT name(SB), NOSPLIT, $0-64 \
	MOVD w+0(FP), R0 \
	MOVD s+8(FP), R1 \
	MOVD dk+16(FP), R2 \
	MOVD kk+24(FP), R4 \
	MOVD n+32(FP), R5 \
	FMOVD iv+40(FP), F20 \
	VDUP V20.D[0], V20.D2 \
	MOVD $0x3ff0000000000000, R3 \
	VDUP R3, V21.D2 \
	MOVD $scale, R3 \
	VDUP R3, V22.D2 \
	MOVD $0xbff8000000000000, R3 \
	VDUP R3, V23.D2 \
	MOVD $0xbfeaaaaaaaaaaaab, R3 \
	VDUP R3, V24.D2 \
	MOVD $0xbfe0000000000000, R3 \
	VDUP R3, V25.D2 \
	MOVD $0x4008000000000000, R3 \
	VDUP R3, V26.D2 \
	VEOR V12.B16, V12.B16, V12.B16 \
	VEOR V13.B16, V13.B16, V13.B16 \
	VEOR V14.B16, V14.B16, V14.B16 \
	VEOR V15.B16, V15.B16, V15.B16 \
wloop: \
	VLD1.P 32(R4), [V0.D2, V1.D2] \
	VLD1.P 32(R2), [V6.D2, V7.D2] \
	VLD1.P 32(R1), [V2.D2, V3.D2] \
	WCHAIN(W, WG0, WS0, WW0, WM0, WQ0, WP0, 12, 13) \
	WCHAIN(W, WG1, WS1, WW1, WM1, WQ1, WP1, 15, 14) \
	VST1.P [V4.D2, V5.D2], 32(R0) \
	SUBS $4, R5, R5 \
	BNE wloop \
	VFADD(12, 12, 15) \
	FADDP(12, 12) \
	FMOVD F12, sumG+48(FP) \
	VFADD(13, 13, 14) \
	FADDP(13, 13) \
	FMOVD F13, sumWs+56(FP) \
	RET

// func rbfWeightsNEON(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)
WEIGHTS(·rbfWeightsNEON, 0x3ff0000000000000, W_RBF)

// func matern12WeightsNEON(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)
WEIGHTS(·matern12WeightsNEON, 0x3ff0000000000000, W_M12)

// func matern32WeightsNEON(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)
WEIGHTS(·matern32WeightsNEON, 0x4008000000000000, W_M32)

// func matern52WeightsNEON(w, s, dk, kk *float64, n int, iv float64) (sumG, sumWs float64)
WEIGHTS(·matern52WeightsNEON, 0x4014000000000000, W_M52)
