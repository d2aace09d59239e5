package chol

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/solvegp/solvegp/blas"
)

// TestCongruenceDAG checks the task-graph congruence against the recursive
// one (to rounding) and bit-identical results for every goroutine count, at
// orders crossing tile edges. The strict upper triangle may serve as the
// diagonal tiles' scratch (as in congruence) but must stay untouched
// outside them.
func TestCongruenceDAG(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 13))
	sizes, threadCounts := dagAdjointCases()
	for _, n := range sizes {
		l, ldl, w0, ldw := dagAdjointOperands(t, rng, n)
		want := append([]float64(nil), w0...)
		congruence(blas.Implementation{Threads: 1}, n, l, ldl, want, ldw, make([]float64, congruenceWork(n)))
		nb := newTiling(n).nb
		inDiagonalTile := func(i, j int) bool { return j < n && i/nb == j/nb }
		work := make([]float64, congruenceDAGWork(n))
		checkGoroutineRuns(t, fmt.Sprintf("n=%d", n), n, ldw, w0, want, upperGuard, 1e-9, threadCounts, inDiagonalTile,
			func(threads int, w []float64) { congruenceDAG(blas.Implementation{}, threads, n, l, ldl, w, ldw, work) })
	}
}

// TestCongruenceDAGGraph checks the congruence's task graph: a bijective
// numbering, the dependencies of the comment in congruence_dag.go, ranks by
// the longest chains, and flops adding up to the congruence's n³ (to
// within 2n², the lower-order terms).
func TestCongruenceDAGGraph(t *testing.T) {
	for _, n := range []int{256, 600, 1024, 1100} {
		d := newDAGCongruence(n, nil, n, nil, n)
		T := d.t
		preds := func(j int) int {
			u := d.tasks[j]
			below := T - u.k - 1 // row blocks below panel k
			first := u.i == u.k+1
			switch u.kind {
			case cngSolveX:
				return min(T-1-u.i, 1) // X(r+1,k)
			case cngOffDiag:
				if first {
					return 1 + below - 1 // X(k+1,k), S(i,k+1) for i > k+1
				}
				return 2 // X(k+1,k), S(r,k+1)
			case cngDiag:
				if first {
					return 2 // Uo(r,k), F(k+1)
				}
				return 1
			case cngSolve:
				return 1 // Ud(r,k)
			case cngGram:
				return max(below-1, 0) // Ud(r,k) for r > k+1
			}
			return 1 + min(below, 1) // Go(k), Ud(k+1,k)
		}
		nf := float64(n)
		checkGraph(t, fmt.Sprintf("n=%d", n), d, 2*T*T, func(j int) int { return d.number(d.tasks[j]) }, preds,
			T <= 5, nf*nf*nf, 2*nf*nf)
	}
}
