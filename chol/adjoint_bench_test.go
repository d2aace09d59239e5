package chol

import (
	"fmt"
	"math/rand/v2"
	"testing"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/blas"
)

// BenchmarkAdjointFromProduct compares the two routes from L̄ = −L⁻ᵀ·X
// (the form in which variational GPs produce the adjoint of a factor) to
// Ā: "product" is AdjointFromProduct(−1, X) (a symmetric congruence,
// about n³ flops); "solve+adjoint" forms the lower triangle of L̄ by
// column-block solves (n³/3) and calls Adjoint (about 2n³/3). GFLOP/s use
// the factorization's n³/3 as in BenchmarkAdjoint, so both routes report
// on the same scale.
//
//	go test ./chol -run '^$' -bench AdjointFromProduct -count 3
func BenchmarkAdjointFromProduct(b *testing.B) {
	for _, n := range benchSizes {
		if n > 2048 && testing.Short() {
			continue
		}
		a := benchSPD(n)
		x := benchSPD(n)
		w := make([]float64, n*n)
		flops := float64(n) * float64(n) * float64(n) / 3
		for _, threads := range []int{1, 2} {
			var c Cholesky
			if _, err := c.Factor(n, a, n, NoJitter(), threads); err != nil {
				b.Fatal(err)
			}
			l := c.RawL()
			bi := c.bi()
			b.Run(fmt.Sprintf("product/n=%d/threads=%d", n, threads), func(b *testing.B) {
				clk := startCPU(b, threads)
				for i := 0; i < b.N; i++ {
					copy(w, x)
					if err := c.AdjointFromProduct(-1, w, n); err != nil {
						b.Fatal(err)
					}
				}
				gflops(b, flops)
				clk.report(b, flops)
			})
			b.Run(fmt.Sprintf("solve+adjoint/n=%d/threads=%d", n, threads), func(b *testing.B) {
				bs := max(64, (n/8+63)&^63)
				clk := startCPU(b, threads)
				for i := 0; i < b.N; i++ {
					copy(w, x)
					for j0 := 0; j0 < n; j0 += bs {
						j1 := min(j0+bs, n)
						bi.Dtrsm(gblas.Left, gblas.Lower, gblas.Trans, gblas.NonUnit, n-j0, j1-j0, -1, l[j0*n+j0:], n, w[j0*n+j0:], n)
					}
					if err := c.Adjoint(w, n, w, n); err != nil {
						b.Fatal(err)
					}
				}
				gflops(b, flops)
				clk.report(b, flops)
			})
		}
	}
}

// BenchmarkAdjointDAG compares, as BenchmarkPotrfDAG does for the
// factorization, the recursive adjoint with the task graph on one
// goroutine (the graph's cost in kernel efficiency) and on two (the
// recursion then runs two-thread BLAS calls). GFLOP/s count 2n³/3.
//
//	go test ./chol -run '^$' -bench AdjointDAG -count 5
func BenchmarkAdjointDAG(b *testing.B) {
	work := make([]float64, gemmtBase*gemmtBase)
	benchDAGPair(b, 2.0/3,
		func(threads, n int, l, g []float64) {
			adjointLower(blas.Implementation{Threads: threads}, n, l, n, g, n, work)
		},
		func(threads, n int, l, g []float64) { adjointDAG(blas.Implementation{}, threads, n, l, n, g, n, work) })
}

// BenchmarkCongruenceDAG is BenchmarkAdjointDAG for the symmetric
// congruence of AdjointFromProduct. GFLOP/s count n³.
//
//	go test ./chol -run '^$' -bench CongruenceDAG -count 5
func BenchmarkCongruenceDAG(b *testing.B) {
	var work []float64
	scratch := func(n int) []float64 {
		if size := adjointFromProductWork(n); len(work) < size {
			work = make([]float64, size)
		}
		return work
	}
	benchDAGPair(b, 1,
		func(threads, n int, l, w []float64) {
			congruence(blas.Implementation{Threads: threads}, n, l, n, w, n, scratch(n))
		},
		func(threads, n int, l, w []float64) {
			congruenceDAG(blas.Implementation{}, threads, n, l, n, w, n, scratch(n))
		})
}

// benchDAGPair times the recursive and the task-graph form of one operation
// on the factor of an order-n matrix and a random n×n operand, on one and
// two goroutines, reporting GFLOP/s for c·n³ flops.
func benchDAGPair(b *testing.B, c float64, recursive, dag func(threads, n int, l, g []float64)) {
	for _, n := range []int{1024, 2048} {
		a := benchSPD(n)
		var ch Cholesky
		if _, err := ch.Factor(n, a, n, NoJitter(), 1); err != nil {
			b.Fatal(err)
		}
		l := ch.RawL()
		rnd := rand.New(rand.NewPCG(1, 1))
		g0 := make([]float64, n*n)
		for i := range g0 {
			g0[i] = rnd.NormFloat64()
		}
		g := make([]float64, n*n)
		for _, threads := range []int{1, 2} {
			for _, v := range []struct {
				name string
				f    func(threads, n int, l, g []float64)
			}{{"recursive", recursive}, {"dag", dag}} {
				b.Run(fmt.Sprintf("n=%d/%s/threads=%d", n, v.name, threads), func(b *testing.B) {
					for b.Loop() {
						b.StopTimer()
						copy(g, g0)
						b.StartTimer()
						v.f(threads, n, l, g)
					}
					b.ReportMetric(float64(b.N)*c*float64(n)*float64(n)*float64(n)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}
