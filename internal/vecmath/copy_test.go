package vecmath

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// TestCopyBackendExpected fails if SOLVEGP_EXPECT_BACKEND names a backend other
// than the one the dispatcher chose (used by CI to prove which path ran).
func TestCopyBackendExpected(t *testing.T) {
	want := os.Getenv("SOLVEGP_EXPECT_BACKEND")
	t.Logf("copy backend: %s (available: %d)", CopyBackend(), len(copyImpls))
	if want != "" && CopyBackend() != want {
		t.Fatalf("copy backend = %q, want %q", CopyBackend(), want)
	}
}

// copyRandomGeom draws a geometry with run lengths around every vector-width
// boundary, overlapping and non-overlapping strides.
func copyRandomGeom(rng *rand.Rand, overlapDst bool) CopyGeom {
	runs := []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 45, 64, 75, 100}
	var g CopyGeom
	g.Run = runs[rng.IntN(len(runs))]
	for k := 0; k < 3; k++ {
		g.N[k] = 1 + rng.IntN(4)
	}
	// Source strides: anything, including 0 and overlaps.
	for k := 0; k < 3; k++ {
		g.SrcStride[k] = rng.IntN(3 * g.Run)
	}
	if overlapDst {
		for k := 0; k < 3; k++ {
			g.DstStride[k] = rng.IntN(2 * g.Run)
		}
		return g
	}
	// Non-overlapping destination: gaps of up to 3 elements between runs.
	g.DstStride[0] = g.Run + rng.IntN(4)
	g.DstStride[1] = g.N[0]*g.DstStride[0] + rng.IntN(4)
	g.DstStride[2] = g.N[1]*g.DstStride[1] + rng.IntN(4)
	return g
}

func copyRandSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.NormFloat64()
	}
	return s
}

func copyBitsEqual(a, b []float64) int {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestCopyBlockBackends checks every backend bit-exactly against the pure-Go
// twin, with guard zones around dst that must stay untouched.
func TestCopyBlockBackends(t *testing.T) {
	const guard = 16
	rng := rand.New(rand.NewPCG(1, 2))
	for _, impl := range copyImpls {
		for trial := 0; trial < 2000; trial++ {
			for _, add := range []bool{false, true} {
				g := copyRandomGeom(rng, add && trial%2 == 0)
				ns, nd := copySpan(&g, &g.SrcStride), copySpan(&g, &g.DstStride)
				src := copyRandSlice(rng, ns)
				want := copyRandSlice(rng, nd+2*guard)
				got := append([]float64(nil), want...)
				// Exact-length slices, so a kernel overrunning its
				// bounds on the source side reads past the slice.
				if add {
					copyBlockAddGeneric(want[guard:guard+nd], src, &g)
					if copyCheck("test", &g, nd, ns) {
						impl.add(got[guard:guard+nd], src, &g)
					}
				} else {
					copyBlockGeneric(want[guard:guard+nd], src, &g)
					if copyCheck("test", &g, nd, ns) {
						impl.block(got[guard:guard+nd], src, &g)
					}
				}
				if i := copyBitsEqual(got, want); i >= 0 {
					t.Fatalf("%s add=%v %+v: element %d = %v, want %v", impl.name, add, g, i-guard, got[i], want[i])
				}
			}
		}
	}
}

// TestCopyBlockKnown checks the generic kernel itself on a hand-computed case,
// so the oracle cannot be wrong in the same way as the kernels.
func TestCopyBlockKnown(t *testing.T) {
	src := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	// Two runs of 2 at stride 5, repeated at offset 1: {0,1},{5,6},{1,2},{6,7}.
	g := CopyContiguous(2, [3]int{2, 2, 1}, [3]int{5, 1, 0})
	for _, impl := range copyImpls {
		dst := make([]float64, 8)
		impl.block(dst, src, &g)
		want := []float64{0, 1, 5, 6, 1, 2, 6, 7}
		if copyBitsEqual(dst, want) >= 0 {
			t.Errorf("%s: CopyBlock = %v, want %v", impl.name, dst, want)
		}
		// Adjoint: scatter-add the same runs back; overlapping elements
		// accumulate.
		img := make([]float64, 12)
		ga := g
		ga.SrcStride, ga.DstStride = g.DstStride, g.SrcStride
		impl.add(img, dst, &ga)
		wantImg := []float64{0, 2, 2, 0, 0, 5, 12, 7, 0, 0, 0, 0}
		if copyBitsEqual(img, wantImg) >= 0 {
			t.Errorf("%s: CopyBlockAdd = %v, want %v", impl.name, img, wantImg)
		}
	}
}

// TestCopyBlockRounding checks that accumulation is one rounded addition per
// element in run order (no FMA, no reassociation): 1 + 2^-53 + 2^-53 rounds
// differently from 1 + (2^-53 + 2^-53).
func TestCopyBlockRounding(t *testing.T) {
	eps := math.Ldexp(1, -53)
	for _, impl := range copyImpls {
		for _, run := range []int{1, 3, 8, 13, 40} {
			dst := make([]float64, run)
			src := make([]float64, 2*run)
			for i := range dst {
				dst[i] = 1
				src[i], src[run+i] = eps, eps
			}
			g := CopyGeom{Run: run, N: [3]int{2, 1, 1}, SrcStride: [3]int{run, 0, 0}}
			impl.add(dst, src, &g)
			for i, v := range dst {
				if v != 1 {
					t.Fatalf("%s run %d: dst[%d] = %v, want 1 (sequential rounding)", impl.name, run, i, v)
				}
			}
		}
	}
}

// TestCopyStream checks every backend's non-temporal copy against the builtin
// copy for all lengths up to 70 and every alignment of dst and src.
func TestCopyStream(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, impl := range copyImpls {
		for n := 1; n <= 70; n++ {
			for doff := 0; doff < 8; doff++ {
				for soff := 0; soff < 8; soff += 3 {
					src := copyRandSlice(rng, n+soff)[soff:]
					buf := copyRandSlice(rng, n+doff+8)
					want := append([]float64(nil), buf...)
					copy(want[doff:doff+n], src)
					impl.stream(buf[doff:doff+n], src)
					if i := copyBitsEqual(buf, want); i >= 0 {
						t.Fatalf("%s n=%d doff=%d soff=%d: element %d = %v, want %v", impl.name, n, doff, soff, i, buf[i], want[i])
					}
				}
			}
		}
	}
	dst := make([]float64, 5)
	if n := CopyStream(dst, []float64{1, 2, 3}); n != 3 || dst[2] != 3 || dst[3] != 0 {
		t.Errorf("CopyStream copied %d: %v", n, dst)
	}
	if n := CopyStream(nil, []float64{1}); n != 0 {
		t.Errorf("CopyStream into nil copied %d", n)
	}
}

func TestCopyBlockPanics(t *testing.T) {
	cases := []struct {
		name string
		g    CopyGeom
		nd   int
		ns   int
	}{
		{"negative run", CopyGeom{Run: -1, N: [3]int{1, 1, 1}}, 10, 10},
		{"negative count", CopyGeom{Run: 1, N: [3]int{1, -1, 1}}, 10, 10},
		{"negative stride", CopyGeom{Run: 1, N: [3]int{2, 1, 1}, SrcStride: [3]int{-1, 0, 0}, DstStride: [3]int{1, 0, 0}}, 10, 10},
		{"short src", CopyContiguous(4, [3]int{3, 1, 1}, [3]int{4, 0, 0}), 12, 11},
		{"short dst", CopyContiguous(4, [3]int{3, 1, 1}, [3]int{4, 0, 0}), 11, 12},
	}
	for _, c := range cases {
		for _, add := range []bool{false, true} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s (add=%v): no panic", c.name, add)
					}
				}()
				if add {
					CopyBlockAdd(make([]float64, c.nd), make([]float64, c.ns), &c.g)
				} else {
					CopyBlock(make([]float64, c.nd), make([]float64, c.ns), &c.g)
				}
			}()
		}
	}
	// Empty blocks are fine with empty slices.
	CopyBlock(nil, nil, &CopyGeom{Run: 0, N: [3]int{5, 5, 5}})
	CopyBlockAdd(nil, nil, &CopyGeom{Run: 3, N: [3]int{0, 5, 5}})
}

func BenchmarkCopyBlock(b *testing.B) {
	// 64 rows of 5x5 single-channel patches of a 28-wide image, stride 1.
	for _, impl := range copyImpls {
		for _, run := range []int{3, 5, 9, 15} {
			g := CopyContiguous(run, [3]int{run, 24, 64}, [3]int{28, 1, 28 * 28})
			src := make([]float64, copySpan(&g, &g.SrcStride))
			dst := make([]float64, copySpan(&g, &g.DstStride))
			b.Run(impl.name+"/run"+string(rune('0'+run/10))+string(rune('0'+run%10)), func(b *testing.B) {
				b.SetBytes(int64(8 * len(dst)))
				for i := 0; i < b.N; i++ {
					impl.block(dst, src, &g)
				}
			})
		}
	}
}

// slackStray returns the first index outside the destination runs (inRun)
// whose value changed (got against want, which holds the values before the
// copy there) more than CopySlack values after the end of the last run
// before it, or -1: the slack copies may overwrite only the CopySlack values
// after each run.
func slackStray(got, want []float64, inRun func(i int) bool) int {
	end := -CopySlack - 1 // one past the last run value seen
	for i := range got {
		if inRun(i) {
			end = i + 1
			continue
		}
		if i-end >= CopySlack && math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			return i
		}
	}
	return -1
}

// TestCopyBlockSlackBackends checks the slack kernels of every backend against
// the pure-Go CopyBlock on blocks of runs of 1 to 20 values whose destination
// runs tile dst or leave gaps between them: the runs bit for bit, nothing
// written before the first run or past the slack, and the source read only
// within its span plus the slack (the source slice is cut there).
func TestCopyBlockSlackBackends(t *testing.T) {
	const guard = 16
	rng := rand.New(rand.NewPCG(5, 6))
	for _, impl := range copyImpls {
		for trial := 0; trial < 3000; trial++ {
			var g CopyGeom
			g.Run = 1 + rng.IntN(20)
			for k := 0; k < 3; k++ {
				g.N[k] = 1 + rng.IntN(4)
				g.SrcStride[k] = rng.IntN(3 * g.Run)
			}
			g = CopyContiguous(g.Run, g.N, g.SrcStride)
			switch trial % 3 {
			case 0: // strides of single-iteration levels are free
				for k := 0; k < 3; k++ {
					if g.N[k] == 1 {
						g.DstStride[k] = rng.IntN(50)
					}
				}
			case 1: // gaps between the runs of some levels
				ext := g.Run
				for k := 0; k < 3; k++ {
					if rng.IntN(2) == 0 {
						g.DstStride[k] = ext + rng.IntN(6)
					} else {
						g.DstStride[k] = ext
					}
					ext += (g.N[k] - 1) * g.DstStride[k]
				}
			}
			ns, nd := copySpan(&g, &g.SrcStride), copySpan(&g, &g.DstStride)
			src := copyRandSlice(rng, ns+CopySlack)
			want := copyRandSlice(rng, nd+CopySlack+guard)
			got := append([]float64(nil), want...)
			copyBlockGeneric(want, src, &g)
			if !copyCheck("test", &g, nd, ns) || !copyIncreasing(&g) {
				t.Fatalf("bad test geometry %+v", g)
			}
			// inRun marks the destination runs; the gaps between them
			// may hold anything after the call.
			inRun := make([]float64, nd)
			ones := make([]float64, ns)
			for i := range ones {
				ones[i] = 1
			}
			copyBlockGeneric(inRun, ones, &g)
			impl.slack(got, src, &g)
			for i := 0; i < nd; i++ {
				if inRun[i] == 1 && math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%s %+v: element %d = %v, want %v", impl.name, g, i, got[i], want[i])
				}
			}
			if i := slackStray(got, want, func(i int) bool { return i < nd && inRun[i] == 1 }); i >= 0 {
				t.Fatalf("%s %+v: wrote element %d, more than CopySlack past a run", impl.name, g, i)
			}
		}
	}
}

// TestCopyIncreasing checks the order predicate that admits blocks to the
// slack kernels.
func TestCopyIncreasing(t *testing.T) {
	for _, c := range []struct {
		g    CopyGeom
		want bool
	}{
		{CopyContiguous(3, [3]int{2, 2, 2}, [3]int{}), true},
		{CopyGeom{Run: 3, N: [3]int{2, 2, 1}, DstStride: [3]int{4, 9, 0}}, true},  // gaps of 1 and 1
		{CopyGeom{Run: 3, N: [3]int{2, 2, 1}, DstStride: [3]int{2, 9, 0}}, false}, // overlapping runs
		{CopyGeom{Run: 3, N: [3]int{2, 2, 1}, DstStride: [3]int{3, 5, 0}}, false}, // level 1 overlaps level 0
		{CopyGeom{Run: 3, N: [3]int{1, 2, 1}, DstStride: [3]int{0, 3, 0}}, true},  // single-iteration levels are free
		{CopyGeom{Run: 3, N: [3]int{2, 1, 2}, DstStride: [3]int{3, 0, 5}}, false},
		{CopyGeom{Run: 3, N: [3]int{2, 1, 2}, DstStride: [3]int{3, 0, 6}}, true},
	} {
		if got := copyIncreasing(&c.g); got != c.want {
			t.Errorf("copyIncreasing(%+v) = %v, want %v", c.g, got, c.want)
		}
	}
}

// TestCopyBlockSlackFallback checks that CopyBlockSlack copies blocks whose
// destination runs are not in increasing order, or that lack the slack, exactly like CopyBlock, writing nothing past
// the destination span, and panics on invalid geometries.
func TestCopyBlockSlackFallback(t *testing.T) {
	tiled := CopyContiguous(3, [3]int{2, 2, 1}, [3]int{5, 20, 0})
	overlapping := tiled
	overlapping.DstStride[0] = 2
	for _, c := range []struct {
		name        string
		g           CopyGeom
		srcX, dstX  int // values past the spans
		exactWrites bool
	}{
		{"slack", tiled, CopySlack, CopySlack, false},
		{"overlapping", overlapping, CopySlack, CopySlack, true},
		{"short src", tiled, CopySlack - 1, CopySlack, true},
		{"short dst", tiled, CopySlack, CopySlack - 1, true},
	} {
		ns, nd := copySpan(&c.g, &c.g.SrcStride), copySpan(&c.g, &c.g.DstStride)
		src := make([]float64, ns+c.srcX)
		for i := range src {
			src[i] = float64(i)
		}
		dst := make([]float64, nd+c.dstX)
		for i := range dst {
			dst[i] = -1
		}
		want := append([]float64(nil), dst...)
		copyBlockGeneric(want, src, &c.g)
		CopyBlockSlack(dst, src, &c.g)
		n := nd
		if c.exactWrites {
			n = len(dst)
		}
		if i := copyBitsEqual(dst[:n], want[:n]); i >= 0 {
			t.Errorf("%s: element %d = %v, want %v", c.name, i, dst[i], want[i])
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("negative run: no panic")
			}
		}()
		CopyBlockSlack(make([]float64, 10), make([]float64, 10), &CopyGeom{Run: -1, N: [3]int{1, 1, 1}})
	}()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("short dst: no panic")
			}
		}()
		CopyBlockSlack(make([]float64, 3), make([]float64, 100), &tiled)
	}()
}

// TestCopyBlockSlackTiled3 checks the slack kernels on blocks of 3-element
// runs that tile the destination, or tile it within each iteration of level
// 2 with gaps between those (the patch rows of 3x3 single-channel patches,
// which the AVX-512 backend merges eight at a time), for every number of
// runs from 1 to 80, so that every remainder of the groups of eight and
// every level boundary inside a group is exercised. Gaps may be
// overwritten; nothing past the slack may be.
func TestCopyBlockSlackTiled3(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, impl := range copyImpls {
		for total := 1; total <= 80; total++ {
			for trial := 0; trial < 8; trial++ {
				// Factor total into n0*n1*n2 at random.
				var n [3]int
				rest := total
				for k := 0; k < 2; k++ {
					var divs []int
					for d := 1; d <= rest; d++ {
						if rest%d == 0 {
							divs = append(divs, d)
						}
					}
					n[k] = divs[rng.IntN(len(divs))]
					rest /= n[k]
				}
				n[2] = rest
				var s [3]int
				for k := range s {
					s[k] = rng.IntN(12)
				}
				g := CopyContiguous(3, n, s) // the destination runs tile dst
				if trial%2 == 1 {
					g.DstStride[2] += rng.IntN(7) // gaps between level-2 iterations
				}
				if trial%4 >= 2 {
					// The strides of single-iteration levels are
					// free and must not matter.
					for k := range n {
						if n[k] == 1 {
							g.DstStride[k] = rng.IntN(100)
						}
					}
				}
				ns, nd := copySpan(&g, &g.SrcStride), copySpan(&g, &g.DstStride)
				src := copyRandSlice(rng, ns+CopySlack)
				want := copyRandSlice(rng, nd+CopySlack+16)
				got := append([]float64(nil), want...)
				copyBlockGeneric(want, src, &g)
				impl.slack(got, src, &g)
				inRun := make([]float64, nd)
				ones := make([]float64, ns)
				for i := range ones {
					ones[i] = 1
				}
				copyBlockGeneric(inRun, ones, &g)
				for i := 0; i < nd; i++ {
					if inRun[i] == 1 && math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("%s %+v: element %d = %v, want %v", impl.name, g, i, got[i], want[i])
					}
				}
				if i := slackStray(got, want, func(i int) bool { return i < nd && inRun[i] == 1 }); i >= 0 {
					t.Fatalf("%s %+v: wrote element %d, more than CopySlack past a run", impl.name, g, i)
				}
			}
		}
	}
}

// TestCopyBlockSlackN checks CopyBlockSlackN against CopyBlock block by
// block, for blocks that follow each other with or without gaps (the fast
// path), and for overlapping blocks (copied one by one): the runs bit for
// bit, later blocks winning where they overlap, nothing written past the
// slack.
func TestCopyBlockSlackN(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := 0; trial < 3000; trial++ {
		var n, s [3]int
		run := 1 + rng.IntN(12)
		for k := range n {
			n[k], s[k] = 1+rng.IntN(4), rng.IntN(3*run)
		}
		g := CopyContiguous(run, n, s)
		if trial%2 == 1 {
			g.DstStride[2] += rng.IntN(5)
		}
		ns, nd := copySpan(&g, &g.SrcStride), copySpan(&g, &g.DstStride)
		count := 1 + rng.IntN(4)
		srcStep := rng.IntN(ns + 3)
		dstStep := nd + rng.IntN(4)
		if trial%5 == 0 {
			dstStep = rng.IntN(nd + 1) // overlapping blocks
		}
		src := copyRandSlice(rng, (count-1)*srcStep+ns+CopySlack)
		dstLen := (count-1)*dstStep + nd
		want := copyRandSlice(rng, dstLen+CopySlack+16)
		got := append([]float64(nil), want...)
		// inRun marks the destination runs; the gaps may hold anything.
		inRun := make([]bool, len(want))
		onesSrc := make([]float64, ns)
		for j := range onesSrc {
			onesSrc[j] = 1
		}
		mark := make([]float64, nd)
		copyBlockGeneric(mark, onesSrc, &g)
		for i := 0; i < count; i++ {
			copyBlockGeneric(want[i*dstStep:], src[i*srcStep:], &g)
			for j, v := range mark {
				if v == 1 {
					inRun[i*dstStep+j] = true
				}
			}
		}
		CopyBlockSlackN(got, src, &g, count, srcStep, dstStep)
		for i := 0; i < dstLen; i++ {
			if inRun[i] && math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%+v count %d steps %d %d: element %d = %v, want %v", g, count, srcStep, dstStep, i, got[i], want[i])
			}
		}
		if count > 1 && dstStep < nd {
			// Overlapping blocks are copied exactly.
			for i := range got {
				if !inRun[i] && math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%+v count %d steps %d %d: overlapping blocks wrote gap element %d", g, count, srcStep, dstStep, i)
				}
			}
		}
		if i := slackStray(got, want, func(i int) bool { return inRun[i] }); i >= 0 {
			t.Fatalf("%+v count %d steps %d %d: wrote element %d, more than CopySlack past a run", g, count, srcStep, dstStep, i)
		}
	}
	// Arguments that do not fit panic, as CopyBlockSlack's do.
	for _, c := range []struct{ count, srcStep, dstStep, ldst int }{{-1, 0, 0, 10}, {2, -1, 0, 10}, {2, 0, -1, 10}, {3, 0, 5, 10}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v: no panic", c)
				}
			}()
			g := CopyContiguous(2, [3]int{1, 1, 1}, [3]int{})
			CopyBlockSlackN(make([]float64, c.ldst), make([]float64, 10), &g, c.count, c.srcStep, c.dstStep)
		}()
	}
}
