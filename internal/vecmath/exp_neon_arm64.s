//go:build !purego && !noasm

#include "textflag.h"

// NEON vector exponential (asm.Exp on arm64); expFast in exp.go is its pure-Go
// twin, operation for operation, so results are bit-identical.
//
// func expNEON(dst, src *float64, n int)
//
// n is a positive multiple of 4: two independent chains of two lanes each
// per iteration, so that the Horner recurrences overlap. Go's arm64
// assembler has no vector FADD, FSUB or FMUL mnemonics, so every step is a
// fused multiply-add, each the one the twin names with math.FMA or one
// that rounds exactly as the twin's plain operation:
//
//	t = fma(x, log2e, magic)           VFMLA into a copy of magic
//	k = t - magic                      VFMLS magic·1 from a copy of t (exact product)
//	r = fma(k, -ln2hi, x)              VFMLS k·ln2hi from x
//	r = fma(k, -ln2lo, r)              VFMLS k·ln2lo from r
//	p = fma(r, p, c[i]), i = 12 … 0    VFMLA into a copy of c[i], p starting at c[13]
//	scale = bits(t)<<52 + 1023<<52     VSHL, VADD (integer)
//	e = p·scale                        VFMLA into -0 (fma(p, scale, -0) rounds as p·scale, signed zeros too)
//
// Register map: R0 dst, R1 src, R2 elements left, R3 scratch for constants;
// V0/V1 x then r (chain 0/1), V2/V3 t then scale, V4/V5 k, V6/V7 and V8/V9
// the alternating Horner accumulators of chain 0 and chain 1; V11 -0,
// V12 1023<<52 (integer), V13 1.0, V14 ln2lo, V15 ln2hi, V16 magic,
// V17 log2e, V18 + i the coefficient c[i] (i = 0 … 13).
TEXT ·expNEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R2
	MOVD $0x8000000000000000, R3
	VDUP R3, V11.D2
	MOVD $0x3ff0000000000000, R3
	VDUP R3, V12.D2
	MOVD $0x3ff0000000000000, R3
	VDUP R3, V13.D2
	MOVD $0x3dea39ef35793c76, R3
	VDUP R3, V14.D2
	MOVD $0x3fe62e42fee00000, R3
	VDUP R3, V15.D2
	MOVD $0x4338000000000000, R3
	VDUP R3, V16.D2
	MOVD $0x3ff71547652b82fe, R3
	VDUP R3, V17.D2
	MOVD $0x3ff0000000000000, R3
	VDUP R3, V18.D2
	MOVD $0x3ff0000000000000, R3
	VDUP R3, V19.D2
	MOVD $0x3fe0000000000000, R3
	VDUP R3, V20.D2
	MOVD $0x3fc5555555555555, R3
	VDUP R3, V21.D2
	MOVD $0x3fa5555555555555, R3
	VDUP R3, V22.D2
	MOVD $0x3f81111111111111, R3
	VDUP R3, V23.D2
	MOVD $0x3f56c16c16c16c17, R3
	VDUP R3, V24.D2
	MOVD $0x3f2a01a01a01a01a, R3
	VDUP R3, V25.D2
	MOVD $0x3efa01a01a01a01a, R3
	VDUP R3, V26.D2
	MOVD $0x3ec71de3a556c734, R3
	VDUP R3, V27.D2
	MOVD $0x3e927e4fb7789f5c, R3
	VDUP R3, V28.D2
	MOVD $0x3e5ae64567f544e4, R3
	VDUP R3, V29.D2
	MOVD $0x3e21eed8eff8d898, R3
	VDUP R3, V30.D2
	MOVD $0x3de6124613a86d09, R3
	VDUP R3, V31.D2

loop:
	VLD1.P 32(R1), [V0.D2, V1.D2]
	VMOV   V16.B16, V2.B16
	VFMLA  V17.D2, V0.D2, V2.D2
	VMOV   V16.B16, V3.B16
	VFMLA  V17.D2, V1.D2, V3.D2
	VMOV   V2.B16, V4.B16
	VFMLS  V16.D2, V13.D2, V4.D2
	VMOV   V3.B16, V5.B16
	VFMLS  V16.D2, V13.D2, V5.D2
	VFMLS  V15.D2, V4.D2, V0.D2
	VFMLS  V15.D2, V5.D2, V1.D2
	VFMLS  V14.D2, V4.D2, V0.D2
	VFMLS  V14.D2, V5.D2, V1.D2
	VSHL   $52, V2.D2, V2.D2
	VADD   V12.D2, V2.D2, V2.D2
	VSHL   $52, V3.D2, V3.D2
	VADD   V12.D2, V3.D2, V3.D2
	VMOV   V31.B16, V6.B16
	VMOV   V31.B16, V8.B16
	VMOV   V30.B16, V7.B16
	VFMLA  V6.D2, V0.D2, V7.D2
	VMOV   V30.B16, V9.B16
	VFMLA  V8.D2, V1.D2, V9.D2
	VMOV   V29.B16, V6.B16
	VFMLA  V7.D2, V0.D2, V6.D2
	VMOV   V29.B16, V8.B16
	VFMLA  V9.D2, V1.D2, V8.D2
	VMOV   V28.B16, V7.B16
	VFMLA  V6.D2, V0.D2, V7.D2
	VMOV   V28.B16, V9.B16
	VFMLA  V8.D2, V1.D2, V9.D2
	VMOV   V27.B16, V6.B16
	VFMLA  V7.D2, V0.D2, V6.D2
	VMOV   V27.B16, V8.B16
	VFMLA  V9.D2, V1.D2, V8.D2
	VMOV   V26.B16, V7.B16
	VFMLA  V6.D2, V0.D2, V7.D2
	VMOV   V26.B16, V9.B16
	VFMLA  V8.D2, V1.D2, V9.D2
	VMOV   V25.B16, V6.B16
	VFMLA  V7.D2, V0.D2, V6.D2
	VMOV   V25.B16, V8.B16
	VFMLA  V9.D2, V1.D2, V8.D2
	VMOV   V24.B16, V7.B16
	VFMLA  V6.D2, V0.D2, V7.D2
	VMOV   V24.B16, V9.B16
	VFMLA  V8.D2, V1.D2, V9.D2
	VMOV   V23.B16, V6.B16
	VFMLA  V7.D2, V0.D2, V6.D2
	VMOV   V23.B16, V8.B16
	VFMLA  V9.D2, V1.D2, V8.D2
	VMOV   V22.B16, V7.B16
	VFMLA  V6.D2, V0.D2, V7.D2
	VMOV   V22.B16, V9.B16
	VFMLA  V8.D2, V1.D2, V9.D2
	VMOV   V21.B16, V6.B16
	VFMLA  V7.D2, V0.D2, V6.D2
	VMOV   V21.B16, V8.B16
	VFMLA  V9.D2, V1.D2, V8.D2
	VMOV   V20.B16, V7.B16
	VFMLA  V6.D2, V0.D2, V7.D2
	VMOV   V20.B16, V9.B16
	VFMLA  V8.D2, V1.D2, V9.D2
	VMOV   V19.B16, V6.B16
	VFMLA  V7.D2, V0.D2, V6.D2
	VMOV   V19.B16, V8.B16
	VFMLA  V9.D2, V1.D2, V8.D2
	VMOV   V18.B16, V7.B16
	VFMLA  V6.D2, V0.D2, V7.D2
	VMOV   V18.B16, V9.B16
	VFMLA  V8.D2, V1.D2, V9.D2
	VMOV   V11.B16, V6.B16
	VFMLA  V2.D2, V7.D2, V6.D2
	VMOV   V11.B16, V8.B16
	VFMLA  V3.D2, V9.D2, V8.D2
	VST1.P [V6.D2], 16(R0)
	VST1.P [V8.D2], 16(R0)
	SUBS   $4, R2, R2
	BNE    loop
	RET
