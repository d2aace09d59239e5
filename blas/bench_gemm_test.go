package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/solvegp/solvegp/internal/gemm"
)

type benchDgemmer interface {
	Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int)
}

// benchDgemm times C := A·B (+ C) for one implementation and reports GFLOP/s.
func benchDgemm(b *testing.B, impl benchDgemmer, tA, tB blas.Transpose, m, n, k int) {
	rng := rand.New(rand.NewPCG(uint64(m), uint64(n*k)))
	lda, ldb := k, n
	if tA != blas.NoTrans {
		lda = m
	}
	if tB != blas.NoTrans {
		ldb = k
	}
	a := make([]float64, m*k)
	bb := make([]float64, k*n)
	c := make([]float64, m*n)
	for i := range a {
		a[i] = rng.Float64()
	}
	for i := range bb {
		bb[i] = rng.Float64()
	}
	impl.Dgemm(tA, tB, m, n, k, 1, a, lda, bb, ldb, 0, c, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		impl.Dgemm(tA, tB, m, n, k, 1, a, lda, bb, ldb, 0, c, n)
	}
	b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// benchShortMax is the largest m·n·k that the slow implementations (the
// portable Go kernel and gonum) are benchmarked at with -short, so that CI's
// benchmark smoke run stays fast.
const benchShortMax = 256 * 256 * 256

// benchDgemmAll runs one shape on every backend at 1 and 2 goroutines, and on
// gonum's native implementation.
func benchDgemmAll(b *testing.B, name string, tA, tB blas.Transpose, m, n, k int) {
	slowSkip := func(b *testing.B) {
		if testing.Short() && m*n*k > benchShortMax {
			b.Skip("slow implementation at a large size skipped with -short")
		}
	}
	for _, be := range gemm.Backends() {
		for _, threads := range []int{1, 2} {
			impl := Implementation{backend: be, Threads: threads}
			b.Run(fmt.Sprintf("%s/%s/threads=%d", name, be.Name(), threads), func(b *testing.B) {
				if be.Name() == "generic" {
					slowSkip(b)
				}
				benchDgemm(b, impl, tA, tB, m, n, k)
			})
		}
	}
	b.Run(name+"/gonum", func(b *testing.B) {
		slowSkip(b)
		benchDgemm(b, gonum.Implementation{}, tA, tB, m, n, k)
	})
}

// BenchmarkDgemmSquare: C = A·B with n×n matrices.
func BenchmarkDgemmSquare(b *testing.B) {
	for _, n := range []int{16, 32, 64, 128, 256, 512, 1024, 2048} {
		benchDgemmAll(b, fmt.Sprintf("n=%d", n), blas.NoTrans, blas.NoTrans, n, n, n)
	}
}

// BenchmarkDgemmGP: the shapes of the SOLVE-GP bound: (M×M)·(M×1024) and
// Aᵀ·A with A of size 1024×M.
func BenchmarkDgemmGP(b *testing.B) {
	for _, m := range []int{1024, 2048} {
		benchDgemmAll(b, fmt.Sprintf("KxV/M=%d", m), blas.NoTrans, blas.NoTrans, m, 1024, m)
		benchDgemmAll(b, fmt.Sprintf("AtA/M=%d", m), blas.Trans, blas.NoTrans, m, m, 1024)
	}
}

// BenchmarkDgemmSkinny: panel-update shapes used by the blocked level-3
// routines and Cholesky (small inner dimension or a thin operand).
func BenchmarkDgemmSkinny(b *testing.B) {
	for _, s := range []struct{ m, n, k int }{{1024, 1024, 64}, {1024, 1024, 128}, {64, 1024, 1024}, {1024, 64, 1024}, {1024, 8, 1024}} {
		benchDgemmAll(b, fmt.Sprintf("m=%d,n=%d,k=%d", s.m, s.n, s.k), blas.NoTrans, blas.NoTrans, s.m, s.n, s.k)
	}
}
