//go:build !purego && !noasm

package gemm

import (
	"math"

	"golang.org/x/sys/cpu"
)

// dgemmNEON accumulates the 6×8 tile A·B of the packed panels a (k·6
// values) and b (k·8 values) into ab (48 values, row-major), with each
// element's fused multiply-adds in order p = 0, 1, …, k−1 starting from zero
// (dgemm_neon_arm64.s). k may be zero. With updateTile it computes
// Reference(6, 8, k, alpha, a, b, beta, c, ldc) bit for bit
// (TestKernelsBitExact); ab[i·8+j] is the Go loop
//
//	for p := 0; p < k; p++ {
//		ab[i*8+j] = math.FMA(a[p*6+i], b[p*8+j], ab[i*8+j])
//	}
//
//go:noescape
func dgemmNEON(k int, a, b, ab *float64)

const neonMR, neonNR = 6, 8

func kernelNEON(k int, alpha float64, a, b []float64, beta float64, c []float64, ldc int) {
	var ab [neonMR * neonNR]float64
	dgemmNEON(k, first(a), first(b), &ab[0])
	updateTile(neonMR, neonNR, alpha, ab[:], beta, c, ldc)
}

// first returns a pointer to s[0], or nil for an empty slice (the kernel does
// not dereference the panels when k is zero).
func first(s []float64) *float64 {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// archKernels lists the arm64 assembly kernels; Advanced SIMD is part of
// the arm64 base architecture but is still checked through x/sys/cpu.
func archKernels() []kernelSpec {
	if !cpu.ARM64.HasASIMD {
		return nil
	}
	return []kernelSpec{{name: "neon", isa: "neon", mr: neonMR, nr: neonNR, kernel: kernelNEON, trsm: trsmNEON}}
}

// updateTile applies Reference's final update to an mr×nr tile of raw
// accumulators ab (row-major, leading dimension nr). Kernels whose assembly
// only accumulates use it to finish.
func updateTile(mr, nr int, alpha float64, ab []float64, beta float64, c []float64, ldc int) {
	for i := 0; i < mr; i++ {
		row := c[i*ldc : i*ldc+nr]
		acc := ab[i*nr : i*nr+nr]
		if beta == 0 {
			for j, x := range acc {
				row[j] = float64(alpha * x)
			}
			continue
		}
		for j, x := range acc {
			row[j] = math.FMA(beta, row[j], float64(alpha*x))
		}
	}
}
