package chol

import (
	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/blas"
)

// The parallel Cholesky adjoint: adjointLower's recursion taken one panel
// of the factorization's tiles at a time, from the last, and run as a task
// graph. g holds L̄ in the lower convention on entry and is overwritten
// tile by tile with Ā. With S̄ the adjoint of the trailing matrix right of
// and below panel k, complete once the later panels are done, panel k
// computes
//
//	L̄[r,k] −= Σ_{j>k} (S̄ + S̄ᵀ)[r,j]·L[j,k]                    (r > k)
//	Ā[r,k]  = L̄[r,k]·L[k,k]⁻¹                                  (r > k)
//	L̄[k,k] −= tril(Σ_{r>k} Ā[r,k]ᵀ·L[r,k]);  Ā[k,k] = the tile's adjoint
//
// in the tasks
//
//	Uo(r,k)  the first sum over the tiles of row and column r of S̄ off its
//	         diagonal: S̄[r,j] for k < j < r, S̄[j,r]ᵀ for j > r
//	Ud(r,k)  its diagonal tile, (S̄[r,r] + S̄[r,r]ᵀ)·L[r,k] by Dsymm
//	S(r,k)   the solve
//	Go(k)    the last sum over the rows r > k+1
//	F(k)     its row k+1, then the adjoint of the diagonal tile
//
// Each row's chain Uo(r,k) → Ud(r,k) → S(r,k) → Uo(r,k−1) … runs on its
// own, and the tasks that wait for the diagonal tile's adjoint are split
// off from those that do not, so that the chain through the diagonal
// tiles, F(k+1) → Ud(k+1,k) → S(k+1,k) → F(k), is short: Uo(k+1,k) waits
// only for the solves of panel k+1 and runs beside F(k+1), Go(k) waits for
// the solves of panel k below row k+1 and runs beside the chain. The
// dependencies: S(i,k+1) for every i > k+1 → Uo(k+1,k); S(r,k+1) →
// Uo(r,k) for r > k+1 (the chain before it covers the rest of row and
// column r); Uo(r,k) → Ud(r,k); F(k+1) → Ud(k+1,k); Ud(r,k) → S(r,k);
// S(r,k) for r > k+1 → Go(k); Go(k) → F(k); S(k+1,k) → F(k). Every tile's
// arithmetic happens in the same order whatever the schedule, so the
// result is bit-identical for any number of goroutines.

// adjKind is the kind of an adjoint task.
type adjKind uint8

const (
	adjOffDiag adjKind = iota // Uo
	adjDiag                   // Ud
	adjSolve                  // S
	adjGemmt                  // Go
	adjFactor                 // F
)

// adjTask identifies one adjoint task: kind, panel k and row block i
// (i = k for Go and F).
type adjTask struct {
	kind adjKind
	i, k int
}

// dagAdjoint is the task graph of one adjoint (a taskGraph). Its tasks are
// numbered panel by panel from the last, and within panel k in the order
// Uo(k+1…T−1, k), Ud(k+1…T−1, k), S(k+1…T−1, k), Go(k), F(k).
type dagAdjoint struct {
	tiling
	bi       blas.Implementation // one-thread kernels for every task
	l, g     []float64
	ldl, ldg int
	work     []float64 // scratch of the tile adjoints, which run one at a time
	tasks    []adjTask // by number
}

// adjointDAG is adjointLower on threads goroutines. work must hold
// gemmtBase² elements.
func adjointDAG(bi blas.Implementation, threads, n int, l []float64, ldl int, g []float64, ldg int, work []float64) {
	one := bi
	one.Threads = 1
	d := newDAGAdjoint(n, l, ldl, g, ldg)
	d.bi, d.work = one, work
	newScheduler(d).runOn(threads)
}

// newDAGAdjoint returns the graph of the adjoint of an order-n factor l
// with L̄ in g (its kernels still to be set).
func newDAGAdjoint(n int, l []float64, ldl int, g []float64, ldg int) *dagAdjoint {
	d := &dagAdjoint{tiling: newTiling(n), l: l, ldl: ldl, g: g, ldg: ldg}
	for k := d.t - 1; k >= 0; k-- {
		for _, kind := range []adjKind{adjOffDiag, adjDiag, adjSolve} {
			for r := k + 1; r < d.t; r++ {
				d.tasks = append(d.tasks, adjTask{kind, r, k})
			}
		}
		d.tasks = append(d.tasks, adjTask{adjGemmt, k, k}, adjTask{adjFactor, k, k})
	}
	return d
}

func (d *dagAdjoint) size() int { return len(d.tasks) }

// number returns the number of task t: panel k starts after the
// 3(T−k'−1)+2 tasks of each later panel k'.
func (d *dagAdjoint) number(t adjTask) int {
	m := d.t - t.k - 1 // row blocks below the panel's diagonal tile
	base := 3*m*(m-1)/2 + 2*m
	switch t.kind {
	case adjGemmt:
		return base + 3*m
	case adjFactor:
		return base + 3*m + 1
	}
	return base + int(t.kind)*m + t.i - t.k - 1
}

// successors calls f for every task that depends directly on task number
// t (see the dependencies above).
func (d *dagAdjoint) successors(t int, f func(int)) {
	u := d.tasks[t]
	r, k := u.i, u.k
	g := func(kind adjKind, i, k int) { f(d.number(adjTask{kind, i, k})) }
	switch u.kind {
	case adjOffDiag:
		g(adjDiag, r, k)
	case adjDiag:
		g(adjSolve, r, k)
	case adjSolve:
		if r > k+1 {
			g(adjGemmt, k, k)
		} else {
			g(adjFactor, k, k)
		}
		if k > 0 {
			g(adjOffDiag, r, k-1) // row r's chain
			g(adjOffDiag, k, k-1) // which reads all of column k
		}
	case adjGemmt:
		g(adjFactor, k, k)
	case adjFactor:
		if k > 0 {
			g(adjDiag, k, k-1)
		}
	}
}

// flops returns the floating-point operations of task number t.
func (d *dagAdjoint) flops(t int) float64 {
	u := d.tasks[t]
	offDiag, diag, solve := d.rowFlops(u.i, u.k)
	k, trailing, next := d.panelSizes(u.k)
	switch u.kind {
	case adjOffDiag:
		return offDiag
	case adjDiag:
		return diag
	case adjSolve:
		return solve
	case adjGemmt:
		return k * (k + 1) * max(trailing-next, 0)
	}
	return k*(k+1)*min(trailing, next) + 2*k*k*k/3
}

// run performs task number t.
func (d *dagAdjoint) run(num int) (pivot int, value float64) {
	t := d.tasks[num]
	bi, l, ldl, g, ldg := d.bi, d.l, d.ldl, d.g, d.ldg
	r0, nr := d.rows(t.i)
	k0, nk := d.rows(t.k)
	j0 := k0 + nk // the first row and column after the panel
	switch t.kind {
	case adjOffDiag:
		d.offDiagonalProduct(bi, t.i, t.k, g, ldg, l, ldl)
	case adjDiag:
		// S̄[r,r] + S̄[r,r]ᵀ: the lower triangle with its diagonal doubled.
		diag := g[r0*ldg+r0:]
		scaleDiagonal(nr, 2, diag, ldg)
		d.diagonalProduct(bi, t.i, t.k, g, ldg, l, ldl)
		scaleDiagonal(nr, 0.5, diag, ldg)
	case adjSolve:
		d.rightSolve(bi, t.i, t.k, g, ldg, l, ldl)
	case adjGemmt:
		if j0 < d.n {
			h0 := j0 + min(d.nb, d.n-j0) // below block k+1
			if h0 < d.n {
				bi.Dgemmt(gblas.Lower, gblas.Trans, gblas.NoTrans, nk, d.n-h0, -1, g[h0*ldg+k0:], ldg, l[h0*ldl+k0:], ldl, 1, g[k0*ldg+k0:], ldg)
			}
		}
	case adjFactor:
		if j0 < d.n {
			n1 := min(d.nb, d.n-j0)
			bi.Dgemmt(gblas.Lower, gblas.Trans, gblas.NoTrans, nk, n1, -1, g[j0*ldg+k0:], ldg, l[j0*ldl+k0:], ldl, 1, g[k0*ldg+k0:], ldg)
		}
		adjointLower(bi, nk, l[k0*ldl+k0:], ldl, g[k0*ldg+k0:], ldg, d.work)
	}
	return -1, 0
}

// scaleDiagonal multiplies the diagonal of the order-n matrix a by s.
func scaleDiagonal(n int, s float64, a []float64, lda int) {
	for i := 0; i < n; i++ {
		a[i*lda+i] *= s
	}
}
