package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/solvegp/solvegp/internal/gemm"
)

// TestTrsmTiles runs the tiled solvers directly on every backend and on
// every backend's twin, whose TrsmTile is the Go definition: Dtrsm uses
// them only on backends with a gemm-trsm kernel, but the algorithm must be
// right for every tile shape. Orders cover partial first and last blocks
// (orders below and between multiples of MR), right-hand sides partial
// panels, and B has padded rows whose padding must not be written.
func TestTrsmTiles(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	ref := gonum.Implementation{}
	var bes []*gemm.Backend
	for _, be := range gemm.Backends() {
		bes = append(bes, be, be.Twin())
	}
	for _, be := range bes {
		impl := Implementation{Threads: 1, backend: be}
		mr, nr := be.MR(), be.NR()
		for _, order := range []int{1, mr - 1, mr + 1, 2*mr + 3, 37} {
			for _, rhs := range []int{nr, nr + 3, 3*nr + 1} {
				for _, s := range level3Sides {
					for _, ul := range level3Uplos {
						for _, tA := range level3Transs {
							for _, d := range level3Diags {
								m, n := order, rhs
								if s == blas.Right {
									m, n = rhs, order
								}
								pad := rnd.IntN(4)
								alpha := []float64{1, -0.75, 2.5}[rnd.IntN(3)]
								name := fmt.Sprintf("%s/%v,%v,%v,%v/m=%d,n=%d,pad=%d,alpha=%v", be.Name(), s, ul, tA, d, m, n, pad, alpha)
								a := level3TriMat(rnd, ul, d, order, order+pad)
								b := newLevel3Mat(m, n, n+pad, func(i, j int) float64 { return 2*rnd.Float64() - 1 })
								a0, b0 := a.clone(), b.clone()
								want := b.clone()
								if s == blas.Left {
									impl.trsmLeftTiles(ul, tA, d, m, n, alpha, a.data(), a.ld, b.data(), b.ld)
								} else {
									impl.trsmRightTiles(ul, tA, d, m, n, alpha, a.data(), a.ld, b.data(), b.ld)
								}
								ref.Dtrsm(s, ul, tA, d, m, n, alpha, a0.data(), a0.ld, want.data(), want.ld)
								a0.checkUnchanged(t, name+": A", a, nil)
								b0.checkUnchanged(t, name+": B", b, func(i, j int) bool { return true })
								diff, nrm := level3Diff(b, want, nil)
								if tol := 8 * float64(order+2) * level3Eps * (nrm + 1e-300); !(diff <= tol) {
									t.Errorf("%s: ‖X−Xgonum‖ = %v > %v", name, diff, tol)
								}
							}
						}
					}
				}
			}
		}
	}
}
