package blas

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/solvegp/solvegp/asm"
	"github.com/solvegp/solvegp/internal/parallel"
)

const (
	// syrkBase is the largest order of a diagonal block of C that is
	// computed as a full square by Dgemm into a scratch buffer, of which
	// only the requested triangle is then merged into C. Larger triangles
	// are split in two and the off-diagonal block goes to Dgemm directly.
	syrkBase = 64

	// syrkMinBlock is the smallest number of rows of C in one block row
	// of the parallel algorithm. A block row is one Dgemm for its
	// rectangle off the diagonal plus a diagonal triangle.
	syrkMinBlock = 128

	// syrkMinGemmOrder is the smallest order of C for which A·Aᵀ goes to
	// Dgemm; smaller ones use gonum's dot-product loops.
	syrkMinGemmOrder = 24

	// syrkMinParallelWork is the smallest n²·k for which the block rows
	// are distributed over several goroutines.
	syrkMinParallelWork = 1 << 21
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
// The triangle of C is halved recursively: the off-diagonal rectangles go
// to Dgemm, and diagonal blocks of order at most 64 are computed as full
// squares into a scratch buffer by Dgemm and merged. With several
// goroutines, C is first cut into independent block rows (one Dgemm for the
// rectangle left or right of the diagonal plus a recursive diagonal
// triangle), handed out most expensive first. For A·Aᵀ with
// n < 24, gonum's dot-product loops are used instead. Dsyrk panics on bad
// arguments exactly as gonum's Dsyrk does.
func (impl Implementation) Dsyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	if ul != blas.Lower && ul != blas.Upper {
		panic(trsmErrBadUplo)
	}
	if tA != blas.Trans && tA != blas.NoTrans && tA != blas.ConjTrans {
		panic(trsmErrBadTranspose)
	}
	if n < 0 {
		panic(trsmErrNLT0)
	}
	if k < 0 {
		panic(trsmErrKLT0)
	}
	row, col := k, n
	if tA == blas.NoTrans {
		row, col = n, k
	}
	if lda < max(1, col) {
		panic(trsmErrBadLdA)
	}
	if ldc < max(1, n) {
		panic(trsmErrBadLdC)
	}
	if n == 0 {
		return
	}
	if len(a) < lda*(row-1)+col {
		panic(trsmErrShortA)
	}
	if len(c) < ldc*(n-1)+n {
		panic(trsmErrShortC)
	}
	if alpha == 0 || k == 0 {
		syrkScale(ul, n, beta, c, ldc)
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
	t := impl.threads()
	if t < 2 || n < 2*syrkMinBlock || n*n*k < syrkMinParallelWork {
		// Serially, recursive halving gives the largest Dgemm calls.
		impl.syrkRec(ul, tG, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	// In parallel, C is cut into about two block rows per goroutine, which
	// are independent.
	bs := max(syrkMinBlock, (n/(2*t)+7)&^7)
	nblk := (n + bs - 1) / bs
	t = min(t, nblk)
	// Hand out the block rows from the most expensive down (the longest
	// rectangles: the last block rows of a lower, the first of an upper
	// triangle) so that the goroutines finish together.
	task := syrkTasks.Get().(*syrkTask)
	*task = syrkTask{backend: impl.Backend, ul: ul, tG: tG, n: n, k: k, bs: bs, nblk: nblk, alpha: alpha, a: a, lda: lda, beta: beta, c: c, ldc: ldc}
	parallel.For(nblk, t, task)
	*task = syrkTask{}
	syrkTasks.Put(task)
}

// syrkTask is the parallel section of a Dsyrk call: one iteration per
// block row of C. Tasks are pooled so that parallel calls do not allocate.
type syrkTask struct {
	backend  *asm.Backend // the caller's micro-kernel backend
	ul       blas.Uplo
	tG       blas.Transpose
	n, k     int
	bs, nblk int
	alpha    float64
	a        []float64
	lda      int
	beta     float64
	c        []float64
	ldc      int
}

var syrkTasks = sync.Pool{New: func() any { return new(syrkTask) }}

// Run computes the q-th most expensive block row of C, single-threaded.
func (s *syrkTask) Run(q int) {
	blk := q
	if s.ul == blas.Lower {
		blk = s.nblk - 1 - q
	}
	serial := Implementation{Threads: 1, Backend: s.backend}
	serial.syrkBlockRow(s.ul, s.tG, s.n, s.k, blk*s.bs, min(s.n, (blk+1)*s.bs), s.alpha, s.a, s.lda, s.beta, s.c, s.ldc)
}

// syrkBlockRow computes rows i0:i1 of the ul triangle of
// C := alpha * op(A) * op(A)ᵀ + beta * C, where op(A) is n×k (tG == NoTrans:
// rows of a; Trans: columns of a).
func (impl Implementation) syrkBlockRow(ul blas.Uplo, tG blas.Transpose, n, k, i0, i1 int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	h := i1 - i0
	tH := blas.Trans
	if tG == blas.Trans {
		tH = blas.NoTrans
	}
	// rowsOf returns the rows of op(A) from i on.
	rowsOf := func(i int) []float64 {
		if tG == blas.Trans {
			return a[i:]
		}
		return a[i*lda:]
	}
	aI := rowsOf(i0)
	if ul == blas.Lower && i0 > 0 {
		impl.Dgemm(tG, tH, h, i0, k, alpha, aI, lda, a, lda, beta, c[i0*ldc:], ldc)
	}
	if ul == blas.Upper && i1 < n {
		impl.Dgemm(tG, tH, h, n-i1, k, alpha, aI, lda, rowsOf(i1), lda, beta, c[i0*ldc+i1:], ldc)
	}
	impl.syrkRec(ul, tG, h, k, alpha, aI, lda, beta, c[i0*ldc+i0:], ldc)
}

// syrkScale computes C := beta * C on the ul triangle of the n×n matrix c,
// setting it to zero without reading it when beta is zero.
func syrkScale(ul blas.Uplo, n int, beta float64, c []float64, ldc int) {
	for i := 0; i < n; i++ {
		var ci []float64
		if ul == blas.Upper {
			ci = c[i*ldc+i : i*ldc+n]
		} else {
			ci = c[i*ldc : i*ldc+i+1]
		}
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

// syrkRec computes the ul triangle of C := alpha * op(A) * op(A)ᵀ + beta * C
// for the n×n block c, where op(A) is n×k (tG == NoTrans: rows of a; Trans:
// columns of a). alpha is non-zero and k positive.
func (impl Implementation) syrkRec(ul blas.Uplo, tG blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	if n <= syrkBase {
		impl.syrkDiag(ul, tG, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	n1 := trsmSplit(n)
	n2 := n - n1
	// a2 holds the last n2 rows of op(A).
	var a2 []float64
	if tG == blas.Trans {
		a2 = a[n1:]
	} else {
		a2 = a[n1*lda:]
	}
	impl.syrkRec(ul, tG, n1, k, alpha, a, lda, beta, c, ldc)
	impl.syrkRec(ul, tG, n2, k, alpha, a2, lda, beta, c[n1*ldc+n1:], ldc)
	// Off-diagonal block: op(A)_2 op(A)_1ᵀ (lower) or op(A)_1 op(A)_2ᵀ (upper).
	tH := blas.Trans
	if tG == blas.Trans {
		tH = blas.NoTrans
	}
	if ul == blas.Lower {
		impl.Dgemm(tG, tH, n2, n1, k, alpha, a2, lda, a, lda, beta, c[n1*ldc:], ldc)
	} else {
		impl.Dgemm(tG, tH, n1, n2, k, alpha, a, lda, a2, lda, beta, c[n1:], ldc)
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
