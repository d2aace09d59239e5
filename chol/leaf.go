package chol

import (
	"sync"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/blas"
)

// Leaf factorization parameters: the recursive factorization hands blocks
// of order ≤ leafMax to potrfLeafLower, which works on block columns of
// width leafNB.
const (
	leafMax = 256
	leafNB  = 32
)

// leafWorkSize is the scratch size (in float64s) that potrfLeafLower needs.
const leafWorkSize = gemmtBase * gemmtBase

// leafPool recycles leaf scratch space between factorizations.
var leafPool = sync.Pool{New: func() any {
	s := make([]float64, leafWorkSize)
	return &s
}}

// potrfLeafLower factors a block of order n ≤ leafMax with the left-looking
// (Crout) blocked algorithm, in which every O(n³) operation is a Dgemm: for
// each block column J of width leafNB,
//
//	A[J,J]  −= tril(L[J,:j]·L[J,:j]ᵀ)        (gemmtLower)
//	A[J',J] −= L[J',:j]·L[J,:j]ᵀ             (Dgemm, J' = rows below J)
//	L[J,J]   = chol(A[J,J])                  (unblocked kernel)
//	L[J',J]  = A[J',J]·L[J,J]⁻ᵀ              (Dtrsm)
//
// Unlike the recursive algorithm it needs no Dsyrk and its updates are
// single products with a long inner dimension. (Multiplying by an explicit
// inverse of L[J,J] instead of the triangular solve is no faster here and
// measurably less accurate on ill-conditioned kernel matrices.) The
// contract is potrfLower's; work must hold leafWorkSize elements.
func potrfLeafLower(bi blas.Implementation, n int, a []float64, lda int, work []float64) (pivot int, value float64) {
	gw := work[:gemmtBase*gemmtBase]
	for j := 0; j < n; j += leafNB {
		jb := min(leafNB, n-j)
		m := n - j - jb
		ajj := a[j*lda+j:]
		if j > 0 {
			gemmtLower(bi, gblas.NoTrans, jb, j, -1, a[j*lda:], lda, a[j*lda:], lda, ajj, lda, gw)
			if m > 0 {
				bi.Dgemm(gblas.NoTrans, gblas.Trans, m, jb, j, -1, a[(j+jb)*lda:], lda, a[j*lda:], lda, 1, a[(j+jb)*lda+j:], lda)
			}
		}
		if p, v := potf2Lower(jb, ajj, lda); p >= 0 {
			return j + p, v
		}
		if m == 0 {
			break
		}
		bi.Dtrsm(gblas.Right, gblas.Lower, gblas.Trans, gblas.NonUnit, m, jb, 1, ajj, lda, a[(j+jb)*lda+j:], lda)
	}
	return -1, 0
}
