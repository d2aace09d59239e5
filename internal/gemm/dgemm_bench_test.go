package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkKernel measures each micro-kernel alone on L1/L2-resident
// packed panels (k = 256), reporting GFLOP/s: the ceiling of the blocked
// GEMM on this machine.
func BenchmarkKernel(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	const k = 256
	for _, be := range Backends() {
		mr, nr := be.MR(), be.NR()
		b.Run(fmt.Sprintf("%s/%dx%d/k=%d", be.Name(), mr, nr, k), func(b *testing.B) {
			a := randSlice(rng, k*mr)
			bp := randSlice(rng, k*nr)
			c := randSlice(rng, mr*nr)
			for i := 0; i < b.N; i++ {
				be.KernelNoCheck(k, 1, a, bp, 1, c, nr)
			}
			b.ReportMetric(2*float64(mr*nr*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
