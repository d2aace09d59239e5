package chol

import (
	"fmt"
	"math"
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
	sizes, threadCounts := []int{100, 256, 300, 513, 700}, []int{1, 2, 3, 5}
	if testing.Short() { // the arm64 run under qemu
		sizes, threadCounts = []int{100, 513}, []int{1, 3}
	}
	for _, n := range sizes {
		ldl, ldw := n+1, n+3
		l := dagSPD(rng, n, ldl)
		if p, _ := potrfRecLower(blas.Implementation{Threads: 1}, referenceLeaf(), n, l, ldl); p >= 0 {
			t.Fatalf("n=%d: factorization failed at %d", n, p)
		}
		w0 := make([]float64, n*ldw)
		for i := range n {
			for j := 0; j < ldw; j++ {
				w0[i*ldw+j] = 54321 // guard: strict upper triangle and padding
				if j <= i {
					w0[i*ldw+j] = rng.NormFloat64()
				}
			}
		}
		want := append([]float64(nil), w0...)
		congruence(blas.Implementation{Threads: 1}, n, l, ldl, want, ldw, make([]float64, congruenceWork(n)))
		nb := newTiling(n).nb
		var first []float64
		for _, threads := range threadCounts {
			got := append([]float64(nil), w0...)
			congruenceDAG(blas.Implementation{}, threads, n, l, ldl, got, ldw, make([]float64, congruenceDAGWork(n)))
			for i := range n {
				for j := 0; j < ldw; j++ {
					g, w := got[i*ldw+j], want[i*ldw+j]
					if j > i {
						if (j >= n || i/nb != j/nb) && g != 54321 {
							t.Fatalf("n=%d threads=%d: upper/padding (%d,%d) = %v", n, threads, i, j, g)
						}
						continue
					}
					if math.Abs(g-w) > 1e-9*(1+math.Abs(w)) {
						t.Fatalf("n=%d threads=%d: C[%d,%d] = %v, recursive %v", n, threads, i, j, g, w)
					}
				}
			}
			if first == nil {
				first = got
				continue
			}
			for j := range got {
				if math.Float64bits(got[j]) != math.Float64bits(first[j]) {
					t.Fatalf("n=%d: %d goroutines differ from one at %d: %v vs %v", n, threads, j, got[j], first[j])
				}
			}
		}
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
		if want := 2 * T * T; d.size() != want {
			t.Fatalf("n=%d: %d tasks, want %d", n, d.size(), want)
		}
		for j, u := range d.tasks {
			if d.number(u) != j {
				t.Fatalf("n=%d: task %v numbered %d, listed at %d", n, u, d.number(u), j)
			}
		}
		preds := func(u cngTask) int {
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
		s := newScheduler(d)
		for j, u := range d.tasks {
			if s.waiting[j] != preds(u) {
				t.Errorf("n=%d: %v waits for %d tasks, want %d", n, u, s.waiting[j], preds(u))
			}
		}
		checkRanks(t, fmt.Sprintf("n=%d", n), d, s, T <= 5)
		var sum float64
		for j := range d.size() {
			sum += d.flops(j)
		}
		nf := float64(n)
		if total := nf * nf * nf; math.Abs(sum-total) > 2*nf*nf {
			t.Errorf("n=%d: tasks add up to %v flops, want about %v (%v off)", n, sum, total, sum-total)
		}
	}
}
