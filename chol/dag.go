package chol

import (
	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/blas"
)

// The parallel factorization: a right-looking tiled Cholesky run as a task
// graph, so that no goroutine waits for a whole step to finish. The matrix
// is cut into T×T tiles of order nb (the last ones smaller); with panel k
// the tasks are
//
//	P(k)    factor the diagonal tile: L[k,k] = chol(A[k,k])
//	S(i,k)  solve the tile below it: L[i,k] = A[i,k]·L[k,k]⁻ᵀ      (i > k)
//	U(i,k)  update row block i right of panel k and up to its diagonal:
//	        A[i,j] −= L[i,k]·L[j,k]ᵀ for k < j ≤ i                  (i > k)
//
// with the dependencies P(k) → S(i,k); S(j,k) for j ≤ i → U(i,k);
// U(i,k−1) → U(i,k) (each tile receives its updates in the order
// k = 0, 1, …); U(k+1,k) → P(k+1); U(i,k) → S(i,k+1). Each task runs on one
// goroutine with one-thread kernels, and every tile's arithmetic happens
// in the same order whatever the schedule, so the result is bit-identical
// for any number of goroutines. The scheduler (taskgraph.go) runs ready
// tasks by upward rank, so the next panel is factored while the rest of
// the previous update is still running (look-ahead), and long row chains
// start before short ones; that is what keeps both cores busy at the
// orders of the GP step.

// dagMin is the smallest order factored by the task graph when more than
// one goroutine is allowed; below it the recursive algorithm, whose BLAS
// calls are parallel themselves, is faster.
const dagMin = 512

// dagGoroutines returns the goroutines on which a task graph (the
// factorization's, the adjoint's or the congruence's) runs an order-n
// operation with budget bi, or 1 when the recursive algorithm is to run
// instead: with one goroutine, or below dagMin.
func dagGoroutines(bi blas.Implementation, n int) int {
	if threads := goroutines(bi); threads > 1 && n >= dagMin {
		return threads
	}
	return 1
}

// dagTile returns the tile order for an order-n factorization: about n/5,
// a multiple of 32 in [128, 256], so there are enough tasks to balance the
// goroutines while each kernel call stays large enough to run near the
// GEMM rate. On two cores of a Zen 5, n = 1024 ran at 82–97 GFLOP/s with
// tiles of 128 and 93–117 with tiles of 192 (256: 80–81). On a Zen 4, in
// one process alternating the tile orders: n = 1024 ran at 57–62 (128),
// 67–70 (192) and 64–68 (256); n = 2048 at 69–71 (128), 74–81 (192) and
// 82–85 (256).
func dagTile(n int) int {
	return min(max(n/5/32*32, 128), 256)
}

// tiling cuts an order-n matrix into t×t tiles of order nb, the last row
// and column of tiles smaller when nb does not divide n.
type tiling struct {
	n, nb, t int
}

// newTiling returns the tiling of the task graphs for order n.
func newTiling(n int) tiling {
	nb := dagTile(n)
	return tiling{n: n, nb: nb, t: (n + nb - 1) / nb}
}

// rows returns the first row of block i and its number of rows.
func (tl tiling) rows(i int) (int, int) {
	r0 := i * tl.nb
	return r0, min(tl.nb, tl.n-r0)
}

// offDiagonalProduct subtracts from tile (r,k) of s the products of the
// tiles of row and column r of the symmetric matrix right of and below
// panel k, whose lower triangle s holds, off its diagonal tile, with
// column k of L: S[r,j]·L[j,k] for k < j < r and S[j,r]ᵀ·L[j,k] for j > r
// (the adjoint's and the congruence's update of a row from the trailing
// result).
func (tl tiling) offDiagonalProduct(bi blas.Implementation, r, k int, s []float64, lds int, l []float64, ldl int) {
	r0, nr := tl.rows(r)
	k0, nk := tl.rows(k)
	j0 := k0 + nk // the first row and column after the panel
	c := s[r0*lds+k0:]
	if r0 > j0 {
		bi.Dgemm(gblas.NoTrans, gblas.NoTrans, nr, nk, r0-j0, -1, s[r0*lds+j0:], lds, l[j0*ldl+k0:], ldl, 1, c, lds)
	}
	if h0 := r0 + nr; h0 < tl.n {
		bi.Dgemm(gblas.Trans, gblas.NoTrans, nr, nk, tl.n-h0, -1, s[h0*lds+r0:], lds, l[h0*ldl+k0:], ldl, 1, c, lds)
	}
}

// diagonalProduct subtracts from tile (r,k) of s the product of the
// symmetric diagonal tile (r,r), lower triangle in s, with L[r,k].
func (tl tiling) diagonalProduct(bi blas.Implementation, r, k int, s []float64, lds int, l []float64, ldl int) {
	r0, nr := tl.rows(r)
	k0, nk := tl.rows(k)
	bi.Dsymm(gblas.Left, gblas.Lower, nr, nk, -1, s[r0*lds+r0:], lds, l[r0*ldl+k0:], ldl, 1, s[r0*lds+k0:], lds)
}

// rightSolve overwrites tile (r,k) of s with its product with L[k,k]⁻¹.
func (tl tiling) rightSolve(bi blas.Implementation, r, k int, s []float64, lds int, l []float64, ldl int) {
	r0, nr := tl.rows(r)
	k0, nk := tl.rows(k)
	bi.Dtrsm(gblas.Right, gblas.Lower, gblas.NoTrans, gblas.NonUnit, nr, nk, 1, l[k0*ldl+k0:], ldl, s[r0*lds+k0:], lds)
}

// rowFlops returns the flops of the three operations above for row block r
// of panel k: offDiagonalProduct, diagonalProduct and rightSolve.
func (tl tiling) rowFlops(r, k int) (offDiag, diag, solve float64) {
	_, nr := tl.rows(r)
	k0, nk := tl.rows(k)
	m, kk := float64(nr), float64(nk)
	trailing := float64(tl.n - k0 - nk) // rows and columns after the panel
	return 2 * m * kk * (trailing - m), 2 * m * m * kk, m * kk * kk
}

// panelSizes returns, for the flop counts of panel k's own tasks, its
// order, the rows after it and the rows of the block after it (of the
// panel itself when it is the last).
func (tl tiling) panelSizes(k int) (nk, trailing, next float64) {
	k0, n := tl.rows(k)
	_, n1 := tl.rows(min(k+1, tl.t-1))
	return float64(n), float64(tl.n - k0 - n), float64(n1)
}

type dagKind uint8

const (
	taskFactor dagKind = iota
	taskSolve
	taskUpdate
)

// dagTask identifies one task: kind, panel k and row block i (i = k for P).
type dagTask struct {
	kind dagKind
	i, k int
}

// dagCholesky is the task graph of one factorization (a taskGraph). Its
// tasks are numbered panel by panel, and within panel k in the order P(k),
// S(k+1…T−1, k), U(k+1…T−1, k), which is the scheduler's order among tasks
// of equal rank.
type dagCholesky struct {
	tiling
	bi    blas.Implementation // one-thread kernels for every task
	lf    potrfLeaf
	a     []float64
	lda   int
	tasks []dagTask // by number
}

// potrfDAG factors the order-n matrix in the lower triangle of a with the
// task graph on threads goroutines. The contract is potrfLower's, except
// that after a failure the rows and columns past the failing tile are
// updated only as far as the tasks that had started.
func potrfDAG(bi blas.Implementation, threads, n int, a []float64, lda int) (pivot int, value float64) {
	one := bi
	one.Threads = 1
	d := newDAGCholesky(n, a, lda)
	d.bi = one
	d.lf = potrfLeaf{be: tiledBackend(one)}
	if d.lf.be == nil {
		wp := leafPool.Get().(*[]float64)
		defer leafPool.Put(wp)
		d.lf.work = *wp
	}
	return newScheduler(d).runOn(threads)
}

// newDAGCholesky returns the graph of an order-n factorization of a (its
// kernels still to be set).
func newDAGCholesky(n int, a []float64, lda int) *dagCholesky {
	d := &dagCholesky{tiling: newTiling(n), a: a, lda: lda}
	d.tasks = make([]dagTask, 0, d.t*d.t)
	for k := range d.t {
		d.tasks = append(d.tasks, dagTask{taskFactor, k, k})
		for i := k + 1; i < d.t; i++ {
			d.tasks = append(d.tasks, dagTask{taskSolve, i, k})
		}
		for i := k + 1; i < d.t; i++ {
			d.tasks = append(d.tasks, dagTask{taskUpdate, i, k})
		}
	}
	return d
}

func (d *dagCholesky) size() int { return len(d.tasks) }

// number returns the number of task t: panel k starts after the
// 2(T−k')−1 tasks of each panel k' < k.
func (d *dagCholesky) number(t dagTask) int {
	T, k := d.t, t.k
	base := 2*T*k - k*k
	switch t.kind {
	case taskFactor:
		return base
	case taskSolve:
		return base + t.i - k
	}
	return base + T - k - 1 + t.i - k
}

// successors calls f for every task that depends directly on task number
// t: P(k) → S(i,k); S(j,k) → U(i,k) for i ≥ j (U(i,k) reads L[j,k] for
// every j ≤ i); U(i,k) → U(i,k+1) (each tile receives its updates in the
// order k = 0, 1, …) and → S(i,k+1), or → P(k+1) when i = k+1.
func (d *dagCholesky) successors(t int, f func(int)) {
	u := d.tasks[t]
	T, i, k := d.t, u.i, u.k
	g := func(kind dagKind, i, k int) { f(d.number(dagTask{kind, i, k})) }
	switch u.kind {
	case taskFactor:
		for r := k + 1; r < T; r++ {
			g(taskSolve, r, k)
		}
	case taskSolve:
		for r := i; r < T; r++ {
			g(taskUpdate, r, k)
		}
	case taskUpdate:
		if i == k+1 {
			g(taskFactor, i, i)
		} else {
			g(taskSolve, i, k+1)
			g(taskUpdate, i, k+1)
		}
	}
}

// flops returns the floating-point operations of task number t.
func (d *dagCholesky) flops(t int) float64 {
	u := d.tasks[t]
	i0, ni := d.rows(u.i)
	k0, nk := d.rows(u.k)
	m, k := float64(ni), float64(nk)
	switch u.kind {
	case taskFactor:
		return k * k * k / 3
	case taskSolve:
		return m * k * k
	}
	w := float64(i0 - k0 - nk) // columns left of the diagonal tile
	return 2*m*w*k + m*m*k
}

// run performs task number t and returns a failed pivot (global index)
// or −1.
func (d *dagCholesky) run(n int) (pivot int, value float64) {
	t := d.tasks[n]
	a, lda := d.a, d.lda
	i0, ni := d.rows(t.i)
	k0, nk := d.rows(t.k)
	switch t.kind {
	case taskFactor:
		p, v := potrfRecLower(d.bi, &d.lf, nk, a[k0*lda+k0:], lda)
		if p >= 0 {
			return k0 + p, v
		}
	case taskSolve:
		d.bi.Dtrsm(gblas.Right, gblas.Lower, gblas.Trans, gblas.NonUnit, ni, nk, 1,
			a[k0*lda+k0:], lda, a[i0*lda+k0:], lda)
	case taskUpdate:
		// The rectangle left of the diagonal tile and that tile's lower
		// triangle in one call, which packs L[i,k] once.
		j0 := k0 + nk // first column right of panel k
		w := i0 - j0
		d.bi.DgemmTrapezoid(gblas.Lower, gblas.NoTrans, gblas.Trans, ni, w+ni, nk, w, -1,
			a[i0*lda+k0:], lda, a[j0*lda+k0:], lda, 1, a[i0*lda+j0:], lda)
	}
	return -1, 0
}
