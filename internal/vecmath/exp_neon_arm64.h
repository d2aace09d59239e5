// Shared by the NEON kernels that compute exponentials in registers
// (radial_neon_arm64.s, pairs_neon_arm64.s): the exponential's coefficients
// and registers, and EXP2, which is expFast (exp.go) operation for
// operation on four elements. The instruction macros are in
// vec_neon_arm64.h, which this file includes.

#include "vec_neon_arm64.h"

// The Taylor coefficients of eʳ, c13 first, in the order the Horner
// recurrence reads them (EXP2 walks it from R5 with R6).
DATA expCoef<>+0(SB)/8, $0x3de6124613a86d09
DATA expCoef<>+8(SB)/8, $0x3e21eed8eff8d898
DATA expCoef<>+16(SB)/8, $0x3e5ae64567f544e4
DATA expCoef<>+24(SB)/8, $0x3e927e4fb7789f5c
DATA expCoef<>+32(SB)/8, $0x3ec71de3a556c734
DATA expCoef<>+40(SB)/8, $0x3efa01a01a01a01a
DATA expCoef<>+48(SB)/8, $0x3f2a01a01a01a01a
DATA expCoef<>+56(SB)/8, $0x3f56c16c16c16c17
DATA expCoef<>+64(SB)/8, $0x3f81111111111111
DATA expCoef<>+72(SB)/8, $0x3fa5555555555555
DATA expCoef<>+80(SB)/8, $0x3fc5555555555555
DATA expCoef<>+88(SB)/8, $0x3fe0000000000000
DATA expCoef<>+96(SB)/8, $0x3ff0000000000000
DATA expCoef<>+104(SB)/8, $0x3ff0000000000000
GLOBL expCoef<>(SB), RODATA|NOPTR, $112

// The exponential's constant registers (broadcast to both lanes), loaded
// by EXPCONSTS with R3 as scratch.
#define LOG2E 16
#define MAGIC 17
#define LN2HI 18
#define LN2LO 19
#define BIAS 20

#define EXPCONSTS \
	MOVD $0x3ff71547652b82fe, R3 \
	VDUP R3, V16.D2 \
	MOVD $0x4338000000000000, R3 \
	VDUP R3, V17.D2 \
	MOVD $0x3fe62e42fee00000, R3 \
	VDUP R3, V18.D2 \
	MOVD $0x3dea39ef35793c76, R3 \
	VDUP R3, V19.D2 \
	MOVD $0x3ff0000000000000, R3 \
	VDUP R3, V20.D2 \
	MOVD $expCoef<>(SB), R5

// The exponential's registers, chain 0 and chain 1 (two lanes each): X0/X1
// the argument x, then r; T0/T1 t, then 2ᵏ; K0/K1 k, then scratch; H0/H1
// and G0/G1 the alternating Horner accumulators (the result ends in G0/G1).
#define X0 2
#define X1 3
#define T0 4
#define T1 5
#define K0 6
#define K1 7
#define H0 8
#define H1 9
#define G0 10
#define G1 11

// HSTEP is one step of the Horner recurrence p = fma(r, p, c[i]) on both
// chains: c[i] loaded into d0 and d1 (R6 advancing to c[i−1] after the
// second load), then d += r·p with p in p0/p1.
#define HSTEP(d0, d1, p0, p1, r0, r1) \
	LD1R(d0, 6) \
	LD1RP(d1, 6) \
	VFMLA(d0, r0, p0) \
	VFMLA(d1, r1, p1)

// EXP2 sets G0/G1 = eˣ for x in X0/X1, expFast's method: t = fma(x, log2e,
// magic) (FMLA into a copy of magic), k = t − magic, r = fma(k, −ln2hi, x)
// and fma(k, −ln2lo, r) (FMLS), p = fma(r, p, c[i]) for i = 12 … 0 from
// p = c13, 2ᵏ from the bits of t, e = p·2ᵏ.
#define EXP2 \
	VMOVV(T0, MAGIC) \
	VFMLA(T0, X0, LOG2E) \
	VMOVV(T1, MAGIC) \
	VFMLA(T1, X1, LOG2E) \
	VFSUB(K0, T0, MAGIC) \
	VFSUB(K1, T1, MAGIC) \
	VFMLS(X0, K0, LN2HI) \
	VFMLS(X1, K1, LN2HI) \
	VFMLS(X0, K0, LN2LO) \
	VFMLS(X1, K1, LN2LO) \
	VSHL52(T0, T0) \
	VADDI(T0, T0, BIAS) \
	VSHL52(T1, T1) \
	VADDI(T1, T1, BIAS) \
	MOVD R5, R6 \
	LD1R(H0, 6) \
	LD1RP(H1, 6) \
	HSTEP(G0, G1, H0, H1, X0, X1) \
	HSTEP(H0, H1, G0, G1, X0, X1) \
	HSTEP(G0, G1, H0, H1, X0, X1) \
	HSTEP(H0, H1, G0, G1, X0, X1) \
	HSTEP(G0, G1, H0, H1, X0, X1) \
	HSTEP(H0, H1, G0, G1, X0, X1) \
	HSTEP(G0, G1, H0, H1, X0, X1) \
	HSTEP(H0, H1, G0, G1, X0, X1) \
	HSTEP(G0, G1, H0, H1, X0, X1) \
	HSTEP(H0, H1, G0, G1, X0, X1) \
	HSTEP(G0, G1, H0, H1, X0, X1) \
	HSTEP(H0, H1, G0, G1, X0, X1) \
	HSTEP(G0, G1, H0, H1, X0, X1) \
	VFMUL(G0, G0, T0) \
	VFMUL(G1, G1, T1)

// CLAMP sets lanes of d below zero to +0 (NaN and −0 stay), using mask m.
#define CLAMP(d, m) \
	VFCMLTZ(m, d) \
	VBICV(d, d, m)

