package vecmath

import "math"

// Exp sets dst[i] = eˣ for x = src[i], for i < len(src); dst must be at least
// as long as src and may be src itself. On amd64 with AVX-512F it
// evaluates eight elements per instruction (checking their range as it
// goes), with AVX2 and FMA four, and on arm64 two per NEON instruction;
// elsewhere (and under the purego and noasm tags) it uses expGeneric, its
// pure-Go twin. Every path gives the same bits.
//
// Method: x = k·ln 2 + r with k = round(x·log₂e) (by the 1.5·2⁵² rounding
// trick) and |r| ≤ ln 2/2 (Cody–Waite, with ln 2 split in two parts), eʳ by
// its Taylor polynomial of degree 13 in Horner form with fused multiply-adds
// (truncation error below 10⁻¹⁷ relative), and 2ᵏ built in the exponent
// field. The result is within 2 ulp of math.Exp (tested). Arguments
// outside [expLo, expHi] — where 2ᵏ would be subnormal or overflow — and
// NaN are recomputed with math.Exp, so ±Inf, NaN, overflow and gradual
// underflow behave exactly as math.Exp's.
func Exp(dst, src []float64) {
	n := len(src)
	if len(dst) < n {
		panic("vecmath: Exp: dst shorter than src")
	}
	dst = dst[:n]
	done := expImpl(dst, src)
	expGeneric(dst[done:], src[done:])
}

// Constants of the exponential kernels (shared with exp_avx2_amd64.s, which
// holds the same values in its data section, and exp_neon_arm64.s and
// exp_neon_arm64.h, which load them as immediates and, in the header's
// expCoef table, as data).
const (
	expLog2e = 1.4426950408889634         // log₂e
	expMagic = 6755399441055744.0         // 1.5·2⁵²: adding it rounds to an integer
	expLn2Hi = 6.93147180369123816490e-01 // ln 2, high part (trailing zero bits)
	expLn2Lo = 1.90821492927058770002e-10 // ln 2 − expLn2Hi
	expLo    = -708.0                     // below: 2ᵏ would be subnormal
	expHi    = 709.0                      // above: 2ᵏ·eʳ would overflow
)

// expCoef are the Taylor coefficients 1/i! of eʳ, i = 0…13.
var expCoef = [14]float64{
	1, 1, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
	1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600,
	1.0 / 6227020800,
}

// expGeneric is the pure-Go twin of the assembly kernels: the same
// operations in the same order, with math.FMA where they fuse.
func expGeneric(dst, src []float64) {
	dst = dst[:len(src)]
	for i, x := range src {
		v, ok := expFast(x)
		if !ok {
			v = math.Exp(x)
		}
		dst[i] = v
	}
}

// expFast evaluates eˣ by the kernels' method and reports whether x was in
// the range [expLo, expHi] where the method applies.
func expFast(x float64) (float64, bool) {
	t := math.FMA(x, expLog2e, expMagic)
	k := t - expMagic
	r := math.FMA(k, -expLn2Hi, x)
	r = math.FMA(k, -expLn2Lo, r)
	p := expCoef[13]
	for i := 12; i >= 0; i-- {
		p = math.FMA(r, p, expCoef[i])
	}
	// The low bits of t hold k; shifted into the exponent field and biased
	// they give 2ᵏ.
	scale := math.Float64frombits(math.Float64bits(t)<<52 + 1023<<52)
	return p * scale, x >= expLo && x <= expHi
}

// expImpl computes the longest prefix of Exp whose length is a multiple of
// 4 with the architecture's kernel, if it has one (expKernelOK), and
// returns its length.
func expImpl(dst, src []float64) int {
	n := len(src) &^ 3
	if !expKernelOK || n == 0 {
		return 0
	}
	expBlocks(dst[:n], src[:n])
	return n
}

// expBlock is the number of elements whose range expBlocks checks before
// handing them to a kernel.
const expBlock = 256

// expBlocks computes Exp on dst[:len(src)] (len(src) a multiple of the
// kernel's width) block by block with expKernel, the architecture's
// assembly kernel, which implements expFast's method for arguments in
// [expLo, expHi] and gives unspecified values for the others.
// expKernelInRange does each block as far as its arguments are in range
// (checking them in the kernel where it can, which saves a scan of every
// block). The rest of a block with an argument outside that range (or NaN)
// still goes through the kernel, from a copy (dst may be src), and those
// elements are then recomputed with math.Exp, as expGeneric does: kernel
// matrices of points far apart have many arguments below expLo, and sending
// their whole blocks to the scalar loop cost more than the exponentials in
// range.
func expBlocks(dst, src []float64) {
	var buf [expBlock]float64
	for i := 0; i < len(src); i += expBlock {
		s := src[i:min(i+expBlock, len(src))]
		d := dst[i : i+len(s)]
		done := expKernelInRange(d, s)
		if done == len(s) {
			continue
		}
		s, d = s[done:], d[done:]
		b := buf[:len(s)]
		copy(b, s)
		expKernel(d, b)
		for j, x := range b {
			if !(x >= expLo && x <= expHi) {
				d[j] = math.Exp(x)
			}
		}
	}
}
