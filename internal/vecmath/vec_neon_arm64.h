// Instruction macros of the NEON kernels (exp_neon_arm64.h,
// radial_neon_arm64.s, pairs_neon_arm64.s, gradrow_neon_arm64.s).
//
// Go's arm64 assembler has no mnemonics for the vector FADD, FSUB, FMUL,
// FDIV, FSQRT, FNEG and the floating-point compares, so the arithmetic is
// written with the macros below, WORD encodings over register numbers
// (d the destination, n and m the sources; lanes are two doubles). The rest
// of the vector work uses them too, so that every step of a chain is a
// macro over the same register numbers.

// Floating-point, 2 × 64-bit lanes.
#define VFADD(d, n, m) WORD $(0x4E60D400 | (m)<<16 | (n)<<5 | (d))
#define VFSUB(d, n, m) WORD $(0x4EE0D400 | (m)<<16 | (n)<<5 | (d))
#define VFMUL(d, n, m) WORD $(0x6E60DC00 | (m)<<16 | (n)<<5 | (d))
#define VFDIV(d, n, m) WORD $(0x6E60FC00 | (m)<<16 | (n)<<5 | (d))
#define VFSQRT(d, n) WORD $(0x6EE1F800 | (n)<<5 | (d))
#define VFNEG(d, n) WORD $(0x6EE0F800 | (n)<<5 | (d))
// FMLA and FMLS: d += n·m and d −= n·m, fused.
#define VFMLA(d, n, m) WORD $(0x4E60CC00 | (m)<<16 | (n)<<5 | (d))
#define VFMLS(d, n, m) WORD $(0x4EE0CC00 | (m)<<16 | (n)<<5 | (d))
// Compares: all-ones lanes where d = (n ≥ m), (n > m), (n = 0), (n > 0), (n < 0).
#define VFCMGE(d, n, m) WORD $(0x6E60E400 | (m)<<16 | (n)<<5 | (d))
#define VFCMGT(d, n, m) WORD $(0x6EE0E400 | (m)<<16 | (n)<<5 | (d))
#define VFCMEQZ(d, n) WORD $(0x4EE0D800 | (n)<<5 | (d))
#define VFCMGTZ(d, n) WORD $(0x4EE0C800 | (n)<<5 | (d))
#define VFCMLTZ(d, n) WORD $(0x4EE0E800 | (n)<<5 | (d))
// Bitwise: d = n AND m, d = n OR m, d = n AND NOT m, d = n.
#define VANDV(d, n, m) WORD $(0x4E201C00 | (m)<<16 | (n)<<5 | (d))
#define VORRV(d, n, m) WORD $(0x4EA01C00 | (m)<<16 | (n)<<5 | (d))
#define VBICV(d, n, m) WORD $(0x4E601C00 | (m)<<16 | (n)<<5 | (d))
#define VMOVV(d, n) WORD $(0x4EA01C00 | (n)<<16 | (n)<<5 | (d))
// Integer lanes: d = n << 52, d = n + m.
#define VSHL52(d, n) WORD $(0x4F745400 | (n)<<5 | (d))
#define VADDI(d, n, m) WORD $(0x4EE08400 | (m)<<16 | (n)<<5 | (d))
// LD1R: both lanes of t from [Xn]; LD1RP also adds 8 to Xn.
#define LD1R(t, n) WORD $(0x4D40CC00 | (n)<<5 | (t))
#define LD1RP(t, n) WORD $(0x4DDFCC00 | (n)<<5 | (t))
// FADDP (scalar): Dd = Vn[0] + Vn[1].
#define FADDP(d, n) WORD $(0x7E70D800 | (n)<<5 | (d))
