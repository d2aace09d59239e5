package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/blas/testblas"

	"github.com/solvegp/solvegp/internal/gemm"
)

// Implementation must stay a drop-in gonum BLAS (blas64.Use accepts it).
var _ blas.Float64 = Implementation{}

// gemmImpls returns one Implementation per usable backend, each also with a
// tiny blocking so that small problems cross every MC, KC and NC boundary.
func gemmImpls() []struct {
	name string
	impl Implementation
} {
	var out []struct {
		name string
		impl Implementation
	}
	for _, be := range gemm.Backends() {
		out = append(out, struct {
			name string
			impl Implementation
		}{be.Name(), Implementation{backend: be}})
		small := be.WithBlocking(gemm.Blocking{MC: 2 * be.MR(), KC: 7, NC: 3 * be.NR()})
		out = append(out, struct {
			name string
			impl Implementation
		}{be.Name() + "-smallblocks", Implementation{backend: small, Threads: 3}})
	}
	return out
}

func TestDgemmGonumConformance(t *testing.T) {
	for _, tc := range gemmImpls() {
		t.Run(tc.name, func(t *testing.T) { testblas.TestDgemm(t, tc.impl) })
	}
}

func TestDgemmDefaultBackend(t *testing.T) {
	if got := (Implementation{}).KernelBackend(); got != gemm.Default() {
		t.Fatalf("zero Implementation uses %v, want %v", got, gemm.Default())
	}
	if want := os.Getenv("SOLVEGP_EXPECT_BACKEND"); want != "" && gemm.Default().ISA() != want {
		t.Fatalf("default backend ISA is %q, SOLVEGP_EXPECT_BACKEND=%q", gemm.Default().ISA(), want)
	}
}

// dgemmCheck runs impl.Dgemm on random data with padded leading dimensions
// and guard values and compares it with gonum, element by element, against
// the bound 2(k+3)ε(|α|·Σ|A||B| + |β||C|).
func dgemmCheck(t *testing.T, rng *rand.Rand, impl Implementation, tA, tB blas.Transpose, m, n, k int, alpha, beta float64) {
	t.Helper()
	const guard = 7.125e300
	pad := 1 + rng.IntN(3)
	ar, ac := m, k
	if tA != blas.NoTrans {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB != blas.NoTrans {
		br, bc = n, k
	}
	lda, ldb, ldc := max(1, ac+pad), max(1, bc+pad), max(1, n+pad)
	fill := func(rows, cols, ld int) []float64 {
		s := make([]float64, rows*ld+pad)
		for i := range s {
			s[i] = guard
		}
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				s[i*ld+j] = rng.NormFloat64()
			}
		}
		return s
	}
	a, b := fill(ar, ac, lda), fill(br, bc, ldb)
	c := fill(m, n, ldc)
	if beta == 0 {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				c[i*ldc+j] = math.NaN()
			}
		}
	}
	a0, b0, c0 := append([]float64(nil), a...), append([]float64(nil), b...), append([]float64(nil), c...)
	want := append([]float64(nil), c...)
	gonum.Implementation{}.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
	impl.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	at := func(i, p int) float64 {
		if tA != blas.NoTrans {
			return a[p*lda+i]
		}
		return a[i*lda+p]
	}
	bt := func(p, j int) float64 {
		if tB != blas.NoTrans {
			return b[j*ldb+p]
		}
		return b[p*ldb+j]
	}
	desc := fmt.Sprintf("tA=%c tB=%c m=%d n=%d k=%d alpha=%v beta=%v", tA, tB, m, n, k, alpha, beta)
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(a0[i]) {
			t.Fatalf("%s: A modified at %d", desc, i)
		}
	}
	for i := range b {
		if math.Float64bits(b[i]) != math.Float64bits(b0[i]) {
			t.Fatalf("%s: B modified at %d", desc, i)
		}
	}
	for idx := range c {
		i, j := idx/ldc, idx%ldc
		if i >= m || j >= n {
			if math.Float64bits(c[idx]) != math.Float64bits(c0[idx]) {
				t.Fatalf("%s: wrote outside C at row %d col %d", desc, i, j)
			}
			continue
		}
		var bound float64
		for p := 0; p < k; p++ {
			bound += math.Abs(at(i, p) * bt(p, j))
		}
		bound = math.Abs(alpha) * bound
		if beta != 0 {
			bound += math.Abs(beta * c0[idx])
		}
		tol := 2 * float64(k+3) * 0x1p-52 * bound
		if d := math.Abs(c[idx] - want[idx]); !(d <= tol) {
			t.Fatalf("%s: C[%d,%d] = %v, want %v (|diff| %g > tol %g)", desc, i, j, c[idx], want[idx], d, tol)
		}
	}
}

var gemmTrans = []blas.Transpose{blas.NoTrans, blas.Trans, blas.ConjTrans}

// TestDgemmEdges sweeps sizes around every tile and block boundary of each
// backend (MR, NR, MC, KC, NC ± 1, 0 and 1), all transposes and special α, β.
func TestDgemmEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range gemmImpls() {
		be := tc.impl.KernelBackend()
		mr, nr, bl := be.MR(), be.NR(), be.Blocking()
		ms := []int{0, 1, mr - 1, mr, mr + 1, 2*mr + 1, bl.MC - 1, bl.MC, bl.MC + 1}
		ns := []int{0, 1, nr - 1, nr, nr + 1, 2*nr + 1, bl.NC - 1, bl.NC + 1}
		ks := []int{0, 1, 2, bl.KC - 1, bl.KC, bl.KC + 1, 2*bl.KC + 1}
		small := tc.name != be.Name() // tiny blocks: full cross product is cheap
		t.Run(tc.name, func(t *testing.T) {
			count := 0
			for _, m := range ms {
				for _, n := range ns {
					for _, k := range ks {
						if m < 0 || n < 0 || k < 0 {
							continue
						}
						// Keep the default-blocking sweep cheap: only one large dimension at a time.
						big := 0
						for _, d := range []int{m, n, k} {
							if d > 64 {
								big++
							}
						}
						if !small && big > 1 {
							continue
						}
						if !small && rng.IntN(3) != 0 {
							continue
						}
						tA := gemmTrans[rng.IntN(3)]
						tB := gemmTrans[rng.IntN(3)]
						alpha := []float64{1, -1.5, 0, 0.25}[rng.IntN(4)]
						beta := []float64{0, 1, -0.5, 2}[rng.IntN(4)]
						dgemmCheck(t, rng, tc.impl, tA, tB, m, n, k, alpha, beta)
						count++
					}
				}
			}
			t.Logf("%d cases", count)
		})
	}
}

// TestDgemmTransposesAndScalars covers every transpose pair and α/β class
// on shapes that exercise full and partial tiles and the parallel path.
func TestDgemmTransposesAndScalars(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, tc := range gemmImpls() {
		t.Run(tc.name, func(t *testing.T) {
			for _, tA := range gemmTrans[:2] {
				for _, tB := range gemmTrans[:2] {
					for _, alpha := range []float64{0, 1, -0.75} {
						for _, beta := range []float64{0, 1, 0.5} {
							dgemmCheck(t, rng, tc.impl, tA, tB, 37, 41, 29, alpha, beta)
						}
					}
					// Large enough for several goroutines.
					dgemmCheck(t, rng, tc.impl, tA, tB, 131, 97, 103, 1.25, 0)
					dgemmCheck(t, rng, tc.impl, tA, tB, 3, 517, 611, -1, 1)
				}
			}
		})
	}
}

// TestDgemmThreads checks that results do not depend on the goroutine count
// beyond rounding, for thread counts above and below the work available.
func TestDgemmThreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	be := gemm.Default()
	for _, threads := range []int{1, 2, 3, 8} {
		impl := Implementation{backend: be, Threads: threads}
		dgemmCheck(t, rng, impl, blas.NoTrans, blas.NoTrans, 200, 150, 120, 1, 0.5)
		dgemmCheck(t, rng, impl, blas.Trans, blas.NoTrans, 20, 700, 90, 1, 0)
		dgemmCheck(t, rng, impl, blas.NoTrans, blas.Trans, 700, 20, 90, 1, 0)
	}
}

// TestDgemmThreadsBitwise checks that Dgemm's result does not depend on the
// number of goroutines, bit for bit, for shapes above the parallel
// threshold whose partition splits only columns (the shares then run the
// loops independently, columnShare) or rows and columns, with blockings
// small enough that each share crosses many MC, KC and NC blocks, partial
// panels included.
func TestDgemmThreadsBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, be := range gemm.Backends() {
		for _, bl := range []gemm.Blocking{{}, {MC: 2 * be.MR(), KC: 9, NC: 3 * be.NR()}} {
			b := be.WithBlocking(bl)
			for _, sh := range [][3]int{{64, 2000, 64}, {64, 64, 3000}, {100, 101, 97}, {13, 5000, 40}, {300, 257, 130}} {
				m, n, k := sh[0], sh[1], sh[2]
				for _, tr := range [][2]blas.Transpose{{blas.NoTrans, blas.NoTrans}, {blas.Trans, blas.Trans}} {
					a := make([]float64, m*k)
					bb := make([]float64, k*n)
					c0 := make([]float64, m*n)
					for _, x := range [][]float64{a, bb, c0} {
						for i := range x {
							x[i] = rng.NormFloat64()
						}
					}
					lda, ldb := k, n
					if tr[0] == blas.Trans {
						lda = m
					}
					if tr[1] == blas.Trans {
						ldb = k
					}
					var want []float64
					threadCounts := []int{1, 2, 3, 5}
					if testing.Short() { // the arm64 run under qemu
						threadCounts = []int{1, 3}
					}
					for _, threads := range threadCounts {
						c := append([]float64(nil), c0...)
						Implementation{backend: b, Threads: threads}.Dgemm(tr[0], tr[1], m, n, k, 1.5, a, lda, bb, ldb, 0.5, c, n)
						if threads == 1 {
							want = c
							continue
						}
						for i := range c {
							if math.Float64bits(c[i]) != math.Float64bits(want[i]) {
								t.Fatalf("%s %+v %v %v: C[%d] = %v with %d goroutines, %v with one", be.Name(), bl, sh, tr, i, c[i], threads, want[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestDgemmPanics checks that argument errors panic with gonum's messages.
func TestDgemmPanics(t *testing.T) {
	a := make([]float64, 100)
	type call struct {
		tA, tB                 blas.Transpose
		m, n, k, lda, ldb, ldc int
		la, lb, lc             int
	}
	cases := []call{
		{'X', blas.NoTrans, 2, 2, 2, 2, 2, 2, 4, 4, 4},
		{blas.NoTrans, 'X', 2, 2, 2, 2, 2, 2, 4, 4, 4},
		{blas.NoTrans, blas.NoTrans, -1, 2, 2, 2, 2, 2, 4, 4, 4},
		{blas.NoTrans, blas.NoTrans, 2, -1, 2, 2, 2, 2, 4, 4, 4},
		{blas.NoTrans, blas.NoTrans, 2, 2, -1, 2, 2, 2, 4, 4, 4},
		{blas.NoTrans, blas.NoTrans, 2, 2, 3, 2, 2, 2, 9, 9, 9},
		{blas.Trans, blas.NoTrans, 3, 2, 2, 2, 2, 2, 9, 9, 9},
		{blas.NoTrans, blas.NoTrans, 2, 3, 2, 2, 2, 3, 9, 9, 9},
		{blas.NoTrans, blas.Trans, 2, 2, 3, 3, 2, 2, 9, 9, 9},
		{blas.NoTrans, blas.NoTrans, 2, 3, 2, 2, 3, 2, 9, 9, 9},
		{blas.NoTrans, blas.NoTrans, 2, 2, 2, 2, 2, 2, 3, 4, 4},
		{blas.Trans, blas.NoTrans, 2, 2, 2, 2, 2, 2, 3, 4, 4},
		{blas.NoTrans, blas.NoTrans, 2, 2, 2, 2, 2, 2, 4, 3, 4},
		{blas.NoTrans, blas.Trans, 2, 2, 2, 2, 2, 2, 4, 3, 4},
		{blas.NoTrans, blas.NoTrans, 2, 2, 2, 2, 2, 2, 4, 4, 3},
		{blas.NoTrans, blas.NoTrans, 0, 2, 2, 2, 2, 2, 0, 0, 0}, // no panic
	}
	catch := func(f func()) (msg any) {
		defer func() { msg = recover() }()
		f()
		return nil
	}
	for i, cs := range cases {
		run := func(impl interface {
			Dgemm(blas.Transpose, blas.Transpose, int, int, int, float64, []float64, int, []float64, int, float64, []float64, int)
		}) any {
			return catch(func() {
				impl.Dgemm(cs.tA, cs.tB, cs.m, cs.n, cs.k, 1, a[:cs.la], cs.lda, a[:cs.lb], cs.ldb, 0, make([]float64, cs.lc), cs.ldc)
			})
		}
		got, want := run(Implementation{}), run(gonum.Implementation{})
		if got != want {
			t.Errorf("case %d %+v: panic %v, gonum panics %v", i, cs, got, want)
		}
		if i < len(cases)-1 && want == nil {
			t.Errorf("case %d: expected gonum to panic", i)
		}
	}
}

// TestDgemmtThreadsBitwise checks that the triangle-restricted products
// (Dgemmt, Dsyrk and a DgemmTrapezoid off the main diagonal) give the same bits for any goroutine budget, whose
// rows are split by work in each block (balanceRows), and that the strict
// other triangle stays untouched. With the tiny blocking every call has
// many KC blocks and row groups end inside tiles of the diagonal.
func TestDgemmtThreadsBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	shapes := [][2]int{{64, 3000}, {100, 97}, {300, 130}, {257, 40}, {9, 600}}
	threadCounts := []int{1, 2, 3, 5}
	if testing.Short() { // the arm64 run under qemu
		shapes, threadCounts = [][2]int{{100, 97}, {64, 700}}, []int{1, 3}
	}
	for _, be := range gemm.Backends() {
		for _, bl := range []gemm.Blocking{{}, {MC: 2 * be.MR(), KC: 9, NC: 3 * be.NR()}} {
			b := be.WithBlocking(bl)
			for _, sh := range shapes {
				n, k := sh[0], sh[1]
				for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
					for _, tr := range [][2]blas.Transpose{{blas.NoTrans, blas.Trans}, {blas.Trans, blas.NoTrans}} {
						a := make([]float64, n*k)
						bb := make([]float64, k*n)
						c0 := make([]float64, n*n)
						for _, x := range [][]float64{a, bb, c0} {
							for i := range x {
								x[i] = rng.NormFloat64()
							}
						}
						lda, ldb := k, k // op(A) n×k, op(B) k×n
						if tr[0] == blas.Trans {
							lda = n
						}
						if tr[1] == blas.NoTrans {
							ldb = n
						}
						var want, wantSyrk, wantTrap []float64
						diag := n / 4 // the trapezoid's diagonal, inside C for both kinds
						if ul == blas.Upper {
							diag = -diag
						}
						for _, threads := range threadCounts {
							impl := Implementation{backend: b, Threads: threads}
							c := append([]float64(nil), c0...)
							impl.Dgemmt(ul, tr[0], tr[1], n, k, 1.5, a, lda, bb, ldb, 0.5, c, n)
							cs := append([]float64(nil), c0...)
							impl.Dsyrk(ul, tr[0], n, k, -0.75, a, lda, 2, cs, n)
							ct := append([]float64(nil), c0...)
							impl.DgemmTrapezoid(ul, tr[0], tr[1], n, n, k, diag, -1, a, lda, bb, ldb, 1, ct, n)
							for i := 0; i < n; i++ {
								for j := 0; j < n; j++ {
									if (ul == blas.Lower && j > i || ul == blas.Upper && j < i) && (c[i*n+j] != c0[i*n+j] || cs[i*n+j] != c0[i*n+j]) {
										t.Fatalf("%s %v %v %v: element (%d,%d) outside the triangle written", be.Name(), sh, ul, tr, i, j)
									}
								}
							}
							if threads == 1 {
								want, wantSyrk, wantTrap = c, cs, ct
								continue
							}
							for i := range c {
								if math.Float64bits(c[i]) != math.Float64bits(want[i]) || math.Float64bits(cs[i]) != math.Float64bits(wantSyrk[i]) || math.Float64bits(ct[i]) != math.Float64bits(wantTrap[i]) {
									t.Fatalf("%s %+v %v %v %v: C[%d] = %v (Dsyrk %v, trapezoid %v) with %d goroutines, %v (%v, %v) with one", be.Name(), bl, sh, ul, tr, i, c[i], cs[i], ct[i], threads, want[i], wantSyrk[i], wantTrap[i])
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestBalanceRows checks that the row groups of a triangular update get
// the same number of computed micro-tile elements, the tiles crossing the
// diagonal counted in full, to within two row tiles' work, for both
// triangles, several column blocks and group counts.
func TestBalanceRows(t *testing.T) {
	for _, be := range gemm.Backends() {
		mr, nr := be.MR(), be.NR()
		for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
			for _, tm := range []int{2, 3} {
				const m = 1000
				ctx := &gemmCtx{g: gemmProblem{be: be, m: m, n: m, tri: ul}, p: gemmPlan{tm: tm, mTiles: (m + mr - 1) / mr}}
				for _, jc := range []int{0, 8 * nr, 40 * nr} {
					ctx.jc, ctx.ncb = jc, min(24*nr+5, m-jc)
					ctx.nPanels = (ctx.ncb + nr - 1) / nr
					ctx.balanceRows()
					// work counts the elements macroKernel computes in rows r0…r1.
					work := func(r0, r1 int) (w, most int) {
						for i := r0; i < r1; i += mr {
							rows, tw := min(mr, r1-i), 0
							for q := 0; q < ctx.nPanels; q++ {
								c0, cols := jc+q*nr, min(nr, ctx.ncb-q*nr)
								if ul == blas.Lower && c0 > i+rows-1 || ul == blas.Upper && c0+cols-1 < i {
									continue
								}
								tw += rows * cols
							}
							w, most = w+tw, max(most, tw)
						}
						return w, most
					}
					var ws []int
					largest := 0
					for g := 0; g < tm; g++ {
						r0, r1 := ctx.rowBounds[g], ctx.rowBounds[g+1]
						if r0%mr != 0 && r0 != m {
							t.Fatalf("%s %c tm=%d jc=%d: group %d starts at row %d, inside a tile", be.Name(), ul, tm, jc, g, r0)
						}
						w, most := work(r0, r1)
						ws, largest = append(ws, w), max(largest, most)
					}
					// Each group closes at most one row tile past its share.
					if lo, hi := slices.Min(ws), slices.Max(ws); hi-lo > 2*largest {
						t.Errorf("%s %c tm=%d jc=%d: group work %v differs by more than two row tiles (%d each)", be.Name(), ul, tm, jc, ws, largest)
					}
				}
			}
		}
	}
}
