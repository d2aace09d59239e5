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
func (impl Implementation) Dgemmt(ul blas.Uplo, tA, tB blas.Transpose, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if ul != blas.Lower && ul != blas.Upper {
		panic(badUplo)
	}
	for _, t := range []blas.Transpose{tA, tB} {
		if t != blas.NoTrans && t != blas.Trans && t != blas.ConjTrans {
			panic(badTranspose)
		}
	}
	if n < 0 {
		panic(nLT0)
	}
	if k < 0 {
		panic(kLT0)
	}
	aTrans, bTrans := tA != blas.NoTrans, tB != blas.NoTrans
	// op(A) is n×k and op(B) is k×n, so both are stored with rows of k
	// (not transposed A, transposed B) or of n elements.
	aRows, aCols := n, k
	if aTrans {
		aRows, aCols = k, n
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
	if n == 0 {
		return
	}
	if aRows > 0 && len(a) < (aRows-1)*lda+aCols {
		panic(shortA)
	}
	if bRows > 0 && len(b) < (bRows-1)*ldb+bCols {
		panic(shortB)
	}
	if len(c) < (n-1)*ldc+n {
		panic(shortC)
	}
	if alpha == 0 || k == 0 {
		syrkScale(ul, n, beta, c, ldc)
		return
	}
	g := gemmProblem{
		be: impl.KernelBackend(), aTrans: aTrans, bTrans: bTrans,
		m: n, n: n, k: k, alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc,
		tri: ul,
	}
	g.run(impl.threads())
}
