//go:build !purego && !noasm

#include "textflag.h"
#include "exp_neon_arm64.h"

// NEON kernel of RBFPairRow (pairs.go): the AVX2 kernel's operations
// (pairs_avx2_amd64.s) on groups of eight pairs, each done as two halves of
// four elements (lanes 0–3 and 4–7 of the partial sums), each half as the
// two chains of EXP2 (exp_neon_arm64.h). rbfPairsGeneric is the pure-Go
// twin, operation for operation, so every path gives the same bits.
//
// Go signature (pairs_arm64.go):
//
//	func rbfPairsNEON(ip, xn, t, w, dt, gs *float64, n int, np, c, wp float64, flags int, acc *[24]float64) (done int)
//
// n is a positive multiple of 8. As the amd64 kernels, it gives arguments
// below −746 the exponential +0 and stops before the first group of eight
// with an argument outside [expLo, expHi] that is not below −746 (or NaN),
// writing nothing of it; it returns the number of elements done. The options
// of flags (pairPieces, pairDT, pairKeepH) are branches, taken the same way
// for every group; dt and gs are not touched when not asked for. The partial
// sums stay in acc (memory): the exponential's registers leave too few for
// all 24.
//
// Register map: R0 ip, R1 xn, R2 t, R3 w (R3 is scratch for constants
// before the loop), R4 dt, R7 gs (each advanced with the elements), R5
// expCoef and R6 the running coefficient pointer (EXP2), R8 elements left,
// R9 flags, R10 acc, R11 elements done, R12–R14 scratch (R13/R14 the check
// pass's pointers); V0/V1 squared distances d (chain 0/1), V2–V11 the
// exponential's X, T, K, H and G (after it: T h, K a, H and X scratch),
// V12/V13 range masks, then w; V14/V15 scratch; V21 np, V22 c, V23 expLo,
// V24 expHi, V25 wp, V26 −746, V27 the check pass's all-lanes mask.

#define D0 0
#define D1 1
#define M0 12
#define M1 13
#define S0 14
#define S1 15
#define NP 21
#define CC 22
#define LO 23
#define HI 24
#define WP 25
#define FAR 26
#define ALL 27

// ARGS turns g in d and xn in x into d = max((np + xn) − 2g, 0) (NaN and −0
// stay) and x = c·d, with m scratch.
#define ARGS(d, x, m) \
	VFADD(x, x, NP) \
	VFADD(d, d, d) \
	VFSUB(d, x, d) \
	CLAMP(d, m) \
	VFMUL(x, d, CC)

// INRANGE sets m to the lanes of x in [expLo, expHi] (ordered compares:
// NaN is not), with s scratch.
#define INRANGE(x, m, s) \
	VFCMGE(m, x, LO) \
	VFCMGE(s, HI, x) \
	VANDV(m, m, s)

// GOOD clears the lanes of ALL where x is neither in [expLo, expHi] nor
// below −746, with m and s scratch.
#define GOOD(x, m, s) \
	INRANGE(x, m, s) \
	VFCMGT(s, FAR, x) \
	VORRV(m, m, s) \
	VANDV(ALL, ALL, m)

// ACCUM adds the pair (a0, a1) to the four partial sums at off(R10), with
// X0/X1 as scratch.
#define ACCUM(off, a0, a1) \
	ADD  $(off), R10, R12 \
	VLD1 (R12), [V2.D2, V3.D2] \
	VFADD(X0, X0, a0) \
	VFADD(X1, X1, a1) \
	VST1 [V2.D2, V3.D2], (R12)

// HALF computes the half-group at R0, R1, R2, R3 (four elements) up to its
// partial sums s (at soff(R10)): d, e (+0 below −746), h = t·e in T0/T1,
// w in M0/M1 and a = w·h in K0/K1. It advances R1, R2 and R3.
#define HALF(soff) \
	VLD1   (R0), [V0.D2, V1.D2] \
	VLD1.P 32(R1), [V2.D2, V3.D2] \
	ARGS(D0, X0, M0) \
	ARGS(D1, X1, M1) \
	INRANGE(X0, M0, S0) \
	INRANGE(X1, M1, S1) \
	EXP2 \
	VANDV(G0, G0, M0) \
	VANDV(G1, G1, M1) \
	VLD1.P 32(R2), [V4.D2, V5.D2] \
	VFMUL(T0, T0, G0) \
	VFMUL(T1, T1, G1) \
	VLD1.P 32(R3), [V12.D2, V13.D2] \
	VFMUL(K0, M0, T0) \
	VFMUL(K1, M1, T1) \
	ACCUM(soff, K0, K1)

// PIECES adds a·d to the partial sums l (at loff(R10)) and wp·h to gs.
#define PIECES(loff) \
	VFMUL(H0, K0, D0) \
	VFMUL(H1, K1, D1) \
	ACCUM(loff, H0, H1) \
	VFMUL(H0, WP, T0) \
	VFMUL(H1, WP, T1) \
	VLD1 (R7), [V2.D2, V3.D2] \
	VFADD(X0, X0, H0) \
	VFADD(X1, X1, H1) \
	VST1 [V2.D2, V3.D2], (R7)

// DTSUM adds w·(dt·e) to the partial sums o (at ooff(R10)).
#define DTSUM(ooff) \
	VLD1 (R4), [V8.D2, V9.D2] \
	VFMUL(H0, H0, G0) \
	VFMUL(H1, H1, G1) \
	VFMUL(H0, M0, H0) \
	VFMUL(H1, M1, H1) \
	ACCUM(ooff, H0, H1)

// NEXT moves R0, R4 and R7 to the next half-group.
#define NEXT \
	ADD $32, R0 \
	ADD $32, R4 \
	ADD $32, R7

// func rbfPairsNEON(ip, xn, t, w, dt, gs *float64, n int, np, c, wp float64, flags int, acc *[24]float64) (done int)
TEXT ·rbfPairsNEON(SB), NOSPLIT, $0-104
	EXPCONSTS
	MOVD  ip+0(FP), R0
	MOVD  xn+8(FP), R1
	MOVD  t+16(FP), R2
	MOVD  w+24(FP), R3
	MOVD  dt+32(FP), R4
	MOVD  gs+40(FP), R7
	MOVD  n+48(FP), R8
	FMOVD np+56(FP), F21
	VDUP  V21.D[0], V21.D2
	FMOVD c+64(FP), F22
	VDUP  V22.D[0], V22.D2
	FMOVD wp+72(FP), F25
	VDUP  V25.D[0], V25.D2
	MOVD  flags+80(FP), R9
	MOVD  acc+88(FP), R10
	MOVD  $0xc086200000000000, R12
	VDUP  R12, V23.D2
	MOVD  $0x4086280000000000, R12
	VDUP  R12, V24.D2
	MOVD  $0xc087500000000000, R12
	VDUP  R12, V26.D2
	MOVD  $0, R11

loop:
	CMP $8, R8
	BLT done

	// Check the group's eight arguments before writing anything.
	MOVD   $-1, R12
	VDUP   R12, V27.D2
	MOVD   R0, R13
	MOVD   R1, R14
	VLD1.P 32(R13), [V0.D2, V1.D2]
	VLD1.P 32(R14), [V2.D2, V3.D2]
	ARGS(D0, X0, M0)
	ARGS(D1, X1, M1)
	GOOD(X0, M0, S0)
	GOOD(X1, M1, S1)
	VLD1   (R13), [V0.D2, V1.D2]
	VLD1   (R14), [V2.D2, V3.D2]
	ARGS(D0, X0, M0)
	ARGS(D1, X1, M1)
	GOOD(X0, M0, S0)
	GOOD(X1, M1, S1)
	VMOV   V27.D[0], R12
	VMOV   V27.D[1], R13
	AND    R12, R13, R12
	CMN    $1, R12
	BNE    done

	// Lanes 0–3.
	HALF(0)
	TBZ $0, R9, nopieces0
	PIECES(64)

nopieces0:
	TBZ $1, R9, nodt0
	DTSUM(128)

nodt0:
	TBZ  $2, R9, nokeep0
	VST1 [V4.D2, V5.D2], (R0)

nokeep0:
	NEXT

	// Lanes 4–7.
	HALF(32)
	TBZ $0, R9, nopieces1
	PIECES(96)

nopieces1:
	TBZ $1, R9, nodt1
	DTSUM(160)

nodt1:
	TBZ  $2, R9, nokeep1
	VST1 [V4.D2, V5.D2], (R0)

nokeep1:
	NEXT
	ADD $8, R11
	SUB $8, R8
	B   loop

done:
	MOVD R11, done+96(FP)
	RET
