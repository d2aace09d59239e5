package chol

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/solvegp/solvegp/blas"
)

// TestAdjointDAG checks the task-graph adjoint against the recursive one
// (to rounding), bit-identical results for every goroutine count, and an
// untouched strict upper triangle, at orders crossing tile edges.
func TestAdjointDAG(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 11))
	sizes, threadCounts := []int{100, 256, 300, 513, 700}, []int{1, 2, 3, 5}
	if testing.Short() { // the arm64 run under qemu
		sizes, threadCounts = []int{100, 513}, []int{1, 3}
	}
	for _, n := range sizes {
		ldl, ldg := n+1, n+3
		l := dagSPD(rng, n, ldl)
		if p, _ := potrfRecLower(blas.Implementation{Threads: 1}, referenceLeaf(), n, l, ldl); p >= 0 {
			t.Fatalf("n=%d: factorization failed at %d", n, p)
		}
		g0 := make([]float64, n*ldg)
		for i := range n {
			for j := 0; j < ldg; j++ {
				g0[i*ldg+j] = 54321 // guard: strict upper triangle and padding
				if j <= i {
					g0[i*ldg+j] = rng.NormFloat64()
				}
			}
		}
		want := append([]float64(nil), g0...)
		work := make([]float64, gemmtBase*gemmtBase)
		adjointLower(blas.Implementation{Threads: 1}, n, l, ldl, want, ldg, work)
		var first []float64
		for _, threads := range threadCounts {
			got := append([]float64(nil), g0...)
			adjointDAG(blas.Implementation{}, threads, n, l, ldl, got, ldg, work)
			for i := range n {
				for j := 0; j < ldg; j++ {
					g, w := got[i*ldg+j], want[i*ldg+j]
					if j > i {
						if g != 54321 {
							t.Fatalf("n=%d threads=%d: upper/padding (%d,%d) = %v", n, threads, i, j, g)
						}
						continue
					}
					if math.Abs(g-w) > 1e-10*(1+math.Abs(w)) {
						t.Fatalf("n=%d threads=%d: Ā[%d,%d] = %v, recursive %v", n, threads, i, j, g, w)
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

// TestAdjointDAGGraph checks the adjoint's task graph as TestDAGGraph the
// factorization's: a bijective numbering, the dependencies of the comment
// in adjoint_dag.go, ranks by the longest chains, and flops adding up to
// the adjoint's 2n³/3 (to within n², the lower-order terms).
func TestAdjointDAGGraph(t *testing.T) {
	for _, n := range []int{256, 600, 1024, 1100} {
		d := newDAGAdjoint(n, nil, n, nil, n)
		T := d.t
		if want := 3*T*(T-1)/2 + 2*T; d.size() != want {
			t.Fatalf("n=%d: %d tasks, want %d", n, d.size(), want)
		}
		for j, u := range d.tasks {
			if d.number(u) != j {
				t.Fatalf("n=%d: task %v numbered %d, listed at %d", n, u, d.number(u), j)
			}
		}
		preds := func(u adjTask) int {
			below := T - u.k - 1 // row blocks below panel k
			switch u.kind {
			case adjOffDiag:
				if u.i == u.k+1 {
					return below - 1 // S(i,k+1) for i > k+1
				}
				return 1 // S(r,k+1)
			case adjDiag:
				if u.i == u.k+1 {
					return 2 // Uo(r,k), F(k+1)
				}
				return 1 // Uo(r,k)
			case adjSolve:
				return 1 // Ud(r,k)
			case adjGemmt:
				return max(below-1, 0) // S(r,k) for r > k+1
			}
			return 1 + min(below, 1) // Go(k), S(k+1,k)
		}
		s := newScheduler(d)
		for j, u := range d.tasks {
			if s.waiting[j] != preds(u) {
				t.Errorf("n=%d: %v waits for %d tasks, want %d", n, u, s.waiting[j], preds(u))
			}
		}
		checkRanks(t, fmt.Sprintf("n=%d", n), d, s, T <= 6)
		var sum float64
		for j := range d.size() {
			sum += d.flops(j)
		}
		nf := float64(n)
		if total := 2 * nf * nf * nf / 3; math.Abs(sum-total) > nf*nf {
			t.Errorf("n=%d: tasks add up to %v flops, want about %v", n, sum, total)
		}
	}
}

// TestAdjointsThreads checks the public adjoints at an order where two
// goroutines take the task graphs: Adjoint and AdjointFromProduct with two
// goroutines agree with one (the recursion) to rounding, and a second call
// reuses the factor's workspace.
func TestAdjointsThreads(t *testing.T) {
	const n = dagMin + 88
	rnd := rand.New(rand.NewPCG(29, 30))
	a := randSPD(rnd, n, n, 100)
	q := randSPD(rnd, n, n, 10)
	results := map[int][2][]float64{}
	for _, threads := range []int{1, 2} {
		var c Cholesky
		if _, err := c.Factor(n, a, n, NoJitter(), threads); err != nil {
			t.Fatal(err)
		}
		abar := make([]float64, n*n)
		if err := c.Adjoint(q, n, abar, n); err != nil {
			t.Fatal(err)
		}
		p := append([]float64(nil), q...)
		if err := c.AdjointFromProduct(-1, p, n); err != nil {
			t.Fatal(err)
		}
		again := append([]float64(nil), q...)
		if err := c.AdjointFromProduct(-1, again, n); err != nil {
			t.Fatal(err)
		}
		for i := range p {
			if math.Float64bits(p[i]) != math.Float64bits(again[i]) {
				t.Fatalf("threads=%d: second AdjointFromProduct differs at %d", threads, i)
			}
		}
		results[threads] = [2][]float64{abar, p}
	}
	for k, name := range []string{"Adjoint", "AdjointFromProduct"} {
		one, two := results[1][k], results[2][k]
		var scale float64
		for _, v := range one {
			scale = max(scale, math.Abs(v))
		}
		for i := range one {
			if math.Abs(one[i]-two[i]) > 1e-11*scale {
				t.Fatalf("%s: element %d = %v with two goroutines, %v with one", name, i, two[i], one[i])
			}
		}
	}
}
