package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/solvegp/solvegp/blas"
)

// TestTriangleTiles checks packTriPanels and tileMul on every backend
// against a plain triple loop: C = beta·C + op(T)·X for a lower triangle T
// whose strict upper part holds garbage (which must be ignored), op(T) = T
// or Tᵀ, with X of m×c, full and partial tiles, and C with a row stride
// both wider and narrower than the kernel tile.
func TestTriangleTiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, be := range blas.Kernels() {
		mr, nr := be.MR(), be.NR()
		for _, m := range []int{1, 5, 9, 17} {
			for _, c := range []int{1, 7, 8, 13} {
				for _, upper := range []bool{false, true} {
					for _, beta := range []float64{0, 1} {
						name := fmt.Sprintf("%s/m=%d/c=%d/upper=%v/beta=%v", be.Name(), m, c, upper, beta)
						tri := make([]float64, m*m)
						for i := range tri {
							tri[i] = rng.NormFloat64()
							if i%m > i/m {
								tri[i] = math.NaN() // outside the triangle
							}
						}
						x := make([]float64, m*c)
						for i := range x {
							x[i] = rng.NormFloat64()
						}
						c0 := make([]float64, m*c)
						for i := range c0 {
							c0[i] = rng.NormFloat64()
						}
						pt := make([]float64, blas.PackedLen(mr, m, m))
						packTriPanels(mr, pt, tri, m, upper)
						px := make([]float64, (c+nr-1)/nr*nr*m)
						blas.PackB(nr, px, x, c, false, m, c)
						got := append([]float64(nil), c0...)
						tile := make([]float64, mr*nr)
						for jc := 0; jc < c; jc += nr {
							for i0 := 0; i0 < m; i0 += mr {
								rows := min(mr, m-i0)
								k0, k1 := 0, min(m, i0+rows)
								if upper {
									k0, k1 = i0, m
								}
								tileMul(be, rows, min(nr, c-jc), k1-k0, pt[i0*m+k0*mr:], px[jc*m+k0*nr:], beta, got[i0*c+jc:], c, tile)
							}
						}
						for i := 0; i < m; i++ {
							for j := 0; j < c; j++ {
								want := beta * c0[i*c+j]
								for k := 0; k < m; k++ {
									tik := 0.0
									switch {
									case !upper && k <= i:
										tik = tri[i*m+k]
									case upper && k >= i:
										tik = tri[k*m+i]
									}
									want += tik * x[k*c+j]
								}
								if d := math.Abs(got[i*c+j] - want); !(d <= 1e-12*(1+math.Abs(want))) {
									t.Fatalf("%s: C[%d,%d] = %v, want %v", name, i, j, got[i*c+j], want)
								}
							}
						}
					}
				}
			}
		}
	}
}
