package blas

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/blas/testblas"

	"github.com/solvegp/solvegp/internal/gemm"
)

// The level-3 tests never register Implementation with blas64.Use: gonum's
// test suites build their expectations with the global BLAS.

// level3Impls are the configurations the randomized level-3 tests run:
// strictly serial, and an odd goroutine budget that exercises the parallel
// paths with uneven work splits.
var level3Impls = []struct {
	name string
	impl Implementation
}{
	{"threads=1", Implementation{Threads: 1}},
	{"threads=3", Implementation{Threads: 3}},
}

// level3SuiteImpls adds the default goroutine budget for gonum's suites.
var level3SuiteImpls = append([]struct {
	name string
	impl Implementation
}{{"default", Implementation{}}}, level3Impls...)

func TestDsyrkGonumSuite(t *testing.T) {
	for _, c := range level3SuiteImpls {
		t.Run(c.name, func(t *testing.T) { testblas.DsyrkTest(t, c.impl) })
	}
}

func TestDtrsmGonumSuite(t *testing.T) {
	for _, c := range level3SuiteImpls {
		t.Run(c.name, func(t *testing.T) { testblas.DtrsmTest(t, c.impl) })
	}
}

func TestDtrmmGonumSuite(t *testing.T) {
	for _, c := range level3SuiteImpls {
		t.Run(c.name, func(t *testing.T) { testblas.DtrmmTest(t, c.impl) })
	}
}

func TestDsymmGonumSuite(t *testing.T) {
	for _, c := range level3SuiteImpls {
		t.Run(c.name, func(t *testing.T) { testblas.DsymmTest(t, c.impl) })
	}
}

// level3Guard fills every element of a test buffer that the routine under
// test must not write.
var level3Guard = math.Float64frombits(0x7ff8dead0000beef) // a NaN with a payload

// level3Pad is the number of guard elements before and after every matrix.
const level3Pad = 8

// level3Mat is a rows×cols matrix with leading dimension ld stored in the
// middle of a guarded buffer.
type level3Mat struct {
	rows, cols, ld int
	buf            []float64 // guard, data, guard
}

// newLevel3Mat returns a guarded matrix whose elements are given by f and
// whose padding is level3Guard.
func newLevel3Mat(rows, cols, ld int, f func(i, j int) float64) *level3Mat {
	m := &level3Mat{rows: rows, cols: cols, ld: ld}
	m.buf = make([]float64, level3Pad+m.size()+level3Pad)
	for i := range m.buf {
		m.buf[i] = level3Guard
	}
	d := m.data()
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			d[i*ld+j] = f(i, j)
		}
	}
	return m
}

// size is the length of the data slice: gonum's minimum length.
func (m *level3Mat) size() int {
	return max(0, m.ld*(m.rows-1)+m.cols)
}

// data is the slice handed to the routine; its capacity ends with the data
// so that no write beyond it can go unnoticed by the guards.
func (m *level3Mat) data() []float64 {
	return m.buf[level3Pad : level3Pad+m.size() : level3Pad+m.size()]
}

func (m *level3Mat) at(i, j int) float64 { return m.buf[level3Pad+i*m.ld+j] }

func (m *level3Mat) clone() *level3Mat {
	c := *m
	c.buf = append([]float64(nil), m.buf...)
	return &c
}

// checkUnchanged reports every element of got that differs bitwise from
// the same element of orig, except the in-matrix elements (i, j) for which
// mayChange returns true. This covers the guard zones, the padding of each
// row and, for the triangular outputs, the other triangle.
func (orig *level3Mat) checkUnchanged(t *testing.T, name string, got *level3Mat, mayChange func(i, j int) bool) {
	t.Helper()
	bad := 0
	for p := range orig.buf {
		if math.Float64bits(orig.buf[p]) == math.Float64bits(got.buf[p]) {
			continue
		}
		q := p - level3Pad
		if q >= 0 && q < orig.size() {
			i, j := q/orig.ld, q%orig.ld
			if j < orig.cols && mayChange != nil && mayChange(i, j) {
				continue
			}
		}
		if bad < 5 {
			t.Errorf("%s: element %d of the buffer (data offset %d) changed from %v to %v", name, p, q, orig.buf[p], got.buf[p])
		}
		bad++
	}
	if bad > 5 {
		t.Errorf("%s: %d elements changed that must not", name, bad)
	}
}

// level3Diff returns the Frobenius norm of got-want over the elements
// selected by in, and the Frobenius norm of want over them.
func level3Diff(got, want *level3Mat, in func(i, j int) bool) (diff, norm float64) {
	for i := 0; i < got.rows; i++ {
		for j := 0; j < got.cols; j++ {
			if in != nil && !in(i, j) {
				continue
			}
			d := got.at(i, j) - want.at(i, j)
			diff += d * d
			norm += want.at(i, j) * want.at(i, j)
		}
	}
	return math.Sqrt(diff), math.Sqrt(norm)
}

// level3Norm is the Frobenius norm of the elements of m selected by in.
func level3Norm(m *level3Mat, in func(i, j int) bool) float64 {
	var s float64
	for i := 0; i < m.rows; i++ {
		for j := 0; j < m.cols; j++ {
			if in == nil || in(i, j) {
				s += m.at(i, j) * m.at(i, j)
			}
		}
	}
	return math.Sqrt(s)
}

// level3Tri reports whether (i, j) lies in the ul triangle (diagonal
// included).
func level3Tri(ul blas.Uplo) func(i, j int) bool {
	if ul == blas.Upper {
		return func(i, j int) bool { return i <= j }
	}
	return func(i, j int) bool { return i >= j }
}

// level3TriMat returns a well-conditioned k×k triangular matrix with leading
// dimension lda: off-diagonal elements of size O(1/k), diagonal elements of
// modulus in [1, 2] with random signs. The other triangle holds NaN, and so
// does the diagonal when it is unit, so that reading them is detected.
func level3TriMat(rnd *rand.Rand, ul blas.Uplo, d blas.Diag, k, lda int) *level3Mat {
	in := level3Tri(ul)
	return newLevel3Mat(k, k, lda, func(i, j int) float64 {
		switch {
		case i == j && d == blas.Unit:
			return math.NaN()
		case i == j:
			v := 1 + rnd.Float64()
			if rnd.IntN(2) == 0 {
				v = -v
			}
			return v
		case in(i, j):
			return (2*rnd.Float64() - 1) / float64(k)
		}
		return math.NaN()
	})
}

// level3Pairs are the matrix orders the randomized tests combine: 0 and 1,
// both sides of the substitution block (16), of the Dsyrk diagonal and
// block-row sizes (64, 128), of typical register tiles (8, 16) and cache
// blocks (~128, ~256).
var level3Pairs = [][2]int{
	{0, 0}, {0, 3}, {3, 0}, {1, 1}, {1, 9}, {9, 1}, {2, 3},
	{15, 17}, {16, 16}, {17, 15}, {31, 33}, {33, 31},
	{63, 65}, {64, 64}, {65, 63}, {127, 24}, {24, 129},
	{129, 130}, {200, 257}, {255, 40}, {40, 256}, {260, 33},
}

// level3Long enables the slow randomized tests with larger sizes.
var level3Long = flag.Bool("level3.long", false, "run the level-3 randomized tests at larger sizes too")

// level3Large are extra sizes that cross common KC/MC blocks and the
// parallel thresholds; they only run with -level3.long.
var level3Large = [][2]int{{257, 385}, {383, 129}, {520, 300}}

func level3Sizes(t *testing.T) [][2]int {
	if !*level3Long {
		return level3Pairs
	}
	return append(append([][2]int(nil), level3Pairs...), level3Large...)
}

var (
	level3Sides  = []blas.Side{blas.Left, blas.Right}
	level3Uplos  = []blas.Uplo{blas.Lower, blas.Upper}
	level3Transs = []blas.Transpose{blas.NoTrans, blas.Trans, blas.ConjTrans}
	level3Diags  = []blas.Diag{blas.NonUnit, blas.Unit}
)

const level3Eps = 0x1p-52

func TestDtrsmRandom(t *testing.T) {
	testLevel3Triangular(t, false)
}

func TestDtrmmRandom(t *testing.T) {
	testLevel3Triangular(t, true)
}

// testLevel3Triangular compares Dtrsm (or Dtrmm when mul is true) with
// gonum's for every side/uplo/transpose/diag, over many shapes, padded
// leading dimensions and alphas, and checks that nothing outside B is
// written. Dtrsm results are also checked through the residual
// ‖op(A)·X − alpha·B‖ (or ‖X·op(A) − alpha·B‖).
func testLevel3Triangular(t *testing.T, mul bool) {
	rnd := rand.New(rand.NewPCG(3, uint64(len(level3Pairs))))
	ref := gonum.Implementation{}
	for _, c := range level3Impls {
		impl := c.impl
		for _, mn := range level3Sizes(t) {
			for _, s := range level3Sides {
				for _, ul := range level3Uplos {
					for _, tA := range level3Transs {
						for _, d := range level3Diags {
							m, n := mn[0], mn[1]
							k := m
							if s == blas.Right {
								k = n
							}
							pad := rnd.IntN(2) * (1 + rnd.IntN(5))
							alpha := []float64{1, -0.75, 0, 2.5}[rnd.IntN(4)]
							name := fmt.Sprintf("%s/%v,%v,%v,%v/m=%d,n=%d,pad=%d,alpha=%v", c.name, s, ul, tA, d, m, n, pad, alpha)
							a := level3TriMat(rnd, ul, d, k, max(1, k)+pad)
							b := newLevel3Mat(m, n, max(1, n)+pad, func(i, j int) float64 { return 2*rnd.Float64() - 1 })
							if alpha == 0 {
								// B is not read when alpha is zero.
								b = newLevel3Mat(m, n, b.ld, func(i, j int) float64 { return math.NaN() })
							}
							a0, b0 := a.clone(), b.clone()
							want := b.clone()
							if mul {
								impl.Dtrmm(s, ul, tA, d, m, n, alpha, a.data(), a.ld, b.data(), b.ld)
								ref.Dtrmm(s, ul, tA, d, m, n, alpha, a0.data(), a0.ld, want.data(), want.ld)
							} else {
								impl.Dtrsm(s, ul, tA, d, m, n, alpha, a.data(), a.ld, b.data(), b.ld)
								ref.Dtrsm(s, ul, tA, d, m, n, alpha, a0.data(), a0.ld, want.data(), want.ld)
							}
							a0.checkUnchanged(t, name+": A", a, nil)
							b0.checkUnchanged(t, name+": B", b, func(i, j int) bool { return true })
							if alpha == 0 {
								if nrm := level3Norm(b, nil); nrm != 0 {
									t.Errorf("%s: alpha = 0: B not zeroed, ‖B‖ = %v", name, nrm)
								}
								continue
							}
							diff, nrm := level3Diff(b, want, nil)
							// A is well conditioned (‖A‖‖A⁻¹‖ = O(1)), so the
							// forward error is bounded by a small multiple of k·ε.
							if tol := 8 * float64(k+2) * level3Eps * (nrm + 1e-300); !(diff <= tol) {
								t.Errorf("%s: ‖X−Xgonum‖ = %v > %v", name, diff, tol)
							}
							if !mul {
								testLevel3Residual(t, name, s, ul, tA, d, alpha, a, b0, b)
							}
						}
					}
				}
			}
		}
	}
}

// testLevel3Residual checks ‖op(A)·X − alpha·B‖ ≤ c·k·ε·(‖A‖‖X‖ + |alpha|‖B‖)
// (or the right-side analogue), computing the product with gonum's Dtrmm.
func testLevel3Residual(t *testing.T, name string, s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, alpha float64, a, b, x *level3Mat) {
	t.Helper()
	m, n := b.rows, b.cols
	if m == 0 || n == 0 {
		return
	}
	k := a.rows
	y := x.clone()
	gonum.Implementation{}.Dtrmm(s, ul, tA, d, m, n, 1, a.data(), a.ld, y.data(), y.ld)
	var r, nb float64
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			v := y.at(i, j) - alpha*b.at(i, j)
			r += v * v
		}
	}
	nb = level3Norm(b, nil)
	tri := level3Tri(ul)
	var na float64
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			if !tri(i, j) {
				continue
			}
			v := a.at(i, j)
			if i == j && d == blas.Unit {
				v = 1
			}
			na += v * v
		}
	}
	na = math.Sqrt(na)
	res := math.Sqrt(r)
	if tol := 4 * float64(k+2) * level3Eps * (na*level3Norm(x, nil) + math.Abs(alpha)*nb); !(res <= tol) {
		t.Errorf("%s: residual %v > %v", name, res, tol)
	}
}

func TestDsyrkRandom(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 7))
	ref := gonum.Implementation{}
	for _, c := range level3Impls {
		impl := c.impl
		for _, nk := range level3Sizes(t) {
			for _, ul := range level3Uplos {
				for _, tA := range level3Transs {
					n, k := nk[0], nk[1]
					row, col := n, k
					if tA != blas.NoTrans {
						row, col = k, n
					}
					alpha := []float64{1, -0.5, 0, 3}[rnd.IntN(4)]
					beta := []float64{0, 1, -2, 0.5}[rnd.IntN(4)]
					pad := rnd.IntN(2) * (1 + rnd.IntN(5))
					name := fmt.Sprintf("%s/%v,%v/n=%d,k=%d,pad=%d,alpha=%v,beta=%v", c.name, ul, tA, n, k, pad, alpha, beta)
					a := newLevel3Mat(row, col, max(1, col)+pad, func(i, j int) float64 { return 2*rnd.Float64() - 1 })
					tri := level3Tri(ul)
					// The other triangle holds guards; with beta = 0 the
					// referenced triangle holds NaN, which must not leak.
					cm := newLevel3Mat(n, n, max(1, n)+pad, func(i, j int) float64 {
						switch {
						case !tri(i, j):
							return level3Guard
						case beta == 0:
							return math.NaN()
						}
						return 2*rnd.Float64() - 1
					})
					a0, c0 := a.clone(), cm.clone()
					want := cm.clone()
					if beta == 0 {
						// gonum's lower-triangle Aᵀ·A path multiplies C
						// by beta instead of overwriting it, so give the
						// reference zeros instead of NaN.
						for i := 0; i < n; i++ {
							for j := 0; j < n; j++ {
								if tri(i, j) {
									want.buf[level3Pad+i*want.ld+j] = 0
								}
							}
						}
					}
					impl.Dsyrk(ul, tA, n, k, alpha, a.data(), a.ld, beta, cm.data(), cm.ld)
					ref.Dsyrk(ul, tA, n, k, alpha, a0.data(), a0.ld, beta, want.data(), want.ld)
					a0.checkUnchanged(t, name+": A", a, nil)
					c0.checkUnchanged(t, name+": C", cm, tri)
					diff, _ := level3Diff(cm, want, tri)
					bound := math.Abs(alpha)*math.Pow(level3Norm(a, nil), 2) + math.Abs(beta)*level3Norm(c0, tri)
					if beta == 0 {
						bound = math.Abs(alpha) * math.Pow(level3Norm(a, nil), 2)
					}
					if tol := 4 * float64(k+2) * level3Eps * bound; !(diff <= tol) {
						t.Errorf("%s: ‖C−Cgonum‖ = %v > %v", name, diff, tol)
					}
				}
			}
		}
	}
}

func TestDsymmRandom(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 13))
	ref := gonum.Implementation{}
	sizes := level3Sizes(t)
	if *level3Long {
		// Cross the panel width of the expansion of A.
		sizes = append(sizes, [2]int{513, 40}, [2]int{30, 600})
	}
	for _, c := range level3Impls {
		impl := c.impl
		for _, mn := range sizes {
			for _, s := range level3Sides {
				for _, ul := range level3Uplos {
					m, n := mn[0], mn[1]
					k := m
					if s == blas.Right {
						k = n
					}
					alpha := []float64{1, -0.5, 0, 3}[rnd.IntN(4)]
					beta := []float64{0, 1, -2, 0.5}[rnd.IntN(4)]
					pad := rnd.IntN(2) * (1 + rnd.IntN(5))
					name := fmt.Sprintf("%s/%v,%v/m=%d,n=%d,pad=%d,alpha=%v,beta=%v", c.name, s, ul, m, n, pad, alpha, beta)
					tri := level3Tri(ul)
					a := newLevel3Mat(k, k, max(1, k)+pad, func(i, j int) float64 {
						if !tri(i, j) {
							return math.NaN() // must not be read
						}
						return 2*rnd.Float64() - 1
					})
					b := newLevel3Mat(m, n, max(1, n)+pad, func(i, j int) float64 { return 2*rnd.Float64() - 1 })
					cm := newLevel3Mat(m, n, max(1, n)+pad, func(i, j int) float64 {
						if beta == 0 {
							return math.NaN()
						}
						return 2*rnd.Float64() - 1
					})
					a0, b0, c0 := a.clone(), b.clone(), cm.clone()
					want := cm.clone()
					impl.Dsymm(s, ul, m, n, alpha, a.data(), a.ld, b.data(), b.ld, beta, cm.data(), cm.ld)
					ref.Dsymm(s, ul, m, n, alpha, a0.data(), a0.ld, b0.data(), b0.ld, beta, want.data(), want.ld)
					a0.checkUnchanged(t, name+": A", a, nil)
					b0.checkUnchanged(t, name+": B", b, nil)
					c0.checkUnchanged(t, name+": C", cm, func(i, j int) bool { return true })
					diff, _ := level3Diff(cm, want, nil)
					// ‖A‖_F of the full symmetric matrix is at most twice
					// that of its stored triangle.
					bound := 2 * math.Abs(alpha) * level3Norm(a, tri) * level3Norm(b, nil)
					if beta != 0 {
						bound += math.Abs(beta) * level3Norm(c0, nil)
					}
					if tol := 4 * float64(k+2) * level3Eps * bound; !(diff <= tol) {
						t.Errorf("%s: ‖C−Cgonum‖ = %v > %v", name, diff, tol)
					}
				}
			}
		}
	}
}

// level3Panic returns the value f panics with, or nil.
func level3Panic(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// TestLevel3Panics checks that bad arguments make every routine panic with
// exactly gonum's message, in gonum's order of checks.
func TestLevel3Panics(t *testing.T) {
	ours := Implementation{}
	ref := gonum.Implementation{}
	buf := make([]float64, 100)
	short := make([]float64, 3)
	type trArgs struct {
		s    blas.Side
		ul   blas.Uplo
		tA   blas.Transpose
		d    blas.Diag
		m, n int
		a    []float64
		lda  int
		b    []float64
		ldb  int
	}
	L, U, N, T := blas.Left, blas.Upper, blas.NoTrans, blas.Trans
	tr := []trArgs{
		{s: 'X', ul: U, tA: N, d: blas.Unit, m: 2, n: 2, a: buf, lda: 2, b: buf, ldb: 2},
		{s: L, ul: 'X', tA: N, d: blas.Unit, m: 2, n: 2, a: buf, lda: 2, b: buf, ldb: 2},
		{s: L, ul: U, tA: 'X', d: blas.Unit, m: 2, n: 2, a: buf, lda: 2, b: buf, ldb: 2},
		{s: L, ul: U, tA: N, d: 'X', m: 2, n: 2, a: buf, lda: 2, b: buf, ldb: 2},
		{s: L, ul: U, tA: N, d: blas.Unit, m: -1, n: 2, a: buf, lda: 2, b: buf, ldb: 2},
		{s: L, ul: U, tA: N, d: blas.Unit, m: 2, n: -1, a: buf, lda: 2, b: buf, ldb: 2},
		{s: L, ul: U, tA: T, d: blas.Unit, m: 3, n: 2, a: buf, lda: 2, b: buf, ldb: 2},
		{s: blas.Right, ul: U, tA: T, d: blas.Unit, m: 3, n: 4, a: buf, lda: 3, b: buf, ldb: 4},
		{s: L, ul: U, tA: N, d: blas.Unit, m: 3, n: 4, a: buf, lda: 3, b: buf, ldb: 3},
		{s: L, ul: U, tA: N, d: blas.Unit, m: 0, n: 4, a: nil, lda: 1, b: nil, ldb: 4},
		{s: L, ul: U, tA: N, d: blas.Unit, m: 3, n: 4, a: short, lda: 3, b: buf, ldb: 4},
		{s: L, ul: U, tA: N, d: blas.Unit, m: 3, n: 4, a: buf, lda: 3, b: short, ldb: 4},
		{s: blas.Right, ul: blas.Lower, tA: blas.ConjTrans, d: blas.NonUnit, m: 3, n: 4, a: buf, lda: 4, b: buf, ldb: 4},
	}
	for i, c := range tr {
		for _, name := range []string{"Dtrsm", "Dtrmm"} {
			var got, want any
			if name == "Dtrsm" {
				got = level3Panic(func() {
					ours.Dtrsm(c.s, c.ul, c.tA, c.d, c.m, c.n, 1, c.a, c.lda, append([]float64(nil), c.b...), c.ldb)
				})
				want = level3Panic(func() {
					ref.Dtrsm(c.s, c.ul, c.tA, c.d, c.m, c.n, 1, c.a, c.lda, append([]float64(nil), c.b...), c.ldb)
				})
			} else {
				got = level3Panic(func() {
					ours.Dtrmm(c.s, c.ul, c.tA, c.d, c.m, c.n, 1, c.a, c.lda, append([]float64(nil), c.b...), c.ldb)
				})
				want = level3Panic(func() {
					ref.Dtrmm(c.s, c.ul, c.tA, c.d, c.m, c.n, 1, c.a, c.lda, append([]float64(nil), c.b...), c.ldb)
				})
			}
			if got != want {
				t.Errorf("%s case %d: panic %v, gonum panics %v", name, i, got, want)
			}
		}
	}

	type syArgs struct {
		ul     blas.Uplo
		tA     blas.Transpose
		n, k   int
		a      []float64
		lda    int
		c      []float64
		ldc    int
		alpha0 bool
	}
	sy := []syArgs{
		{ul: 'X', tA: N, n: 2, k: 2, a: buf, lda: 2, c: buf, ldc: 2},
		{ul: U, tA: 'X', n: 2, k: 2, a: buf, lda: 2, c: buf, ldc: 2},
		{ul: U, tA: N, n: -1, k: 2, a: buf, lda: 2, c: buf, ldc: 2},
		{ul: U, tA: N, n: 2, k: -1, a: buf, lda: 2, c: buf, ldc: 2},
		{ul: U, tA: N, n: 2, k: 3, a: buf, lda: 2, c: buf, ldc: 2},
		{ul: U, tA: T, n: 3, k: 2, a: buf, lda: 2, c: buf, ldc: 3},
		{ul: U, tA: N, n: 3, k: 2, a: buf, lda: 2, c: buf, ldc: 2},
		{ul: U, tA: N, n: 0, k: 2, a: nil, lda: 2, c: nil, ldc: 1},
		{ul: U, tA: N, n: 3, k: 0, a: nil, lda: 1, c: buf, ldc: 3},
		{ul: U, tA: N, n: 3, k: 2, a: short, lda: 2, c: buf, ldc: 3},
		{ul: blas.Lower, tA: blas.ConjTrans, n: 3, k: 2, a: buf, lda: 3, c: short, ldc: 3},
		{ul: U, tA: N, n: 3, k: 2, a: short, lda: 2, c: buf, ldc: 3, alpha0: true},
	}
	for i, c := range sy {
		alpha := 1.0
		if c.alpha0 {
			alpha = 0
		}
		got := level3Panic(func() {
			ours.Dsyrk(c.ul, c.tA, c.n, c.k, alpha, c.a, c.lda, 2, append([]float64(nil), c.c...), c.ldc)
		})
		want := level3Panic(func() {
			ref.Dsyrk(c.ul, c.tA, c.n, c.k, alpha, c.a, c.lda, 2, append([]float64(nil), c.c...), c.ldc)
		})
		if got != want {
			t.Errorf("Dsyrk case %d: panic %v, gonum panics %v", i, got, want)
		}
	}

	type smArgs struct {
		s         blas.Side
		ul        blas.Uplo
		m, n      int
		a         []float64
		lda       int
		b         []float64
		ldb       int
		c         []float64
		ldc       int
		alphaBeta [2]float64
	}
	sm := []smArgs{
		{s: 'X', ul: U, m: 2, n: 2, a: buf, lda: 2, b: buf, ldb: 2, c: buf, ldc: 2},
		{s: L, ul: 'X', m: 2, n: 2, a: buf, lda: 2, b: buf, ldb: 2, c: buf, ldc: 2},
		{s: L, ul: U, m: -1, n: 2, a: buf, lda: 2, b: buf, ldb: 2, c: buf, ldc: 2},
		{s: L, ul: U, m: 2, n: -1, a: buf, lda: 2, b: buf, ldb: 2, c: buf, ldc: 2},
		{s: L, ul: U, m: 3, n: 2, a: buf, lda: 2, b: buf, ldb: 2, c: buf, ldc: 2},
		{s: blas.Right, ul: U, m: 3, n: 4, a: buf, lda: 3, b: buf, ldb: 4, c: buf, ldc: 4},
		{s: L, ul: U, m: 3, n: 4, a: buf, lda: 3, b: buf, ldb: 3, c: buf, ldc: 4},
		{s: L, ul: U, m: 3, n: 4, a: buf, lda: 3, b: buf, ldb: 4, c: buf, ldc: 3},
		{s: L, ul: U, m: 0, n: 4, a: nil, lda: 1, b: nil, ldb: 4, c: nil, ldc: 4},
		{s: L, ul: U, m: 3, n: 4, a: short, lda: 3, b: buf, ldb: 4, c: buf, ldc: 4},
		{s: L, ul: U, m: 3, n: 4, a: buf, lda: 3, b: short, ldb: 4, c: buf, ldc: 4},
		{s: L, ul: U, m: 3, n: 4, a: buf, lda: 3, b: buf, ldb: 4, c: short, ldc: 4},
		{s: L, ul: U, m: 3, n: 4, a: short, lda: 3, b: buf, ldb: 4, c: buf, ldc: 4, alphaBeta: [2]float64{0, 1}},
	}
	for i, c := range sm {
		got := level3Panic(func() {
			ours.Dsymm(c.s, c.ul, c.m, c.n, c.alphaBeta[0], c.a, c.lda, c.b, c.ldb, c.alphaBeta[1], append([]float64(nil), c.c...), c.ldc)
		})
		want := level3Panic(func() {
			ref.Dsymm(c.s, c.ul, c.m, c.n, c.alphaBeta[0], c.a, c.lda, c.b, c.ldb, c.alphaBeta[1], append([]float64(nil), c.c...), c.ldc)
		})
		if got != want {
			t.Errorf("Dsymm case %d: panic %v, gonum panics %v", i, got, want)
		}
	}
}

// TestLevel3Concurrent runs the routines from several goroutines at once
// on one shared Implementation value (sharing its scratch pools) and checks
// every result against the same call made alone; run with -race it also
// checks the internal goroutines for data races.
func TestLevel3Concurrent(t *testing.T) {
	impl := Implementation{Threads: 2}
	const n, k = 150, 140
	rnd := rand.New(rand.NewPCG(17, 19))
	rndMat := func(r, c int) []float64 {
		x := make([]float64, r*c)
		for i := range x {
			x[i] = 2*rnd.Float64() - 1
		}
		return x
	}
	a := level3TriMat(rnd, blas.Lower, blas.NonUnit, n, n).data()
	sym := rndMat(n, n)
	g := rndMat(n, k)
	b0 := rndMat(n, n)
	calls := []func(out []float64){
		func(out []float64) {
			copy(out, b0)
			impl.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, n, n, 1.5, a, n, out, n)
		},
		func(out []float64) {
			copy(out, b0)
			impl.Dtrmm(blas.Right, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, -1, a, n, out, n)
		},
		func(out []float64) {
			copy(out, b0)
			impl.Dsyrk(blas.Upper, blas.NoTrans, n, k, 1, g, k, 0.5, out, n)
		},
		func(out []float64) {
			copy(out, b0)
			impl.Dsymm(blas.Right, blas.Upper, n, n, 2, sym, n, b0, n, 0, out, n)
		},
	}
	want := make([][]float64, len(calls))
	for i, f := range calls {
		want[i] = make([]float64, n*n)
		f(want[i])
	}
	const rounds = 3
	got := make([][]float64, len(calls)*rounds)
	var wg sync.WaitGroup
	for r := 0; r < rounds; r++ {
		for i, f := range calls {
			out := make([]float64, n*n)
			got[r*len(calls)+i] = out
			wg.Add(1)
			go func() {
				defer wg.Done()
				f(out)
			}()
		}
	}
	wg.Wait()
	for j, out := range got {
		i := j % len(calls)
		for p := range out {
			if math.Float64bits(out[p]) != math.Float64bits(want[i][p]) {
				t.Errorf("call %d round %d: element %d = %v, alone %v", i, j/len(calls), p, out[p], want[i][p])
				break
			}
		}
	}
}

// TestDsyrkSmallBlocks runs Dsyrk with tiny cache blocks on every backend,
// so that a triangle of modest order crosses many MC, KC and NC block
// edges and micro-tiles straddle the diagonal in every position, with one
// to three goroutines (whose row groups are balanced by work per column
// block). Elements outside the triangle are guards that must survive.
func TestDsyrkSmallBlocks(t *testing.T) {
	// A finite guard: a NaN guard would survive β·guard + v with its
	// payload intact and hide a write.
	const guard = -12345.678
	rnd := rand.New(rand.NewPCG(11, 13))
	ref := gonum.Implementation{}
	for _, be := range gemm.Backends() {
		mr, nr := be.MR(), be.NR()
		for _, bl := range []gemm.Blocking{
			{MC: mr, KC: 5, NC: nr},
			{MC: 3 * mr, KC: 16, NC: 2 * nr},
			{MC: 2 * mr, KC: 64, NC: 5 * nr},
		} {
			small := be.WithBlocking(bl)
			for _, threads := range []int{1, 2, 3} {
				impl := Implementation{Threads: threads, backend: small}
				for _, n := range []int{65, 66 + mr, 97, 131} {
					for _, ul := range level3Uplos {
						for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
							k := 1 + rnd.IntN(40)
							row, col := n, k
							if tA != blas.NoTrans {
								row, col = k, n
							}
							lda, ldc := col+rnd.IntN(3), n+rnd.IntN(3)
							a := make([]float64, (row-1)*lda+col)
							for i := range a {
								a[i] = 2*rnd.Float64() - 1
							}
							tri := level3Tri(ul)
							c := make([]float64, (n-1)*ldc+n)
							for i := 0; i < n; i++ {
								for j := 0; j < n; j++ {
									c[i*ldc+j] = guard
									if tri(i, j) {
										c[i*ldc+j] = 2*rnd.Float64() - 1
									}
								}
							}
							want := append([]float64(nil), c...)
							impl.Dsyrk(ul, tA, n, k, -0.75, a, lda, 0.5, c, ldc)
							ref.Dsyrk(ul, tA, n, k, -0.75, a, lda, 0.5, want, ldc)
							for i := 0; i < n; i++ {
								for j := 0; j < n; j++ {
									got, w := c[i*ldc+j], want[i*ldc+j]
									if !tri(i, j) {
										if got != guard {
											t.Fatalf("%s %+v threads=%d n=%d %v %v: guard (%d,%d) overwritten with %v", be.Name(), bl, threads, n, ul, tA, i, j, got)
										}
										continue
									}
									if math.Abs(got-w) > 1e-13*float64(k+1) {
										t.Fatalf("%s %+v threads=%d n=%d k=%d %v %v: C[%d,%d] = %v, want %v", be.Name(), bl, threads, n, k, ul, tA, i, j, got, w)
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

// TestDtrmmLeftSmallBlocks runs Dtrmm with side Left (the blocked path for
// triangles of order ≥ 64) with tiny cache blocks on every backend, so that
// many KC blocks of the triangle are walked in both orders, and with one to
// three goroutines, against gonum in all triangle/transpose/diagonal cases.
// Guards around B (finite, see TestDsyrkSmallBlocks) must survive, and the
// strict other triangle of A holds NaN, which must not be read.
func TestDtrmmLeftSmallBlocks(t *testing.T) {
	const guard = -12345.678
	rnd := rand.New(rand.NewPCG(17, 19))
	ref := gonum.Implementation{}
	for _, be := range gemm.Backends() {
		mr, nr := be.MR(), be.NR()
		for _, bl := range []gemm.Blocking{
			{MC: mr, KC: 5, NC: nr},
			{MC: 3 * mr, KC: 16, NC: 2 * nr},
			{MC: 2 * mr, KC: 64, NC: 5 * nr},
		} {
			small := be.WithBlocking(bl)
			for _, threads := range []int{1, 2, 3} {
				impl := Implementation{Threads: threads, backend: small}
				for _, m := range []int{64, 65 + mr, 97} {
					for _, ul := range level3Uplos {
						for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
							for _, d := range level3Diags {
								n := 1 + rnd.IntN(30)
								lda, ldb := m+rnd.IntN(3), n+rnd.IntN(3)
								tri := level3Tri(ul)
								a := make([]float64, (m-1)*lda+m)
								for i := 0; i < m; i++ {
									for j := 0; j < m; j++ {
										a[i*lda+j] = math.NaN()
										if tri(i, j) {
											a[i*lda+j] = 2*rnd.Float64() - 1
										}
									}
								}
								b := make([]float64, (m-1)*ldb+n+1)
								for i := range b {
									b[i] = guard
								}
								for i := 0; i < m; i++ {
									for j := 0; j < n; j++ {
										b[i*ldb+j] = 2*rnd.Float64() - 1
									}
								}
								want := append([]float64(nil), b...)
								impl.Dtrmm(blas.Left, ul, tA, d, m, n, 1.5, a, lda, b, ldb)
								ref.Dtrmm(blas.Left, ul, tA, d, m, n, 1.5, a, lda, want, ldb)
								for i, got := range b {
									w := want[i]
									if w == guard {
										if got != guard {
											t.Fatalf("%s %+v threads=%d m=%d n=%d %c%c%c: guard %d overwritten with %v", be.Name(), bl, threads, m, n, ul, tA, d, i, got)
										}
										continue
									}
									if math.Abs(got-w) > 1e-13*float64(m) || math.IsNaN(got) {
										t.Fatalf("%s %+v threads=%d m=%d n=%d %c%c%c: B[%d,%d] = %v, want %v", be.Name(), bl, threads, m, n, ul, tA, d, i/ldb, i%ldb, got, w)
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

// TestDtrmmThreadsBitwise checks that Dtrmm gives the same bits for any
// goroutine budget: the left products split their columns among
// goroutines (or, for few columns, the rows of each block), and every
// element still sees the same packed blocks in the same order.
func TestDtrmmThreadsBitwise(t *testing.T) {
	rnd := rand.New(rand.NewPCG(41, 43))
	sizes := [][2]int{{300, 700}, {130, 129}, {520, 90}, {64, 1000}}
	threadCounts := []int{1, 2, 3}
	if testing.Short() { // CI's qemu run: each size still splits columns
		sizes, threadCounts = [][2]int{{130, 129}, {96, 260}}, []int{1, 3}
	}
	for _, mn := range sizes {
		m, n := mn[0], mn[1]
		for _, s := range level3Sides {
			for _, ul := range level3Uplos {
				for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
					k := m
					if s == blas.Right {
						k = n
					}
					a := level3TriMat(rnd, ul, blas.NonUnit, k, k+3)
					b := newLevel3Mat(m, n, n+1, func(i, j int) float64 { return 2*rnd.Float64() - 1 })
					var ref *level3Mat
					for _, threads := range threadCounts {
						got := b.clone()
						Implementation{Threads: threads}.Dtrmm(s, ul, tA, blas.NonUnit, m, n, 1.5, a.data(), a.ld, got.data(), got.ld)
						if ref == nil {
							ref = got
							continue
						}
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								if x, y := got.at(i, j), ref.at(i, j); math.Float64bits(x) != math.Float64bits(y) {
									t.Fatalf("%v,%v,%v m=%d n=%d: %d goroutines give B[%d,%d] = %v, one gives %v", s, ul, tA, m, n, threads, i, j, x, y)
								}
							}
						}
					}
				}
			}
		}
	}
}
