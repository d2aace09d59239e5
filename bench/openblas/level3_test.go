//go:build openblas && cgo

package openblas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	solveblas "github.com/solvegp/solvegp/blas"
)

// TestDsyrkBinding checks the cgo Dsyrk binding against gonum for both
// triangles and transposes; the other triangle must stay untouched.
func TestDsyrkBinding(t *testing.T) {
	SetThreads(1)
	rng := rand.New(rand.NewPCG(6, 6))
	const n, k = 23, 17
	for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			lda := k
			if tA == blas.Trans {
				lda = n
			}
			a := randMat(rng, n*k)
			c := randMat(rng, n*n)
			want := append([]float64(nil), c...)
			Dsyrk(ul, tA, n, k, 0.7, a, lda, -1.5, c, n)
			gonum.Implementation{}.Dsyrk(ul, tA, n, k, 0.7, a, lda, -1.5, want, n)
			for i := range c {
				if math.Abs(c[i]-want[i]) > 1e-12*k {
					t.Fatalf("ul=%c tA=%c: c[%d] = %v, want %v", ul, tA, i, c[i], want[i])
				}
			}
		}
	}
}

// TestDtrsmBinding checks the cgo Dtrsm binding against gonum in all 16
// side/triangle/transpose/diagonal cases.
func TestDtrsmBinding(t *testing.T) {
	SetThreads(1)
	rng := rand.New(rand.NewPCG(7, 7))
	const m, n = 19, 13
	for _, s := range []blas.Side{blas.Left, blas.Right} {
		for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
			for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, d := range []blas.Diag{blas.NonUnit, blas.Unit} {
					k := m
					if s == blas.Right {
						k = n
					}
					a := wellConditionedTriangle(rng, k)
					b := randMat(rng, m*n)
					want := append([]float64(nil), b...)
					Dtrsm(s, ul, tA, d, m, n, 1.25, a, k, b, n)
					gonum.Implementation{}.Dtrsm(s, ul, tA, d, m, n, 1.25, a, k, want, n)
					for i := range b {
						if math.Abs(b[i]-want[i]) > 1e-10*(1+math.Abs(want[i])) {
							t.Fatalf("side=%c ul=%c tA=%c d=%c: b[%d] = %v, want %v", s, ul, tA, d, i, b[i], want[i])
						}
					}
				}
			}
		}
	}
}

// wellConditionedTriangle returns a k×k matrix, random off the diagonal
// (scaled by 1/k) and with a diagonal in [1, 2), so that both of its
// triangles are well conditioned.
func wellConditionedTriangle(rng *rand.Rand, k int) []float64 {
	a := randMat(rng, k*k)
	for i := range a {
		a[i] /= float64(k)
	}
	for i := 0; i < k; i++ {
		a[i*k+i] = 1 + rng.Float64()
	}
	return a
}

// alternate runs ours and theirs alternately b.N times each (after one
// warm-up call each) and reports both rates for flops per call, their
// ratio and, with one thread, the per-thread CPU-time rates. reset, when
// not nil, restores the operands before every call and is not timed.
func alternate(b *testing.B, threads int, flops float64, reset, ours, theirs func()) {
	if reset == nil {
		reset = func() {}
	}
	reset()
	ours()
	reset()
	theirs()
	if threads == 1 {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	var o, t, oCPU, tCPU []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		reset()
		c0, t0 := cholThreadCPU(), time.Now()
		ours()
		c1, t1 := cholThreadCPU(), time.Now()
		reset()
		c2, t2 := cholThreadCPU(), time.Now()
		theirs()
		c3, t3 := cholThreadCPU(), time.Now()
		o = append(o, flops/t1.Sub(t0).Seconds()/1e9)
		t = append(t, flops/t3.Sub(t2).Seconds()/1e9)
		oCPU = append(oCPU, flops/(c1-c0)/1e9)
		tCPU = append(tCPU, flops/(c3-c2)/1e9)
	}
	reportPair(b, threads, o, t, oCPU, tCPU)
}

// BenchmarkDsyrkVsOpenBLAS alternates solvegp's and OpenBLAS's Dsyrk
// (lower triangle, C := A·Aᵀ with A n×n and its transpose) and reports
// median GFLOP/s (n²·k flops) and the ratio.
func BenchmarkDsyrkVsOpenBLAS(b *testing.B) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, threads := range []int{1, 2} {
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, n := range []int{256, 512, 1024, 2048} {
				b.Run(fmt.Sprintf("tA=%c/n=%d/threads=%d", tA, n, threads), func(b *testing.B) {
					SetThreads(threads)
					defer SetThreads(1)
					impl := solveblas.Implementation{Threads: threads}
					a, c := randMat(rng, n*n), make([]float64, n*n)
					alternate(b, threads, float64(n)*float64(n)*float64(n), nil,
						func() { impl.Dsyrk(blas.Lower, tA, n, n, 1, a, n, 0, c, n) },
						func() { Dsyrk(blas.Lower, tA, n, n, 1, a, n, 0, c, n) })
				})
			}
		}
	}
}

// BenchmarkDtrsmVsOpenBLAS alternates solvegp's and OpenBLAS's Dtrsm (side
// Left, lower triangle of order m, 1024 right-hand sides, both
// transposes) and reports median GFLOP/s (m²·n flops) and the ratio. The
// right-hand sides are restored before every call, untimed.
func BenchmarkDtrsmVsOpenBLAS(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 9))
	const n = 1024
	for _, threads := range []int{1, 2} {
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, m := range []int{256, 512, 1024, 2048} {
				b.Run(fmt.Sprintf("tA=%c/m=%d/threads=%d", tA, m, threads), func(b *testing.B) {
					SetThreads(threads)
					defer SetThreads(1)
					impl := solveblas.Implementation{Threads: threads}
					a := wellConditionedTriangle(rng, m)
					b0 := randMat(rng, m*n)
					x := make([]float64, m*n)
					alternate(b, threads, float64(m)*float64(m)*float64(n),
						func() { copy(x, b0) },
						func() { impl.Dtrsm(blas.Left, blas.Lower, tA, blas.NonUnit, m, n, 1, a, m, x, n) },
						func() { Dtrsm(blas.Left, blas.Lower, tA, blas.NonUnit, m, n, 1, a, m, x, n) })
				})
			}
		}
	}
}

// BenchmarkDtrsmRightVsOpenBLAS is BenchmarkDtrsmVsOpenBLAS for side Right
// (X·op(L) = B with 1024 rows of B and a lower triangle of order n, the
// solve inside a lower Cholesky factorization) and reports median GFLOP/s
// (n²·1024 flops) and the ratio.
func BenchmarkDtrsmRightVsOpenBLAS(b *testing.B) {
	rng := rand.New(rand.NewPCG(10, 10))
	const m = 1024
	for _, threads := range []int{1, 2} {
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, n := range []int{64, 256, 512, 1024, 2048} {
				b.Run(fmt.Sprintf("tA=%c/n=%d/threads=%d", tA, n, threads), func(b *testing.B) {
					SetThreads(threads)
					defer SetThreads(1)
					impl := solveblas.Implementation{Threads: threads}
					a := wellConditionedTriangle(rng, n)
					b0 := randMat(rng, m*n)
					x := make([]float64, m*n)
					alternate(b, threads, float64(n)*float64(n)*float64(m),
						func() { copy(x, b0) },
						func() { impl.Dtrsm(blas.Right, blas.Lower, tA, blas.NonUnit, m, n, 1, a, n, x, n) },
						func() { Dtrsm(blas.Right, blas.Lower, tA, blas.NonUnit, m, n, 1, a, n, x, n) })
				})
			}
		}
	}
}
