//go:build !purego && !noasm

#include "textflag.h"
#include "exp_avx2_amd64.h"
#include "exp_avx512_amd64.h"

// AVX-512F kernel of RBFPairRow (pairs.go): eight pairs per ZMM register,
// two groups of eight per iteration, the exponential by EXPREG8 in
// registers. rbfPairsGeneric is the pure-Go twin, operation for operation:
// no fused multiply-add outside the exponential, and element j of the row
// added into lane j mod 8 of the partial sums acc, so every path gives the
// same bits.
//
// Go signature (pairs_amd64.go):
//
//	func rbfPairsAVX512(ip, xn, t, w, dt, gs *float64, n int, np, c, wp float64, flags int, acc *[24]float64) (done int)
//
// n is a positive multiple of 8. Arguments c·d below −746, where math.Exp
// (and so Exp) gives exactly +0, get e = +0 in the kernel: far pairs, common
// with short lengthscales, stay on the fast path. The kernel stops before
// the first group of eight with an argument outside [expLo, expHi] that is
// not below −746 (NaN included), writing nothing of it, and returns the
// number of elements done.
// The options of flags (pairPieces, pairDT, pairKeepH) become the opmasks
// K4, K5 and K6 (all eight lanes or none): masked-out loads and stores
// neither read nor write memory, so dt and gs need only be valid addresses
// (of n elements) when not asked for; rbfPairsKernel passes t and g.
//
// Register map: DI ip (g of RBFPairRow), SI xn, R8 t, R9 w, R10 dt, R11 gs (each advanced with
// the elements), CX elements left, AX elements done, BX flags, R12 acc,
// DX and R13 scratch; Z24/Z25/Z26 the partial sums s, l, o; Z28 wp,
// Z29 c, Z30 np, Z31 zero; per group of eight: D (squared distances), X
// (arguments), three exponential temporaries (the second is e), H, A, T, G.
// K1/K2 the in-range lanes of the two groups, K3 and K7 scratch masks.

DATA pairUnder<>+0(SB)/8, $0xc087500000000000 // −746: math.Exp gives +0 below
GLOBL pairUnder<>(SB), RODATA|NOPTR, $8

// RANGEOK sets K to the lanes of X in [expLo, expHi] and DX to the eight
// bits of the lanes that are in range or below −746 (false for NaN).
#define RANGEOK(X, K) \
	VCMPPD.BCST $0x1d, EXPLO, X, K \
	VCMPPD.BCST $0x12, EXPHI, X, K, K \
	VCMPPD.BCST $0x11, pairUnder<>+0(SB), X, K3 \
	KORW        K3, K, K7 \
	KMOVW       K7, DX

// PREP loads the group at byte offset off and sets D = max((np + xn) − 2g, 0)
// (NaN and −0 stay: VMAXPD returns its second source unless the first is
// greater) and X = c·D.
#define PREP(off, D, X) \
	VMOVUPD off(SI), X \
	VADDPD  Z30, X, X \
	VMOVUPD off(DI), D \
	VADDPD  D, D, D \
	VSUBPD  D, X, D \
	VMAXPD  D, Z31, D \
	VMULPD  Z29, D, X

// SUMS adds the group at byte offset off, with squared distances D and
// exponentials E, into the partial sums: h = t·e, a = w·h; s += a and, under
// K4, l += a·d and gs += wp·h; under K5, o += w·(dt·e); under K6, g = h.
#define SUMS(off, D, E, H, A, T, G) \
	VMULPD  off(R8), E, H \
	VMULPD  off(R9), H, A \
	VADDPD  A, Z24, Z24 \
	VMULPD  D, A, T \
	VADDPD  T, Z25, K4, Z25 \
	VMULPD  Z28, H, T \
	VMOVUPD.Z off(R11), K4, G \
	VADDPD  T, G, G \
	VMOVUPD G, K4, off(R11) \
	VMULPD.Z off(R10), E, K5, T \
	VMULPD  off(R9), T, T \
	VADDPD  T, Z26, K5, Z26 \
	VMOVUPD H, K6, off(DI)

// SUMSH is SUMS when flags asks for g = h alone (pairKeepH): h = t·e,
// a = w·h, s += a, g = h, the same operations in the same order without
// the masked-out ones, which still cost issue slots and load ports.
#define SUMSH(off, E, H, A) \
	VMULPD  off(R8), E, H \
	VMULPD  off(R9), H, A \
	VADDPD  A, Z24, Z24 \
	VMOVUPD H, off(DI)

// FLAGMASK sets K to all eight lanes if flags (BX) has bit B, else none.
#define FLAGMASK(B, K) \
	XORL    R13, R13 \
	BTQ     $B, BX \
	CMOVLCS DX, R13 \
	KMOVW   R13, K

// func rbfPairsAVX512(ip, xn, t, w, dt, gs *float64, n int, np, c, wp float64, flags int, acc *[24]float64) (done int)
TEXT ·rbfPairsAVX512(SB), NOSPLIT, $0-104
	MOVQ         ip+0(FP), DI
	MOVQ         xn+8(FP), SI
	MOVQ         t+16(FP), R8
	MOVQ         w+24(FP), R9
	MOVQ         dt+32(FP), R10
	MOVQ         gs+40(FP), R11
	MOVQ         n+48(FP), CX
	VBROADCASTSD np+56(FP), Z30
	VBROADCASTSD c+64(FP), Z29
	VBROADCASTSD wp+72(FP), Z28
	MOVQ         flags+80(FP), BX
	MOVQ         acc+88(FP), R12
	VPXORQ       Z31, Z31, Z31
	VMOVUPD      (R12), Z24
	VMOVUPD      64(R12), Z25
	VMOVUPD      128(R12), Z26
	MOVL         $0xff, DX
	FLAGMASK(0, K4)
	FLAGMASK(1, K5)
	FLAGMASK(2, K6)
	XORQ         AX, AX
	CMPQ         BX, $4 // pairKeepH alone
	JEQ          hloop16

loop16:
	CMPQ CX, $16
	JLT  loop8
	PREP(0, Z0, Z1)
	PREP(64, Z8, Z9)
	RANGEOK(Z1, K1)
	CMPB DX, $0xff
	JNE  loop8
	RANGEOK(Z9, K2)
	CMPB DX, $0xff
	JNE  loop8
	EXPREG8(Z1, Z2, Z3, Z4)
	EXPREG8(Z9, Z10, Z11, Z12)
	VMOVAPD.Z Z3, K1, Z3
	VMOVAPD.Z Z11, K2, Z11
	SUMS(0, Z0, Z3, Z5, Z6, Z7, Z17)
	SUMS(64, Z8, Z11, Z13, Z14, Z15, Z16)
	ADDQ $128, DI
	ADDQ $128, SI
	ADDQ $128, R8
	ADDQ $128, R9
	ADDQ $128, R10
	ADDQ $128, R11
	ADDQ $16, AX
	SUBQ $16, CX
	JMP  loop16

loop8:
	CMPQ CX, $8
	JLT  done
	PREP(0, Z0, Z1)
	RANGEOK(Z1, K1)
	CMPB DX, $0xff
	JNE  done
	EXPREG8(Z1, Z2, Z3, Z4)
	VMOVAPD.Z Z3, K1, Z3
	SUMS(0, Z0, Z3, Z5, Z6, Z7, Z17)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, R11
	ADDQ $8, AX
	SUBQ $8, CX
	JMP  loop8

// The loops for pairKeepH alone: the same groups and checks, SUMSH for
// SUMS. (Four groups per iteration measured the same.)
hloop16:
	CMPQ CX, $16
	JLT  hloop8
	PREP(0, Z0, Z1)
	PREP(64, Z8, Z9)
	RANGEOK(Z1, K1)
	CMPB DX, $0xff
	JNE  hloop8
	RANGEOK(Z9, K2)
	CMPB DX, $0xff
	JNE  hloop8
	EXPREG8(Z1, Z2, Z3, Z4)
	EXPREG8(Z9, Z10, Z11, Z12)
	VMOVAPD.Z Z3, K1, Z3
	VMOVAPD.Z Z11, K2, Z11
	SUMSH(0, Z3, Z5, Z6)
	SUMSH(64, Z11, Z13, Z14)
	ADDQ $128, DI
	ADDQ $128, SI
	ADDQ $128, R8
	ADDQ $128, R9
	ADDQ $16, AX
	SUBQ $16, CX
	JMP  hloop16

hloop8:
	CMPQ CX, $8
	JLT  done
	PREP(0, Z0, Z1)
	RANGEOK(Z1, K1)
	CMPB DX, $0xff
	JNE  done
	EXPREG8(Z1, Z2, Z3, Z4)
	VMOVAPD.Z Z3, K1, Z3
	SUMSH(0, Z3, Z5, Z6)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $8, AX
	SUBQ $8, CX
	JMP  hloop8

done:
	VMOVUPD Z24, (R12)
	VMOVUPD Z25, 64(R12)
	VMOVUPD Z26, 128(R12)
	MOVQ    AX, done+96(FP)
	VZEROUPPER
	RET
