package kernel

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Benchmarks at the sizes of one SOLVE-GP training step: d = 8,
// batch N = 1024, M inducing points.
func BenchmarkMatrix(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const d = 8
	for _, f := range []Family{RBF, Matern32} {
		k, _ := NewStationary(f, d, 1.2, 1, ARD())
		for _, sz := range []struct{ n, m int }{{1024, 1024}, {2048, 1024}} {
			x := randDense(rng, sz.n, d, 1)
			z := randDense(rng, sz.m, d, 1)
			K := mat.NewDense(sz.n, sz.m, nil)
			b.Run(fmt.Sprintf("%v/cross/%dx%d", f, sz.n, sz.m), func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := processCPUTime()
				for i := 0; i < b.N; i++ {
					k.Matrix(K, x, z)
				}
				b.ReportMetric(float64(processCPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
			Ks := mat.NewDense(sz.n, sz.n, nil)
			b.Run(fmt.Sprintf("%v/sym/%d", f, sz.n), func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := processCPUTime()
				for i := 0; i < b.N; i++ {
					k.Matrix(Ks, x, x)
				}
				b.ReportMetric(float64(processCPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

func BenchmarkMatrixGrad(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	const d = 8
	for _, f := range []Family{RBF, Matern32} {
		k, _ := NewStationary(f, d, 1.2, 1, ARD())
		dp := make([]float64, k.NumParams())
		for _, sz := range []struct{ n, m int }{{1024, 1024}, {2048, 1024}} {
			x := randDense(rng, sz.n, d, 1)
			z := randDense(rng, sz.m, d, 1)
			K := mat.NewDense(sz.n, sz.m, nil)
			k.Matrix(K, x, z)
			dK := randDense(rng, sz.n, sz.m, 1)
			dx := mat.NewDense(sz.n, d, nil)
			dz := mat.NewDense(sz.m, d, nil)
			b.Run(fmt.Sprintf("%v/cross/%dx%d", f, sz.n, sz.m), func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := processCPUTime()
				for i := 0; i < b.N; i++ {
					k.MatrixGrad(dK, K, x, z, dx, dz, dp)
				}
				b.ReportMetric(float64(processCPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
			Ks := mat.NewDense(sz.n, sz.n, nil)
			k.Matrix(Ks, x, x)
			dKs := randDense(rng, sz.n, sz.n, 1)
			b.Run(fmt.Sprintf("%v/sym/%d", f, sz.n), func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := processCPUTime()
				for i := 0; i < b.N; i++ {
					k.MatrixGrad(dKs, Ks, x, x, dx, dx, dp)
				}
				b.ReportMetric(float64(processCPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
