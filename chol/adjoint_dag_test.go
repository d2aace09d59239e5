package chol

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/solvegp/solvegp/blas"
)

// upperGuard fills the strict upper triangle and padding of the operands
// the task-graph adjoints must not write.
const upperGuard = 54321

// dagAdjointCases returns the orders (crossing tile edges) and goroutine
// counts of the task-graph adjoint tests: fewer under -short (the arm64
// run under qemu).
func dagAdjointCases() (sizes, threadCounts []int) {
	if testing.Short() {
		return []int{100, 513}, []int{1, 3}
	}
	return []int{100, 256, 300, 513, 700}, []int{1, 2, 3, 5}
}

// dagAdjointOperands returns a Cholesky factor of order n (leading
// dimension n+1) and a random lower triangle of order n with leading
// dimension n+3, upperGuard right of its diagonal.
func dagAdjointOperands(t *testing.T, rng *rand.Rand, n int) (l []float64, ldl int, w []float64, ldw int) {
	t.Helper()
	ldl, ldw = n+1, n+3
	l = dagSPD(rng, n, ldl)
	if p, _ := potrfRecLower(blas.Implementation{Threads: 1}, referenceLeaf(), n, l, ldl); p >= 0 {
		t.Fatalf("n=%d: factorization failed at %d", n, p)
	}
	w = make([]float64, n*ldw)
	for i := range n {
		for j := 0; j < ldw; j++ {
			w[i*ldw+j] = upperGuard
			if j <= i {
				w[i*ldw+j] = rng.NormFloat64()
			}
		}
	}
	return l, ldl, w, ldw
}

// TestAdjointDAG checks the task-graph adjoint against the recursive one
// (to rounding), bit-identical results for every goroutine count, and an
// untouched strict upper triangle, at orders crossing tile edges.
func TestAdjointDAG(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 11))
	sizes, threadCounts := dagAdjointCases()
	for _, n := range sizes {
		l, ldl, g0, ldg := dagAdjointOperands(t, rng, n)
		want := append([]float64(nil), g0...)
		work := make([]float64, gemmtBase*gemmtBase)
		adjointLower(blas.Implementation{Threads: 1}, n, l, ldl, want, ldg, work)
		checkGoroutineRuns(t, fmt.Sprintf("n=%d", n), n, ldg, g0, want, upperGuard, 1e-10, threadCounts, nil,
			func(threads int, g []float64) { adjointDAG(blas.Implementation{}, threads, n, l, ldl, g, ldg, work) })
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
		preds := func(j int) int {
			u := d.tasks[j]
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
		nf := float64(n)
		checkGraph(t, fmt.Sprintf("n=%d", n), d, 3*T*(T-1)/2+2*T, func(j int) int { return d.number(d.tasks[j]) }, preds,
			T <= 6, 2*nf*nf*nf/3, nf*nf)
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
