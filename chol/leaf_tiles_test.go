package chol

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/solvegp/solvegp/internal/gemm"
)

// tilesBackends returns every backend of the machine, each followed by its
// pure-Go twin: potrfTiles runs on all of them (through TrsmTile's Go
// definition where a backend has no gemm-trsm kernel).
func tilesBackends() [][2]*gemm.Backend {
	var bes [][2]*gemm.Backend
	for _, be := range gemm.Backends() {
		bes = append(bes, [2]*gemm.Backend{be, be.Twin()})
	}
	return bes
}

// tilesVariant is one run of potrfTiles: a backend and a triangle.
type tilesVariant struct {
	be    *gemm.Backend
	upper bool
}

// tilesVariants returns the four runs that must agree bit for bit: a
// backend and its twin, each on both triangles, the backend's lower first.
func tilesVariants(pair [2]*gemm.Backend) []tilesVariant {
	return []tilesVariant{{pair[0], false}, {pair[0], true}, {pair[1], false}, {pair[1], true}}
}

// tilesSizes cross the MR and NR edges of every backend (MR 4–8, NR 8–16)
// and the block-straddling cases of the row groups.
func tilesSizes() []int {
	var s []int
	for n := 1; n <= 40; n++ {
		s = append(s, n)
	}
	return append(s, 47, 48, 49, 63, 64, 65, 97, 100, 129, 200, 256)
}

// factorTiles copies the order-n SPD matrix base (stride n) into the lower
// (or upper) triangle of a NaN-filled array of stride lda, factors it with
// potrfTiles and returns the array.
func factorTiles(t *testing.T, be *gemm.Backend, upper bool, n, lda int, base []float64) []float64 {
	t.Helper()
	a := nanSlice((n-1)*lda + n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			a[at(upper, i, j, lda)] = base[i*n+j]
		}
	}
	if p, v := potrfTiles(be, upper, n, a, lda); p >= 0 {
		t.Fatalf("%s n=%d upper=%v: failed at pivot %d (%g)", be, n, upper, p, v)
	}
	return a
}

func TestPotrfTiles(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	sizes := tilesSizes()
	if raceEnabled {
		sizes = []int{1, 7, 14, 33, 65}
	}
	for _, n := range sizes {
		base := randSPD(rnd, n, n, 1e6)
		for _, pad := range []int{0, 3} {
			lda := n + pad
			for _, pair := range tilesBackends() {
				var want []float64 // the backend's lower L, stride n
				for _, v := range tilesVariants(pair) {
					be, upper := v.be, v.upper
					name := fmt.Sprintf("%s/n=%d/lda=%d/upper=%v", be, n, lda, upper)
					a := factorTiles(t, be, upper, n, lda, base)
					l := make([]float64, n*n)
					for i := 0; i < n; i++ {
						for j := 0; j < n; j++ {
							v := a[at(upper, i, j, lda)]
							if j > i {
								// The other triangle and the padding
								// are not referenced.
								if !math.IsNaN(v) {
									t.Fatalf("%s: (%d,%d) outside the triangle written", name, i, j)
								}
								continue
							}
							l[i*n+j] = v
						}
					}
					if pad > 0 {
						for i := 0; i+1 < n; i++ {
							for j := n; j < lda; j++ {
								if !math.IsNaN(a[i*lda+j]) {
									t.Fatalf("%s: padding written at (%d,%d)", name, i, j)
								}
							}
						}
					}
					if be := backwardError(n, l, n, base, n, 0); be > 4*float64(n)*0x1p-52 {
						t.Errorf("%s: backward error %g", name, be)
					}
					// A backend, its twin and both triangles do the
					// same arithmetic: bit-identical factors.
					if want == nil {
						want = l
						continue
					}
					for i, v := range l {
						if v != want[i] {
							t.Fatalf("%s: L[%d,%d] = %v, differs from %s lower's %v", name, i/n, i%n, v, pair[0], want[i])
						}
					}
				}
			}
		}
	}
}

func TestPotrfTilesFailingPivot(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{1, 6, 8, 13, 40, 65} {
		for _, p := range []int{0, 1, 5, 6, 7, 8, 12, 13, n / 2, n - 1} {
			if p >= n {
				continue
			}
			l := randLower(rnd, n)
			base := gramLower(n, l)
			var s float64
			for k := 0; k < p; k++ {
				s += l[p*n+k] * l[p*n+k]
			}
			base[p*n+p] = s - 0.5 // Schur complement −0.5 at pivot p
			for _, pair := range tilesBackends() {
				for _, v := range tilesVariants(pair) {
					be, upper := v.be, v.upper
					name := fmt.Sprintf("%s/n=%d/p=%d/upper=%v", be, n, p, upper)
					a := make([]float64, n*n)
					for i := 0; i < n; i++ {
						for j := 0; j <= i; j++ {
							a[at(upper, i, j, n)] = base[i*n+j]
						}
					}
					piv, v := potrfTiles(be, upper, n, a, n)
					if piv != p || math.Abs(v+0.5) > 1e-9 {
						t.Fatalf("%s: pivot %d value %g, want %d −0.5", name, piv, v, p)
					}
					if a[p*n+p] != v {
						t.Errorf("%s: a[p,p] = %g, want the returned value %g", name, a[p*n+p], v)
					}
					// The columns before p's block are L's.
					for i := 0; i < n; i++ {
						for j := 0; j < min(i+1, p-p%be.MR()); j++ {
							if got := a[at(upper, i, j, n)]; math.Abs(got-l[i*n+j]) > 1e-9 {
								t.Fatalf("%s: L[%d,%d] = %g, want %g", name, i, j, got, l[i*n+j])
							}
						}
					}
				}
			}
		}
	}
}
