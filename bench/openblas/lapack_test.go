//go:build openblas && cgo

package openblas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"

	"github.com/solvegp/solvegp/chol"
)

// lapackSPD returns a well-conditioned n×n SPD matrix G·Gᵀ/n + I (full
// symmetric storage, stride n).
func lapackSPD(rng *rand.Rand, n int) []float64 {
	g := randMat(rng, n*n)
	a := make([]float64, n*n)
	Dgemm(blas.NoTrans, blas.Trans, n, n, n, 1/float64(n), g, n, g, n, 0, a, n)
	for i := 0; i < n; i++ {
		a[i*n+i]++
		for j := 0; j < i; j++ {
			a[j*n+i] = a[i*n+j] // exact symmetry
		}
	}
	return a
}

// TestLapackBindings checks DpotrfLower and DpotrsColMajor against gonum.
func TestLapackBindings(t *testing.T) {
	SetThreads(1)
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{1, 7, 64, 130} {
		a := lapackSPD(rng, n)
		got := append([]float64(nil), a...)
		if info := DpotrfLower(n, got, n); info != 0 {
			t.Fatalf("n=%d: info %d", n, info)
		}
		want := append([]float64(nil), a...)
		if !(gonum.Implementation{}).Dpotrf(blas.Lower, n, want, n) {
			t.Fatal("gonum failed")
		}
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				if d := math.Abs(got[i*n+j] - want[i*n+j]); d > 1e-12 {
					t.Fatalf("n=%d: L[%d,%d] = %g, want %g", n, i, j, got[i*n+j], want[i*n+j])
				}
			}
		}
		const nrhs = 3
		bcm := randMat(rng, n*nrhs) // column-major n×nrhs
		brm := make([]float64, n*nrhs)
		for i := 0; i < n; i++ {
			for j := 0; j < nrhs; j++ {
				brm[i*nrhs+j] = bcm[j*n+i]
			}
		}
		if info := DpotrsColMajor(n, nrhs, got, n, bcm, n); info != 0 {
			t.Fatalf("dpotrs info %d", info)
		}
		(gonum.Implementation{}).Dpotrs(blas.Lower, n, nrhs, want, n, brm, nrhs)
		for i := 0; i < n; i++ {
			for j := 0; j < nrhs; j++ {
				if d := math.Abs(bcm[j*n+i] - brm[i*nrhs+j]); d > 1e-10*(1+math.Abs(brm[i*nrhs+j])) {
					t.Fatalf("n=%d: X[%d,%d] = %g, want %g", n, i, j, bcm[j*n+i], brm[i*nrhs+j])
				}
			}
		}
	}
	a := []float64{1, 2, 2, 1}
	if info := DpotrfLower(2, a, 2); info != 2 {
		t.Errorf("non-PD: info %d, want 2", info)
	}
}

// BenchmarkDpotrfVsOpenBLAS alternates chol's Dpotrf and OpenBLAS's DPOTRF
// (each on a fresh copy of the same matrix) within every iteration and
// reports median GFLOP/s (n³/3 flops) of both and their ratio.
func BenchmarkDpotrfVsOpenBLAS(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, threads := range []int{1, 2} {
		for _, n := range []int{64, 128, 256, 512, 1024, 2048, 4096} {
			b.Run(fmt.Sprintf("n=%d/threads=%d", n, threads), func(b *testing.B) {
				SetThreads(threads)
				defer SetThreads(1)
				a := lapackSPD(rng, n)
				w := make([]float64, n*n)
				impl := chol.Implementation{Threads: threads}
				alternate(b, threads, float64(n)*float64(n)*float64(n)/3,
					func() { copy(w, a) },
					func() {
						if !impl.Dpotrf(blas.Lower, n, w, n) {
							b.Fatal("chol: not PD")
						}
					},
					func() {
						if DpotrfLower(n, w, n) != 0 {
							b.Fatal("openblas: not PD")
						}
					})
			})
		}
	}
}

// BenchmarkDpotrsVsOpenBLAS alternates chol's Dpotrs (row-major B) and
// OpenBLAS's DPOTRS (column-major B, its native layout) with nrhs = n right
// hand sides, reporting median GFLOP/s (2·n²·nrhs flops) and the ratio.
func BenchmarkDpotrsVsOpenBLAS(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, threads := range []int{1, 2} {
		for _, n := range []int{256, 512, 1024, 2048} {
			nrhs := n
			b.Run(fmt.Sprintf("n=%d/nrhs=%d/threads=%d", n, nrhs, threads), func(b *testing.B) {
				SetThreads(threads)
				defer SetThreads(1)
				a := lapackSPD(rng, n)
				if DpotrfLower(n, a, n) != 0 {
					b.Fatal("not PD")
				}
				rhs := randMat(rng, n*nrhs)
				w := make([]float64, n*nrhs)
				impl := chol.Implementation{Threads: threads}
				alternate(b, threads, 2*float64(n)*float64(n)*float64(nrhs),
					func() { copy(w, rhs) },
					func() { impl.Dpotrs(blas.Lower, n, nrhs, a, n, w, nrhs) },
					func() { DpotrsColMajor(n, nrhs, a, n, w, n) })
			})
		}
	}
}

// reportPair reports the median wall-clock rates of both libraries and
// their ratio, and with one thread also the per-thread CPU-time rates.
func reportPair(b *testing.B, threads int, ours, theirs, oursCPU, theirsCPU []float64) {
	mo, mt := median(ours), median(theirs)
	b.ReportMetric(mo, "solvegp-GFLOP/s")
	b.ReportMetric(mt, "openblas-GFLOP/s")
	b.ReportMetric(mo/mt, "ratio")
	if threads == 1 {
		mo, mt = median(oursCPU), median(theirsCPU)
		b.ReportMetric(mo, "solvegp-cpu-GFLOP/s")
		b.ReportMetric(mt, "openblas-cpu-GFLOP/s")
		b.ReportMetric(mo/mt, "cpu-ratio")
	}
}

// cholThreadCPU returns the CPU time consumed by the calling OS thread in
// seconds, from clock_gettime(CLOCK_THREAD_CPUTIME_ID) (nanosecond
// resolution, unlike getrusage's tick-based accounting).
func cholThreadCPU() float64 {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		panic(e)
	}
	return float64(ts.Sec) + 1e-9*float64(ts.Nsec)
}
