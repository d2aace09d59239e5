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
	for _, n := range []int{1024, 2048} {
		a := benchSPD(n)
		var c Cholesky
		if _, err := c.Factor(n, a, n, NoJitter(), 1); err != nil {
			b.Fatal(err)
		}
		l := c.RawL()
		rnd := rand.New(rand.NewPCG(1, 1))
		g0 := make([]float64, n*n)
		for i := range g0 {
			g0[i] = rnd.NormFloat64()
		}
		g := make([]float64, n*n)
		work := make([]float64, gemmtBase*gemmtBase)
		for _, c := range []struct {
			name string
			f    func()
		}{
			{"recursive/threads=1", func() { adjointLower(blas.Implementation{Threads: 1}, n, l, n, g, n, work) }},
			{"dag/threads=1", func() { adjointDAG(blas.Implementation{}, 1, n, l, n, g, n, work) }},
			{"recursive/threads=2", func() { adjointLower(blas.Implementation{Threads: 2}, n, l, n, g, n, work) }},
			{"dag/threads=2", func() { adjointDAG(blas.Implementation{}, 2, n, l, n, g, n, work) }},
		} {
			b.Run(fmt.Sprintf("n=%d/%s", n, c.name), func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					copy(g, g0)
					b.StartTimer()
					c.f()
				}
				b.ReportMetric(float64(b.N)*2*float64(n)*float64(n)*float64(n)/3/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
