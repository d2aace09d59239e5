package kernel

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// lengthscaleParams returns the initial lengthscales of a kernel on R^dim
// (one, or one per dimension for the ARD and Lengthscales options) and
// whether they are per dimension.
func lengthscaleParams(dim int, lengthscale float64, opts []Option) ([]float64, bool, error) {
	if err := checkDim(dim); err != nil {
		return nil, false, err
	}
	var o options
	for _, opt := range opts {
		if opt == nil {
			return nil, false, errors.New("kernel: nil option")
		}
		if err := opt(&o); err != nil {
			return nil, false, err
		}
	}
	if err := checkLengthscale(lengthscale); err != nil {
		return nil, false, err
	}
	if !o.ard {
		return []float64{lengthscale}, false, nil
	}
	ls := make([]float64, dim)
	for i := range ls {
		ls[i] = lengthscale
	}
	if o.ls != nil {
		if len(o.ls) != dim {
			return nil, false, errors.New("kernel: lengthscales do not match the dimension")
		}
		for i, l := range o.ls {
			if err := checkLengthscale(l); err != nil {
				return nil, false, err
			}
			ls[i] = l
		}
	}
	return ls, true, nil
}

// checkLengthscales rejects lengthscale values below MinLengthscale.
func checkLengthscales(ls []float64) error {
	for _, l := range ls {
		if err := checkLengthscale(l); err != nil {
			return err
		}
	}
	return nil
}

// lsOf returns the lengthscale of dimension c among ls (shared or ARD).
func lsOf(ls []float64, c int) float64 {
	if len(ls) == 1 {
		return ls[0]
	}
	return ls[c]
}

// Periodic is the periodic (exp-sine-squared) kernel
//
//	k(x, z) = σ² exp(−½ Σ_c sin²(π (x_c − z_c) / p) / ℓ_c²)
//
// with period p, lengthscale ℓ (shared, or one per dimension with the ARD
// and Lengthscales options) and variance σ² — the convention of GPflow's
// Periodic(SquaredExponential). Functions drawn from it repeat exactly with
// period p in every input dimension, which is what lets a model extrapolate
// a seasonal pattern beyond the data.
//
// Parameter order (all unconstrained, value = softplus(u)):
//
//	[u_ℓ] or [u_ℓ1..u_ℓd], then u_p, then u_σ²
type Periodic struct{ lsShaped }

// NewPeriodic returns a periodic kernel on R^dim with the given initial
// period, lengthscale and variance (all positive and finite).
func NewPeriodic(dim int, period, lengthscale, variance float64, opts ...Option) (*Periodic, error) {
	ks, err := newLSShaped(dim, lengthscale, "period", period, variance, opts)
	if err != nil {
		return nil, err
	}
	return &Periodic{ks}, nil
}

// Period returns the period p.
func (k *Periodic) Period() float64 { return k.v[k.nls] }

// Clone returns a copy of k that shares nothing with it (see gp.Cloner).
func (k *Periodic) Clone() any {
	return &Periodic{k.lsShaped.clone()}
}

func (k *Periodic) value(x, z []float64) float64 {
	ls, p := k.v[:k.nls], k.v[k.nls]
	r2 := 0.0
	for c, xv := range x {
		s := math.Sin(math.Pi*(xv-z[c])/p) / lsOf(ls, c)
		r2 += s * s
	}
	return k.v[k.nls+1] * math.Exp(-0.5*r2)
}

// grad uses, with a_c = π(x_c − z_c)/p and s_c = sin a_c,
// ∂k/∂x_c = −k s_c cos a_c (π/p)/ℓ_c², ∂k/∂ℓ_c = k s_c²/ℓ_c³ and
// ∂k/∂p = k Σ_c s_c cos a_c a_c /(p ℓ_c²).
func (k *Periodic) grad(x, z []float64, g float64, dx, dz, dv []float64) {
	ls, p := k.v[:k.nls], k.v[k.nls]
	var r2 float64
	for c, xv := range x {
		s := math.Sin(math.Pi*(xv-z[c])/p) / lsOf(ls, c)
		r2 += s * s
	}
	e := math.Exp(-0.5 * r2)
	kv := g * k.v[k.nls+1] * e
	var dp float64
	for c, xv := range x {
		a := math.Pi * (xv - z[c]) / p
		s, co := math.Sincos(a)
		l := lsOf(ls, c)
		il2 := 1 / (l * l)
		dd := -kv * s * co * (math.Pi / p) * il2
		if dx != nil {
			dx[c] += dd
		}
		if dz != nil {
			dz[c] -= dd
		}
		if dv != nil {
			dl := kv * s * s * il2 / l
			if k.nls == 1 {
				dv[0] += dl
			} else {
				dv[c] += dl
			}
			dp += kv * s * co * a * il2 / p
		}
	}
	if dv != nil {
		dv[k.nls] += dp
		dv[k.nls+1] += g * e
	}
}

// Matrix sets dst to k(x_i, z_j). An empty dst is resized.
func (k *Periodic) Matrix(dst *mat.Dense, x, z mat.Matrix) {
	pairMatrix(k, k.dim, k.workers, dst, x, z)
}

// Diag sets dst[i] = k(x_i, x_i) = σ².
func (k *Periodic) Diag(dst []float64, x mat.Matrix) { pairDiag(k, k.dim, dst, x) }

// MatrixGrad adds the gradients of Σ dK ⊙ k(x, z) into dx, dz and dparams
// (see gp.Kernel); K is not used.
func (k *Periodic) MatrixGrad(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, dparams []float64) {
	pairGrad{k, &k.hyper, k.dim}.matrix(dK, K, x, z, dx, dz, dparams)
}

// DiagGrad adds the gradients of Σ dDiag ⊙ diag k(x, x) (only the
// variance's is nonzero).
func (k *Periodic) DiagGrad(dDiag []float64, x mat.Matrix, dx *mat.Dense, dparams []float64) {
	pairGrad{k, &k.hyper, k.dim}.diag(dDiag, x, dx, dparams)
}

// RationalQuadratic is the rational quadratic kernel
//
//	k(x, z) = σ² (1 + r²/(2α))^(−α),  r² = Σ_c (x_c − z_c)²/ℓ_c²,
//
// a scale mixture of RBF kernels with lengthscales spread according to the
// shape α (the RBF kernel is its limit α → ∞); ℓ is shared or one per
// dimension (ARD and Lengthscales options).
//
// Parameter order (all unconstrained, value = softplus(u)):
//
//	[u_ℓ] or [u_ℓ1..u_ℓd], then u_α, then u_σ²
type RationalQuadratic struct{ lsShaped }

// NewRationalQuadratic returns a rational quadratic kernel on R^dim with
// the given initial shape α, lengthscale and variance (positive, finite).
func NewRationalQuadratic(dim int, alpha, lengthscale, variance float64, opts ...Option) (*RationalQuadratic, error) {
	ks, err := newLSShaped(dim, lengthscale, "alpha", alpha, variance, opts)
	if err != nil {
		return nil, err
	}
	return &RationalQuadratic{ks}, nil
}

// Alpha returns the shape α.
func (k *RationalQuadratic) Alpha() float64 { return k.v[k.nls] }

// Clone returns a copy of k that shares nothing with it (see gp.Cloner).
func (k *RationalQuadratic) Clone() any {
	return &RationalQuadratic{k.lsShaped.clone()}
}

func (k *RationalQuadratic) r2(x, z []float64) float64 {
	ls := k.v[:k.nls]
	r2 := 0.0
	for c, xv := range x {
		d := (xv - z[c]) / lsOf(ls, c)
		r2 += d * d
	}
	return r2
}

func (k *RationalQuadratic) value(x, z []float64) float64 {
	alpha := k.v[k.nls]
	return k.v[k.nls+1] * math.Exp(-alpha*math.Log1p(k.r2(x, z)/(2*alpha)))
}

// grad uses, with t = 1 + r²/(2α), ∂k/∂r² = −k/(2t) and
// ∂k/∂α = k (r²/(2αt) − log t).
func (k *RationalQuadratic) grad(x, z []float64, g float64, dx, dz, dv []float64) {
	ls, alpha := k.v[:k.nls], k.v[k.nls]
	r2 := k.r2(x, z)
	q := r2 / (2 * alpha)
	lt := math.Log1p(q)
	e := math.Exp(-alpha * lt)
	kv := g * k.v[k.nls+1] * e
	dr2 := -kv / (2 * (1 + q))
	for c, xv := range x {
		l := lsOf(ls, c)
		d := xv - z[c]
		dd := dr2 * 2 * d / (l * l)
		if dx != nil {
			dx[c] += dd
		}
		if dz != nil {
			dz[c] -= dd
		}
		if dv != nil {
			dl := -dr2 * 2 * d * d / (l * l * l)
			if k.nls == 1 {
				dv[0] += dl
			} else {
				dv[c] += dl
			}
		}
	}
	if dv != nil {
		dv[k.nls] += kv * (q/(1+q) - lt)
		dv[k.nls+1] += g * e
	}
}

// Matrix sets dst to k(x_i, z_j). An empty dst is resized.
func (k *RationalQuadratic) Matrix(dst *mat.Dense, x, z mat.Matrix) {
	pairMatrix(k, k.dim, k.workers, dst, x, z)
}

// Diag sets dst[i] = k(x_i, x_i) = σ².
func (k *RationalQuadratic) Diag(dst []float64, x mat.Matrix) { pairDiag(k, k.dim, dst, x) }

// MatrixGrad adds the gradients of Σ dK ⊙ k(x, z) into dx, dz and dparams
// (see gp.Kernel); K is not used.
func (k *RationalQuadratic) MatrixGrad(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, dparams []float64) {
	pairGrad{k, &k.hyper, k.dim}.matrix(dK, K, x, z, dx, dz, dparams)
}

// DiagGrad adds the gradients of Σ dDiag ⊙ diag k(x, x) (only the
// variance's is nonzero).
func (k *RationalQuadratic) DiagGrad(dDiag []float64, x mat.Matrix, dx *mat.Dense, dparams []float64) {
	pairGrad{k, &k.hyper, k.dim}.diag(dDiag, x, dx, dparams)
}

// lsShaped is the parameter block of the periodic and rational quadratic
// kernels: one or d lengthscales, one shape parameter (the period, α) and
// the variance, in that order.
type lsShaped struct {
	dim int
	hyper
	nls int
	ard bool
}

// newLSShaped checks and stores the initial lengthscale (expanded by the
// ARD and Lengthscales options), the shape parameter called name and the
// variance.
func newLSShaped(dim int, lengthscale float64, name string, shape, variance float64, opts []Option) (lsShaped, error) {
	ls, ard, err := lengthscaleParams(dim, lengthscale, opts)
	if err != nil {
		return lsShaped{}, err
	}
	names := make([]string, len(ls), len(ls)+2)
	for i := range names {
		names[i] = "lengthscale"
	}
	h, err := newHyper(append(names, name, "variance"), append(append(ls, shape), variance))
	if err != nil {
		return lsShaped{}, err
	}
	if err := checkLengthscales(h.v[:len(ls)]); err != nil {
		return lsShaped{}, err
	}
	return lsShaped{dim: dim, hyper: h, nls: len(ls), ard: ard}, nil
}

// clone returns a copy that shares nothing with k.
func (k *lsShaped) clone() lsShaped {
	return lsShaped{dim: k.dim, hyper: k.hyper.clone(), nls: k.nls, ard: k.ard}
}

// Dim returns the input dimension.
func (k *lsShaped) Dim() int { return k.dim }

// IsARD reports whether the kernel has one lengthscale per dimension.
func (k *lsShaped) IsARD() bool { return k.ard }

// Lengthscales returns a copy of the lengthscales.
func (k *lsShaped) Lengthscales() []float64 { return append([]float64(nil), k.v[:k.nls]...) }

// Variance returns σ² = k(x, x).
func (k *lsShaped) Variance() float64 { return k.v[k.nls+1] }

// SetParams sets the unconstrained parameters; it returns an error, and
// changes nothing, for a wrong length, a non-finite value or a lengthscale
// below MinLengthscale.
func (k *lsShaped) SetParams(src []float64) error {
	return k.set(src, func(v []float64) error { return checkLengthscales(v[:k.nls]) })
}
