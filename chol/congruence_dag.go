package chol

import (
	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/blas"
)

// The parallel congruence: congruence's recursion taken one panel of the
// factorization's tiles at a time, from the last, and run as a task graph.
// w holds the symmetric W (lower triangle) on entry and is overwritten tile
// by tile with C = L⁻ᵀ·W·L⁻¹. With C22 the result for the trailing matrix
// right of and below panel k, complete once the later panels are done,
// and L21, W21 the tiles of column k below the diagonal, panel k computes
// (see congruence)
//
//	X   = L22⁻ᵀ·W21                      (needs no result: any time)
//	V   = X − C22·L21,  C21 = V·L11⁻¹
//	Z   = ½(X + V),  W11 −= tril(L21ᵀ·Z + Zᵀ·L21),  C11 = L11⁻ᵀ·W11·L11⁻¹
//
// X, then Z, is kept in scratch beside w (every panel's, as all of them
// may be computed early); V and then C21 take W21's place. The tasks:
//
//	X(r,k)   one step of the back substitution for X: row block r, from
//	         the rows of X below it
//	Uo(r,k)  V[r] = X[r] − the tiles of row and column r of C22 off its
//	         diagonal times L21
//	Ud(r,k)  V[r] −= C22[r,r]·L[r,k] (Dsymm); Z[r] = ½(X[r] + V[r])
//	S(r,k)   C21[r] = V[r]·L11⁻¹
//	Go(k)    W11 −= tril(L21ᵀ·Z + Zᵀ·L21) over the rows r > k+1
//	F(k)     the same for row k+1; C11 by congruence
//
// with the dependencies X(r+1,k) → X(r,k); X(k+1,k) → Uo(r,k) (every row
// of X is read by the rows above it, so none becomes Z before all are
// done); S(i,k+1) for every i > k+1 → Uo(k+1,k); S(r,k+1) → Uo(r,k) for
// r > k+1; Uo(r,k) → Ud(r,k); F(k+1) → Ud(k+1,k); Ud(r,k) → S(r,k);
// Ud(r,k) for r > k+1 → Go(k); Go(k) → F(k); Ud(k+1,k) → F(k). The back
// substitutions need none of the results and fill idle time; the rest has
// the shape of the adjoint's graph (adjoint_dag.go), with the chain through
// the diagonal tiles F(k+1) → Ud(k+1,k) → F(k) shorter still. Every tile's
// arithmetic happens in the same order whatever the schedule, so the
// result is bit-identical for any number of goroutines.

// cngKind is the kind of a congruence task.
type cngKind uint8

const (
	cngSolveX  cngKind = iota // X
	cngOffDiag                // Uo
	cngDiag                   // Ud
	cngSolve                  // S
	cngGram                   // Go
	cngFactor                 // F
)

// cngTask identifies one congruence task: kind, panel k and row block i
// (i = k for Go and F).
type cngTask struct {
	kind cngKind
	i, k int
}

// dagCongruence is the task graph of one congruence (a taskGraph). Its
// tasks are numbered panel by panel from the last, and within panel k in
// the order X, Uo, Ud, S (rows k+1 … T−1 for each), Go, F.
type dagCongruence struct {
	tiling
	bi       blas.Implementation // one-thread kernels for every task
	l, w     []float64
	ldl, ldw int
	x        []float64 // X, then Z, of every panel: rows after it × its columns
	xOff     []int     // where panel k's starts in x
	work     []float64 // scratch of the tile congruences, which run one at a time
	tasks    []cngTask // by number
}

// congruenceDAGWork returns the scratch size congruenceDAG needs for
// order n: X of every panel and the tile congruences' scratch.
func congruenceDAGWork(n int) int {
	tl := newTiling(n)
	return xOffsets(tl)[tl.t] + congruenceWork(tl.nb)
}

// xOffsets returns where each panel's X starts in the scratch (the rows
// after the panel times its columns, panel after panel), and its end.
func xOffsets(tl tiling) []int {
	off := make([]int, tl.t+1)
	for k := range tl.t {
		k0, nk := tl.rows(k)
		off[k+1] = off[k] + (tl.n-k0-nk)*nk
	}
	return off
}

// congruenceDAG is congruence on threads goroutines. work must hold
// congruenceDAGWork(n) elements.
func congruenceDAG(bi blas.Implementation, threads, n int, l []float64, ldl int, w []float64, ldw int, work []float64) {
	one := bi
	one.Threads = 1
	d := newDAGCongruence(n, l, ldl, w, ldw)
	d.bi = one
	x := d.xOff[d.t]
	d.x, d.work = work[:x], work[x:x+congruenceWork(d.nb)]
	newScheduler(d).runOn(threads)
}

// newDAGCongruence returns the graph of the congruence of w by the
// order-n factor l (its kernels and scratch still to be set).
func newDAGCongruence(n int, l []float64, ldl int, w []float64, ldw int) *dagCongruence {
	d := &dagCongruence{tiling: newTiling(n), l: l, ldl: ldl, w: w, ldw: ldw}
	d.xOff = xOffsets(d.tiling)
	for k := d.t - 1; k >= 0; k-- {
		for _, kind := range []cngKind{cngSolveX, cngOffDiag, cngDiag, cngSolve} {
			for r := k + 1; r < d.t; r++ {
				d.tasks = append(d.tasks, cngTask{kind, r, k})
			}
		}
		d.tasks = append(d.tasks, cngTask{cngGram, k, k}, cngTask{cngFactor, k, k})
	}
	return d
}

func (d *dagCongruence) size() int { return len(d.tasks) }

// number returns the number of task t: panel k starts after the
// 4(T−k'−1)+2 tasks of each later panel k', 2(T−k−1)² in all.
func (d *dagCongruence) number(t cngTask) int {
	m := d.t - t.k - 1 // row blocks below the panel's diagonal tile
	base := 2 * m * m
	switch t.kind {
	case cngGram:
		return base + 4*m
	case cngFactor:
		return base + 4*m + 1
	}
	return base + int(t.kind)*m + t.i - t.k - 1
}

// successors calls f for every task that depends directly on task number
// t (see the dependencies above).
func (d *dagCongruence) successors(t int, f func(int)) {
	u := d.tasks[t]
	r, k := u.i, u.k
	g := func(kind cngKind, i, k int) { f(d.number(cngTask{kind, i, k})) }
	switch u.kind {
	case cngSolveX:
		if r > k+1 {
			g(cngSolveX, r-1, k)
			break
		}
		// X is complete: Ud may now turn it into Z, row by row.
		for i := k + 1; i < d.t; i++ {
			g(cngOffDiag, i, k)
		}
	case cngOffDiag:
		g(cngDiag, r, k)
	case cngDiag:
		g(cngSolve, r, k)
		if r > k+1 {
			g(cngGram, k, k)
		} else {
			g(cngFactor, k, k)
		}
	case cngSolve:
		if k > 0 {
			g(cngOffDiag, r, k-1) // row r's chain
			g(cngOffDiag, k, k-1) // which reads all of column k
		}
	case cngGram:
		g(cngFactor, k, k)
	case cngFactor:
		if k > 0 {
			g(cngDiag, k, k-1)
		}
	}
}

// flops returns the floating-point operations of task number t.
func (d *dagCongruence) flops(t int) float64 {
	u := d.tasks[t]
	offDiag, diag, solve := d.rowFlops(u.i, u.k)
	k, trailing, next := d.panelSizes(u.k)
	switch u.kind {
	case cngSolveX:
		r0, nr := d.rows(u.i)
		m := float64(nr)
		return 2*m*k*float64(d.n-r0-nr) + m*m*k
	case cngOffDiag:
		return offDiag
	case cngDiag:
		return diag
	case cngSolve:
		return solve
	case cngGram:
		return 2 * k * (k + 1) * max(trailing-next, 0)
	}
	return 2*k*(k+1)*min(trailing, next) + k*k*k
}

// xRows returns panel k's X (or Z) from the first row of block r on, with
// its leading dimension.
func (d *dagCongruence) xRows(r, k int) ([]float64, int) {
	r0, _ := d.rows(r)
	k0, nk := d.rows(k)
	return d.x[d.xOff[k]+(r0-k0-nk)*nk : d.xOff[k+1]], nk
}

// run performs task number t.
func (d *dagCongruence) run(num int) (pivot int, value float64) {
	t := d.tasks[num]
	bi, l, ldl, w, ldw := d.bi, d.l, d.ldl, d.w, d.ldw
	r0, nr := d.rows(t.i)
	k0, nk := d.rows(t.k)
	switch t.kind {
	case cngSolveX:
		x, ldx := d.xRows(t.i, t.k)
		for i := range nr {
			copy(x[i*ldx:i*ldx+nk], w[(r0+i)*ldw+k0:(r0+i)*ldw+k0+nk])
		}
		if h0 := r0 + nr; h0 < d.n {
			below, _ := d.xRows(t.i+1, t.k)
			bi.Dgemm(gblas.Trans, gblas.NoTrans, nr, nk, d.n-h0, -1, l[h0*ldl+r0:], ldl, below, ldx, 1, x, ldx)
		}
		bi.Dtrsm(gblas.Left, gblas.Lower, gblas.Trans, gblas.NonUnit, nr, nk, 1, l[r0*ldl+r0:], ldl, x, ldx)
	case cngOffDiag:
		x, ldx := d.xRows(t.i, t.k)
		v := w[r0*ldw+k0:]
		for i := range nr {
			copy(v[i*ldw:i*ldw+nk], x[i*ldx:i*ldx+nk])
		}
		d.offDiagonalProduct(bi, t.i, t.k, w, ldw, l, ldl)
	case cngDiag:
		d.diagonalProduct(bi, t.i, t.k, w, ldw, l, ldl)
		v := w[r0*ldw+k0:]
		x, ldx := d.xRows(t.i, t.k)
		for i := range nr {
			xi, vi := x[i*ldx:i*ldx+nk], v[i*ldw:i*ldw+nk]
			for j := range xi {
				xi[j] = 0.5 * (xi[j] + vi[j])
			}
		}
	case cngSolve:
		d.rightSolve(bi, t.i, t.k, w, ldw, l, ldl)
	case cngGram:
		if t.k+2 < d.t {
			d.gram(t.k+2, d.t, t.k)
		}
	case cngFactor:
		if t.k+1 < d.t {
			d.gram(t.k+1, t.k+2, t.k)
		}
		congruence(bi, nk, l[k0*ldl+k0:], ldl, w[k0*ldw+k0:], ldw, d.work)
	}
	return -1, 0
}

// gram subtracts tril(L21ᵀ·Z + Zᵀ·L21) over row blocks r0 … r1−1 of panel
// k from W11.
func (d *dagCongruence) gram(r0, r1, k int) {
	bi, l, ldl, w, ldw := d.bi, d.l, d.ldl, d.w, d.ldw
	k0, nk := d.rows(k)
	i0, _ := d.rows(r0)
	i1 := min(r1*d.nb, d.n)
	z, ldz := d.xRows(r0, k)
	l21 := l[i0*ldl+k0:]
	w11 := w[k0*ldw+k0:]
	bi.Dgemmt(gblas.Lower, gblas.Trans, gblas.NoTrans, nk, i1-i0, -1, l21, ldl, z, ldz, 1, w11, ldw)
	bi.Dgemmt(gblas.Lower, gblas.Trans, gblas.NoTrans, nk, i1-i0, -1, z, ldz, l21, ldl, 1, w11, ldw)
}
