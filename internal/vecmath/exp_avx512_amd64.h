// AVX-512F exponential macros shared by exp_avx512_amd64.s and
// pairs_avx512_amd64.s. Include after exp_avx2_amd64.h, whose constants they
// use as embedded broadcasts. INRANGE writes DX.

DATA expLimits<>+0(SB)/8, $0xc086200000000000 // expLo = -708
DATA expLimits<>+8(SB)/8, $0x4086280000000000 // expHi = 709
GLOBL expLimits<>(SB), RODATA|NOPTR, $16

#define EXPLO expLimits<>+0(SB)
#define EXPHI expLimits<>+8(SB)

// EXPREG8 is EXPREG (exp_avx2_amd64.h) on eight elements: R = eˣ for X,
// with T and P as scratch.
#define EXPREG8(X, T, R, P) \
	VBROADCASTSD MAGIC, T \
	VFMADD231PD.BCST LOG2E, X, T \
	VSUBPD.BCST MAGIC, T, R \
	VMOVAPD X, P \
	VFMADD231PD.BCST NLN2HI, R, P \
	VFMADD231PD.BCST NLN2LO, R, P \
	VBROADCASTSD C13, R \
	VFMADD213PD.BCST C12, P, R \
	VFMADD213PD.BCST C11, P, R \
	VFMADD213PD.BCST C10, P, R \
	VFMADD213PD.BCST C9, P, R \
	VFMADD213PD.BCST C8, P, R \
	VFMADD213PD.BCST C7, P, R \
	VFMADD213PD.BCST C6, P, R \
	VFMADD213PD.BCST C5, P, R \
	VFMADD213PD.BCST C4, P, R \
	VFMADD213PD.BCST C3, P, R \
	VFMADD213PD.BCST C2, P, R \
	VFMADD213PD.BCST C1, P, R \
	VFMADD213PD.BCST C0, P, R \
	VPSLLQ $52, T, T \
	VPADDQ.BCST BIAS, T, T \
	VMULPD T, R, R

// INRANGE sets K to the lanes of X with expLo <= x <= expHi (false for NaN)
// and DX to those eight mask bits.
#define INRANGE(X, K) \
	VCMPPD.BCST $0x1d, EXPLO, X, K \
	VCMPPD.BCST $0x12, EXPHI, X, K, K \
	KMOVW K, DX
