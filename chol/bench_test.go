package chol

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
)

// Benchmarks report GFLOP/s with the conventional flop counts: n³/3 for the
// factorization, 2·n²·nrhs for a full solve, and, for the adjoint, the
// factorization's n³/3 (so that its GFLOP/s is directly comparable: a ratio
// of 2 means the adjoint takes twice the factorization's time).
//
//	go test -run '^$' -bench . ./chol/

var benchSizes = []int{64, 128, 256, 512, 1024, 2048, 4096}

func benchSPD(n int) []float64 {
	rnd := rand.New(rand.NewPCG(uint64(n), 99))
	// A = G·Gᵀ/n + I for a random G: well conditioned and cheap to build.
	l := make([]float64, n*n)
	for i := range l {
		l[i] = rnd.NormFloat64()
	}
	a := make([]float64, n*n)
	Implementation{}.bi().Dsyrk(gblas.Lower, gblas.NoTrans, n, n, 1/float64(n), l, n, 0, a, n)
	for i := 0; i < n; i++ {
		a[i*n+i]++
		for j := 0; j < i; j++ {
			a[j*n+i] = a[i*n+j]
		}
	}
	return a
}

func gflops(b *testing.B, flops float64) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func nan() float64 { return math.NaN() }

// cpuClock measures the CPU time of the benchmark's OS thread. With one
// thread all the work runs on the benchmark goroutine, so CPU time is
// immune to other processes sharing the cores, unlike wall-clock time;
// "cpu-GFLOP/s" is reported next to "GFLOP/s" for the one-thread runs.
type cpuClock struct {
	on    bool
	start float64
}

// startCPU locks the goroutine to its thread and starts the clock when
// threads == 1; call it right before the timed loop.
func startCPU(b *testing.B, threads int) *cpuClock {
	c := &cpuClock{on: threads == 1 && !math.IsNaN(threadCPUTime())}
	if c.on {
		runtime.LockOSThread()
		b.Cleanup(runtime.UnlockOSThread)
		c.start = threadCPUTime()
	}
	return c
}

// report reports cpu-GFLOP/s for flops per iteration.
func (c *cpuClock) report(b *testing.B, flops float64) {
	if c.on {
		b.ReportMetric(flops*float64(b.N)/(threadCPUTime()-c.start)/1e9, "cpu-GFLOP/s")
	}
}

func BenchmarkPotrf(b *testing.B) {
	for _, n := range benchSizes {
		if n > 2048 && testing.Short() {
			continue
		}
		a := benchSPD(n)
		work := make([]float64, n*n)
		flops := float64(n) * float64(n) * float64(n) / 3
		// Both thread counts on the lower factor, and the upper factor
		// (which gonum's mat.Cholesky asks for) on one thread.
		for _, c := range []struct {
			threads int
			uplo    gblas.Uplo
			suffix  string
		}{{1, gblas.Lower, ""}, {2, gblas.Lower, ""}, {1, gblas.Upper, "/upper"}} {
			b.Run(fmt.Sprintf("n=%d/threads=%d%s", n, c.threads, c.suffix), func(b *testing.B) {
				impl := Implementation{Threads: c.threads}
				clk := startCPU(b, c.threads)
				for i := 0; i < b.N; i++ {
					copy(work, a)
					if !impl.Dpotrf(c.uplo, n, work, n) {
						b.Fatal("not PD")
					}
				}
				gflops(b, flops)
				clk.report(b, flops)
			})
		}
		if n <= 2048 {
			b.Run(fmt.Sprintf("n=%d/gonum", n), func(b *testing.B) {
				var impl gonum.Implementation
				for i := 0; i < b.N; i++ {
					copy(work, a)
					if !impl.Dpotrf(gblas.Lower, n, work, n) {
						b.Fatal("not PD")
					}
				}
				gflops(b, flops)
			})
		}
	}
}

func BenchmarkFactor(b *testing.B) {
	for _, n := range benchSizes {
		if n > 2048 && testing.Short() {
			continue
		}
		a := benchSPD(n)
		flops := float64(n) * float64(n) * float64(n) / 3
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("n=%d/threads=%d", n, threads), func(b *testing.B) {
				var c Cholesky
				clk := startCPU(b, threads)
				for i := 0; i < b.N; i++ {
					if _, err := c.Factor(n, a, n, DefaultJitter(), threads); err != nil {
						b.Fatal(err)
					}
				}
				gflops(b, flops)
				clk.report(b, flops)
			})
		}
	}
}

func BenchmarkAdjoint(b *testing.B) {
	for _, n := range benchSizes {
		if n > 2048 && testing.Short() {
			continue
		}
		a := benchSPD(n)
		rnd := rand.New(rand.NewPCG(1, 1))
		lbar := make([]float64, n*n)
		for i := range lbar {
			lbar[i] = rnd.NormFloat64()
		}
		abar := make([]float64, n*n)
		flops := float64(n) * float64(n) * float64(n) / 3
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("n=%d/threads=%d", n, threads), func(b *testing.B) {
				var c Cholesky
				if _, err := c.Factor(n, a, n, NoJitter(), threads); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				clk := startCPU(b, threads)
				for i := 0; i < b.N; i++ {
					if err := c.Adjoint(lbar, n, abar, n); err != nil {
						b.Fatal(err)
					}
				}
				gflops(b, flops)
				clk.report(b, flops)
			})
		}
	}
}

func BenchmarkPotrs(b *testing.B) {
	for _, n := range benchSizes {
		if n > 2048 {
			continue
		}
		nrhs := n
		a := benchSPD(n)
		if !(Implementation{}).Dpotrf(gblas.Lower, n, a, n) {
			b.Fatal("not PD")
		}
		rhs := make([]float64, n*nrhs)
		for i := range rhs {
			rhs[i] = float64(i%7) - 3
		}
		work := make([]float64, n*nrhs)
		flops := 2 * float64(n) * float64(n) * float64(nrhs)
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("n=%d/nrhs=%d/threads=%d", n, nrhs, threads), func(b *testing.B) {
				impl := Implementation{Threads: threads}
				clk := startCPU(b, threads)
				for i := 0; i < b.N; i++ {
					copy(work, rhs)
					impl.Dpotrs(gblas.Lower, n, nrhs, a, n, work, nrhs)
				}
				gflops(b, flops)
				clk.report(b, flops)
			})
		}
		if n <= 1024 {
			b.Run(fmt.Sprintf("n=%d/nrhs=%d/gonum", n, nrhs), func(b *testing.B) {
				var impl gonum.Implementation
				for i := 0; i < b.N; i++ {
					copy(work, rhs)
					impl.Dpotrs(gblas.Lower, n, nrhs, a, n, work, nrhs)
				}
				gflops(b, flops)
			})
		}
	}
}
