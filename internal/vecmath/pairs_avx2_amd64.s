//go:build !purego && !noasm

#include "textflag.h"
#include "exp_avx2_amd64.h"

// AVX2+FMA kernel of RBFPairRow (pairs.go): the AVX-512 kernel's
// operations (pairs_avx512_amd64.s) on groups of eight pairs held as two
// YMM halves, lanes 0–3 and 4–7 of the partial sums, with EXPREG of
// exp_avx2_amd64.h. rbfPairsGeneric is the pure-Go twin, operation for
// operation, so every path gives the same bits.
//
// Go signature (pairs_amd64.go):
//
//	func rbfPairsAVX2(ip, xn, t, w, dt, gs *float64, n int, np, c, wp float64, flags int, acc *[24]float64) (done int)
//
// n is a positive multiple of 8. As the AVX-512 kernel, it gives arguments
// below −746 the exponential +0 and stops before the first group of eight
// with an argument outside [expLo, expHi] that is not below −746 (or NaN),
// writing nothing of it; it returns the number of elements done. Without
// opmasks, the options of flags (pairPieces, pairDT, pairKeepH) are
// branches, taken the same way for every group; dt and gs are not touched
// when not asked for.
//
// Register map: DI ip, SI xn, R8 t, R9 w, R10 dt, R11 gs (each advanced
// with the elements), CX elements left, AX elements done, BX flags, R12
// acc, DX mask bits; Y0 squared distances, Y1 arguments, Y2–Y4 the
// exponential's temporaries (Y3 e), then h (Y2) and a (Y4), Y5 the in-range
// mask and scratch; Y6/Y7 s, Y8/Y9 l, Y10/Y11 o (lanes 0–3/4–7); Y12 zero,
// Y13 wp, Y14 c, Y15 np.

DATA pairLimits4<>+0(SB)/8, $0xc086200000000000 // expLo = −708, four times
DATA pairLimits4<>+8(SB)/8, $0xc086200000000000
DATA pairLimits4<>+16(SB)/8, $0xc086200000000000
DATA pairLimits4<>+24(SB)/8, $0xc086200000000000
DATA pairLimits4<>+32(SB)/8, $0x4086280000000000 // expHi = 709
DATA pairLimits4<>+40(SB)/8, $0x4086280000000000
DATA pairLimits4<>+48(SB)/8, $0x4086280000000000
DATA pairLimits4<>+56(SB)/8, $0x4086280000000000
DATA pairLimits4<>+64(SB)/8, $0xc087500000000000 // −746: math.Exp gives +0 below
DATA pairLimits4<>+72(SB)/8, $0xc087500000000000
DATA pairLimits4<>+80(SB)/8, $0xc087500000000000
DATA pairLimits4<>+88(SB)/8, $0xc087500000000000
GLOBL pairLimits4<>(SB), RODATA|NOPTR, $96

// PREP4 loads the half-group at byte offset off and sets
// D = max((np + xn) − 2g, 0) (NaN and −0 stay) and X = c·D.
#define PREP4(off, D, X) \
	VMOVUPD off(SI), X \
	VADDPD  Y15, X, X \
	VMOVUPD off(DI), D \
	VADDPD  D, D, D \
	VSUBPD  D, X, D \
	VMAXPD  D, Y12, D \
	VMULPD  Y14, D, X

// INRANGE4 sets M to the lanes of X in [expLo, expHi] (T scratch).
#define INRANGE4(X, M, T) \
	VCMPPD $0x1d, pairLimits4<>+0(SB), X, M \
	VCMPPD $0x12, pairLimits4<>+32(SB), X, T \
	VANDPD T, M, M

// OKBITS sets DX to the four bits of the lanes of X that are in range or
// below −746 (M, T scratch).
#define OKBITS(X, M, T) \
	INRANGE4(X, M, T) \
	VCMPPD    $0x11, pairLimits4<>+64(SB), X, T \
	VORPD     M, T, T \
	VMOVMSKPD T, DX

// EXPHALF computes e (Y3, +0 below −746) and h = t·e (Y2), a = w·h (Y4)
// for the half-group at byte offset off, and adds a to S.
#define EXPHALF(off, S) \
	PREP4(off, Y0, Y1) \
	INRANGE4(Y1, Y5, Y2) \
	EXPREG(Y1, Y2, Y3, Y4) \
	VANDPD  Y5, Y3, Y3 \
	VMULPD  off(R8), Y3, Y2 \
	VMULPD  off(R9), Y2, Y4 \
	VADDPD  Y4, S, S

// PIECES adds a·d to L and wp·h to gs for the half-group at byte offset off.
#define PIECES(off, L) \
	VMULPD  Y0, Y4, Y5 \
	VADDPD  Y5, L, L \
	VMULPD  Y13, Y2, Y5 \
	VADDPD  off(R11), Y5, Y5 \
	VMOVUPD Y5, off(R11)

// DTSUM adds w·(dt·e) to O for the half-group at byte offset off.
#define DTSUM(off, O) \
	VMULPD off(R10), Y3, Y5 \
	VMULPD off(R9), Y5, Y5 \
	VADDPD Y5, O, O

// func rbfPairsAVX2(ip, xn, t, w, dt, gs *float64, n int, np, c, wp float64, flags int, acc *[24]float64) (done int)
TEXT ·rbfPairsAVX2(SB), NOSPLIT, $0-104
	MOVQ         ip+0(FP), DI
	MOVQ         xn+8(FP), SI
	MOVQ         t+16(FP), R8
	MOVQ         w+24(FP), R9
	MOVQ         dt+32(FP), R10
	MOVQ         gs+40(FP), R11
	MOVQ         n+48(FP), CX
	VBROADCASTSD np+56(FP), Y15
	VBROADCASTSD c+64(FP), Y14
	VBROADCASTSD wp+72(FP), Y13
	MOVQ         flags+80(FP), BX
	MOVQ         acc+88(FP), R12
	VXORPD       Y12, Y12, Y12
	VMOVUPD      (R12), Y6
	VMOVUPD      32(R12), Y7
	VMOVUPD      64(R12), Y8
	VMOVUPD      96(R12), Y9
	VMOVUPD      128(R12), Y10
	VMOVUPD      160(R12), Y11
	XORQ         AX, AX

loop:
	CMPQ CX, $8
	JLT  done
	PREP4(0, Y0, Y1)
	OKBITS(Y1, Y2, Y3)
	CMPB DX, $0x0f
	JNE  done
	PREP4(32, Y0, Y1)
	OKBITS(Y1, Y2, Y3)
	CMPB DX, $0x0f
	JNE  done

	// Lanes 0–3.
	EXPHALF(0, Y6)
	BTQ $0, BX
	JCC nopieces0
	PIECES(0, Y8)

nopieces0:
	BTQ $1, BX
	JCC nodt0
	DTSUM(0, Y10)

nodt0:
	BTQ $2, BX
	JCC nokeep0
	VMOVUPD Y2, (DI)

nokeep0:
	// Lanes 4–7.
	EXPHALF(32, Y7)
	BTQ $0, BX
	JCC nopieces1
	PIECES(32, Y9)

nopieces1:
	BTQ $1, BX
	JCC nodt1
	DTSUM(32, Y11)

nodt1:
	BTQ $2, BX
	JCC nokeep1
	VMOVUPD Y2, 32(DI)

nokeep1:
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, R11
	ADDQ $8, AX
	SUBQ $8, CX
	JMP  loop

done:
	VMOVUPD Y6, (R12)
	VMOVUPD Y7, 32(R12)
	VMOVUPD Y8, 64(R12)
	VMOVUPD Y9, 96(R12)
	VMOVUPD Y10, 128(R12)
	VMOVUPD Y11, 160(R12)
	MOVQ    AX, done+96(FP)
	VZEROUPPER
	RET
