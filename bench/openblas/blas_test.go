//go:build openblas && cgo

package openblas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	solveblas "github.com/solvegp/solvegp/blas"
)

func randMat(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.NormFloat64()
	}
	return s
}

// TestDgemmBinding checks the cgo binding against gonum on all transposes.
func TestDgemmBinding(t *testing.T) {
	SetThreads(1)
	if Threads() != 1 {
		t.Fatalf("SetThreads(1): OpenBLAS reports %d threads", Threads())
	}
	t.Logf("OpenBLAS %s", Config())
	rng := rand.New(rand.NewPCG(1, 1))
	const m, n, k = 37, 29, 41
	for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			a, b := randMat(rng, m*k), randMat(rng, k*n)
			lda, ldb := k, n
			if tA == blas.Trans {
				lda = m
			}
			if tB == blas.Trans {
				ldb = k
			}
			c := randMat(rng, m*n)
			want := append([]float64(nil), c...)
			Dgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, -0.5, c, n)
			gonum.Implementation{}.Dgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, -0.5, want, n)
			for i := range c {
				if math.Abs(c[i]-want[i]) > 1e-12*float64(k) {
					t.Fatalf("tA=%c tB=%c: c[%d] = %v, want %v", tA, tB, i, c[i], want[i])
				}
			}
		}
	}
}

type gemmShape struct {
	name    string
	tA, tB  blas.Transpose
	m, n, k int
}

func gemmShapes() []gemmShape {
	var s []gemmShape
	for _, n := range []int{64, 128, 256, 512, 1024, 2048} {
		s = append(s, gemmShape{fmt.Sprintf("square/n=%d", n), blas.NoTrans, blas.NoTrans, n, n, n})
	}
	// Panel updates as issued by blocked Cholesky, TRSM and SYRK.
	for _, kb := range []int{64, 128, 256} {
		s = append(s, gemmShape{fmt.Sprintf("update/k=%d", kb), blas.NoTrans, blas.Trans, 1024, 1024, kb})
	}
	for _, m := range []int{1024, 2048} {
		s = append(s, gemmShape{fmt.Sprintf("KxV/M=%d", m), blas.NoTrans, blas.NoTrans, m, 1024, m})
		s = append(s, gemmShape{fmt.Sprintf("AtA/M=%d", m), blas.Trans, blas.NoTrans, m, m, 1024})
	}
	return s
}

// BenchmarkDgemmVsOpenBLAS runs solvegp's Dgemm and OpenBLAS's alternately
// within every iteration (one call each), so that both see the same machine
// load, and reports both rates and their ratio. threads applies to both
// libraries.
func BenchmarkDgemmVsOpenBLAS(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, threads := range []int{1, 2} {
		for _, sh := range gemmShapes() {
			b.Run(fmt.Sprintf("%s/threads=%d", sh.name, threads), func(b *testing.B) {
				SetThreads(threads)
				defer SetThreads(1)
				impl := solveblas.Implementation{Threads: threads}
				lda, ldb := sh.k, sh.n
				if sh.tA == blas.Trans {
					lda = sh.m
				}
				if sh.tB == blas.Trans {
					ldb = sh.k
				}
				a, bb := randMat(rng, sh.m*sh.k), randMat(rng, sh.k*sh.n)
				c := make([]float64, sh.m*sh.n)
				flops := 2 * float64(sh.m) * float64(sh.n) * float64(sh.k)
				// Warm both up (page faults, thread pools, packing buffers).
				impl.Dgemm(sh.tA, sh.tB, sh.m, sh.n, sh.k, 1, a, lda, bb, ldb, 0, c, sh.n)
				Dgemm(sh.tA, sh.tB, sh.m, sh.n, sh.k, 1, a, lda, bb, ldb, 0, c, sh.n)
				// With one thread both libraries run on this OS thread, so
				// its CPU time (immune to other processes sharing the core)
				// is reported besides wall-clock time. CPU time is summed
				// over all iterations: per-call readings are too coarse.
				if threads == 1 {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
				}
				var ours, theirs []float64
				var oursCPU, theirsCPU float64
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					c0, t0 := threadCPU(), time.Now()
					impl.Dgemm(sh.tA, sh.tB, sh.m, sh.n, sh.k, 1, a, lda, bb, ldb, 0, c, sh.n)
					c1, t1 := threadCPU(), time.Now()
					Dgemm(sh.tA, sh.tB, sh.m, sh.n, sh.k, 1, a, lda, bb, ldb, 0, c, sh.n)
					c2, t2 := threadCPU(), time.Now()
					ours = append(ours, flops/t1.Sub(t0).Seconds()/1e9)
					theirs = append(theirs, flops/t2.Sub(t1).Seconds()/1e9)
					oursCPU += c1 - c0
					theirsCPU += c2 - c1
				}
				mo, mt := median(ours), median(theirs)
				b.ReportMetric(mo, "solvegp-GFLOP/s")
				b.ReportMetric(mt, "openblas-GFLOP/s")
				b.ReportMetric(mo/mt, "ratio")
				if threads == 1 && oursCPU > 0 && theirsCPU > 0 {
					total := flops * float64(b.N) / 1e9
					b.ReportMetric(total/oursCPU, "solvegp-cpu-GFLOP/s")
					b.ReportMetric(total/theirsCPU, "openblas-cpu-GFLOP/s")
					b.ReportMetric(theirsCPU/oursCPU, "cpu-ratio")
				}
			})
		}
	}
}

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// threadCPU returns the CPU time consumed so far by the calling OS thread,
// in seconds (getrusage RUSAGE_THREAD).
func threadCPU() float64 {
	const rusageThread = 1
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
