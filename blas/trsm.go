package blas

import (
	"sync"

	"gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/internal/gemm"
	"github.com/solvegp/solvegp/internal/parallel"
)

const (
	// trsmBase is the order of the triangular diagonal blocks that are
	// solved (or multiplied, for Dtrmm) by the substitution kernel. Larger
	// triangles are split in two and the coupling block goes to Dgemm.
	trsmBase = 16

	// trsmMinRHSPerThread is the smallest number of right-hand sides
	// (columns of B for Side Left, rows for Side Right) that a goroutine
	// takes when the right-hand sides are split between goroutines.
	trsmMinRHSPerThread = 64

	// trsmMinParallelWork is the smallest number of multiply-adds
	// (order² · right-hand sides / 2) for which a call uses more than
	// one goroutine.
	trsmMinParallelWork = 1 << 20
)

// trsmCheck performs gonum's argument checks shared by Dtrsm and Dtrmm, in
// gonum's order, and reports the order of the triangular matrix A. The
// slice length checks are done by trsmCheckLen once m, n > 0 is known.
func trsmCheck(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n, lda, ldb int) int {
	if s != blas.Left && s != blas.Right {
		panic(badSide)
	}
	if ul != blas.Lower && ul != blas.Upper {
		panic(badUplo)
	}
	if tA != blas.NoTrans && tA != blas.Trans && tA != blas.ConjTrans {
		panic(badTranspose)
	}
	if d != blas.NonUnit && d != blas.Unit {
		panic(badDiag)
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
	return k
}

// trsmCheckLen performs gonum's slice length checks of Dtrsm and Dtrmm.
// It must only be called with m, n > 0.
func trsmCheckLen(k, m, n int, a []float64, lda int, b []float64, ldb int) {
	if len(a) < lda*(k-1)+k {
		panic(shortA)
	}
	if len(b) < ldb*(m-1)+n {
		panic(shortB)
	}
}

// trsmZero sets the m×n matrix b to zero.
func trsmZero(m, n int, b []float64, ldb int) {
	for i := 0; i < m; i++ {
		clear(b[i*ldb : i*ldb+n])
	}
}

// trsmSplit returns the order of the leading block when a triangle of order
// n > trsmBase is split in two. Large splits are rounded up to a multiple of
// 8 so that the Dgemm updates work on whole register tiles.
func trsmSplit(n int) int {
	n1 := n / 2
	if n1 >= 16 {
		n1 = (n1 + 7) &^ 7
	}
	return n1
}

// trsmOpLower reports whether op(A) is lower triangular.
func trsmOpLower(ul blas.Uplo, tA blas.Transpose) bool {
	return (ul == blas.Lower) == (tA == blas.NoTrans)
}

// trsmGemmTrans returns the Dgemm transpose flag of A for the given tA:
// ConjTrans is Trans for real matrices.
func trsmGemmTrans(tA blas.Transpose) blas.Transpose {
	if tA == blas.NoTrans {
		return blas.NoTrans
	}
	return blas.Trans
}

// trsmCoupling returns the off-diagonal block of the triangle A split after
// its first k rows and columns, as stored in a: A21 (from row k) when A is
// lower, A12 (from column k) when A is upper. Whether op(A) is lower or
// upper, its off-diagonal block is this one, transposed when tA is (Dgemm's
// flag trsmGemmTrans(tA)), so the recursive steps of Dtrsm and Dtrmm, which
// differ in the order they finish the two halves, all take it from here.
func trsmCoupling(ul blas.Uplo, a []float64, lda, k int) []float64 {
	if ul == blas.Lower {
		return a[k*lda:]
	}
	return a[k:]
}

// Dtrsm solves one of the matrix equations
//
//	A * X = alpha * B   if tA == blas.NoTrans and side == blas.Left
//	Aᵀ * X = alpha * B  if tA == blas.Trans or blas.ConjTrans, and side == blas.Left
//	X * A = alpha * B   if tA == blas.NoTrans and side == blas.Right
//	X * Aᵀ = alpha * B  if tA == blas.Trans or blas.ConjTrans, and side == blas.Right
//
// where A is an n×n or m×m triangular matrix, X and B are m×n matrices, and
// alpha is a scalar. At entry b holds B; on return it holds X.
//
// The triangle is split recursively and the coupling blocks are applied with
// Dgemm. On backends with a gemm-trsm kernel (gemm.Backend.HasTrsmKernel),
// diagonal blocks of order up to 384 (from 32 for Side Left, 16 for Side
// Right) are solved by tiled loops around that kernel (see trsm_tiles.go);
// on the others, Side Left blocks of order 32 to 256 are solved by a fused
// loop whose coupling is one GEMM micro-kernel call per register tile (see
// trsm_fused.go). Smaller blocks, and all blocks with Side Right on the
// other backends, split down to order 16 and are solved by substitution.
// Only the triangle of A named by ul is read, and its diagonal is not read
// when d is blas.Unit. No check is made that A is invertible. Dtrsm panics
// on bad arguments exactly as gonum's Dtrsm does.
func (impl Implementation) Dtrsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
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
		if s == blas.Left {
			impl.trsmLeft(ul, tA, d, m, n, alpha, a, lda, b, ldb)
		} else {
			impl.trsmRight(ul, tA, d, m, n, alpha, a, lda, b, ldb)
		}
		return
	}
	trsmParallel(impl, false, s, ul, tA, d, m, n, k, alpha, a, lda, b, ldb)
}

// trsmParallel solves (mul false, Dtrsm) or multiplies (mul true, Dtrmm)
// with the triangle A of order k, splitting the right-hand sides (columns
// of b for Side Left, rows for Side Right) into independent chunks, one per
// goroutine of trsmThreads, each done with a single-threaded
// Implementation on the parallel worker pool. The arguments are those of
// Dtrsm and Dtrmm, already checked.
func trsmParallel(impl Implementation, mul bool, s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	rhs := n
	if s == blas.Right {
		rhs = m
	}
	t := trsmThreads(impl, s, m, n, k)
	task := trsmTasks.Get().(*trsmTask)
	*task = trsmTask{backend: impl.backend, mul: mul, s: s, ul: ul, tA: tA, d: d, m: m, n: n, rhs: rhs, t: t, alpha: alpha, a: a, lda: lda, b: b, ldb: ldb}
	parallel.For(t, t, task)
	*task = trsmTask{}
	trsmTasks.Put(task)
}

// trsmTask is the parallel section of a Dtrsm or Dtrmm call: iteration w
// handles the w-th of t chunks of the right-hand sides. Tasks are pooled so
// that parallel calls do not allocate.
type trsmTask struct {
	backend *gemm.Backend // the caller's micro-kernel backend
	mul     bool
	s       blas.Side
	ul      blas.Uplo
	tA      blas.Transpose
	d       blas.Diag
	m, n    int
	rhs, t  int
	alpha   float64
	a       []float64
	lda     int
	b       []float64
	ldb     int
}

var trsmTasks = sync.Pool{New: func() any { return new(trsmTask) }}

// chunkEnd returns the end of right-hand-side chunk w (its start is the
// end of chunk w−1, or 0). Inner boundaries are rounded up to whole tiles
// of 8; the ends never decrease, so some chunks may be empty.
func (tk *trsmTask) chunkEnd(w int) int {
	if w < 0 {
		return 0
	}
	hi := tk.rhs * (w + 1) / tk.t
	if w < tk.t-1 {
		hi = (hi + 7) &^ 7
	}
	return min(hi, tk.rhs)
}

// Run solves or multiplies chunk w of the right-hand sides.
func (tk *trsmTask) Run(w int) {
	lo, hi := tk.chunkEnd(w-1), tk.chunkEnd(w)
	if hi <= lo {
		return
	}
	m, n, b := tk.m, hi-lo, tk.b[lo:]
	if tk.s == blas.Right {
		m, n, b = hi-lo, tk.n, tk.b[lo*tk.ldb:]
	}
	serial := Implementation{Threads: 1, backend: tk.backend}
	switch {
	case tk.s == blas.Left && !tk.mul:
		serial.trsmLeft(tk.ul, tk.tA, tk.d, m, n, tk.alpha, tk.a, tk.lda, b, tk.ldb)
	case !tk.mul:
		serial.trsmRight(tk.ul, tk.tA, tk.d, m, n, tk.alpha, tk.a, tk.lda, b, tk.ldb)
	case tk.s == blas.Left && m >= trmmLeftBlockedMin:
		serial.trmmLeftBlocked(tk.ul, tk.tA, tk.d, m, n, tk.alpha, tk.a, tk.lda, b, tk.ldb)
	case tk.s == blas.Left:
		serial.trmmLeft(tk.ul, tk.tA, tk.d, m, n, tk.alpha, tk.a, tk.lda, b, tk.ldb)
	default:
		serial.trmmRight(tk.ul, tk.tA, tk.d, m, n, tk.alpha, tk.a, tk.lda, b, tk.ldb)
	}
}

// trsmThreads returns the number of goroutines trsmParallel uses for an
// m×n right-hand side and a triangle of order k (1 for a serial call).
func trsmThreads(impl Implementation, s blas.Side, m, n, k int) int {
	rhs := n
	if s == blas.Right {
		rhs = m
	}
	t := min(impl.threads(), rhs/trsmMinRHSPerThread)
	if t < 2 || k*k/2*rhs < trsmMinParallelWork {
		return 1
	}
	return t
}

// trsmLeft solves op(A) * X = alpha * B for the m×m triangle A, overwriting
// the m×n matrix b with X. alpha is non-zero.
func (impl Implementation) trsmLeft(ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	be := impl.KernelBackend()
	if be.HasTrsmKernel() && m >= trsmLeftTilesMin && m <= trsmTilesMax && n >= be.NR() {
		impl.trsmLeftTiles(ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	if m >= trsmFusedMin && m <= trsmFusedMax && n >= be.NR() {
		impl.trsmLeftFused(ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	if m <= trsmBase {
		trsmLeftKernel(ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	m1 := trsmSplit(m)
	m2 := m - m1
	a22 := a[m1*lda+m1:]
	b2 := b[m1*ldb:]
	tG := trsmGemmTrans(tA)
	if trsmOpLower(ul, tA) {
		// [op(A)11 0; op(A)21 op(A)22] [X1; X2] = alpha [B1; B2].
		impl.trsmLeft(ul, tA, d, m1, n, alpha, a, lda, b, ldb)
		// B2 := alpha*B2 - op(A)21*X1.
		a21 := trsmCoupling(ul, a, lda, m1)
		impl.Dgemm(tG, blas.NoTrans, m2, n, m1, -1, a21, lda, b, ldb, alpha, b2, ldb)
		impl.trsmLeft(ul, tA, d, m2, n, 1, a22, lda, b2, ldb)
		return
	}
	// [op(A)11 op(A)12; 0 op(A)22] [X1; X2] = alpha [B1; B2].
	impl.trsmLeft(ul, tA, d, m2, n, alpha, a22, lda, b2, ldb)
	// B1 := alpha*B1 - op(A)12*X2.
	a12 := trsmCoupling(ul, a, lda, m1)
	impl.Dgemm(tG, blas.NoTrans, m1, n, m2, -1, a12, lda, b2, ldb, alpha, b, ldb)
	impl.trsmLeft(ul, tA, d, m1, n, 1, a, lda, b, ldb)
}

// trsmRight solves X * op(A) = alpha * B for the n×n triangle A, overwriting
// the m×n matrix b with X. alpha is non-zero.
func (impl Implementation) trsmRight(ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	if be := impl.KernelBackend(); be.HasTrsmKernel() && n >= trsmRightTilesMin && n <= trsmTilesMax && m >= be.NR() {
		impl.trsmRightTiles(ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	if n <= trsmBase {
		trsmRightKernel(ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	n1 := trsmSplit(n)
	n2 := n - n1
	a22 := a[n1*lda+n1:]
	b2 := b[n1:]
	tG := trsmGemmTrans(tA)
	if !trsmOpLower(ul, tA) {
		// [X1 X2] [op(A)11 op(A)12; 0 op(A)22] = alpha [B1 B2].
		impl.trsmRight(ul, tA, d, m, n1, alpha, a, lda, b, ldb)
		// B2 := alpha*B2 - X1*op(A)12.
		a12 := trsmCoupling(ul, a, lda, n1)
		impl.Dgemm(blas.NoTrans, tG, m, n2, n1, -1, b, ldb, a12, lda, alpha, b2, ldb)
		impl.trsmRight(ul, tA, d, m, n2, 1, a22, lda, b2, ldb)
		return
	}
	// [X1 X2] [op(A)11 0; op(A)21 op(A)22] = alpha [B1 B2].
	impl.trsmRight(ul, tA, d, m, n2, alpha, a22, lda, b2, ldb)
	// B1 := alpha*B1 - X2*op(A)21.
	a21 := trsmCoupling(ul, a, lda, n1)
	impl.Dgemm(blas.NoTrans, tG, m, n1, n2, -1, b2, ldb, a21, lda, alpha, b, ldb)
	impl.trsmRight(ul, tA, d, m, n1, 1, a, lda, b, ldb)
}
