package chol

import (
	"sync"
	"sync/atomic"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/internal/parallel"
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
// for any number of goroutines. A ready task's priority is its upward rank:
// its own flops plus those of the longest chain of tasks that depend on it
// (the list-scheduling rule of HEFT). The longest chain runs through the
// next panels, so the next panel is factored while the rest of the
// previous update is still running (look-ahead), and long row chains start
// before short ones; that is what keeps both cores busy at the orders of
// the GP step.

// dagMin is the smallest order factored by the task graph when more than
// one goroutine is allowed; below it the recursive algorithm, whose BLAS
// calls are parallel themselves, is faster.
const dagMin = 512

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

// dagCholesky is the state of one task-graph factorization.
type dagCholesky struct {
	bi       blas.Implementation // one-thread kernels for every task
	lf       potrfLeaf
	n, nb, t int
	a        []float64
	lda      int

	mu      sync.Mutex
	wake    *sync.Cond
	events  atomic.Int64 // finished tasks and failures, for polling without mu
	ready   []dagTask
	waiting []int     // unmet dependencies, indexed by taskIndex
	rank    []float64 // upward rank in flops, indexed by taskIndex
	left    int       // tasks not yet finished
	pivot   int       // first failed pivot, −1 while none
	value   float64
}

// potrfDAG factors the order-n matrix in the lower triangle of a with the
// task graph on threads goroutines. The contract is potrfLower's, except
// that after a failure the rows and columns past the failing tile are
// updated only as far as the tasks that had started.
func potrfDAG(bi blas.Implementation, threads, n int, a []float64, lda int) (pivot int, value float64) {
	one := bi
	one.Threads = 1
	d := &dagCholesky{bi: one, n: n, nb: dagTile(n), a: a, lda: lda, pivot: -1}
	d.lf = potrfLeaf{be: tiledBackend(one)}
	if d.lf.be == nil {
		wp := leafPool.Get().(*[]float64)
		defer leafPool.Put(wp)
		d.lf.work = *wp
	}
	d.t = (n + d.nb - 1) / d.nb
	d.wake = sync.NewCond(&d.mu)
	d.initGraph()
	d.initRank()
	// Every participant runs tasks until the graph is done; one alone
	// runs them all, so the pool may start helpers late or not at all.
	workers := min(threads, d.t)
	parallel.For(workers, workers, d)
	return d.pivot, d.value
}

// Run is one participant of the factorization (parallel.Task).
func (d *dagCholesky) Run(int) { d.work() }

// taskIndex numbers the tasks: P(k) and S(i,k) share the slot of the
// lower-triangle position (i,k); U(i,k) has its own triangle after them.
func (d *dagCholesky) taskIndex(t dagTask) int {
	pos := t.i*(t.i+1)/2 + t.k
	if t.kind == taskUpdate {
		return d.t*(d.t+1)/2 + pos
	}
	return pos
}

// initGraph counts every task's dependencies and queues P(0).
func (d *dagCholesky) initGraph() {
	T := d.t
	d.waiting = make([]int, T*(T+1))
	for k := range T {
		if k > 0 {
			d.waiting[d.taskIndex(dagTask{taskFactor, k, k})] = 1 // U(k,k−1)
		}
		for i := k + 1; i < T; i++ {
			deps := 1 // P(k)
			if k > 0 {
				deps++ // U(i,k−1)
			}
			d.waiting[d.taskIndex(dagTask{taskSolve, i, k})] = deps
			deps = i - k // S(k+1..i, k)
			if k > 0 {
				deps++ // U(i,k−1)
			}
			d.waiting[d.taskIndex(dagTask{taskUpdate, i, k})] = deps
		}
	}
	d.left = T + T*(T-1)
	d.ready = []dagTask{{taskFactor, 0, 0}}
}

// work runs ready tasks until every task has finished or one has failed.
func (d *dagCholesky) work() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		for d.starved() {
			// Poll for a running task to finish before parking.
			seen := d.events.Load()
			d.mu.Unlock()
			finished := parallel.Poll(func() bool { return d.events.Load() != seen })
			d.mu.Lock()
			if !finished && d.starved() {
				d.wake.Wait()
			}
		}
		if d.left == 0 || d.pivot >= 0 {
			d.wake.Broadcast()
			return
		}
		best := 0
		for j, t := range d.ready {
			if d.before(t, d.ready[best]) {
				best = j
			}
		}
		t := d.ready[best]
		d.ready[best] = d.ready[len(d.ready)-1]
		d.ready = d.ready[:len(d.ready)-1]
		d.mu.Unlock()
		piv, val := d.run(t)
		d.mu.Lock()
		d.events.Add(1)
		if piv >= 0 {
			if d.pivot < 0 {
				d.pivot, d.value = piv, val
			}
			continue
		}
		d.finish(t)
	}
}

// starved reports whether a participant has nothing to run yet while tasks
// of others are still running. Called with mu held.
func (d *dagCholesky) starved() bool {
	return len(d.ready) == 0 && d.left > 0 && d.pivot < 0
}

// finish releases the dependents of the finished task t. Called with mu held.
func (d *dagCholesky) finish(t dagTask) {
	d.left--
	release := func(u dagTask) {
		j := d.taskIndex(u)
		d.waiting[j]--
		if d.waiting[j] == 0 {
			d.ready = append(d.ready, u)
			d.wake.Signal()
		}
	}
	d.successors(t, release)
	if d.left == 0 {
		d.wake.Broadcast()
	}
}

// successors calls f for every task that depends directly on t.
func (d *dagCholesky) successors(t dagTask, f func(dagTask)) {
	T, i, k := d.t, t.i, t.k
	switch t.kind {
	case taskFactor:
		for r := k + 1; r < T; r++ {
			f(dagTask{taskSolve, r, k})
		}
	case taskSolve:
		for r := i; r < T; r++ {
			f(dagTask{taskUpdate, r, k})
		}
	case taskUpdate:
		if i == k+1 {
			f(dagTask{taskFactor, i, i})
		} else {
			f(dagTask{taskSolve, i, k + 1})
			f(dagTask{taskUpdate, i, k + 1})
		}
	}
}

// flops returns the floating-point operations of task t, the cost the
// ranks are measured in.
func (d *dagCholesky) flops(t dagTask) float64 {
	i0, ni := d.rows(t.i)
	k0, nk := d.rows(t.k)
	m, k := float64(ni), float64(nk)
	switch t.kind {
	case taskFactor:
		return k * k * k / 3
	case taskSolve:
		return m * k * k
	}
	w := float64(i0 - k0 - nk) // columns left of the diagonal tile
	return 2*m*w*k + m*m*k
}

// initRank sets every task's upward rank: its flops plus the largest rank
// among its successors. Successors lie in later panels, or in the same
// panel further down the kinds P, S, U, so the tasks are visited from the
// last panel to the first and within a panel in the order U, S, P.
func (d *dagCholesky) initRank() {
	T := d.t
	d.rank = make([]float64, T*(T+1))
	set := func(t dagTask) {
		var next float64
		d.successors(t, func(u dagTask) { next = max(next, d.rank[d.taskIndex(u)]) })
		d.rank[d.taskIndex(t)] = d.flops(t) + next
	}
	for k := T - 1; k >= 0; k-- {
		for i := k + 1; i < T; i++ {
			set(dagTask{taskUpdate, i, k})
		}
		for i := T - 1; i > k; i-- {
			set(dagTask{taskSolve, i, k})
		}
		set(dagTask{taskFactor, k, k})
	}
}

// before reports whether the ready task t should run before u: the larger
// upward rank first; on a tie the earlier panel, then the kind P, S, U,
// then the upper row block.
func (d *dagCholesky) before(t, u dagTask) bool {
	if rt, ru := d.rank[d.taskIndex(t)], d.rank[d.taskIndex(u)]; rt != ru {
		return rt > ru
	}
	if t.k != u.k {
		return t.k < u.k
	}
	if t.kind != u.kind {
		return t.kind < u.kind
	}
	return t.i < u.i
}

// rows returns the first row of block i and its number of rows.
func (d *dagCholesky) rows(i int) (int, int) {
	r0 := i * d.nb
	return r0, min(d.nb, d.n-r0)
}

// run performs task t and returns a failed pivot (global index) or −1.
func (d *dagCholesky) run(t dagTask) (pivot int, value float64) {
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
