package vecmath

import "math"

// Radial names the radial profile g of a stationary covariance
// k(x, z) = v·g(s), as a function of the squared scaled distance
// s = ‖(x − z)/ℓ‖².
type Radial int

const (
	// RadialRBF is the squared exponential profile g(s) = e^{−s/2}.
	RadialRBF Radial = iota
	// RadialMatern12 is the Matérn-1/2 profile g(s) = e^{−√s}.
	RadialMatern12
	// RadialMatern32 is the Matérn-3/2 profile g(s) = (1 + a)·e^{−a},
	// a = √(3s).
	RadialMatern32
	// RadialMatern52 is the Matérn-5/2 profile
	// g(s) = (1 + a + a²/3)·e^{−a}, a = √(5s).
	RadialMatern52
)

// RadialProfile sets dst[i] = v·g(max(src[i], 0)) for the profile g, for
// i < len(src); dst must be at least as long as src and may be src itself.
// It is the elementwise pass that turns squared distances into a kernel
// matrix; the clamp at 0 absorbs the rounding of ‖x‖² + ‖z‖² − 2xᵀz for
// nearby points (NaN stays NaN). On amd64 with AVX2 and FMA, and on arm64, it runs fused assembly
// kernels (square root, exponential and polynomial in registers); elsewhere,
// and under the purego and noasm tags, it runs radialGeneric, which uses
// Exp. Every path gives the bits of radialOne, the pure-Go twin:
//
//	RBF:   e = exp(−0.5·s)                      result v·e
//	ν=1/2: e = exp(−√s)                         result v·e
//	ν=3/2: a = √(3·s), e = exp(−a), e ·= 1 + a   result v·e
//	ν=5/2: a = √(5·s), e = exp(−a), e ·= (1 + a) + a·a/3
//
// where exp is Exp's method (math.Exp outside [expLo, expHi]) and the
// Matérn polynomial is skipped where e underflows to 0, so that huge or
// infinite distances give 0, never NaN. NaN stays NaN.
func RadialProfile(dst, src []float64, g Radial, v float64) {
	if g < RadialRBF || g > RadialMatern52 {
		panic("vecmath: unknown radial profile")
	}
	n := len(src)
	if len(dst) < n {
		panic("vecmath: RadialProfile: dst shorter than src")
	}
	dst = dst[:n]
	done := radialImpl(dst, src, g, v)
	radialGeneric(dst[done:], src[done:], g, v)
}

// clampSq clamps a squared distance at 0: negative values, which rounding
// in ‖x‖² + ‖z‖² − 2xᵀz produces for nearby points, become +0, while NaN
// and −0 stay as they are.
func clampSq(s float64) float64 {
	if s < 0 {
		return 0
	}
	return s
}

// radialArg returns the argument of the exponential for squared distance
// s (clamped at 0), and a = √(c·s) for the Matérn profiles.
func radialArg(s float64, g Radial) (x, a float64) {
	s = clampSq(s)
	switch g {
	case RadialRBF:
		return -0.5 * s, 0
	case RadialMatern12:
		a = math.Sqrt(s)
	case RadialMatern32:
		a = math.Sqrt(3 * s)
	default:
		a = math.Sqrt(5 * s)
	}
	return -a, a
}

// radialPoly multiplies the exponential e by the Matérn polynomial in a.
func radialPoly(e, a float64, g Radial) float64 {
	if e == 0 {
		return 0
	}
	switch g {
	case RadialMatern32:
		return e * (1 + a)
	case RadialMatern52:
		return e * (1 + a + a*a/3)
	}
	return e
}

// radialOne is the pure-Go twin of the kernels for one element.
func radialOne(s float64, g Radial, v float64) float64 {
	x, a := radialArg(s, g)
	e, ok := expFast(x)
	if !ok {
		e = math.Exp(x)
	}
	return v * radialPoly(e, a, g)
}

// radialBlock is the number of elements per block of radialGeneric and
// radialBlocks.
const radialBlock = 256

// radialGeneric computes RadialProfile block by block without a fused
// kernel: the exponential arguments, Exp, then the polynomial. It gives
// radialOne's bits because Exp gives expFast's (or math.Exp's).
func radialGeneric(dst, src []float64, g Radial, v float64) {
	var ebuf, abuf [radialBlock]float64
	for len(src) > 0 {
		s := src[:min(radialBlock, len(src))]
		d := dst[:len(s)]
		src, dst = src[len(s):], dst[len(s):]
		e, a := ebuf[:len(s)], abuf[:len(s)]
		for j, sj := range s {
			e[j], a[j] = radialArg(sj, g)
		}
		Exp(e, e)
		for j := range d {
			d[j] = v * radialPoly(e[j], a[j], g)
		}
	}
}

// radialBlocks computes RadialProfile on dst[:len(src)] (len(src) a
// multiple of 4) block by block with radialKernel. A block in which an
// exponential argument fell outside [expLo, expHi] (or was NaN) has those
// elements recomputed by radialOne, from a copy of the block when dst is
// src.
func radialBlocks(dst, src []float64, g Radial, v float64) {
	var buf [radialBlock]float64
	inPlace := len(src) > 0 && &dst[0] == &src[0]
	for i := 0; i < len(src); i += radialBlock {
		s := src[i:min(i+radialBlock, len(src))]
		d := dst[i : i+len(s)]
		if inPlace {
			b := buf[:len(s)]
			copy(b, s)
			s = b
		}
		if radialKernel(&d[0], &s[0], len(s), g, v) {
			continue
		}
		for j, sj := range s {
			if x, _ := radialArg(sj, g); !(x >= expLo && x <= expHi) {
				d[j] = radialOne(sj, g, v)
			}
		}
	}
}

// radialImpl computes the longest prefix of RadialProfile whose length is
// a multiple of 4 with the architecture's fused kernels, if it has them
// (radialKernelOK), and returns its length.
func radialImpl(dst, src []float64, g Radial, v float64) int {
	n := len(src) &^ 3
	if !radialKernelOK || n == 0 {
		return 0
	}
	radialBlocks(dst[:n], src[:n], g, v)
	return n
}

// RadialWeights computes the weights of a stationary kernel's gradient
// from its matrix, without re-evaluating exponentials: for j < len(s),
//
//	γ_j = dk_j·(kk_j·iv),   w_j = γ_j·h(s_j),   s_j ← w_j (w may be s)
//
// where s_j is a squared scaled distance (clamped at 0 first, as in
// RadialProfile), kk_j = v·g(s_j) the covariance
// (iv = 1/v, or any scale the caller undoes), dk_j the gradient with respect
// to it, and h = g′/g for the profile g:
//
//	RBF: −1/2      ν=1/2: −1/(2√s), 0 at s ≤ 0
//	ν=3/2: −(3/2)/(1 + a),  a = √(3s)     ν=5/2: −(5/6)·(1 + a)/(1 + a + a²/3),  a = √(5s)
//
// with w_j = 0 where γ_j = 0 for the Matérn-3/2 and 5/2 profiles. It
// returns Σ γ_j and Σ w_j·s_j over the j with w_j ≠ 0 (so that pairs whose
// covariance underflowed add nothing even where s_j = +Inf). The sums are
// kept in four interleaved partial sums (element j in sum j mod 4, for the
// longest prefix whose length is a multiple of 4), combined as
// (p0 + p2) + (p1 + p3), then the remaining elements are added in order.
// w, dk and kk must be at least as long as s. On amd64 with AVX2 and FMA,
// and on arm64, the prefix runs in fused assembly kernels; every path gives
// the bits of radialWeightOne and this summation order.
func RadialWeights(w, s, dk, kk []float64, g Radial, iv float64) (sumG, sumWs float64) {
	if g < RadialRBF || g > RadialMatern52 {
		panic("vecmath: unknown radial profile")
	}
	n := len(s)
	w, dk, kk = w[:n], dk[:n], kk[:n]
	done := n &^ 3
	if !radialKernelOK || done == 0 {
		return radialWeightsGeneric(w, s, dk, kk, g, iv)
	}
	sumG, sumWs = radialWeightsKernel(&w[0], &s[0], &dk[0], &kk[0], done, g, iv)
	return radialWeightsTail(w[done:], s[done:], dk[done:], kk[done:], g, iv, sumG, sumWs)
}

// radialWeightsGeneric is RadialWeights without the assembly kernels: the
// pure-Go twin of a whole call (w, dk and kk as long as s).
func radialWeightsGeneric(w, s, dk, kk []float64, g Radial, iv float64) (sumG, sumWs float64) {
	done := len(s) &^ 3
	sumG, sumWs = radialWeightsLanes(w[:done], s[:done], dk[:done], kk[:done], g, iv)
	return radialWeightsTail(w[done:], s[done:], dk[done:], kk[done:], g, iv, sumG, sumWs)
}

// radialWeightsTail computes the elements of the tail s (w, dk and kk
// aligned with it), adding them in order to the sums of the prefix.
func radialWeightsTail(w, s, dk, kk []float64, g Radial, iv, sumG, sumWs float64) (float64, float64) {
	for j := range s {
		gj, wj, ws := radialWeightOne(s[j], dk[j], kk[j], g, iv)
		sumG += gj
		sumWs += ws
		w[j] = wj
	}
	return sumG, sumWs
}

// radialWeightOne is the pure-Go twin of the weight kernels for one
// element: it returns γ, w and w·s (0 where w = 0).
func radialWeightOne(s, dk, kk float64, g Radial, iv float64) (gamma, w, ws float64) {
	s = clampSq(s)
	gamma = dk * (kk * iv)
	switch g {
	case RadialRBF:
		w = -0.5 * gamma
	case RadialMatern12:
		if s > 0 {
			w = -0.5 * gamma / math.Sqrt(s)
		}
	case RadialMatern32:
		if gamma != 0 {
			a := math.Sqrt(3 * s)
			w = -1.5 * gamma / (1 + a)
		}
	default:
		if gamma != 0 {
			a := math.Sqrt(5 * s)
			w = -(5.0 / 6) * gamma * ((1 + a) / (1 + a + a*a/3))
		}
	}
	if w != 0 {
		ws = w * s
	}
	return gamma, w, ws
}

// radialWeightsLanes is the pure-Go twin of the weight kernels on a prefix
// whose length is a multiple of 4: the four interleaved partial sums and
// their combination.
func radialWeightsLanes(w, s, dk, kk []float64, g Radial, iv float64) (sumG, sumWs float64) {
	var pg, pw [4]float64
	for j, sj := range s {
		gj, wj, ws := radialWeightOne(sj, dk[j], kk[j], g, iv)
		pg[j&3] += gj
		pw[j&3] += ws
		w[j] = wj
	}
	return (pg[0] + pg[2]) + (pg[1] + pg[3]), (pw[0] + pw[2]) + (pw[1] + pw[3])
}
