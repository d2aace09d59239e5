// Benchmarks of the pack routines on the blocks the AVX-512 Dgemm packs at n = 1024.

package gemm

import "testing"

func BenchmarkPackA(b *testing.B) {
	const m, k, lda = 504, 128, 1024
	a := make([]float64, m*lda)
	dst := make([]float64, (m+13)/14*14*k)
	for _, tr := range []bool{false, true} {
		b.Run(map[bool]string{false: "N", true: "T"}[tr], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				PackA(14, dst, a, lda, tr, m, k)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*m*k), "ns/elem")
		})
	}
}

func BenchmarkPackB(b *testing.B) {
	const n, k, ldb = 1024, 128, 1024
	bb := make([]float64, 1024*ldb)
	dst := make([]float64, n*k)
	for _, tr := range []bool{false, true} {
		b.Run(map[bool]string{false: "N", true: "T"}[tr], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				PackB(16, dst, bb, ldb, tr, k, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n*k), "ns/elem")
		})
	}
}
