package blas

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// trsmKernelRows is the number of rows of B that the right-side kernels
// transpose and process at a time.
const trsmKernelRows = 256

// Right-side blocks with a triangle of order below trsmRightMinOrder or
// fewer than trsmRightMinRows rows are left to gonum's row-wise loops.
const (
	trsmRightMinOrder = 4
	trsmRightMinRows  = 16
)

// trsmTiles recycles the transposition tiles of the right-side kernels.
var trsmTiles = sync.Pool{New: func() any {
	t := make([]float64, trsmBase*trsmKernelRows)
	return &t
}}

// The small diagonal blocks are handled row by row with gonum's SIMD Dgemv:
// for Side Left, row i of the result is a combination of row i of B and the
// rows of B already finished, which is one transposed matrix-vector product
// over the long rows of B. For Side Right the block of B is only
// n ≤ trsmBase columns wide, so it is transposed into a scratch tile,
// turning X·op(A) = B into op(A)ᵀ·Xᵀ = Bᵀ, a Side Left problem with long
// rows.

// trsmFlip returns the transpose flag of op(A)ᵀ.
func trsmFlip(tA blas.Transpose) blas.Transpose {
	if tA == blas.NoTrans {
		return blas.Trans
	}
	return blas.NoTrans
}

// trsmLeftKernel solves op(A) * X = alpha * B for a small m×m triangle A
// (m ≤ trsmBase) and an m×n right-hand side b, in place.
func trsmLeftKernel(ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	trsmLeftSmall(false, ul, tA, d, m, n, alpha, a, lda, b, ldb)
}

// trsmRightKernel solves X * op(A) = alpha * B for a small n×n triangle A
// (n ≤ trsmBase) and an m×n right-hand side b, in place.
func trsmRightKernel(ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	trsmRightSmall(false, ul, tA, d, m, n, alpha, a, lda, b, ldb)
}

// trsmLeftSmall computes B := alpha·op(A)⁻¹·B (mul false) or
// B := alpha·op(A)·B (mul true) for a small m×m triangle A and the m×n
// matrix b. It reads only the ul triangle of A, and the diagonal only when
// d is blas.NonUnit.
func trsmLeftSmall(mul bool, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	g := gonum.Implementation{}
	lower := trsmOpLower(ul, tA)
	// Row i of op(A) restricted to the rows of B it couples with row i:
	// the columns before i when op(A) is lower triangular, after i
	// otherwise. It is a row of A (stride 1) when A is not transposed and a
	// column of A (stride lda) when it is.
	coupling := func(i int) (rows, first int, x []float64, incX int) {
		incX = 1
		if tA != blas.NoTrans {
			incX = lda
		}
		if lower {
			rows, first = i, 0
		} else {
			rows, first = m-1-i, i+1
		}
		if rows == 0 {
			return 0, first, nil, incX
		}
		if tA == blas.NoTrans {
			x = a[i*lda+first:]
		} else {
			x = a[first*lda+i:]
		}
		return rows, first, x, incX
	}
	// Solves finish the rows in the order of substitution; products go the
	// other way, so that every row is combined with rows not yet changed.
	forward := lower != mul
	for s := 0; s < m; s++ {
		i := s
		if !forward {
			i = m - 1 - s
		}
		row := b[i*ldb : i*ldb+n]
		diag := 1.0
		if d == blas.NonUnit {
			diag = a[i*lda+i]
		}
		rows, first, x, incX := coupling(i)
		if mul {
			// row := alpha·(diag·row + Σ op(A)[i,p]·row_p).
			if rows == 0 {
				g.Dscal(n, alpha*diag, row, 1)
			} else {
				g.Dgemv(blas.Trans, rows, n, alpha, b[first*ldb:], ldb, x, incX, alpha*diag, row, 1)
			}
			continue
		}
		// row := (alpha·row − Σ op(A)[i,p]·x_p) / diag.
		switch {
		case rows > 0:
			g.Dgemv(blas.Trans, rows, n, -1, b[first*ldb:], ldb, x, incX, alpha, row, 1)
		case alpha != 1:
			g.Dscal(n, alpha, row, 1)
		}
		if d == blas.NonUnit {
			g.Dscal(n, 1/diag, row, 1)
		}
	}
}

// trsmRightSmall computes B := alpha·B·op(A)⁻¹ (mul false) or
// B := alpha·B·op(A) (mul true) for the m×n matrix b and a small n×n
// triangle A, through transposed tiles of at most trsmKernelRows rows.
func trsmRightSmall(mul bool, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	if n < trsmRightMinOrder || m < trsmRightMinRows {
		// Too little work to amortize the transposes: gonum's row-wise
		// loops are faster.
		if mul {
			gonum.Implementation{}.Dtrmm(blas.Right, ul, tA, d, m, n, alpha, a, lda, b, ldb)
		} else {
			gonum.Implementation{}.Dtrsm(blas.Right, ul, tA, d, m, n, alpha, a, lda, b, ldb)
		}
		return
	}
	tp := trsmTiles.Get().(*[]float64)
	defer trsmTiles.Put(tp)
	tile := *tp
	tF := trsmFlip(tA)
	for r0 := 0; r0 < m; r0 += trsmKernelRows {
		w := min(trsmKernelRows, m-r0)
		t := tile[:n*w]
		br := b[r0*ldb:]
		trsmTranspose(false, w, n, br, ldb, t)
		trsmLeftSmall(mul, ul, tF, d, n, w, alpha, a, lda, t, w)
		trsmTranspose(true, w, n, br, ldb, t)
	}
}

// trsmTranspose copies the w×n matrix b (leading dimension ldb) into the
// n×w matrix t (leading dimension w) transposed, or back from t into b when
// back is true. Four rows of b are moved per pass, so that every row of t
// receives four consecutive elements.
func trsmTranspose(back bool, w, n int, b []float64, ldb int, t []float64) {
	i := 0
	for ; i+4 <= w; i += 4 {
		r0 := b[i*ldb : i*ldb+n]
		r1 := b[(i+1)*ldb : (i+1)*ldb+n]
		r2 := b[(i+2)*ldb : (i+2)*ldb+n]
		r3 := b[(i+3)*ldb : (i+3)*ldb+n]
		for j := range r0 {
			q := t[j*w+i : j*w+i+4 : j*w+i+4]
			if back {
				r0[j], r1[j], r2[j], r3[j] = q[0], q[1], q[2], q[3]
			} else {
				q[0], q[1], q[2], q[3] = r0[j], r1[j], r2[j], r3[j]
			}
		}
	}
	for ; i < w; i++ {
		row := b[i*ldb : i*ldb+n]
		for j := range row {
			if back {
				row[j] = t[j*w+i]
			} else {
				t[j*w+i] = row[j]
			}
		}
	}
}
