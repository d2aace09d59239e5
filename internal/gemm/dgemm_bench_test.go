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

// BenchmarkKernelBlocked runs the default backend's full-tile kernel in the
// loop order of the blocked Dgemm at n = 1024 with the zen5 blocking (k =
// 512, an 84×512 A block of six micro-panels, a 4 MiB packed B block of 64
// panels, the tiles of a 1024×1024 C), against the same calls on one
// in-cache tile, to show what the memory costs the kernel in the driver:
//
//   - in-cache: one tile, its panels and C, over and over;
//   - blocked: the driver's order, each tile prefetching a quarter of the
//     next B panel (KernelNextNoCheck), as blas.Dgemm runs it;
//   - blocked-no-next: the same without the next-panel prefetch;
//   - blocked-c-hot: the driver's order with C confined to one row of tiles;
//   - blocked-b-l2: the driver's order cycling over four B panels (256 KiB).
func BenchmarkKernelBlocked(b *testing.B) {
	be := Default()
	if be.MR() != 14 || be.NR() != 16 {
		b.Skip("the shapes are those of the 14×16 kernels")
	}
	const kc, mr, nr, mc, ldc, panels = 512, 14, 16, 84, 1024, 64
	rng := rand.New(rand.NewPCG(3, 4))
	a := randSlice(rng, mc*kc)
	bp := randSlice(rng, panels*nr*kc)
	c := randSlice(rng, ldc*ldc)
	for _, mode := range []string{"in-cache", "blocked", "blocked-no-next", "blocked-c-hot", "blocked-b-l2"} {
		b.Run(mode, func(b *testing.B) {
			tiles := 0
			for i := 0; i < b.N; i++ {
				for ic := 0; ic+mc <= ldc; ic += mc {
					for q := 0; q < panels; q++ {
						tiles += kernelBlockedPanel(be, mode, a, bp, c, ic, q)
					}
				}
			}
			b.ReportMetric(2*float64(mr*nr*kc)*float64(tiles)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// kernelBlockedPanel runs the six tiles of B panel q against the A block
// for row block ic in BenchmarkKernelBlocked's mode and returns their count.
func kernelBlockedPanel(be *Backend, mode string, a, bp, c []float64, ic, q int) int {
	const kc, mr, nr, mc, ldc, panels = 512, 14, 16, 84, 1024, 64
	bq := q
	if mode == "blocked-b-l2" {
		bq = q % 4
	}
	for ip := 0; ip < mc/mr; ip++ {
		ap, b := a[ip*mr*kc:], bp[bq*nr*kc:]
		cc := c[(ic+ip*mr)*ldc+q*nr:]
		switch mode {
		case "in-cache":
			ap, b, cc = a, bp, c
		case "blocked-c-hot":
			cc = c[ip*mr*ldc+q*nr:]
		}
		if mode == "in-cache" || mode == "blocked-no-next" {
			be.KernelNoCheck(kc, 1, ap, b, 1, cc, ldc)
			continue
		}
		next := bp[bq*nr*kc : bq*nr*kc+NextPrefetch(kc)]
		if q+1 < panels && ip < 4 {
			next = bp[(q+1)*nr*kc+ip*NextPrefetch(kc):]
		}
		be.KernelNextNoCheck(kc, 1, ap, b, 1, cc, ldc, next)
	}
	return mc / mr
}
