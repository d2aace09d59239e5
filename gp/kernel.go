package gp

import "gonum.org/v1/gonum/mat"

// Kernel is a positive-definite covariance function k(x, x') on R^d.
//
// Hyperparameters are exposed in unconstrained form (for example the
// logarithm or inverse softplus of a lengthscale), as one flat vector, so
// that optimizers can update them freely. Implementations document their
// parameter order and transform.
//
// Inputs are row-major matrices with one point per row. Methods that fill
// a destination overwrite it; methods whose name ends in Grad accumulate
// (add) into their gradient destinations, so that contributions from
// several terms of a bound can be summed without temporary buffers.
//
// A Kernel value is not safe for concurrent mutation (SetParams) but its
// read-only methods may be called concurrently.
type Kernel interface {
	// Dim returns the input dimension d the kernel was built for.
	Dim() int

	// NumParams returns the number of unconstrained hyperparameters.
	NumParams() int
	// Params copies the unconstrained hyperparameters into dst, which must
	// have length NumParams.
	Params(dst []float64)
	// SetParams sets the hyperparameters from their unconstrained values.
	// It returns an error if src has the wrong length or holds NaN or Inf.
	SetParams(src []float64) error

	// Matrix sets dst (rows(x)×rows(z)) to the cross-covariance k(x_i, z_j).
	Matrix(dst *mat.Dense, x, z mat.Matrix)
	// Diag sets dst[i] = k(x_i, x_i); len(dst) must equal rows(x).
	Diag(dst []float64, x mat.Matrix)

	// MatrixGrad back-propagates an adjoint dK of K = k(x, z), where K is
	// the matrix Matrix computed for the same x and z. It adds the
	// gradients with respect to x into dx, with respect to z into dz, and
	// with respect to the unconstrained hyperparameters into dparams. Any
	// of dx, dz and dparams may be nil to skip that gradient. When x and z
	// are the same matrix, dx and dz may be the same destination and both
	// contributions are added.
	MatrixGrad(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, dparams []float64)
	// DiagGrad back-propagates an adjoint dDiag of Diag(x), adding into dx
	// and dparams (either may be nil).
	DiagGrad(dDiag []float64, x mat.Matrix, dx *mat.Dense, dparams []float64)
}

// InterDomainKernel is a Kernel whose inducing inputs live in another domain
// than the data inputs, such as the inducing patches of a convolutional GP
// (inter-domain inducing variables u = g(z) for a process f defined through
// g). A Model built with an InterDomainKernel takes inducing inputs Z and O
// with InducingDim columns and data inputs with Dim columns, and uses
//
//   - InducingMatrix and InducingMatrixGrad among inducing inputs (K_uu,
//     K_uv, K_vv),
//   - Matrix and MatrixGrad with the inducing inputs as the first argument
//     and the data inputs as the second (K_uf, K_vf),
//   - Diag and DiagGrad for the prior variances of the data inputs.
//
// The data-data covariance k(x, x') is not part of the interface, so
// Predictor.JointCov is unavailable for such models.
type InterDomainKernel interface {
	Kernel
	// InducingDim returns the number of columns of an inducing input.
	InducingDim() int
	// InducingMatrix sets dst (rows(z1)×rows(z2)) to the covariance
	// between the inducing variables at z1 and at z2.
	InducingMatrix(dst *mat.Dense, z1, z2 mat.Matrix)
	// InducingMatrixGrad back-propagates an adjoint dK of K =
	// InducingMatrix(z1, z2) like MatrixGrad: it adds into dz1, dz2 and
	// dparams (any may be nil; dz1 and dz2 may be the same destination).
	InducingMatrixGrad(dK, K *mat.Dense, z1, z2 mat.Matrix, dz1, dz2 *mat.Dense, dparams []float64)
}

// inducingDim returns the number of columns of k's inducing inputs.
func inducingDim(k Kernel) int {
	if ik, ok := k.(InterDomainKernel); ok {
		return ik.InducingDim()
	}
	return k.Dim()
}

// kernUU sets dst to the covariance among the inducing inputs a and b.
func kernUU(k Kernel, dst *mat.Dense, a, b mat.Matrix) {
	if ik, ok := k.(InterDomainKernel); ok {
		ik.InducingMatrix(dst, a, b)
		return
	}
	k.Matrix(dst, a, b)
}

// kernUUGrad back-propagates through kernUU.
func kernUUGrad(k Kernel, dK, K *mat.Dense, a, b mat.Matrix, da, db *mat.Dense, dparams []float64) {
	if ik, ok := k.(InterDomainKernel); ok {
		ik.InducingMatrixGrad(dK, K, a, b, da, db, dparams)
		return
	}
	k.MatrixGrad(dK, K, a, b, da, db, dparams)
}
