package chol

import (
	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"

	"github.com/solvegp/solvegp/blas"
)

// Implementation is a gonum lapack.Float64 implementation whose Cholesky
// routines (Dpotrf, Dpotrs, Dpotri, Dtrtri, Dtrtrs) run on this package's
// recursive blocked algorithms and package blas's level-3 kernels. All other
// routines are gonum's native ones. Use it with
//
//	lapack64.Use(chol.Implementation{})
//
// The zero value is ready to use; Threads bounds the goroutines a single call
// may use (≤ 0 means GOMAXPROCS). The overridden methods panic on bad
// arguments with exactly gonum's messages.
type Implementation struct {
	gonum.Implementation

	// Threads bounds the goroutines of a single call; ≤ 0 means GOMAXPROCS.
	Threads int
}

// Panic messages, identical to gonum's lapack/gonum ones.
const (
	badDiag  = "lapack: bad Diag"
	badTrans = "lapack: bad Trans"
	badUplo  = "lapack: bad Uplo"
	nLT0     = "lapack: n < 0"
	nrhsLT0  = "lapack: nrhs < 0"
	shortA   = "lapack: insufficient length of a"
	shortB   = "lapack: insufficient length of b"
	badLdA   = "lapack: bad leading dimension of A"
	badLdB   = "lapack: bad leading dimension of B"
)

func (impl Implementation) bi() blas.Implementation {
	return blas.Implementation{Threads: impl.Threads}
}

// checkTriangle performs gonum's argument checks, in gonum's order and with
// its messages, for the routines whose only operand is the n×n matrix in
// the uplo triangle of a (Dpotrf, Dpotri, Dlauum). It reports whether n is
// zero, in which case the caller has nothing to do: gonum returns before
// checking len(a) then, so a short a is no error for an empty matrix.
func checkTriangle(uplo gblas.Uplo, n int, a []float64, lda int) (empty bool) {
	switch {
	case uplo != gblas.Upper && uplo != gblas.Lower:
		panic(badUplo)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	}
	if n == 0 {
		return true
	}
	if len(a) < (n-1)*lda+n {
		panic(shortA)
	}
	return false
}

// Dpotrf computes the Cholesky factorization of the n×n symmetric positive
// definite matrix A stored in the uplo triangle of a, in place: A = Uᵀ·U
// (uplo == Upper) or A = L·Lᵀ (uplo == Lower). It returns false if A is not
// positive definite; the failing pivot's Schur-complement value is then left
// on its diagonal position, as in gonum. A pivot that is +Inf is also
// rejected.
func (impl Implementation) Dpotrf(uplo gblas.Uplo, n int, a []float64, lda int) (ok bool) {
	if checkTriangle(uplo, n, a, lda) {
		return true
	}
	var piv int
	if uplo == gblas.Upper {
		piv, _ = potrfUpper(impl.bi(), n, a, lda)
	} else {
		piv, _ = potrfLower(impl.bi(), n, a, lda)
	}
	return piv < 0
}

// Dpotrs solves A·X = B with A = Uᵀ·U or L·Lᵀ as computed by Dpotrf,
// overwriting the n×nrhs matrix B with X.
func (impl Implementation) Dpotrs(uplo gblas.Uplo, n, nrhs int, a []float64, lda int, b []float64, ldb int) {
	switch {
	case uplo != gblas.Upper && uplo != gblas.Lower:
		panic(badUplo)
	case n < 0:
		panic(nLT0)
	case nrhs < 0:
		panic(nrhsLT0)
	case lda < max(1, n):
		panic(badLdA)
	case ldb < max(1, nrhs):
		panic(badLdB)
	}
	if n == 0 || nrhs == 0 {
		return
	}
	switch {
	case len(a) < (n-1)*lda+n:
		panic(shortA)
	case len(b) < (n-1)*ldb+nrhs:
		panic(shortB)
	}
	bi := impl.bi()
	if uplo == gblas.Upper {
		bi.Dtrsm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, n, nrhs, 1, a, lda, b, ldb)
		bi.Dtrsm(gblas.Left, gblas.Upper, gblas.NoTrans, gblas.NonUnit, n, nrhs, 1, a, lda, b, ldb)
		return
	}
	bi.Dtrsm(gblas.Left, gblas.Lower, gblas.NoTrans, gblas.NonUnit, n, nrhs, 1, a, lda, b, ldb)
	bi.Dtrsm(gblas.Left, gblas.Lower, gblas.Trans, gblas.NonUnit, n, nrhs, 1, a, lda, b, ldb)
}

// Dtrtrs solves op(A)·X = B for the n×n triangular matrix A, overwriting
// the n×nrhs matrix B. It returns false, leaving B unchanged, if A has a
// zero diagonal entry (diag == NonUnit).
func (impl Implementation) Dtrtrs(uplo gblas.Uplo, trans gblas.Transpose, diag gblas.Diag, n, nrhs int, a []float64, lda int, b []float64, ldb int) (ok bool) {
	switch {
	case uplo != gblas.Upper && uplo != gblas.Lower:
		panic(badUplo)
	case trans != gblas.NoTrans && trans != gblas.Trans && trans != gblas.ConjTrans:
		panic(badTrans)
	case diag != gblas.NonUnit && diag != gblas.Unit:
		panic(badDiag)
	case n < 0:
		panic(nLT0)
	case nrhs < 0:
		panic(nrhsLT0)
	case lda < max(1, n):
		panic(badLdA)
	case ldb < max(1, nrhs):
		panic(badLdB)
	}
	if n == 0 {
		return true
	}
	switch {
	case len(a) < (n-1)*lda+n:
		panic(shortA)
	case len(b) < (n-1)*ldb+nrhs:
		panic(shortB)
	}
	if diag == gblas.NonUnit {
		for i := 0; i < n; i++ {
			if a[i*lda+i] == 0 {
				return false
			}
		}
	}
	impl.bi().Dtrsm(gblas.Left, uplo, trans, diag, n, nrhs, 1, a, lda, b, ldb)
	return true
}

// Dtrtri inverts the n×n triangular matrix A in place. It returns false,
// leaving A unchanged, if A has a zero diagonal entry (diag == NonUnit).
func (impl Implementation) Dtrtri(uplo gblas.Uplo, diag gblas.Diag, n int, a []float64, lda int) (ok bool) {
	switch {
	case uplo != gblas.Upper && uplo != gblas.Lower:
		panic(badUplo)
	case diag != gblas.NonUnit && diag != gblas.Unit:
		panic(badDiag)
	case n < 0:
		panic(nLT0)
	case lda < max(1, n):
		panic(badLdA)
	}
	if n == 0 {
		return true
	}
	if len(a) < (n-1)*lda+n {
		panic(shortA)
	}
	if diag == gblas.NonUnit {
		for i := 0; i < n; i++ {
			if a[i*lda+i] == 0 {
				return false
			}
		}
	}
	if uplo == gblas.Upper {
		trtriUpper(impl.bi(), n, a, lda, diag == gblas.Unit)
	} else {
		trtriLower(impl.bi(), n, a, lda, diag == gblas.Unit)
	}
	return true
}

// Dpotri computes the inverse of A = Uᵀ·U or L·Lᵀ from its Cholesky factor
// (as computed by Dpotrf) in place, in the uplo triangle of a. It returns
// false if the factor has a zero diagonal entry.
func (impl Implementation) Dpotri(uplo gblas.Uplo, n int, a []float64, lda int) (ok bool) {
	if checkTriangle(uplo, n, a, lda) {
		return true
	}
	if !impl.Dtrtri(uplo, gblas.NonUnit, n, a, lda) {
		return false
	}
	if uplo == gblas.Upper {
		lauumUpper(impl.bi(), n, a, lda)
	} else {
		lauumLower(impl.bi(), n, a, lda)
	}
	return true
}

// Dlauum computes U·Uᵀ (uplo == Upper) or Lᵀ·L (uplo == Lower) in place
// for the n×n triangular matrix in the uplo triangle of a.
func (impl Implementation) Dlauum(uplo gblas.Uplo, n int, a []float64, lda int) {
	if checkTriangle(uplo, n, a, lda) {
		return
	}
	if uplo == gblas.Upper {
		lauumUpper(impl.bi(), n, a, lda)
	} else {
		lauumLower(impl.bi(), n, a, lda)
	}
}
