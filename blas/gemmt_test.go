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

// TestDgemmTrapezoidRandom compares DgemmTrapezoid (and Dgemmt, its square
// case on the main diagonal) with gonum's full Dgemm on the requested
// trapezoid, for both kinds, diagonals from below the first row to beyond
// the last column, all transposes, padded strides, β = 0 with NaN in C,
// every backend, tuned and tiny cache blocks, and one to three goroutines.
// The elements outside the trapezoid hold finite guards that must survive.
func TestDgemmTrapezoidRandom(t *testing.T) {
	const guard = -12345.678
	rnd := rand.New(rand.NewPCG(21, 22))
	ref := gonum.Implementation{}
	transs := []blas.Transpose{blas.NoTrans, blas.Trans}
	// m, n, k and the diagonal; diag = 0 with m = n runs through Dgemmt.
	shapes := [][4]int{
		{1, 1, 1, 0}, {2, 2, 5, 0}, {7, 7, 3, 0}, {16, 16, 16, 0}, {33, 33, 9, 0}, {70, 70, 41, 0},
		{131, 131, 64, 0}, {200, 200, 257, 0},
		{30, 75, 20, 45}, {45, 30, 17, -13}, {29, 61, 33, 3}, {60, 24, 5, 40}, {24, 60, 6, -30},
		{17, 40, 9, 60}, {40, 17, 9, -60}, {50, 50, 12, 1}, {50, 50, 12, -1}, {3, 90, 40, 80},
	}
	for _, be := range gemm.Backends() {
		backends := []*gemm.Backend{be, be.WithBlocking(gemm.Blocking{MC: be.MR(), KC: 7, NC: 2 * be.NR()})}
		for bi, bk := range backends {
			for _, threads := range []int{1, 2, 3} {
				impl := Implementation{Threads: threads, backend: bk}
				for _, sh := range shapes {
					m, n, k, diag := sh[0], sh[1], sh[2], sh[3]
					for _, ul := range level3Uplos {
						in := func(i, j int) bool { return j-i <= diag }
						if ul == blas.Upper {
							in = func(i, j int) bool { return j-i >= diag }
						}
						for _, tA := range transs {
							for _, tB := range transs {
								name := fmt.Sprintf("%s/blocks=%d/threads=%d/m=%d,n=%d,k=%d,diag=%d/%c%c%c", be.Name(), bi, threads, m, n, k, diag, ul, tA, tB)
								aRows, aCols := m, k
								if tA == blas.Trans {
									aRows, aCols = k, m
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
								c := make([]float64, (m-1)*ldc+n)
								want := make([]float64, len(c))
								for i := 0; i < m; i++ {
									for j := 0; j < n; j++ {
										c[i*ldc+j] = guard
										if in(i, j) {
											v := 2*rnd.Float64() - 1
											want[i*ldc+j] = v
											c[i*ldc+j] = v
											if beta == 0 {
												c[i*ldc+j] = math.NaN()
											}
										}
									}
								}
								ref.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
								if m == n && diag == 0 {
									impl.Dgemmt(ul, tA, tB, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
								} else {
									impl.DgemmTrapezoid(ul, tA, tB, m, n, k, diag, alpha, a, lda, b, ldb, beta, c, ldc)
								}
								for i := 0; i < m; i++ {
									for j := 0; j < n; j++ {
										got := c[i*ldc+j]
										if !in(i, j) {
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

// TestDgemmTrapezoidExtremeDiagonals checks that diagonals far outside C,
// up to the extremes of int, give the empty and the full product.
func TestDgemmTrapezoidExtremeDiagonals(t *testing.T) {
	var impl Implementation
	m, n, k := 7, 5, 3
	a := make([]float64, m*k)
	b := make([]float64, k*n)
	for i := range a {
		a[i] = float64(i%5) - 2
	}
	for i := range b {
		b[i] = float64(i%3) + 0.5
	}
	full := make([]float64, m*n)
	gonum.Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, full, n)
	for _, c := range []struct {
		ul   blas.Uplo
		diag int
		all  bool
	}{
		{blas.Lower, math.MaxInt, true}, {blas.Lower, math.MinInt, false},
		{blas.Upper, math.MinInt, true}, {blas.Upper, math.MaxInt, false},
	} {
		got := make([]float64, m*n)
		for i := range got {
			got[i] = -7
		}
		impl.DgemmTrapezoid(c.ul, blas.NoTrans, blas.NoTrans, m, n, k, c.diag, 1, a, k, b, n, 0, got, n)
		for i, v := range got {
			want := -7.0
			if c.all {
				want = full[i]
			}
			if v != want {
				t.Fatalf("%c diag=%d: C[%d] = %v, want %v", c.ul, c.diag, i, v, want)
			}
		}
	}
}

// TestDgemmTrapezoidScale checks the α = 0 and k = 0 cases, which only
// scale the trapezoid by β (zeroing it without reading it when β = 0).
func TestDgemmTrapezoidScale(t *testing.T) {
	const guard = 7.5
	var impl Implementation
	m, n := 5, 9
	for _, ul := range level3Uplos {
		for _, diag := range []int{math.MinInt, -6, -2, 0, 3, 8, 12, math.MaxInt} {
			in := func(i, j int) bool { return j-i <= diag }
			if ul == blas.Upper {
				in = func(i, j int) bool { return j-i >= diag }
			}
			for _, beta := range []float64{0, 1, -2} {
				for _, k := range []int{0, 3} {
					c := make([]float64, m*n)
					for i := range c {
						c[i] = guard
						if beta == 0 && in(i/n, i%n) {
							c[i] = math.NaN()
						}
					}
					a := make([]float64, m*3)
					impl.DgemmTrapezoid(ul, blas.NoTrans, blas.NoTrans, m, n, k, diag, float64(1-k%2), a, 3, make([]float64, 3*n), n, beta, c, n)
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							want := guard
							if in(i, j) {
								want = beta * guard
							}
							if got := c[i*n+j]; got != want {
								t.Fatalf("%c diag=%d beta=%v k=%d: C[%d,%d] = %v, want %v", ul, diag, beta, k, i, j, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// TestDgemmtPanics checks the argument checks of Dgemmt and
// DgemmTrapezoid, which come before any trimming of an empty trapezoid.
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
		{"trapezoid negative m", func() {
			impl.DgemmTrapezoid(blas.Lower, blas.NoTrans, blas.NoTrans, -1, 2, 2, 0, 1, a, 2, a, 2, 0, a, 2)
		}},
		{"trapezoid short c", func() {
			impl.DgemmTrapezoid(blas.Upper, blas.NoTrans, blas.NoTrans, 3, 5, 1, 9, 1, a, 1, a, 5, 0, a[:14], 5)
		}},
		{"trapezoid small ldc", func() {
			impl.DgemmTrapezoid(blas.Lower, blas.NoTrans, blas.NoTrans, 2, 5, 1, -9, 1, a, 1, a, 5, 0, a, 4)
		}},
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
