package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/solvegp/solvegp/internal/gemm"
)

// TestDgemmtRandom compares Dgemmt with gonum's full Dgemm on the requested
// triangle, for both triangles, all transposes, padded strides, β = 0 with
// NaN in C, every backend, tuned and tiny cache blocks, and one to three
// goroutines. The other triangle holds finite guards that must survive.
func TestDgemmtRandom(t *testing.T) {
	const guard = -12345.678
	rnd := rand.New(rand.NewPCG(21, 22))
	ref := gonum.Implementation{}
	transs := []blas.Transpose{blas.NoTrans, blas.Trans}
	for _, be := range gemm.Backends() {
		backends := []*gemm.Backend{be, be.WithBlocking(gemm.Blocking{MC: be.MR(), KC: 7, NC: 2 * be.NR()})}
		for bi, bk := range backends {
			for _, threads := range []int{1, 2, 3} {
				impl := Implementation{Threads: threads, backend: bk}
				for _, nk := range [][2]int{{1, 1}, {2, 5}, {7, 3}, {16, 16}, {33, 9}, {70, 41}, {131, 64}, {200, 257}} {
					n, k := nk[0], nk[1]
					for _, ul := range level3Uplos {
						for _, tA := range transs {
							for _, tB := range transs {
								name := fmt.Sprintf("%s/blocks=%d/threads=%d/n=%d,k=%d/%c%c%c", be.Name(), bi, threads, n, k, ul, tA, tB)
								aRows, aCols := n, k
								if tA == blas.Trans {
									aRows, aCols = k, n
								}
								bRows, bCols := k, n
								if tB == blas.Trans {
									bRows, bCols = n, k
								}
								lda, ldb, ldc := aCols+rnd.IntN(3), bCols+rnd.IntN(3), n+rnd.IntN(3)
								a := make([]float64, (aRows-1)*lda+aCols)
								b := make([]float64, (bRows-1)*ldb+bCols)
								for i := range a {
									a[i] = 2*rnd.Float64() - 1
								}
								for i := range b {
									b[i] = 2*rnd.Float64() - 1
								}
								alpha := []float64{1, -0.5, 2}[rnd.IntN(3)]
								beta := []float64{0, 1, 0.5}[rnd.IntN(3)]
								tri := level3Tri(ul)
								c := make([]float64, (n-1)*ldc+n)
								want := make([]float64, len(c))
								for i := 0; i < n; i++ {
									for j := 0; j < n; j++ {
										c[i*ldc+j] = guard
										if tri(i, j) {
											v := 2*rnd.Float64() - 1
											want[i*ldc+j] = v
											c[i*ldc+j] = v
											if beta == 0 {
												c[i*ldc+j] = math.NaN()
											}
										}
									}
								}
								ref.Dgemm(tA, tB, n, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
								impl.Dgemmt(ul, tA, tB, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
								for i := 0; i < n; i++ {
									for j := 0; j < n; j++ {
										got := c[i*ldc+j]
										if !tri(i, j) {
											if got != guard {
												t.Fatalf("%s: guard (%d,%d) overwritten with %v", name, i, j, got)
											}
											continue
										}
										if w := want[i*ldc+j]; math.Abs(got-w) > 1e-13*float64(k+1) || math.IsNaN(got) {
											t.Fatalf("%s: C[%d,%d] = %v, want %v", name, i, j, got, w)
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestDgemmtPanics checks Dgemmt's argument checks.
func TestDgemmtPanics(t *testing.T) {
	var impl Implementation
	a := make([]float64, 16)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"bad uplo", func() { impl.Dgemmt(blas.All, blas.NoTrans, blas.NoTrans, 2, 2, 1, a, 2, a, 2, 0, a, 2) }},
		{"bad transpose", func() { impl.Dgemmt(blas.Lower, 'X', blas.NoTrans, 2, 2, 1, a, 2, a, 2, 0, a, 2) }},
		{"negative n", func() { impl.Dgemmt(blas.Lower, blas.NoTrans, blas.NoTrans, -1, 2, 1, a, 2, a, 2, 0, a, 2) }},
		{"negative k", func() { impl.Dgemmt(blas.Lower, blas.NoTrans, blas.NoTrans, 2, -1, 1, a, 2, a, 2, 0, a, 2) }},
		{"small lda", func() { impl.Dgemmt(blas.Lower, blas.NoTrans, blas.NoTrans, 2, 3, 1, a, 2, a, 3, 0, a, 2) }},
		{"small ldb", func() { impl.Dgemmt(blas.Lower, blas.NoTrans, blas.NoTrans, 3, 2, 1, a, 2, a, 2, 0, a, 3) }},
		{"small ldc", func() { impl.Dgemmt(blas.Lower, blas.NoTrans, blas.NoTrans, 3, 2, 1, a, 2, a, 3, 0, a, 2) }},
		{"short a", func() {
			impl.Dgemmt(blas.Lower, blas.NoTrans, blas.NoTrans, 4, 5, 1, a, 5, a[:0], 4, 0, make([]float64, 16), 4)
		}},
		{"short c", func() { impl.Dgemmt(blas.Lower, blas.NoTrans, blas.NoTrans, 4, 4, 1, a, 4, a, 4, 0, a[:15], 4) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", c.name)
				}
			}()
			c.f()
		}()
	}
}
