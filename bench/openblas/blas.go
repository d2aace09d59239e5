//go:build openblas && cgo

package openblas

/*
#cgo LDFLAGS: -lopenblas
void cblas_dgemm(int order, int transA, int transB, int m, int n, int k,
	double alpha, const double *a, int lda, const double *b, int ldb,
	double beta, double *c, int ldc);
void cblas_dsyrk(int order, int uplo, int trans, int n, int k,
	double alpha, const double *a, int lda, double beta, double *c, int ldc);
void cblas_dtrsm(int order, int side, int uplo, int transA, int diag, int m, int n,
	double alpha, const double *a, int lda, double *b, int ldb);
void openblas_set_num_threads(int n);
int openblas_get_num_threads(void);
char *openblas_get_config(void);
*/
import "C"

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
)

// CBLAS enumeration values.
const (
	cblasRowMajor  = 101
	cblasNoTrans   = 111
	cblasTrans     = 112
	cblasConjTrans = 113
	cblasUpper     = 121
	cblasLower     = 122
	cblasNonUnit   = 131
	cblasUnit      = 132
	cblasLeft      = 141
	cblasRight     = 142
)

// cblasUplo converts gonum's triangle flag to CBLAS_UPLO.
func cblasUplo(ul blas.Uplo) C.int {
	switch ul {
	case blas.Upper:
		return cblasUpper
	case blas.Lower:
		return cblasLower
	}
	panic("openblas: illegal triangle")
}

// cblasTranspose converts gonum's transpose flag to CBLAS_TRANSPOSE.
func cblasTranspose(t blas.Transpose) C.int {
	switch t {
	case blas.NoTrans:
		return cblasNoTrans
	case blas.Trans:
		return cblasTrans
	case blas.ConjTrans:
		return cblasConjTrans
	}
	panic("openblas: illegal transpose")
}

// SetThreads sets the number of threads OpenBLAS uses for later calls.
// SetThreads(1) guarantees single-threaded OpenBLAS.
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// Threads returns the number of threads OpenBLAS currently uses.
func Threads() int { return int(C.openblas_get_num_threads()) }

// Config returns OpenBLAS's build configuration string (version, kernel
// family).
func Config() string { return C.GoString(C.openblas_get_config()) }

// Dgemm is cblas_dgemm on row-major matrices with gonum's argument
// conventions. It panics, before calling into C, when a slice is too short
// for the given shape, so that a wrong call cannot corrupt memory.
func Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	ta, tb := cblasTranspose(tA), cblasTranspose(tB)
	ar, ac := m, k
	if tA != blas.NoTrans {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB != blas.NoTrans {
		br, bc = n, k
	}
	mustFit("a", a, ar, ac, lda)
	mustFit("b", b, br, bc, ldb)
	mustFit("c", c, m, n, ldc)
	if m == 0 || n == 0 {
		return
	}
	C.cblas_dgemm(cblasRowMajor, ta, tb, C.int(m), C.int(n), C.int(k),
		C.double(alpha), ptr(a), C.int(lda), ptr(b), C.int(ldb), C.double(beta), ptr(c), C.int(ldc))
}

// Dsyrk is cblas_dsyrk on row-major matrices with gonum's argument
// conventions: the ul triangle of the n×n matrix C becomes
// alpha·op(A)·op(A)ᵀ + beta·C, op(A) n×k. It panics before calling into C
// when a slice is too short.
func Dsyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	ar, ac := n, k
	if tA != blas.NoTrans {
		ar, ac = k, n
	}
	mustFit("a", a, ar, ac, lda)
	mustFit("c", c, n, n, ldc)
	if n == 0 {
		return
	}
	C.cblas_dsyrk(cblasRowMajor, cblasUplo(ul), cblasTranspose(tA), C.int(n), C.int(k),
		C.double(alpha), ptr(a), C.int(lda), C.double(beta), ptr(c), C.int(ldc))
}

// Dtrsm is cblas_dtrsm on row-major matrices with gonum's argument
// conventions: B (m×n) becomes alpha·op(A)⁻¹·B (side Left) or
// alpha·B·op(A)⁻¹ (side Right) for the triangular A. It panics before
// calling into C when a slice is too short.
func Dtrsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	k := m
	side := C.int(cblasLeft)
	if s == blas.Right {
		k, side = n, cblasRight
	} else if s != blas.Left {
		panic("openblas: illegal side")
	}
	diag := C.int(cblasNonUnit)
	if d == blas.Unit {
		diag = cblasUnit
	} else if d != blas.NonUnit {
		panic("openblas: illegal diagonal")
	}
	mustFit("a", a, k, k, lda)
	mustFit("b", b, m, n, ldb)
	if m == 0 || n == 0 {
		return
	}
	C.cblas_dtrsm(cblasRowMajor, side, cblasUplo(ul), cblasTranspose(tA), diag, C.int(m), C.int(n),
		C.double(alpha), ptr(a), C.int(lda), ptr(b), C.int(ldb))
}

// mustFit panics unless s holds a rows×cols row-major matrix with leading
// dimension ld.
func mustFit(name string, s []float64, rows, cols, ld int) {
	if rows < 0 || cols < 0 || ld < max(1, cols) {
		panic(fmt.Sprintf("openblas: bad shape %d×%d, ld %d for %s", rows, cols, ld, name))
	}
	if rows > 0 && cols > 0 && len(s) < (rows-1)*ld+cols {
		panic(fmt.Sprintf("openblas: %s too short", name))
	}
}

// ptr returns the C pointer to s[0], or nil for an empty slice.
func ptr(s []float64) *C.double {
	if len(s) == 0 {
		return nil
	}
	return (*C.double)(&s[0])
}
