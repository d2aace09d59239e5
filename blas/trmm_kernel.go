package blas

import "gonum.org/v1/gonum/blas"

// trmmLeftKernel computes B := alpha * op(A) * B for a small m×m triangle A
// (m ≤ trsmBase) and an m×n matrix b, in place.
func trmmLeftKernel(ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	trsmLeftSmall(true, ul, tA, d, m, n, alpha, a, lda, b, ldb)
}

// trmmRightKernel computes B := alpha * B * op(A) for a small n×n triangle A
// (n ≤ trsmBase) and an m×n matrix b, in place.
func trmmRightKernel(ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	trsmRightSmall(true, ul, tA, d, m, n, alpha, a, lda, b, ldb)
}
