package kernel

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// MaxDegree is the largest degree a Polynomial kernel accepts.
const MaxDegree = 64

// Polynomial is the polynomial kernel
//
//	k(x, z) = (σ² xᵀz + c)^q
//
// of fixed integer degree q ≥ 1 with learned variance σ² and offset c.
// Degree 1 is the linear kernel of NewLinear, σ² xᵀz + c: a GP with it is
// Bayesian linear regression with weight variance σ² and intercept
// variance c. The kernel is not stationary, so it extrapolates trends.
//
// Parameter order (unconstrained, value = softplus(u)): u_σ², u_c.
type Polynomial struct {
	dim, degree int
	hyper
}

// NewPolynomial returns a polynomial kernel of the given degree in
// [1, MaxDegree] on R^dim, with positive finite initial variance and
// offset.
func NewPolynomial(dim, degree int, variance, offset float64) (*Polynomial, error) {
	if err := checkDim(dim); err != nil {
		return nil, err
	}
	if degree < 1 || degree > MaxDegree {
		return nil, fmt.Errorf("kernel: polynomial degree %d, must be in [1, %d]", degree, MaxDegree)
	}
	h, err := newHyper([]string{"variance", "offset"}, []float64{variance, offset})
	if err != nil {
		return nil, err
	}
	return &Polynomial{dim: dim, degree: degree, hyper: h}, nil
}

// NewLinear returns the linear kernel σ² xᵀz + c on R^dim (a Polynomial
// of degree 1).
func NewLinear(dim int, variance, offset float64) (*Polynomial, error) {
	return NewPolynomial(dim, 1, variance, offset)
}

// Dim returns the input dimension.
func (k *Polynomial) Dim() int { return k.dim }

// Degree returns the degree q.
func (k *Polynomial) Degree() int { return k.degree }

// Variance returns the weight variance σ².
func (k *Polynomial) Variance() float64 { return k.v[0] }

// Offset returns the offset c.
func (k *Polynomial) Offset() float64 { return k.v[1] }

// SetParams sets the unconstrained parameters; it returns an error, and
// changes nothing, for a wrong length or a non-finite value.
func (k *Polynomial) SetParams(src []float64) error { return k.set(src, nil) }

// Clone returns a copy of k that shares nothing with it (see gp.Cloner).
func (k *Polynomial) Clone() any { return &Polynomial{dim: k.dim, degree: k.degree, hyper: k.clone()} }

func dot(x, z []float64) float64 {
	s := 0.0
	for c, v := range x {
		s += v * z[c]
	}
	return s
}

// powInt returns b^q for q ≥ 0 by repeated squaring.
func powInt(b float64, q int) float64 {
	r := 1.0
	for q > 0 {
		if q&1 == 1 {
			r *= b
		}
		b *= b
		q >>= 1
	}
	return r
}

func (k *Polynomial) value(x, z []float64) float64 {
	return powInt(k.v[0]*dot(x, z)+k.v[1], k.degree)
}

// grad uses, with s = σ² xᵀz + c and k' = q s^(q−1), ∂k/∂x = k' σ² z,
// ∂k/∂σ² = k' xᵀz and ∂k/∂c = k'.
func (k *Polynomial) grad(x, z []float64, g float64, dx, dz, dv []float64) {
	xz := dot(x, z)
	d := g * float64(k.degree) * powInt(k.v[0]*xz+k.v[1], k.degree-1)
	w := d * k.v[0]
	if dx != nil {
		for c, v := range z {
			dx[c] += w * v
		}
	}
	if dz != nil {
		for c, v := range x {
			dz[c] += w * v
		}
	}
	if dv != nil {
		dv[0] += d * xz
		dv[1] += d
	}
}

// Matrix sets dst to k(x_i, z_j). An empty dst is resized.
func (k *Polynomial) Matrix(dst *mat.Dense, x, z mat.Matrix) {
	pairMatrix(k, k.dim, k.workers, dst, x, z)
}

// Diag sets dst[i] = k(x_i, x_i).
func (k *Polynomial) Diag(dst []float64, x mat.Matrix) { pairDiag(k, k.dim, dst, x) }

// MatrixGrad adds the gradients of Σ dK ⊙ k(x, z) into dx, dz and dparams
// (see gp.Kernel); K is not used.
func (k *Polynomial) MatrixGrad(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, dparams []float64) {
	pairGrad{k, &k.hyper, k.dim}.matrix(dK, K, x, z, dx, dz, dparams)
}

// DiagGrad adds the gradients of Σ dDiag ⊙ diag k(x, x) into dx and
// dparams.
func (k *Polynomial) DiagGrad(dDiag []float64, x mat.Matrix, dx *mat.Dense, dparams []float64) {
	pairGrad{k, &k.hyper, k.dim}.diag(dDiag, x, dx, dparams)
}

// Constant is the kernel k(x, z) = σ² for all x and z: a constant offset of
// the latent function with prior variance σ², to be summed with others.
//
// Parameter order: u_σ² (value softplus(u)).
type Constant struct {
	dim int
	hyper
}

// NewConstant returns a constant kernel on R^dim with positive finite
// variance.
func NewConstant(dim int, variance float64) (*Constant, error) {
	if err := checkDim(dim); err != nil {
		return nil, err
	}
	h, err := newHyper([]string{"variance"}, []float64{variance})
	if err != nil {
		return nil, err
	}
	return &Constant{dim: dim, hyper: h}, nil
}

// Dim returns the input dimension.
func (k *Constant) Dim() int { return k.dim }

// Variance returns σ².
func (k *Constant) Variance() float64 { return k.v[0] }

// SetParams sets the unconstrained parameter.
func (k *Constant) SetParams(src []float64) error { return k.set(src, nil) }

// Clone returns a copy of k that shares nothing with it (see gp.Cloner).
func (k *Constant) Clone() any { return &Constant{dim: k.dim, hyper: k.clone()} }

func (k *Constant) value(_, _ []float64) float64 { return k.v[0] }

func (k *Constant) grad(_, _ []float64, g float64, _, _, dv []float64) {
	if dv != nil {
		dv[0] += g
	}
}

// Matrix sets every entry of dst to σ². An empty dst is resized.
func (k *Constant) Matrix(dst *mat.Dense, x, z mat.Matrix) {
	pairMatrix(k, k.dim, k.workers, dst, x, z)
}

// Diag sets every entry of dst to σ².
func (k *Constant) Diag(dst []float64, x mat.Matrix) { pairDiag(k, k.dim, dst, x) }

// MatrixGrad adds Σ dK times dσ²/du into dparams; the input gradients are 0.
func (k *Constant) MatrixGrad(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, dparams []float64) {
	pairGrad{k, &k.hyper, k.dim}.matrix(dK, K, x, z, nil, nil, dparams)
	if dx != nil {
		checkShape("dx", dx, checkInput("x", x, k.dim), k.dim)
	}
	if dz != nil {
		checkShape("dz", dz, checkInput("z", z, k.dim), k.dim)
	}
}

// DiagGrad adds Σ dDiag times dσ²/du into dparams.
func (k *Constant) DiagGrad(dDiag []float64, x mat.Matrix, dx *mat.Dense, dparams []float64) {
	pairGrad{k, &k.hyper, k.dim}.diag(dDiag, x, nil, dparams)
	if dx != nil {
		checkShape("dx", dx, checkInput("x", x, k.dim), k.dim)
	}
}

// White is the white-noise kernel: k(x_i, x_j) = σ² δ_ij within one set
// of points and 0 between two different sets, as in GPflow's White. It
// models variation that is independent at every point and part of the
// latent function: it adds σ² to the prior variance k(x, x) of every point
// (and to the diagonal of K_uu), but no inducing variable carries
// information about it.
//
// Two arguments of Matrix and MatrixGrad are one set of points when they
// are the same *mat.Dense, or views of the same memory with the same shape
// and stride (so a block of the data paired with itself counts); any
// other pair — Z with X, Z with O, or equal values held in different
// matrices — has zero covariance. In particular ODVGP's column sampling
// (gp.WithColumnSampling), which copies sampled rows of O, sees no white
// noise between O and the sample.
//
// Parameter order: u_σ² (value softplus(u)).
type White struct {
	dim int
	hyper
}

// NewWhite returns a white-noise kernel on R^dim with positive finite
// variance.
func NewWhite(dim int, variance float64) (*White, error) {
	if err := checkDim(dim); err != nil {
		return nil, err
	}
	h, err := newHyper([]string{"variance"}, []float64{variance})
	if err != nil {
		return nil, err
	}
	return &White{dim: dim, hyper: h}, nil
}

// Dim returns the input dimension.
func (k *White) Dim() int { return k.dim }

// Variance returns σ².
func (k *White) Variance() float64 { return k.v[0] }

// SetParams sets the unconstrained parameter.
func (k *White) SetParams(src []float64) error { return k.set(src, nil) }

// Clone returns a copy of k that shares nothing with it (see gp.Cloner).
func (k *White) Clone() any { return &White{dim: k.dim, hyper: k.clone()} }

// samePoints reports whether x and z are one set of points: the same
// *mat.Dense, or views of the same memory of the same shape and stride.
func samePoints(x, z mat.Matrix) bool {
	if sameDense(x, z) {
		return true
	}
	xr, ok1 := x.(mat.RawMatrixer)
	zr, ok2 := z.(mat.RawMatrixer)
	if !ok1 || !ok2 {
		return false
	}
	a, b := xr.RawMatrix(), zr.RawMatrix()
	return a.Rows == b.Rows && a.Cols == b.Cols && a.Stride == b.Stride &&
		len(a.Data) > 0 && len(b.Data) > 0 && &a.Data[0] == &b.Data[0]
}

// Matrix sets dst to σ² I when x and z are one set of points and to 0
// otherwise. An empty dst is resized.
func (k *White) Matrix(dst *mat.Dense, x, z mat.Matrix) {
	n := checkInput("x", x, k.dim)
	m := checkInput("z", z, k.dim)
	prepareDst(dst, n, m)
	dst.Zero()
	if samePoints(x, z) {
		for i := 0; i < n; i++ {
			dst.Set(i, i, k.v[0])
		}
	}
}

// Diag sets every entry of dst to σ².
func (k *White) Diag(dst []float64, x mat.Matrix) {
	n := checkInput("x", x, k.dim)
	if len(dst) != n {
		panic(fmt.Sprintf("kernel: Diag destination has length %d, want %d", len(dst), n))
	}
	for i := range dst {
		dst[i] = k.v[0]
	}
}

// MatrixGrad adds the variance gradient Σ_i dK_ii (0 between different
// sets of points) into dparams; the input gradients are 0.
func (k *White) MatrixGrad(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, dparams []float64) {
	n := checkInput("x", x, k.dim)
	m := checkInput("z", z, k.dim)
	checkShape("dK", dK, n, m)
	checkShape("K", K, n, m)
	if dx != nil {
		checkShape("dx", dx, n, k.dim)
	}
	if dz != nil {
		checkShape("dz", dz, m, k.dim)
	}
	if dparams == nil {
		return
	}
	if len(dparams) != 1 {
		panic(fmt.Sprintf("kernel: dparams has length %d, want 1", len(dparams)))
	}
	if samePoints(x, z) {
		s := 0.0
		for i := 0; i < n; i++ {
			s += dK.At(i, i)
		}
		dparams[0] += s * k.chain[0]
	}
}

// DiagGrad adds Σ dDiag times dσ²/du into dparams.
func (k *White) DiagGrad(dDiag []float64, x mat.Matrix, dx *mat.Dense, dparams []float64) {
	n := checkInput("x", x, k.dim)
	if len(dDiag) != n {
		panic(fmt.Sprintf("kernel: DiagGrad adjoint has length %d, want %d", len(dDiag), n))
	}
	if dx != nil {
		checkShape("dx", dx, n, k.dim)
	}
	if dparams == nil {
		return
	}
	if len(dparams) != 1 {
		panic(fmt.Sprintf("kernel: dparams has length %d, want 1", len(dparams)))
	}
	s := 0.0
	for _, g := range dDiag {
		s += g
	}
	dparams[0] += s * k.chain[0]
}
