package chol

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/blas"
)

// spd returns a random well-conditioned SPD matrix of order n with leading
// dimension lda, the strict upper triangle filled with guard values.
func dagSPD(rng *rand.Rand, n, lda int) []float64 {
	g := make([]float64, n*n)
	for i := range g {
		g[i] = rng.NormFloat64()
	}
	a := make([]float64, n*lda)
	for i := range a {
		a[i] = math.NaN()
	}
	blas.Implementation{}.Dsyrk(gblas.Lower, gblas.NoTrans, n, n, 1/float64(n), g, n, 0, a, lda)
	for i := range n {
		a[i*lda+i] += 1
		for j := i + 1; j < lda; j++ {
			a[i*lda+j] = 12345 // guard: strict upper triangle and padding
		}
	}
	return a
}

// TestPotrfDAG checks the task-graph factorization against the recursive
// one (to rounding), bit-identical results for every goroutine count,
// untouched upper triangle and padding, at orders crossing tile edges.
func TestPotrfDAG(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	for _, n := range []int{1, 100, 128, 129, 300, 513, 700} {
		lda := n + 3
		a0 := dagSPD(rng, n, lda)
		want := append([]float64(nil), a0...)
		if p, _ := potrfRecLower(blas.Implementation{Threads: 1}, referenceLeaf(), n, want, lda); p >= 0 {
			t.Fatalf("n=%d: reference factorization failed at %d", n, p)
		}
		checkGoroutineRuns(t, fmt.Sprintf("n=%d", n), n, lda, a0, want, 12345, 1e-12, []int{1, 2, 3, 5}, nil,
			func(threads int, a []float64) {
				if p, _ := potrfDAG(blas.Implementation{}, threads, n, a, lda); p >= 0 {
					t.Fatalf("n=%d threads=%d: failed at pivot %d", n, threads, p)
				}
			})
	}
}

// checkGoroutineRuns runs run on a copy of the n-row matrix a0 (leading
// dimension ld) for each goroutine count and checks every result: its lower
// triangle against want to within tol·(1+|want|), every element right of the
// diagonal still the guard (unless scratch reports it may serve as scratch),
// and the same bits for every count.
func checkGoroutineRuns(t *testing.T, name string, n, ld int, a0, want []float64, guard, tol float64, threadCounts []int, scratch func(i, j int) bool, run func(threads int, a []float64)) {
	t.Helper()
	var first []float64
	for _, threads := range threadCounts {
		got := append([]float64(nil), a0...)
		run(threads, got)
		for i := range n {
			for j := 0; j < ld; j++ {
				g, w := got[i*ld+j], want[i*ld+j]
				if j > i {
					if g != guard && (scratch == nil || !scratch(i, j)) {
						t.Fatalf("%s threads=%d: upper/padding (%d,%d) = %v", name, threads, i, j, g)
					}
					continue
				}
				if math.Abs(g-w) > tol*(1+math.Abs(w)) {
					t.Fatalf("%s threads=%d: element (%d,%d) = %v, recursive %v", name, threads, i, j, g, w)
				}
			}
		}
		if first == nil {
			first = got
			continue
		}
		for j := range got {
			if math.Float64bits(got[j]) != math.Float64bits(first[j]) {
				t.Fatalf("%s: %d goroutines differ from %d at %d: %v vs %v", name, threads, threadCounts[0], j, got[j], first[j])
			}
		}
	}
}

// TestPotrfDAGPivot checks that a matrix that is not positive definite
// reports the same first failing pivot and value as the recursive
// algorithm, whichever tile the failure lies in.
func TestPotrfDAGPivot(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	const n = 600
	for _, bad := range []int{0, 127, 128, 300, 599} {
		a0 := dagSPD(rng, n, n)
		a0[bad*n+bad] = -1
		want := append([]float64(nil), a0...)
		wp, wv := potrfRecLower(blas.Implementation{Threads: 1}, referenceLeaf(), n, want, n)
		for _, threads := range []int{1, 2, 4} {
			got := append([]float64(nil), a0...)
			p, v := potrfDAG(blas.Implementation{}, threads, n, got, n)
			if p != wp || math.Abs(v-wv) > 1e-9*math.Abs(wv) || got[p*n+p] != v {
				t.Errorf("bad=%d threads=%d: pivot %d value %v (stored %v), recursive %d %v", bad, threads, p, v, got[p*n+p], wp, wv)
			}
		}
	}
}

// TestDAGGraph checks the factorization's task graph: the numbering is a
// bijection onto 0…T²−1, every task waits for exactly the dependencies
// listed in the package comment, the ranks are the longest chains (see
// checkGraph), the flops add up to n³/3, and the critical path is a part of
// them.
func TestDAGGraph(t *testing.T) {
	for _, n := range []int{256, 600, 1024, 1100} {
		d := newDAGCholesky(n, nil, n)
		T := d.t
		// The dependencies of the package comment.
		preds := func(j int) int {
			u, deps := d.tasks[j], 0
			if u.k > 0 {
				deps++ // U(k,k−1) before P(k); U(i,k−1) before S(i,k) and U(i,k)
			}
			switch u.kind {
			case taskSolve:
				deps++ // P(k)
			case taskUpdate:
				deps += u.i - u.k // S(k+1…i, k)
			}
			return deps
		}
		nf := float64(n)
		s, sum := checkGraph(t, fmt.Sprintf("n=%d", n), d, T*T, func(j int) int { return d.number(d.tasks[j]) }, preds,
			T <= 6, nf*nf*nf/3, 2*nf*nf)
		if r0 := s.rank[0]; r0 > sum*(1+1e-12) || !(r0 > sum/float64(T)) {
			t.Errorf("n=%d: critical path %v flops of %v", n, r0, sum)
		}
	}
}

// checkGraph checks a task graph of wantSize tasks: number(j), the number
// of the j-th task of its list, is j; task j waits for preds(j) tasks; the
// ranks pass checkRanks; and the flops add up to wantFlops within tol. It
// returns the scheduler and the flops.
func checkGraph(t *testing.T, name string, g taskGraph, wantSize int, number, preds func(int) int, exhaustive bool, wantFlops, tol float64) (*scheduler, float64) {
	t.Helper()
	if g.size() != wantSize {
		t.Fatalf("%s: %d tasks, want %d", name, g.size(), wantSize)
	}
	for j := range g.size() {
		if number(j) != j {
			t.Fatalf("%s: task %d of the list numbered %d", name, j, number(j))
		}
	}
	s := newScheduler(g)
	for j := range g.size() {
		if s.waiting[j] != preds(j) {
			t.Errorf("%s: task %d waits for %d tasks, want %d", name, j, s.waiting[j], preds(j))
		}
	}
	checkRanks(t, name, g, s, exhaustive)
	var sum float64
	for j := range g.size() {
		sum += g.flops(j)
	}
	if math.Abs(sum-wantFlops) > tol {
		t.Errorf("%s: tasks add up to %v flops, want %v to within %v", name, sum, wantFlops, tol)
	}
	return s, sum
}

// checkRanks checks the scheduler's ranks of graph g: along every edge the
// rank drops by at least the first task's flops and, when exhaustive is set, each
// rank equals the longest chain of flops found by walking the successors
// recursively.
func checkRanks(t *testing.T, name string, g taskGraph, s *scheduler, exhaustive bool) {
	t.Helper()
	var longest func(int) float64
	longest = func(u int) float64 {
		var next float64
		g.successors(u, func(v int) { next = max(next, longest(v)) })
		return g.flops(u) + next
	}
	for u := range g.size() {
		ru := s.rank[u]
		g.successors(u, func(v int) {
			if rv := s.rank[v]; !(rv+g.flops(u) <= ru*(1+1e-12)) {
				t.Errorf("%s: edge %d → %d: rank %v → %v", name, u, v, ru, rv)
			}
		})
		if exhaustive {
			if want := longest(u); math.Abs(ru-want) > 1e-9*want {
				t.Errorf("%s: rank of %d = %v, longest chain %v", name, u, ru, want)
			}
		}
	}
}

// BenchmarkPotrfDAG compares, on one goroutine, the task graph's schedule
// with the recursive algorithm (its one-goroutine cost is the price of
// the look-ahead), and runs the graph on two.
func BenchmarkPotrfDAG(b *testing.B) {
	for _, n := range []int{1024, 2048} {
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		a0 := dagSPD(rng, n, n)
		w := make([]float64, n*n)
		for _, c := range []struct {
			name string
			f    func()
		}{
			{"recursive/threads=1", func() {
				potrfRecLower(blas.Implementation{Threads: 1}, referenceLeaf(), n, w, n)
			}},
			{"dag/threads=1", func() { potrfDAG(blas.Implementation{}, 1, n, w, n) }},
			{"recursive/threads=2", func() {
				potrfRecLower(blas.Implementation{Threads: 2}, referenceLeaf(), n, w, n)
			}},
			{"dag/threads=2", func() { potrfDAG(blas.Implementation{}, 2, n, w, n) }},
		} {
			b.Run(fmt.Sprintf("n=%d/%s", n, c.name), func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					copy(w, a0)
					b.StartTimer()
					c.f()
				}
				b.ReportMetric(float64(b.N)*float64(n)*float64(n)*float64(n)/3/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// referenceLeaf returns the leaf the sequential factorization uses on this
// build: the tiled leaf when the backend has a TRSM kernel, else the blocked
// leaf with its own scratch space (purego and noasm builds).
func referenceLeaf() *potrfLeaf {
	lf := &potrfLeaf{be: tiledBackend(blas.Implementation{})}
	if lf.be == nil {
		lf.work = make([]float64, leafWorkSize)
	}
	return lf
}
