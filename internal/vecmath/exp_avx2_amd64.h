// Constants and the register-to-register exponential of the AVX2 + FMA
// kernels (exp_avx2_amd64.s, radial_avx2_amd64.s, pairs_avx2_amd64.s, and
// through exp_avx512_amd64.h the AVX-512 ones); expFast in exp.go is the
// pure-Go twin of EXPREG, operation for operation. Each constant is stored
// four times so that it can be a 256-bit memory operand. The data symbol is
// file-local (<>), so every including file gets its own copy.

DATA expConsts<>+0(SB)/8, $0x3ff71547652b82fe
DATA expConsts<>+8(SB)/8, $0x3ff71547652b82fe
DATA expConsts<>+16(SB)/8, $0x3ff71547652b82fe
DATA expConsts<>+24(SB)/8, $0x3ff71547652b82fe
DATA expConsts<>+32(SB)/8, $0x4338000000000000
DATA expConsts<>+40(SB)/8, $0x4338000000000000
DATA expConsts<>+48(SB)/8, $0x4338000000000000
DATA expConsts<>+56(SB)/8, $0x4338000000000000
DATA expConsts<>+64(SB)/8, $0xbfe62e42fee00000
DATA expConsts<>+72(SB)/8, $0xbfe62e42fee00000
DATA expConsts<>+80(SB)/8, $0xbfe62e42fee00000
DATA expConsts<>+88(SB)/8, $0xbfe62e42fee00000
DATA expConsts<>+96(SB)/8, $0xbdea39ef35793c76
DATA expConsts<>+104(SB)/8, $0xbdea39ef35793c76
DATA expConsts<>+112(SB)/8, $0xbdea39ef35793c76
DATA expConsts<>+120(SB)/8, $0xbdea39ef35793c76
DATA expConsts<>+128(SB)/8, $0x3ff0000000000000
DATA expConsts<>+136(SB)/8, $0x3ff0000000000000
DATA expConsts<>+144(SB)/8, $0x3ff0000000000000
DATA expConsts<>+152(SB)/8, $0x3ff0000000000000
DATA expConsts<>+160(SB)/8, $0x3ff0000000000000
DATA expConsts<>+168(SB)/8, $0x3ff0000000000000
DATA expConsts<>+176(SB)/8, $0x3ff0000000000000
DATA expConsts<>+184(SB)/8, $0x3ff0000000000000
DATA expConsts<>+192(SB)/8, $0x3ff0000000000000
DATA expConsts<>+200(SB)/8, $0x3ff0000000000000
DATA expConsts<>+208(SB)/8, $0x3ff0000000000000
DATA expConsts<>+216(SB)/8, $0x3ff0000000000000
DATA expConsts<>+224(SB)/8, $0x3fe0000000000000
DATA expConsts<>+232(SB)/8, $0x3fe0000000000000
DATA expConsts<>+240(SB)/8, $0x3fe0000000000000
DATA expConsts<>+248(SB)/8, $0x3fe0000000000000
DATA expConsts<>+256(SB)/8, $0x3fc5555555555555
DATA expConsts<>+264(SB)/8, $0x3fc5555555555555
DATA expConsts<>+272(SB)/8, $0x3fc5555555555555
DATA expConsts<>+280(SB)/8, $0x3fc5555555555555
DATA expConsts<>+288(SB)/8, $0x3fa5555555555555
DATA expConsts<>+296(SB)/8, $0x3fa5555555555555
DATA expConsts<>+304(SB)/8, $0x3fa5555555555555
DATA expConsts<>+312(SB)/8, $0x3fa5555555555555
DATA expConsts<>+320(SB)/8, $0x3f81111111111111
DATA expConsts<>+328(SB)/8, $0x3f81111111111111
DATA expConsts<>+336(SB)/8, $0x3f81111111111111
DATA expConsts<>+344(SB)/8, $0x3f81111111111111
DATA expConsts<>+352(SB)/8, $0x3f56c16c16c16c17
DATA expConsts<>+360(SB)/8, $0x3f56c16c16c16c17
DATA expConsts<>+368(SB)/8, $0x3f56c16c16c16c17
DATA expConsts<>+376(SB)/8, $0x3f56c16c16c16c17
DATA expConsts<>+384(SB)/8, $0x3f2a01a01a01a01a
DATA expConsts<>+392(SB)/8, $0x3f2a01a01a01a01a
DATA expConsts<>+400(SB)/8, $0x3f2a01a01a01a01a
DATA expConsts<>+408(SB)/8, $0x3f2a01a01a01a01a
DATA expConsts<>+416(SB)/8, $0x3efa01a01a01a01a
DATA expConsts<>+424(SB)/8, $0x3efa01a01a01a01a
DATA expConsts<>+432(SB)/8, $0x3efa01a01a01a01a
DATA expConsts<>+440(SB)/8, $0x3efa01a01a01a01a
DATA expConsts<>+448(SB)/8, $0x3ec71de3a556c734
DATA expConsts<>+456(SB)/8, $0x3ec71de3a556c734
DATA expConsts<>+464(SB)/8, $0x3ec71de3a556c734
DATA expConsts<>+472(SB)/8, $0x3ec71de3a556c734
DATA expConsts<>+480(SB)/8, $0x3e927e4fb7789f5c
DATA expConsts<>+488(SB)/8, $0x3e927e4fb7789f5c
DATA expConsts<>+496(SB)/8, $0x3e927e4fb7789f5c
DATA expConsts<>+504(SB)/8, $0x3e927e4fb7789f5c
DATA expConsts<>+512(SB)/8, $0x3e5ae64567f544e4
DATA expConsts<>+520(SB)/8, $0x3e5ae64567f544e4
DATA expConsts<>+528(SB)/8, $0x3e5ae64567f544e4
DATA expConsts<>+536(SB)/8, $0x3e5ae64567f544e4
DATA expConsts<>+544(SB)/8, $0x3e21eed8eff8d898
DATA expConsts<>+552(SB)/8, $0x3e21eed8eff8d898
DATA expConsts<>+560(SB)/8, $0x3e21eed8eff8d898
DATA expConsts<>+568(SB)/8, $0x3e21eed8eff8d898
DATA expConsts<>+576(SB)/8, $0x3de6124613a86d09
DATA expConsts<>+584(SB)/8, $0x3de6124613a86d09
DATA expConsts<>+592(SB)/8, $0x3de6124613a86d09
DATA expConsts<>+600(SB)/8, $0x3de6124613a86d09
GLOBL expConsts<>(SB), RODATA|NOPTR, $608

// log₂e, 1.5·2⁵², −ln 2 (high and low parts), the exponent bias 1023 as an
// int64 shifted into place, and the Taylor coefficients 1/i!, i = 0…13.
#define LOG2E expConsts<>+0(SB)
#define MAGIC expConsts<>+32(SB)
#define NLN2HI expConsts<>+64(SB)
#define NLN2LO expConsts<>+96(SB)
#define BIAS expConsts<>+128(SB)
#define C0 expConsts<>+160(SB)
#define C1 expConsts<>+192(SB)
#define C2 expConsts<>+224(SB)
#define C3 expConsts<>+256(SB)
#define C4 expConsts<>+288(SB)
#define C5 expConsts<>+320(SB)
#define C6 expConsts<>+352(SB)
#define C7 expConsts<>+384(SB)
#define C8 expConsts<>+416(SB)
#define C9 expConsts<>+448(SB)
#define C10 expConsts<>+480(SB)
#define C11 expConsts<>+512(SB)
#define C12 expConsts<>+544(SB)
#define C13 expConsts<>+576(SB)

// EXPREG sets R = eˣ for the four elements of X (left unchanged), using
// T (t, then 2ᵏ) and P (r) as scratch. R first holds k, then the
// polynomial p. Arguments outside [expLo, expHi] and NaN give unspecified
// values.
#define EXPREG(X, T, R, P) \
	VMOVUPD MAGIC, T \
	VFMADD231PD LOG2E, X, T \
	VSUBPD MAGIC, T, R \
	VMOVAPD X, P \
	VFMADD231PD NLN2HI, R, P \
	VFMADD231PD NLN2LO, R, P \
	VMOVUPD C13, R \
	VFMADD213PD C12, P, R \
	VFMADD213PD C11, P, R \
	VFMADD213PD C10, P, R \
	VFMADD213PD C9, P, R \
	VFMADD213PD C8, P, R \
	VFMADD213PD C7, P, R \
	VFMADD213PD C6, P, R \
	VFMADD213PD C5, P, R \
	VFMADD213PD C4, P, R \
	VFMADD213PD C3, P, R \
	VFMADD213PD C2, P, R \
	VFMADD213PD C1, P, R \
	VFMADD213PD C0, P, R \
	VPSLLQ $52, T, T \
	VPADDQ BIAS, T, T \
	VMULPD T, R, R
