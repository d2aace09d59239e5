package blas

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

const (
	// syrkBase is the largest order of C that is computed as a full
	// square by Dgemm into a scratch buffer, of which only the requested
	// triangle is then merged into C (Dgemm then picks its own path for
	// small products). Larger triangles run on the GEMM loops directly.
	syrkBase = 64

	// syrkMinGemmOrder is the smallest order of C for which A·Aᵀ goes to
	// Dgemm; smaller ones use gonum's dot-product loops.
	syrkMinGemmOrder = 24
)

// syrkScratch recycles the syrkBase×syrkBase diagonal-block buffers.
var syrkScratch = sync.Pool{New: func() any {
	s := make([]float64, syrkBase*syrkBase)
	return &s
}}

// Dsyrk performs one of the symmetric rank-k operations
//
//	C = alpha * A * Aᵀ + beta * C  if tA == blas.NoTrans
//	C = alpha * Aᵀ * A + beta * C  if tA == blas.Trans or tA == blas.ConjTrans
//
// where A is an n×k or k×n matrix, C is an n×n symmetric matrix, and alpha and
// beta are scalars. Only the triangle of C named by ul is referenced and
// updated; when beta is zero C is not read.
//
// The triangle runs on Dgemm's blocked loops with op(A) as both operands:
// micro-tiles outside the triangle are skipped, tiles crossing the diagonal
// are computed into scratch and merged element by element, and with several
// goroutines the rows are split so that every goroutine computes the same
// number of micro-tile elements. C of order at most 64 is computed as a
// full square into scratch and merged; for A·Aᵀ with n < 24, gonum's
// dot-product loops are used instead. Dsyrk panics on bad
// arguments exactly as gonum's Dsyrk does.
func (impl Implementation) Dsyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	if ul != blas.Lower && ul != blas.Upper {
		panic(badUplo)
	}
	if tA != blas.Trans && tA != blas.NoTrans && tA != blas.ConjTrans {
		panic(badTranspose)
	}
	if n < 0 {
		panic(nLT0)
	}
	if k < 0 {
		panic(kLT0)
	}
	row, col := k, n
	if tA == blas.NoTrans {
		row, col = n, k
	}
	if lda < max(1, col) {
		panic(badLdA)
	}
	if ldc < max(1, n) {
		panic(badLdC)
	}
	if n == 0 {
		return
	}
	if len(a) < lda*(row-1)+col {
		panic(shortA)
	}
	if len(c) < ldc*(n-1)+n {
		panic(shortC)
	}
	if alpha == 0 || k == 0 {
		trapezoidScale(ul, n, n, 0, beta, c, ldc)
		return
	}
	if tA == blas.NoTrans && n < syrkMinGemmOrder {
		// A handful of long rows: gonum's SIMD dot products beat packing
		// them for the GEMM kernel.
		gonum.Implementation{}.Dsyrk(ul, tA, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	tG := blas.NoTrans
	if tA != blas.NoTrans {
		tG = blas.Trans
	}
	if n <= syrkBase {
		impl.syrkDiag(ul, tG, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	// C's triangle on the GEMM loops: op(A)·op(A)ᵀ with the tiles outside
	// the triangle skipped, so op(A) is packed once per block (as the A
	// and the B operand) and the products run on whole micro-tiles.
	g := gemmProblem{
		be: impl.KernelBackend(), aTrans: tG == blas.Trans, bTrans: tG == blas.NoTrans,
		m: n, n: n, k: k, alpha: alpha, a: a, lda: lda, b: a, ldb: lda, beta: beta, c: c, ldc: ldc,
		tri: ul,
	}
	g.run(impl.threads())
}

// trapezoidScale computes C := beta * C on the ul trapezoid (bounded by the
// diagonal j − i = diag) of the m×n matrix c, setting it to zero without
// reading it when beta is zero.
func trapezoidScale(ul blas.Uplo, m, n, diag int, beta float64, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		lo, hi := 0, min(n, i+diag+1)
		if ul == blas.Upper {
			lo, hi = max(0, i+diag), n
		}
		if lo >= hi {
			continue
		}
		ci := c[i*ldc+lo : i*ldc+hi]
		switch beta {
		case 0:
			clear(ci)
		case 1:
		default:
			for j := range ci {
				ci[j] *= beta
			}
		}
	}
}

// syrkDiag computes the ul triangle of C := alpha * op(A) * op(A)ᵀ + beta * C
// for a diagonal block of order n ≤ syrkBase: the full square product goes
// to a scratch buffer through Dgemm and only the triangle is merged into c.
func (impl Implementation) syrkDiag(ul blas.Uplo, tG blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	tH := blas.Trans
	if tG == blas.Trans {
		tH = blas.NoTrans
	}
	sp := syrkScratch.Get().(*[]float64)
	defer syrkScratch.Put(sp)
	w := (*sp)[:n*n]
	impl.Dgemm(tG, tH, n, n, k, alpha, a, lda, a, lda, 0, w, n)
	for i := 0; i < n; i++ {
		lo, hi := 0, i+1
		if ul == blas.Upper {
			lo, hi = i, n
		}
		ci := c[i*ldc+lo : i*ldc+hi]
		wi := w[i*n+lo : i*n+hi]
		switch beta {
		case 0:
			copy(ci, wi)
		case 1:
			for j, v := range wi {
				ci[j] += v
			}
		default:
			for j, v := range wi {
				ci[j] = beta*ci[j] + v
			}
		}
	}
}
