package blas

import (
	"gonum.org/v1/gonum/blas"
)

// Dgemmt performs one of the triangular matrix-matrix operations
//
//	C = alpha * op(A) * op(B) + beta * C   on the ul triangle of C only,
//
// where op(X) is X or Xᵀ as tA and tB specify, op(A) is n×k, op(B) is k×n and
// C is n×n. Only the triangle of C named by ul (diagonal included) is read
// and written; the other triangle is not referenced. When beta is zero, C is
// not read. It is the extension that MKL and OpenBLAS call dgemmt: the
// product's other triangle is never computed, so it costs about half of the
// Dgemm of the same shape (Dsyrk is the case op(B) = op(A)ᵀ).
//
// Dgemmt runs on Dgemm's blocked loops: micro-tiles outside the triangle
// are skipped, tiles crossing the diagonal are computed into scratch and
// merged element by element, and the rows are split among impl's Threads
// goroutines so that each gets the same number of triangle elements. It
// panics on bad arguments with Dgemm's messages (and Dsyrk's for a bad ul).
// It is DgemmTrapezoid with m = n and diag = 0.
func (impl Implementation) Dgemmt(ul blas.Uplo, tA, tB blas.Transpose, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	impl.DgemmTrapezoid(ul, tA, tB, n, n, k, 0, alpha, a, lda, b, ldb, beta, c, ldc)
}

// DgemmTrapezoid performs one of the trapezoidal matrix-matrix operations
//
//	C = alpha * op(A) * op(B) + beta * C   on the ul trapezoid of C only,
//
// where op(A) is m×k, op(B) is k×n and C is m×n. The trapezoid is bounded by
// the diagonal j − i = diag: with ul = blas.Lower it holds the elements
// C[i][j] with j − i ≤ diag, with blas.Upper those with j − i ≥ diag. Only
// those elements are read and written, and when beta is zero C is not
// read. With m = n and diag = 0 it is Dgemmt. A right-looking blocked
// Cholesky updates a row block of the trailing matrix with one call: the
// rectangle left of the diagonal block and that block's lower triangle
// (diag = the rectangle's width) share one packing of the panel, where
// Dgemm and Dsyrk would pack it twice.
//
// It runs on Dgemm's blocked loops like Dgemmt and panics on bad arguments
// with Dgemm's messages (and Dsyrk's for a bad ul).
func (impl Implementation) DgemmTrapezoid(ul blas.Uplo, tA, tB blas.Transpose, m, n, k, diag int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if ul != blas.Lower && ul != blas.Upper {
		panic(badUplo)
	}
	for _, t := range []blas.Transpose{tA, tB} {
		if t != blas.NoTrans && t != blas.Trans && t != blas.ConjTrans {
			panic(badTranspose)
		}
	}
	if m < 0 {
		panic(mLT0)
	}
	if n < 0 {
		panic(nLT0)
	}
	if k < 0 {
		panic(kLT0)
	}
	aTrans, bTrans := tA != blas.NoTrans, tB != blas.NoTrans
	// op(A) is m×k and op(B) is k×n, so A is stored with rows of k (not
	// transposed) or of m elements, B with rows of n or of k elements.
	aRows, aCols := m, k
	if aTrans {
		aRows, aCols = k, m
	}
	bRows, bCols := k, n
	if bTrans {
		bRows, bCols = n, k
	}
	if lda < max(1, aCols) {
		panic(badLdA)
	}
	if ldb < max(1, bCols) {
		panic(badLdB)
	}
	if ldc < max(1, n) {
		panic(badLdC)
	}
	if m == 0 || n == 0 {
		return
	}
	if aRows > 0 && len(a) < (aRows-1)*lda+aCols {
		panic(shortA)
	}
	if bRows > 0 && len(b) < (bRows-1)*ldb+bCols {
		panic(shortB)
	}
	if len(c) < (m-1)*ldc+n {
		panic(shortC)
	}
	// Rows and columns without an element of the trapezoid are left out,
	// and a trapezoid that holds all of C is a Dgemm. Diagonals beyond C
	// are moved to its edge first, which changes no element's side and
	// keeps the index arithmetic from overflowing.
	diag = max(min(diag, n), -m)
	switch ul {
	case blas.Lower:
		n = min(n, m+diag)
	case blas.Upper:
		m = min(m, n-diag)
	}
	if m <= 0 || n <= 0 {
		return
	}
	tri := ul
	if ul == blas.Lower && diag >= n-1 || ul == blas.Upper && diag <= 1-m {
		tri = 0
	}
	if alpha == 0 || k == 0 {
		trapezoidScale(ul, m, n, diag, beta, c, ldc)
		return
	}
	g := gemmProblem{
		be: impl.KernelBackend(), aTrans: aTrans, bTrans: bTrans,
		m: m, n: n, k: k, alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc,
		tri: tri, diag: diag,
	}
	g.run(impl.threads())
}
