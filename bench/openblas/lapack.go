//go:build openblas && cgo

package openblas

/*
#cgo LDFLAGS: -lopenblas
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);
void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *lda,
	double *b, const int *ldb, int *info);
*/
import "C"

// Column-major conventions: LAPACK (Fortran) routines see a row-major
// matrix with leading dimension ld as its transpose. A row-major lower
// Cholesky factor L (A = L·Lᵀ) is therefore, to LAPACK, the upper factor
// U = Lᵀ of the same A (A = Uᵀ·U), and DPOTRF with uplo 'U' on row-major
// data computes exactly what chol's lower factorization computes, in the
// same memory, with no transposition.

// DpotrfLower factors the n×n symmetric positive-definite matrix whose lower
// triangle is stored row-major in (a, lda) in place, A = L·Lᵀ, by calling
// OpenBLAS's DPOTRF on the column-major upper view of the same memory. It
// returns LAPACK's info: 0 on success, k > 0 if the leading minor of order k
// is not positive definite.
func DpotrfLower(n int, a []float64, lda int) int {
	mustFit("a", a, n, n, lda)
	if n == 0 {
		return 0
	}
	uplo := C.char('U')
	cn, clda := C.int(n), C.int(lda)
	var info C.int
	C.dpotrf_(&uplo, &cn, ptr(a), &clda, &info)
	return int(info)
}

// DpotrsColMajor solves A·X = B with the Cholesky factor computed by
// DpotrfLower, where B is n×nrhs in LAPACK's native column-major layout
// (column j at b[j*ldb : j*ldb+n], ldb ≥ n): this is the layout in which
// OpenBLAS's DPOTRS runs without transposition. It returns LAPACK's info.
func DpotrsColMajor(n, nrhs int, a []float64, lda int, b []float64, ldb int) int {
	mustFit("a", a, n, n, lda)
	mustFit("b", b, nrhs, n, ldb)
	if n == 0 || nrhs == 0 {
		return 0
	}
	uplo := C.char('U')
	cn, cnrhs, clda, cldb := C.int(n), C.int(nrhs), C.int(lda), C.int(ldb)
	var info C.int
	C.dpotrs_(&uplo, &cn, &cnrhs, ptr(a), &clda, ptr(b), &cldb, &info)
	return int(info)
}
