package blas

import (
	"gonum.org/v1/gonum/blas"
)

// Dsymm performs one of the matrix-matrix operations
//
//	C = alpha * A * B + beta * C  if side == blas.Left
//	C = alpha * B * A + beta * C  if side == blas.Right
//
// where A is an n×n or m×m symmetric matrix, B and C are m×n matrices, and
// alpha and beta are scalars. Only the triangle of A named by ul is read;
// when beta is zero C is not read.
//
// It runs on Dgemm's packed, blocked loops: the packing reads every
// element of A from the stored triangle (rows of it on one side of a
// panel's diagonal block, columns on the other), so the other triangle is
// never formed. Dsymm panics on bad arguments exactly as gonum's Dsymm
// does.
func (impl Implementation) Dsymm(s blas.Side, ul blas.Uplo, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if s != blas.Right && s != blas.Left {
		panic(badSide)
	}
	if ul != blas.Lower && ul != blas.Upper {
		panic(badUplo)
	}
	if m < 0 {
		panic(mLT0)
	}
	if n < 0 {
		panic(nLT0)
	}
	k := n
	if s == blas.Left {
		k = m
	}
	if lda < max(1, k) {
		panic(badLdA)
	}
	if ldb < max(1, n) {
		panic(badLdB)
	}
	if ldc < max(1, n) {
		panic(badLdC)
	}
	if m == 0 || n == 0 {
		return
	}
	if len(a) < lda*(k-1)+k {
		panic(shortA)
	}
	if len(b) < ldb*(m-1)+n {
		panic(shortB)
	}
	if len(c) < ldc*(m-1)+n {
		panic(shortC)
	}
	if alpha == 0 {
		if beta == 1 {
			return
		}
		for i := 0; i < m; i++ {
			ci := c[i*ldc : i*ldc+n]
			if beta == 0 {
				clear(ci)
				continue
			}
			for j := range ci {
				ci[j] *= beta
			}
		}
		return
	}

	g := gemmProblem{
		be: impl.KernelBackend(), m: m, n: n, k: k, alpha: alpha,
		a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc,
	}
	if s == blas.Left {
		g.aSym = ul
	} else {
		// C = alpha·B·A: the general matrix is the left operand.
		g.a, g.lda, g.b, g.ldb, g.bSym = b, ldb, a, lda, ul
	}
	g.run(impl.threads())
}
