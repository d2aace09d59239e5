package blas

import (
	"gonum.org/v1/gonum/blas"
)

// Dtrmm performs one of the matrix-matrix operations
//
//	B = alpha * A * B   if tA == blas.NoTrans and side == blas.Left
//	B = alpha * Aᵀ * B  if tA == blas.Trans or blas.ConjTrans, and side == blas.Left
//	B = alpha * B * A   if tA == blas.NoTrans and side == blas.Right
//	B = alpha * B * Aᵀ  if tA == blas.Trans or blas.ConjTrans, and side == blas.Right
//
// where A is an n×n or m×m triangular matrix, B is an m×n matrix, and alpha
// is a scalar.
//
// With side Left and a triangle of order 64 or more, the product runs on
// Dgemm's blocked loops with the triangle packed block by block (see
// trmmLeftBlocked). Otherwise the triangle is split recursively; diagonal
// blocks of order at most 16 are multiplied by a small kernel and all
// coupling blocks are applied with Dgemm. Only the triangle of A named by ul is read, and its diagonal is not
// read when d is blas.Unit. Dtrmm panics on bad arguments exactly as gonum's
// Dtrmm does.
func (impl Implementation) Dtrmm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	k := trsmCheck(s, ul, tA, d, m, n, lda, ldb)
	if m == 0 || n == 0 {
		return
	}
	trsmCheckLen(k, m, n, a, lda, b, ldb)
	if alpha == 0 {
		trsmZero(m, n, b, ldb)
		return
	}
	if trsmThreads(impl, s, m, n, k) < 2 {
		if s == blas.Left && m >= trmmLeftBlockedMin {
			impl.trmmLeftBlocked(ul, tA, d, m, n, alpha, a, lda, b, ldb)
			return
		}
		if s == blas.Left {
			impl.trmmLeft(ul, tA, d, m, n, alpha, a, lda, b, ldb)
		} else {
			impl.trmmRight(ul, tA, d, m, n, alpha, a, lda, b, ldb)
		}
		return
	}
	// Columns of B (rows, for side Right) are independent: each goroutine
	// runs the serial algorithm on a slab of them, packing its own blocks
	// of A, with no synchronization between blocks.
	trsmParallel(impl, true, s, ul, tA, d, m, n, k, alpha, a, lda, b, ldb)
}

// trmmLeft computes B := alpha * op(A) * B for the m×m triangle A and the
// m×n matrix b. alpha is non-zero.
func (impl Implementation) trmmLeft(ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	if m <= trsmBase {
		trmmLeftKernel(ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	m1 := trsmSplit(m)
	m2 := m - m1
	a22 := a[m1*lda+m1:]
	b2 := b[m1*ldb:]
	tG := trsmGemmTrans(tA)
	if trsmOpLower(ul, tA) {
		// [B1; B2] := alpha [op(A)11 0; op(A)21 op(A)22] [B1; B2]: the new
		// B2 needs the old B1, so B2 is finished first.
		impl.trmmLeft(ul, tA, d, m2, n, alpha, a22, lda, b2, ldb)
		a21 := trsmCoupling(ul, a, lda, m1)
		impl.Dgemm(tG, blas.NoTrans, m2, n, m1, alpha, a21, lda, b, ldb, 1, b2, ldb)
		impl.trmmLeft(ul, tA, d, m1, n, alpha, a, lda, b, ldb)
		return
	}
	// [B1; B2] := alpha [op(A)11 op(A)12; 0 op(A)22] [B1; B2]: B1 first.
	impl.trmmLeft(ul, tA, d, m1, n, alpha, a, lda, b, ldb)
	a12 := trsmCoupling(ul, a, lda, m1)
	impl.Dgemm(tG, blas.NoTrans, m1, n, m2, alpha, a12, lda, b2, ldb, 1, b, ldb)
	impl.trmmLeft(ul, tA, d, m2, n, alpha, a22, lda, b2, ldb)
}

// trmmRight computes B := alpha * B * op(A) for the n×n triangle A and the
// m×n matrix b. alpha is non-zero.
func (impl Implementation) trmmRight(ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	if n <= trsmBase {
		trmmRightKernel(ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	n1 := trsmSplit(n)
	n2 := n - n1
	a22 := a[n1*lda+n1:]
	b2 := b[n1:]
	tG := trsmGemmTrans(tA)
	if !trsmOpLower(ul, tA) {
		// [B1 B2] := alpha [B1 B2] [op(A)11 op(A)12; 0 op(A)22]: the new B2
		// needs the old B1, so B2 is finished first.
		impl.trmmRight(ul, tA, d, m, n2, alpha, a22, lda, b2, ldb)
		a12 := trsmCoupling(ul, a, lda, n1)
		impl.Dgemm(blas.NoTrans, tG, m, n2, n1, alpha, b, ldb, a12, lda, 1, b2, ldb)
		impl.trmmRight(ul, tA, d, m, n1, alpha, a, lda, b, ldb)
		return
	}
	// [B1 B2] := alpha [B1 B2] [op(A)11 0; op(A)21 op(A)22]: B1 first.
	impl.trmmRight(ul, tA, d, m, n1, alpha, a, lda, b, ldb)
	a21 := trsmCoupling(ul, a, lda, n1)
	impl.Dgemm(blas.NoTrans, tG, m, n1, n2, alpha, b2, ldb, a21, lda, 1, b, ldb)
	impl.trmmRight(ul, tA, d, m, n2, alpha, a22, lda, b2, ldb)
}
