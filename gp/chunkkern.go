package gp

import (
	"github.com/solvegp/solvegp/blas"
)

// Micro-kernel products for the column-chunked loops (chunks.go). Their
// operands are small (m ≤ 256 rows, a chunk of c ≤ 512 columns) and each
// is used L times per chunk, so the loops pack every operand once, in the
// micro-kernels' panel formats (blas.PackA, blas.PackB), and call the kernel
// tile by tile: the chunk of E or B for all L latent functions, the
// triangles T_lᵀ and P_l for all chunks, and F̄_l for its two products.
// Going through the blas routines instead repacked the shared operands in
// every call and wrote P_l·F̄_l to scratch before adding it to B̄.

// packTriPanels packs the m×m triangle op(T) into the micro-kernel's row panels
// (blas.PackA), for a lower triangle T stored row-major with stride m:
// op(T) = Tᵀ, upper, when upper is true, and T otherwise. Entries outside
// the triangle are packed as zeros, whatever T holds there.
func packTriPanels(mr int, dst, t []float64, m int, upper bool) {
	blas.PackA(mr, dst, t, m, upper, m, m)
	for i0 := 0; i0 < m; i0 += mr {
		panel := dst[i0*m : i0*m+mr*m]
		for r := 0; r < min(mr, m-i0); r++ {
			i := i0 + r
			if upper {
				for k := 0; k < i; k++ {
					panel[k*mr+r] = 0
				}
			} else {
				for k := i + 1; k < m; k++ {
					panel[k*mr+r] = 0
				}
			}
		}
	}
}

// packTriangles packs the m×m triangles op(T_l) of tris (see
// packTriPanels) one after another into dst, blas.PackedLen(mr, m, m) values
// each, growing dst as needed, and returns it.
func packTriangles(mr int, dst []float64, tris [][]float64, m int, upper bool) []float64 {
	per := blas.PackedLen(mr, m, m)
	dst = grow(dst, len(tris)*per)
	for l, t := range tris {
		packTriPanels(mr, dst[l*per:], t, m, upper)
	}
	return dst
}

// tileMul sets the rows×cols block C (row stride ldc) to beta·C + A·B, with
// A the k columns of one packed row panel and B the k rows of one packed
// column panel, beta 0 or 1. Blocks narrower than the kernel's tile, or
// rows too close together for it, go through the scratch tile (MR·NR
// values).
func tileMul(kern blas.Kernel, rows, cols, k int, a, b []float64, beta float64, c []float64, ldc int, tile []float64) {
	nr := kern.NR()
	if cols == nr && ldc >= nr {
		kern.MulTile(rows, k, 1, a, b, beta, c, ldc)
		return
	}
	kern.MulTile(rows, k, 1, a, b, 0, tile, nr)
	for r := 0; r < rows; r++ {
		src, dst := tile[r*nr:r*nr+cols], c[r*ldc:r*ldc+cols]
		if beta == 0 {
			copy(dst, src)
			continue
		}
		for j, v := range src {
			dst[j] += v
		}
	}
}
