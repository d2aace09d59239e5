package blas

import (
	"sync"

	"gonum.org/v1/gonum/blas"
)

// symmPanel is the width of the panels of the symmetric matrix A that are
// expanded to full storage and handed to Dgemm.
const symmPanel = 512

// symmScratch recycles the panel buffers of Dsymm.
var symmScratch sync.Pool

// Dsymm performs one of the matrix-matrix operations
//
//	C = alpha * A * B + beta * C  if side == blas.Left
//	C = alpha * B * A + beta * C  if side == blas.Right
//
// where A is an n×n or m×m symmetric matrix, B and C are m×n matrices, and
// alpha and beta are scalars. Only the triangle of A named by ul is read;
// when beta is zero C is not read.
//
// A is expanded, one panel of at most 512 rows at a time, into a scratch
// buffer in full storage and multiplied by Dgemm. Dsymm panics on
// bad arguments exactly as gonum's Dsymm does.
func (impl Implementation) Dsymm(s blas.Side, ul blas.Uplo, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if s != blas.Right && s != blas.Left {
		panic(trsmErrBadSide)
	}
	if ul != blas.Lower && ul != blas.Upper {
		panic(trsmErrBadUplo)
	}
	if m < 0 {
		panic(trsmErrMLT0)
	}
	if n < 0 {
		panic(trsmErrNLT0)
	}
	k := n
	if s == blas.Left {
		k = m
	}
	if lda < max(1, k) {
		panic(trsmErrBadLdA)
	}
	if ldb < max(1, n) {
		panic(trsmErrBadLdB)
	}
	if ldc < max(1, n) {
		panic(trsmErrBadLdC)
	}
	if m == 0 || n == 0 {
		return
	}
	if len(a) < lda*(k-1)+k {
		panic(trsmErrShortA)
	}
	if len(b) < ldb*(m-1)+n {
		panic(trsmErrShortB)
	}
	if len(c) < ldc*(m-1)+n {
		panic(trsmErrShortC)
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

	w := min(k, symmPanel)
	var sp *[]float64
	if v := symmScratch.Get(); v != nil {
		sp = v.(*[]float64)
	}
	if sp == nil || cap(*sp) < k*w {
		buf := make([]float64, k*w)
		sp = &buf
	}
	defer symmScratch.Put(sp)
	panel := (*sp)[:k*w]

	for p := 0; p < k; p += w {
		pw := min(w, k-p)
		bet := beta
		if p > 0 {
			bet = 1
		}
		// The rows p:p+pw of the full symmetric A; by symmetry their
		// transpose is the column panel A[:, p:p+pw].
		r := panel[:pw*k]
		symmRows(ul, k, p, pw, a, lda, r)
		if s == blas.Left {
			// C += alpha * A[:, p:p+pw] * B[p:p+pw, :].
			impl.Dgemm(blas.Trans, blas.NoTrans, m, n, pw, alpha, r, k, b[p*ldb:], ldb, bet, c, ldc)
		} else {
			// C += alpha * B[:, p:p+pw] * A[p:p+pw, :].
			impl.Dgemm(blas.NoTrans, blas.NoTrans, m, n, pw, alpha, b[p:], ldb, r, k, bet, c, ldc)
		}
	}
}

// symmRows writes rows p:p+pw of the k×k symmetric matrix whose ul triangle
// is stored in a into the pw×k row-major matrix r. Both the stored part and
// the mirrored part are read along rows of a.
func symmRows(ul blas.Uplo, k, p, pw int, a []float64, lda int, r []float64) {
	for i := 0; i < pw; i++ {
		row := p + i
		if ul == blas.Upper {
			copy(r[i*k+row:i*k+k], a[row*lda+row:row*lda+k])
		} else {
			copy(r[i*k:i*k+row+1], a[row*lda:row*lda+row+1])
		}
	}
	if ul == blas.Upper {
		// Element (p+i, j) with j < p+i is a[j*lda+p+i].
		for j := 0; j < p+pw-1; j++ {
			src := a[j*lda+p : j*lda+p+pw]
			for i := max(0, j-p+1); i < pw; i++ {
				r[i*k+j] = src[i]
			}
		}
		return
	}
	// Element (p+i, j) with j > p+i is a[j*lda+p+i].
	for j := p + 1; j < k; j++ {
		src := a[j*lda+p : j*lda+p+min(pw, j-p)]
		for i, v := range src {
			r[i*k+j] = v
		}
	}
}
