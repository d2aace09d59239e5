// Package kernel provides stationary covariance functions — the squared
// exponential (RBF) and the Matérn 1/2, 3/2 and 5/2 kernels, each with one
// shared lengthscale or one lengthscale per input dimension (ARD) — and
// sums and products of kernels, together with their exact adjoints.
//
// It also provides the periodic (exp-sine-squared), rational quadratic,
// linear, polynomial, constant and white-noise kernels (Periodic,
// RationalQuadratic, Polynomial, Constant, White), evaluated pair by pair
// with exact gradients, and Active, which restricts any kernel to a subset
// of the input columns so that sums and products can combine kernels on
// different columns.
//
// Every kernel in this package satisfies gp.Kernel. Stationary kernel
// matrices are computed through level-3 BLAS: squared distances between scaled inputs
// are formed as ‖x‖² + ‖z‖² − 2xᵀz by one matrix product of the augmented
// rows [x, ‖x‖², 1] and [−2z, 1, ‖z‖²] (norms accumulated in the
// micro-kernels' order, so coincident points give exactly 0), and the
// gradients with respect to both inputs and every lengthscale are formed
// from two more products with the adjoint-weighted matrix
// W = dK ⊙ ∂k/∂(r²), chunk by chunk while W is in cache. The O(n·m)
// elementwise work — distances to covariances, clamped at zero, and
// covariances to W — runs in the fused SIMD kernels vecmath.RadialProfile and
// vecmath.RadialWeights. To limit cancellation in the distance formula, inputs
// are centred on the median of both arguments before the product;
// distances are invariant under the shift. Pairs closer than the formula
// can resolve (a squared distance below about 2⁻³⁰(d+2)(‖x‖² + ‖z‖²),
// i.e. within ~10⁻⁴ lengthscales for ordinary data) are recomputed from
// differences of the scaled inputs, so near-coincident points — an
// orthogonal inducing point on an inducing point — keep their distances'
// relative accuracy.
//
// When the two arguments of Matrix or MatrixGrad are the same *mat.Dense,
// only the upper triangle of the kernel matrix is computed, its diagonal
// distances are exactly zero and the result is exactly symmetric.
//
// Positive hyperparameters (lengthscales, variances) are stored in
// unconstrained form u with value softplus(u) = log(1 + exp(u)), see package
// transform. The order of the unconstrained parameter vector is documented
// on each kernel type.
//
// The shape contract of gp.Kernel has no error results: Matrix, Diag,
// MatrixGrad and DiagGrad panic, as gonum's mat package does, when the
// dimensions of their arguments disagree. Constructors and SetParams return
// errors for invalid values.
package kernel

import "gonum.org/v1/gonum/mat"

// Kernel is the method set of gp.Kernel, repeated here so that this package
// does not import package gp (which lets gp's own tests import kernel).
// Any gp.Kernel is a Kernel and vice versa; see gp.Kernel for the
// contract of each method.
type Kernel interface {
	Dim() int
	NumParams() int
	Params(dst []float64)
	SetParams(src []float64) error
	Matrix(dst *mat.Dense, x, z mat.Matrix)
	Diag(dst []float64, x mat.Matrix)
	MatrixGrad(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, dparams []float64)
	DiagGrad(dDiag []float64, x mat.Matrix, dx *mat.Dense, dparams []float64)
}
