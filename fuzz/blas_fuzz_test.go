package fuzz

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/solvegp/solvegp/blas"
)

// The BLAS targets compare the level-3 routines of package blas with
// gonum's native implementation on fuzzer-chosen shapes (crossing the
// micro-tile, diagonal-block and cache-block edges), padded leading
// dimensions, transposes, sides, triangles, diagonals, scalars (α, β ∈ {0,
// ±1, …}), value distributions, backends, blockings and thread counts:
//
//	go test -run XXX -fuzz FuzzBLASDgemm -fuzztime 60s ./fuzz
//
// Every call must either panic exactly as gonum's does (same message) or
// succeed in both, and then:
//   - the result agrees with gonum element by element within
//     8·(k+4)·ε·(|α|·|A|·|B| + |β|·|C|) (k the inner dimension); with small
//     integer data and dyadic scalars, where every sum is exact, bit for bit;
//     Dtrsm is checked by its componentwise residual instead;
//   - no input is modified, and no padding element (between rows, after the
//     last row, the unreferenced triangle, a unit diagonal) is written;
//   - no unreferenced value is read: those cells hold NaN, and package
//     blas gets C poisoned with NaN and ±Inf when β = 0 (and A, B when α = 0,
//     except in Dgemm, which does not promise it), and no NaN may reach the
//     result.

// blasBytes deterministically reads fuzzer bytes (0 once exhausted).
type blasBytes struct {
	data []byte
	pos  int
}

func (r *blasBytes) byte() byte {
	if r.pos >= len(r.data) {
		return 0
	}
	b := r.data[r.pos]
	r.pos++
	return b
}

// blasGuard is the NaN (with a recognizable payload) stored in every cell a
// routine must neither read nor write.
var blasGuard = math.Float64frombits(0x7ff80000deadbeef)

// blasSetup holds the choices common to every routine.
type blasSetup struct {
	impl        blas.Implementation
	alpha, beta float64
	mode        byte // value distribution, see value
	pad, tail   [3]int
	bad         byte // bad-argument perturbations (bit mask), 0: none
	rng         *rand.Rand
}

// exact reports whether every sum of the case is exact (small integers and
// dyadic scalars), so that the results must agree bit for bit.
func (s *blasSetup) exact() bool { return s.mode == 1 }

// blasNewSetup decodes the common choices from r.
func blasNewSetup(r *blasBytes, seed uint64) *blasSetup {
	s := &blasSetup{}
	conf := r.byte()
	ks := blas.Kernels()
	k := ks[int(conf)%len(ks)]
	if conf&0x40 != 0 {
		mc, kc, nc := 1+int(r.byte()%40), 1+int(r.byte()%40), 1+int(r.byte()%48)
		k = k.WithBlocking(mc, kc, nc)
	}
	s.impl = k.Implementation(1 + int(conf>>2)%3)
	sc := r.byte()
	s.mode = sc % 4
	s.rng = rand.New(rand.NewPCG(seed, uint64(sc)))
	alphas := [...]float64{1, -1, 0, 0.5, -1.5, 2, 3, math.NaN()}
	betas := [...]float64{0, 1, -1, 0.5, -1.5, 2, 0, math.NaN()}
	s.alpha, s.beta = alphas[(sc>>2)%8], betas[(sc>>5)%8]
	if math.IsNaN(s.alpha) { // a non-dyadic scalar (not in exact mode)
		s.alpha = 0.25
		if !s.exact() {
			s.alpha = 4*s.rng.Float64() - 2
		}
	}
	if math.IsNaN(s.beta) {
		s.beta = -0.75
		if !s.exact() {
			s.beta = 4*s.rng.Float64() - 2
		}
	}
	pads := r.byte()
	for i := range s.pad {
		s.pad[i] = int(pads>>(2*i)) % 4
		s.tail[i] = int(pads>>6) % 2 * (i + 1)
	}
	if b := r.byte(); b >= 0xc0 {
		s.bad = b & 0x3f
		if s.bad == 0 {
			s.bad = 1
		}
	}
	return s
}

// value draws one matrix entry from the case's distribution: uniform in
// [-1, 1), small integers, a wide dynamic range (2^±30), or sparse.
func (s *blasSetup) value() float64 {
	switch s.mode {
	case 1:
		return float64(s.rng.IntN(9) - 4)
	case 2:
		return (2*s.rng.Float64() - 1) * math.Ldexp(1, s.rng.IntN(61)-30)
	case 3:
		if s.rng.IntN(10) < 7 {
			return 0
		}
	}
	return 2*s.rng.Float64() - 1
}

// blasDim decodes a dimension in [0, max].
func blasDim(b byte, max int) int { return int(b) % (max + 1) }

// blasMat is a rows×cols matrix with leading dimension ld stored in data,
// whose padding holds blasGuard.
type blasMat struct {
	data           []float64
	rows, cols, ld int
}

// blasMinLen is the shortest slice gonum accepts for a rows×cols matrix.
func blasMinLen(rows, cols, ld int) int {
	return max(0, (rows-1)*ld+cols)
}

// newMat allocates a rows×cols matrix with s's padding for slot i (0, 1,
// 2 for the first, second, third operand), guards everywhere and live
// values from fill (nil: s.value).
func (s *blasSetup) newMat(rows, cols, slot int, fill func(i, j int) float64) blasMat {
	ld := max(1, cols) + s.pad[slot]
	data := make([]float64, blasMinLen(rows, cols, ld)+s.tail[slot])
	for i := range data {
		data[i] = blasGuard
	}
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			if fill != nil {
				data[i*ld+j] = fill(i, j)
			} else {
				data[i*ld+j] = s.value()
			}
		}
	}
	return blasMat{data: data, rows: rows, cols: cols, ld: ld}
}

// at returns element (i, j).
func (m blasMat) at(i, j int) float64 { return m.data[i*m.ld+j] }

// poison overwrites the cells of x (a copy of m's storage, possibly
// shortened) at which live is true (nil: the whole rows×cols region) with
// NaN and ±Inf: the copy given to package blas for an operand it must not
// read (C when β = 0; A and B when α = 0, except in Dgemm). gonum gets the
// clean values, since some of its routines do read them (its Dsyrk scales a
// transposed lower C by β = 0).
func (m blasMat) poison(x []float64, live func(i, j int) bool) {
	specials := [...]float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	for i := 0; i < m.rows; i++ {
		for j := 0; j < m.cols; j++ {
			if p := i*m.ld + j; p < len(x) && (live == nil || live(i, j)) {
				x[p] = specials[(i+j)%3]
			}
		}
	}
}

// blasTriLive reports the cells of a triangular operand that are read.
func blasTriLive(ul gblas.Uplo, d gblas.Diag) func(i, j int) bool {
	return func(i, j int) bool {
		if i == j {
			return d != gblas.Unit
		}
		return (ul == gblas.Lower) == (i > j)
	}
}

// blasArgs are the size arguments of one call, perturbed by the bad-argument
// mask before the calls.
type blasArgs struct {
	m, n, k       int
	lda, ldb, ldc int
	a, b, c       []float64
	enum          bool // replace one enum argument by an illegal value
}

// perturb applies the bad-argument mask: negative sizes, leading dimensions
// one too small, slices one too short, an illegal enum.
func (x *blasArgs) perturb(bad byte) {
	if bad&1 != 0 {
		x.enum = true
	}
	if bad&2 != 0 {
		x.m = -1 - x.m
	}
	if bad&4 != 0 {
		x.n = -1 - x.n
	}
	if bad&8 != 0 {
		x.k = -1 - x.k
	}
	if bad&16 != 0 {
		x.lda--
		x.ldb--
	}
	if bad&32 != 0 {
		if len(x.a) > 0 {
			x.a = x.a[:len(x.a)-1]
		}
		if len(x.b) > 0 {
			x.b = x.b[:len(x.b)-1]
		}
		if len(x.c) > 0 {
			x.c = x.c[:len(x.c)-1]
		}
		x.ldc--
	}
}

// blasCall runs f and returns the value it panicked with (nil if none).
func blasCall(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// blasPanics compares the panics of gonum (want) and of package blas (got);
// it reports whether either panicked, after which the results are not
// compared.
//
// When the arguments were perturbed but neither panicked (gonum returned
// early, or a padded leading dimension stayed valid), the results are not
// compared either, since they no longer match the matrices built for the
// unperturbed call.
func blasPanics(t *testing.T, bad byte, want, got any) bool {
	t.Helper()
	if want == nil && got == nil {
		return bad != 0
	}
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("panic mismatch: gonum %v, blas %v", want, got)
	}
	return true
}

// blasClone copies a slice.
func blasClone(x []float64) []float64 { return append([]float64(nil), x...) }

// blasSame checks that x is bitwise equal to orig (an input left unmodified).
func blasSame(t *testing.T, what string, x, orig []float64) {
	t.Helper()
	for i := range orig {
		if math.Float64bits(x[i]) != math.Float64bits(orig[i]) {
			t.Fatalf("%s[%d] modified: %v → %v", what, i, orig[i], x[i])
		}
	}
}

// blasCheckOut checks an output matrix: cells for which live is true must
// agree with want within tol·bound (bit for bit when exact), every other cell
// must be bitwise unchanged from orig.
func blasCheckOut(t *testing.T, what string, got, want, orig []float64, ld, rows, cols int,
	live func(i, j int) bool, bound func(i, j int) float64, tol float64, exact bool) {
	t.Helper()
	isLive := make([]bool, len(got))
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			if live(i, j) {
				isLive[i*ld+j] = true
			}
		}
	}
	for p := range got {
		if !isLive[p] {
			if math.Float64bits(got[p]) != math.Float64bits(orig[p]) {
				t.Fatalf("%s: unreferenced element %d (row %d, col %d) written: %v → %v",
					what, p, p/ld, p%ld, orig[p], got[p])
			}
			continue
		}
		g, w := got[p], want[p]
		i, j := p/ld, p%ld
		if math.IsNaN(g) || math.IsInf(g, 0) || math.IsNaN(w) || math.IsInf(w, 0) {
			t.Fatalf("%s(%d,%d): got %v, gonum %v (non-finite)", what, i, j, g, w)
		}
		if exact {
			if g != w {
				t.Fatalf("%s(%d,%d): got %v, gonum %v (exact case)", what, i, j, g, w)
			}
			continue
		}
		if d := math.Abs(g - w); d > tol*bound(i, j)+0x1p-1000 {
			t.Fatalf("%s(%d,%d): got %v, gonum %v, |diff| %.3g > %.3g", what, i, j, g, w, d, tol*bound(i, j))
		}
	}
}

// blasTol is the elementwise tolerance factor for an inner dimension k.
func blasTol(k int) float64 { return 8 * float64(k+4) * 0x1p-52 }

var blasTransposes = [...]gblas.Transpose{gblas.NoTrans, gblas.Trans, gblas.ConjTrans}

// blasSeeds adds seed inputs: cfg bytes are routine flags, sizes, then the
// common setup (conf, scalars/mode, pads, bad).
func blasSeeds(f *testing.F, sizes [][3]byte) {
	for i, sz := range sizes {
		for _, tail := range [][]byte{
			{0x03, 0x00, 0x00, 0x00},                         // generic-ish backend, α=1 β=0 uniform
			{0x01, 0x05 | 3<<2 | 2<<5, 0x15, 0x00},           // mode 1 exact, α=0.5, β=−1
			{0x42, 7, 3, 11, 0x02 | 1<<2 | 1<<5, 0xff, 0x00}, // small blocking, wide values, α=−1, β=1
			{0x06, 0x03 | 2<<2 | 0<<5, 0x2a, 0x00},           // α=0 (A, B poisoned), β=0 (C poisoned)
			{0x00, 0x00, 0x00, 0xc0 | byte(1<<(i%6))},        // one bad argument
		} {
			cfg := append([]byte{byte(i * 37)}, sz[:]...)
			f.Add(append(cfg, tail...), uint64(i+1))
		}
	}
}

// blasProduct is the operands of a general product C = α·op(A)·op(B) + β·C
// of the fuzz targets: op(A) m×k, op(B) k×n, the size arguments after the
// bad-argument perturbation, and the copies given to gonum (w) and to
// package blas (g).
type blasProduct struct {
	a, b, c    blasMat
	x          blasArgs
	aT, bT     bool
	tB         gblas.Transpose
	aw, bw, cw []float64
	ag, bg, cg []float64
}

// newBLASProduct builds the operands of a product with transposes tA, tB;
// tB becomes invalid when the perturbation asks for a bad enum.
func newBLASProduct(s *blasSetup, tA, tB gblas.Transpose, m, n, k int) *blasProduct {
	p := &blasProduct{aT: tA != gblas.NoTrans, bT: tB != gblas.NoTrans, tB: tB}
	ar, ac := m, k
	if p.aT {
		ar, ac = k, m
	}
	br, bc := k, n
	if p.bT {
		br, bc = n, k
	}
	p.a = s.newMat(ar, ac, 0, nil)
	p.b = s.newMat(br, bc, 1, nil)
	p.c = s.newMat(m, n, 2, nil)
	p.x = blasArgs{m: m, n: n, k: k, lda: p.a.ld, ldb: p.b.ld, ldc: p.c.ld, a: p.a.data, b: p.b.data, c: p.c.data}
	p.x.perturb(s.bad)
	if p.x.enum {
		p.tB = gblas.Transpose('X')
	}
	p.aw, p.bw, p.cw = blasClone(p.x.a), blasClone(p.x.b), blasClone(p.x.c)
	p.ag, p.bg, p.cg = blasClone(p.x.a), blasClone(p.x.b), blasClone(p.x.c)
	return p
}

// bound returns the elementwise error scale of C(i, j): the sum of the
// magnitudes of the terms that make it.
func (p *blasProduct) bound(s *blasSetup) func(i, j int) float64 {
	opA := func(i, q int) float64 {
		if p.aT {
			return p.a.at(q, i)
		}
		return p.a.at(i, q)
	}
	opB := func(q, j int) float64 {
		if p.bT {
			return p.b.at(j, q)
		}
		return p.b.at(q, j)
	}
	return func(i, j int) float64 {
		var s2 float64
		if s.alpha != 0 {
			for q := 0; q < p.x.k; q++ {
				s2 += math.Abs(opA(i, q) * opB(q, j))
			}
			s2 *= math.Abs(s.alpha)
		}
		if s.beta != 0 {
			s2 += math.Abs(s.beta * p.c.at(i, j))
		}
		return s2
	}
}

// FuzzBLASDgemm compares Dgemm with gonum's.
func FuzzBLASDgemm(f *testing.F) {
	blasSeeds(f, [][3]byte{{5, 7, 3}, {15, 17, 33}, {1, 40, 9}, {14, 16, 1}, {0, 3, 4}, {29, 31, 0}, {40, 40, 40}})
	f.Fuzz(func(t *testing.T, cfg []byte, seed uint64) {
		r := &blasBytes{data: cfg}
		flags := r.byte()
		m, n, k := blasDim(r.byte(), 48), blasDim(r.byte(), 48), blasDim(r.byte(), 48)
		s := blasNewSetup(r, seed)
		tA := blasTransposes[int(flags)%3]
		p := newBLASProduct(s, tA, blasTransposes[int(flags/3)%3], m, n, k)
		x := p.x
		if s.beta == 0 {
			p.c.poison(p.cg, nil)
		}
		pw := blasCall(func() {
			gonum.Implementation{}.Dgemm(tA, p.tB, x.m, x.n, x.k, s.alpha, p.aw, x.lda, p.bw, x.ldb, s.beta, p.cw, x.ldc)
		})
		pg := blasCall(func() {
			s.impl.Dgemm(tA, p.tB, x.m, x.n, x.k, s.alpha, p.ag, x.lda, p.bg, x.ldb, s.beta, p.cg, x.ldc)
		})
		if blasPanics(t, s.bad, pw, pg) {
			return
		}
		blasSame(t, "a", p.ag, p.a.data)
		blasSame(t, "b", p.bg, p.b.data)
		all := func(i, j int) bool { return true }
		blasCheckOut(t, "C", p.cg, p.cw, p.c.data, p.c.ld, m, n, all, p.bound(s), blasTol(k), s.exact())
	})
}

// FuzzBLASDgemmTrapezoid compares DgemmTrapezoid with gonum's Dgemm on the
// trapezoid it updates; the diagonal ranges from above the first column to
// below the last row, so empty, partial and full trapezoids all occur.
func FuzzBLASDgemmTrapezoid(f *testing.F) {
	blasSeeds(f, [][3]byte{{5, 7, 3}, {15, 17, 33}, {1, 40, 9}, {14, 16, 1}, {0, 3, 4}, {29, 31, 0}, {40, 40, 40}})
	f.Fuzz(func(t *testing.T, cfg []byte, seed uint64) {
		r := &blasBytes{data: cfg}
		flags := r.byte()
		m, n, k := blasDim(r.byte(), 48), blasDim(r.byte(), 48), blasDim(r.byte(), 48)
		diag := int(r.byte())%(m+n+3) - m - 1
		s := blasNewSetup(r, seed)
		tA := blasTransposes[int(flags)%3]
		ul := [...]gblas.Uplo{gblas.Lower, gblas.Upper}[int(flags/9)%2]
		live := func(i, j int) bool { return (ul == gblas.Lower) == (j-i <= diag) || j-i == diag }
		p := newBLASProduct(s, tA, blasTransposes[int(flags/3)%3], m, n, k)
		x := p.x
		if s.alpha == 0 {
			p.a.poison(p.ag, nil)
			p.b.poison(p.bg, nil)
		}
		if s.beta == 0 {
			p.c.poison(p.cg, live)
		}
		a0, b0 := blasClone(p.ag), blasClone(p.bg)
		pw := blasCall(func() {
			gonum.Implementation{}.Dgemm(tA, p.tB, x.m, x.n, x.k, s.alpha, p.aw, x.lda, p.bw, x.ldb, s.beta, p.cw, x.ldc)
		})
		pg := blasCall(func() {
			s.impl.DgemmTrapezoid(ul, tA, p.tB, x.m, x.n, x.k, diag, s.alpha, p.ag, x.lda, p.bg, x.ldb, s.beta, p.cg, x.ldc)
		})
		if blasPanics(t, s.bad, pw, pg) {
			return
		}
		blasSame(t, "a", p.ag, a0)
		blasSame(t, "b", p.bg, b0)
		blasCheckOut(t, "C", p.cg, p.cw, p.c.data, p.c.ld, m, n, live, p.bound(s), blasTol(k), s.exact())
	})
}

// triFill returns a fill function for an order-n matrix whose
// referenced triangle (ul) holds values and whose other triangle holds
// blasGuard; diag, if not nil, supplies the diagonal.
func (s *blasSetup) triFill(ul gblas.Uplo, diag func() float64) func(i, j int) float64 {
	return func(i, j int) float64 {
		switch {
		case i == j:
			if diag != nil {
				return diag()
			}
			return s.value()
		case (ul == gblas.Lower) == (i > j):
			return s.value()
		}
		return blasGuard
	}
}

// FuzzBLASDsymm compares Dsymm with gonum's.
func FuzzBLASDsymm(f *testing.F) {
	blasSeeds(f, [][3]byte{{5, 7, 0}, {15, 17, 1}, {1, 40, 2}, {14, 16, 3}, {0, 3, 0}, {33, 9, 1}, {40, 40, 2}})
	f.Fuzz(func(t *testing.T, cfg []byte, seed uint64) {
		r := &blasBytes{data: cfg}
		_ = r.byte()
		m, n := blasDim(r.byte(), 48), blasDim(r.byte(), 48)
		sub := r.byte()
		s := blasNewSetup(r, seed)
		side := [...]gblas.Side{gblas.Left, gblas.Right}[sub%2]
		ul := [...]gblas.Uplo{gblas.Lower, gblas.Upper}[(sub/2)%2]
		na := m
		if side == gblas.Right {
			na = n
		}
		a := s.newMat(na, na, 0, s.triFill(ul, nil))
		b := s.newMat(m, n, 1, nil)
		c := s.newMat(m, n, 2, nil)
		x := blasArgs{m: m, n: n, lda: a.ld, ldb: b.ld, ldc: c.ld, a: a.data, b: b.data, c: c.data}
		x.perturb(s.bad)
		if x.enum {
			ul = gblas.Uplo('X')
		}
		aw, bw, cw := blasClone(x.a), blasClone(x.b), blasClone(x.c)
		ag, bg, cg := blasClone(x.a), blasClone(x.b), blasClone(x.c)
		if s.alpha == 0 {
			a.poison(ag, blasTriLive(ul, gblas.NonUnit))
			b.poison(bg, nil)
		}
		if s.beta == 0 {
			c.poison(cg, nil)
		}
		a0, b0 := blasClone(ag), blasClone(bg)
		pw := blasCall(func() {
			gonum.Implementation{}.Dsymm(side, ul, x.m, x.n, s.alpha, aw, x.lda, bw, x.ldb, s.beta, cw, x.ldc)
		})
		pg := blasCall(func() {
			s.impl.Dsymm(side, ul, x.m, x.n, s.alpha, ag, x.lda, bg, x.ldb, s.beta, cg, x.ldc)
		})
		if blasPanics(t, s.bad, pw, pg) {
			return
		}
		blasSame(t, "a", ag, a0)
		blasSame(t, "b", bg, b0)
		sym := func(i, j int) float64 {
			if (ul == gblas.Lower) == (i < j) {
				i, j = j, i
			}
			return a.at(i, j)
		}
		bound := func(i, j int) float64 {
			var s2 float64
			if s.alpha != 0 {
				for p := 0; p < na; p++ {
					if side == gblas.Left {
						s2 += math.Abs(sym(i, p) * b.at(p, j))
					} else {
						s2 += math.Abs(b.at(i, p) * sym(p, j))
					}
				}
				s2 *= math.Abs(s.alpha)
			}
			if s.beta != 0 {
				s2 += math.Abs(s.beta * c.at(i, j))
			}
			return s2
		}
		all := func(i, j int) bool { return true }
		blasCheckOut(t, "C", cg, cw, c.data, c.ld, m, n, all, bound, blasTol(na), s.exact())
	})
}

// FuzzBLASDsyrk compares Dsyrk with gonum's; orders reach 72 to cross the
// 64-order diagonal blocks and the n < 24 dot-product path.
func FuzzBLASDsyrk(f *testing.F) {
	blasSeeds(f, [][3]byte{{5, 7, 0}, {23, 17, 1}, {24, 40, 2}, {65, 16, 3}, {0, 3, 0}, {72, 9, 1}, {40, 0, 2}})
	f.Fuzz(func(t *testing.T, cfg []byte, seed uint64) {
		r := &blasBytes{data: cfg}
		flags := r.byte()
		n, k := blasDim(r.byte(), 72), blasDim(r.byte(), 48)
		sub := r.byte()
		s := blasNewSetup(r, seed)
		tA := blasTransposes[int(flags)%3]
		ul := [...]gblas.Uplo{gblas.Lower, gblas.Upper}[sub%2]
		ar, ac := n, k
		if tA != gblas.NoTrans {
			ar, ac = k, n
		}
		a := s.newMat(ar, ac, 0, nil)
		c := s.newMat(n, n, 2, s.triFill(ul, nil))
		x := blasArgs{n: n, k: k, lda: a.ld, ldc: c.ld, a: a.data, c: c.data}
		x.perturb(s.bad)
		if x.enum {
			tA = gblas.Transpose('X')
		}
		aw, cw := blasClone(x.a), blasClone(x.c)
		ag, cg := blasClone(x.a), blasClone(x.c)
		if s.alpha == 0 {
			a.poison(ag, nil)
		}
		if s.beta == 0 {
			c.poison(cg, blasTriLive(ul, gblas.NonUnit))
		}
		a0 := blasClone(ag)
		pw := blasCall(func() {
			gonum.Implementation{}.Dsyrk(ul, tA, x.n, x.k, s.alpha, aw, x.lda, s.beta, cw, x.ldc)
		})
		pg := blasCall(func() {
			s.impl.Dsyrk(ul, tA, x.n, x.k, s.alpha, ag, x.lda, s.beta, cg, x.ldc)
		})
		if blasPanics(t, s.bad, pw, pg) {
			return
		}
		blasSame(t, "a", ag, a0)
		opA := func(i, p int) float64 {
			if tA != gblas.NoTrans {
				return a.at(p, i)
			}
			return a.at(i, p)
		}
		bound := func(i, j int) float64 {
			var s2 float64
			if s.alpha != 0 {
				for p := 0; p < k; p++ {
					s2 += math.Abs(opA(i, p) * opA(j, p))
				}
				s2 *= math.Abs(s.alpha)
			}
			if s.beta != 0 {
				s2 += math.Abs(s.beta * c.at(i, j))
			}
			return s2
		}
		live := func(i, j int) bool { return i == j || (ul == gblas.Lower) == (i > j) }
		blasCheckOut(t, "C", cg, cw, c.data, c.ld, n, n, live, bound, blasTol(k), s.exact())
	})
}

// blasTriangle builds the order-n triangular operand of Dtrmm/Dtrsm: the
// referenced triangle holds values (for solves: off-diagonal values in [-1,
// 1] or small integers and a diagonal of magnitude in [1, 2] or 1..4, so
// that the solution stays finite), the other triangle — and the diagonal when
// d is Unit — holds blasGuard. For solves in the wide mode the rows are
// scaled by powers of two in 2^±20 instead.
func (s *blasSetup) triangle(n int, ul gblas.Uplo, d gblas.Diag, solve bool) blasMat {
	val := s.value
	diag := s.value
	if solve {
		val = func() float64 {
			if s.mode == 1 {
				return float64(s.rng.IntN(9) - 4)
			}
			if s.mode == 3 && s.rng.IntN(10) < 7 {
				return 0
			}
			return 2*s.rng.Float64() - 1
		}
		diag = func() float64 {
			sign := float64(1 - 2*s.rng.IntN(2))
			if s.mode == 1 {
				return sign * float64(1+s.rng.IntN(4))
			}
			return sign * (1 + s.rng.Float64())
		}
	}
	a := s.newMat(n, n, 0, func(i, j int) float64 {
		switch {
		case i == j:
			if d == gblas.Unit {
				return blasGuard
			}
			return diag()
		case (ul == gblas.Lower) == (i > j):
			return val()
		}
		return blasGuard
	})
	if solve && s.mode == 2 {
		for i := 0; i < n; i++ {
			sc := math.Ldexp(1, s.rng.IntN(41)-20)
			for j := 0; j < n; j++ {
				if p := i*a.ld + j; math.Float64bits(a.data[p]) != math.Float64bits(blasGuard) {
					a.data[p] *= sc
				}
			}
		}
	}
	return a
}

// blasTriOp returns element (i, j) of op(A) for a triangular A.
func blasTriOp(a blasMat, ul gblas.Uplo, tA gblas.Transpose, d gblas.Diag) func(i, j int) float64 {
	return func(i, j int) float64 {
		if tA != gblas.NoTrans {
			i, j = j, i
		}
		switch {
		case i == j:
			if d == gblas.Unit {
				return 1
			}
			return a.at(i, i)
		case (ul == gblas.Lower) == (i > j):
			return a.at(i, j)
		}
		return 0
	}
}

// blasTriDecode decodes side, triangle, transpose and diagonal.
func blasTriDecode(sub byte) (gblas.Side, gblas.Uplo, gblas.Transpose, gblas.Diag) {
	return [...]gblas.Side{gblas.Left, gblas.Right}[sub%2],
		[...]gblas.Uplo{gblas.Lower, gblas.Upper}[(sub/2)%2],
		blasTransposes[int(sub/4)%3],
		[...]gblas.Diag{gblas.NonUnit, gblas.Unit}[(sub/12)%2]
}

// blasTriCase is a Dtrmm or Dtrsm call run by blasTriRun, with what the
// fuzz targets need to check B.
type blasTriCase struct {
	s      *blasSetup
	m, n   int
	na     int // order of A: m for the left side, n for the right
	side   gblas.Side
	ul     gblas.Uplo
	tA     gblas.Transpose
	d      gblas.Diag
	b      blasMat                // B as passed in
	bw, bg []float64              // B as left by gonum and by package blas
	op     func(i, j int) float64 // element (i, j) of op(A)
}

// blasTriRun decodes a call of Dtrmm, or of Dtrsm when solve is set, from
// cfg and seed, runs it with gonum's implementation and package blas's
// and checks that both panic alike and that A is not written. It reports
// false when the results are not to be checked (see blasPanics). A
// triangle to solve with gets a well-scaled diagonal (see triangle), and an
// illegal enum goes in the diagonal for Dtrmm and in the side for Dtrsm, so
// that the two targets between them reach both checks.
func blasTriRun(t *testing.T, cfg []byte, seed uint64, solve bool) (c blasTriCase, ok bool) {
	t.Helper()
	r := &blasBytes{data: cfg}
	_ = r.byte()
	m, n := blasDim(r.byte(), 48), blasDim(r.byte(), 48)
	side, ul, tA, d := blasTriDecode(r.byte())
	s := blasNewSetup(r, seed)
	na := m
	if side == gblas.Right {
		na = n
	}
	a := s.triangle(na, ul, d, solve)
	b := s.newMat(m, n, 1, nil)
	x := blasArgs{m: m, n: n, lda: a.ld, ldb: b.ld, a: a.data, b: b.data}
	x.perturb(s.bad)
	if x.enum {
		if solve {
			side = gblas.Side('X')
		} else {
			d = gblas.Diag('X')
		}
	}
	aw, bw := blasClone(x.a), blasClone(x.b)
	ag, bg := blasClone(x.a), blasClone(x.b)
	if s.alpha == 0 {
		a.poison(ag, blasTriLive(ul, d))
		b.poison(bg, nil)
	}
	a0 := blasClone(ag)
	want, got := gonum.Implementation{}.Dtrmm, s.impl.Dtrmm
	if solve {
		want, got = gonum.Implementation{}.Dtrsm, s.impl.Dtrsm
	}
	pw := blasCall(func() { want(side, ul, tA, d, x.m, x.n, s.alpha, aw, x.lda, bw, x.ldb) })
	pg := blasCall(func() { got(side, ul, tA, d, x.m, x.n, s.alpha, ag, x.lda, bg, x.ldb) })
	if blasPanics(t, s.bad, pw, pg) {
		return blasTriCase{}, false
	}
	blasSame(t, "a", ag, a0)
	return blasTriCase{
		s: s, m: m, n: n, na: na, side: side, ul: ul, tA: tA, d: d,
		b: b, bw: bw, bg: bg, op: blasTriOp(a, ul, tA, d),
	}, true
}

// FuzzBLASDtrmm compares Dtrmm with gonum's.
func FuzzBLASDtrmm(f *testing.F) {
	blasSeeds(f, [][3]byte{{5, 7, 0}, {17, 15, 5}, {1, 40, 14}, {33, 16, 19}, {0, 3, 1}, {40, 9, 22}, {16, 48, 11}})
	f.Fuzz(func(t *testing.T, cfg []byte, seed uint64) {
		c, ok := blasTriRun(t, cfg, seed, false)
		if !ok {
			return
		}
		s, b, na, m, n, side, op := c.s, c.b, c.na, c.m, c.n, c.side, c.op
		bound := func(i, j int) float64 {
			if s.alpha == 0 {
				return 0
			}
			var s2 float64
			for p := 0; p < na; p++ {
				if side == gblas.Left {
					s2 += math.Abs(op(i, p) * b.at(p, j))
				} else {
					s2 += math.Abs(b.at(i, p) * op(p, j))
				}
			}
			return math.Abs(s.alpha) * s2
		}
		all := func(i, j int) bool { return true }
		blasCheckOut(t, "B", c.bg, c.bw, b.data, b.ld, m, n, all, bound, blasTol(na), s.exact())
	})
}

// FuzzBLASDtrsm checks Dtrsm by its componentwise residual
// |op(A)·X − α·B| ≤ 8·(n+4)·ε·(|op(A)|·|X| + |α|·|B|) (X·op(A) for the right
// side), which holds for any backward-stable blocked solve however
// ill-conditioned A is; gonum's solution must pass the same test (a check on
// the checker), and the panics, guards and unreferenced cells are compared as
// for the other routines.
func FuzzBLASDtrsm(f *testing.F) {
	blasSeeds(f, [][3]byte{{5, 7, 0}, {17, 15, 5}, {1, 40, 14}, {33, 16, 19}, {0, 3, 1}, {40, 9, 22}, {16, 48, 11}})
	f.Fuzz(func(t *testing.T, cfg []byte, seed uint64) {
		c, ok := blasTriRun(t, cfg, seed, true)
		if !ok {
			return
		}
		s, b, na, m, n, side, ul, tA, d, op := c.s, c.b, c.na, c.m, c.n, c.side, c.ul, c.tA, c.d, c.op
		tol := blasTol(na)
		check := func(who string, xs []float64) {
			t.Helper()
			for p := range xs {
				i, j := p/b.ld, p%b.ld
				if i >= m || j >= n {
					if math.Float64bits(xs[p]) != math.Float64bits(b.data[p]) {
						t.Fatalf("%s: padding element %d of B written: %v", who, p, xs[p])
					}
					continue
				}
				if s.alpha == 0 {
					if xs[p] != 0 {
						t.Fatalf("%s: X(%d,%d) = %v with α = 0", who, i, j, xs[p])
					}
					continue
				}
				if math.IsNaN(xs[p]) || math.IsInf(xs[p], 0) {
					t.Fatalf("%s: X(%d,%d) = %v", who, i, j, xs[p])
				}
				var res, bnd float64
				for q := 0; q < na; q++ {
					var pr float64
					if side == gblas.Left {
						pr = op(i, q) * xs[q*b.ld+j]
					} else {
						pr = xs[i*b.ld+q] * op(q, j)
					}
					res += pr
					bnd += math.Abs(pr)
				}
				res -= s.alpha * b.at(i, j)
				bnd += math.Abs(s.alpha * b.at(i, j))
				if math.Abs(res) > tol*bnd+0x1p-1000 {
					t.Fatalf("%s: residual at (%d,%d) %.3g > %.3g (m=%d n=%d side=%c ul=%c tA=%c d=%c)",
						who, i, j, math.Abs(res), tol*bnd, m, n, side, ul, tA, d)
				}
			}
		}
		check("gonum", c.bw)
		check("blas", c.bg)
	})
}
