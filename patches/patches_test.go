package patches

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/solvegp/solvegp/internal/vecmath"
)

// TestBackendExpected fails if SOLVEGP_EXPECT_BACKEND names a copy backend
// other than the one in use (CI runs this package once per backend).
func TestBackendExpected(t *testing.T) {
	want := os.Getenv("SOLVEGP_EXPECT_BACKEND")
	t.Logf("copy backend: %s", vecmath.CopyBackend())
	if want != "" && vecmath.CopyBackend() != want {
		t.Fatalf("copy backend = %q, want %q", vecmath.CopyBackend(), want)
	}
}

// refAxis computes, independently of OutputSize, the output size and the
// padding before an axis (TensorFlow's SAME convention), or ok=false if the
// configuration is impossible.
func refAxis(in, k, s, d int, pad Padding, before, after int) (out, padBefore int, ok bool) {
	ext := (k-1)*d + 1
	switch pad {
	case Valid:
		if ext > in {
			return 0, 0, false
		}
		return (in-ext)/s + 1, 0, true
	case Same:
		out = int(math.Ceil(float64(in) / float64(s)))
		need := (out-1)*s + ext
		total := max(need-in, 0)
		return out, total / 2, true
	default:
		if in+before+after < ext {
			return 0, 0, false
		}
		return (in+before+after-ext)/s + 1, before, true
	}
}

// refGeom is a plain description of a configuration for the reference loops.
type refGeom struct {
	c          Config
	outH, outW int
	padT, padL int
}

func newRef(c Config) (refGeom, bool) {
	r := refGeom{c: c}
	for _, p := range []*int{&r.c.StrideH, &r.c.StrideW, &r.c.DilationH, &r.c.DilationW} {
		if *p == 0 {
			*p = 1
		}
	}
	if r.c.Columns == ColumnsDefault {
		r.c.Columns = ColumnsHWC
		if c.Layout == NCHW {
			r.c.Columns = ColumnsCHW
		}
	}
	var ok1, ok2 bool
	r.outH, r.padT, ok1 = refAxis(c.Height, c.PatchHeight, r.c.StrideH, r.c.DilationH, c.Padding, c.PadTop, c.PadBottom)
	r.outW, r.padL, ok2 = refAxis(c.Width, c.PatchWidth, r.c.StrideW, r.c.DilationW, c.Padding, c.PadLeft, c.PadRight)
	return r, ok1 && ok2
}

// pix returns the index of pixel (n, h, w, ch) in a batch of images.
func (r *refGeom) pix(n, h, w, ch int) int {
	c := &r.c
	if c.Layout == NHWC {
		return ((n*c.Height+h)*c.Width+w)*c.Channels + ch
	}
	return ((n*c.Channels+ch)*c.Height+h)*c.Width + w
}

// col returns the column of tap (i, j, ch) in the patch matrix.
func (r *refGeom) col(i, j, ch int) int {
	c := &r.c
	if c.Columns == ColumnsHWC {
		return (i*c.PatchWidth+j)*c.Channels + ch
	}
	return (ch*c.PatchHeight+i)*c.PatchWidth + j
}

// visit calls f(pixel index or -1 for padding, patch-matrix index) for every
// tap of every patch of every image: the plain six-loop im2col.
func (r *refGeom) visit(batch int, f func(pix, col int)) {
	c := &r.c
	plen := c.PatchHeight * c.PatchWidth * c.Channels
	for n := 0; n < batch; n++ {
		for oh := 0; oh < r.outH; oh++ {
			for ow := 0; ow < r.outW; ow++ {
				row := (n*r.outH+oh)*r.outW + ow
				for i := 0; i < c.PatchHeight; i++ {
					for j := 0; j < c.PatchWidth; j++ {
						for ch := 0; ch < c.Channels; ch++ {
							h := oh*c.StrideH - r.padT + i*c.DilationH
							w := ow*c.StrideW - r.padL + j*c.DilationW
							p := -1
							if h >= 0 && h < c.Height && w >= 0 && w < c.Width {
								p = r.pix(n, h, w, ch)
							}
							f(p, row*plen+r.col(i, j, ch))
						}
					}
				}
			}
		}
	}
}

func (r *refGeom) im2col(x []float64, batch int) []float64 {
	c := &r.c
	out := make([]float64, batch*r.outH*r.outW*c.PatchHeight*c.PatchWidth*c.Channels)
	r.visit(batch, func(p, q int) {
		if p >= 0 {
			out[q] = x[p]
		}
	})
	return out
}

func (r *refGeom) col2im(y []float64, batch int) []float64 {
	c := &r.c
	out := make([]float64, batch*c.Height*c.Width*c.Channels)
	r.visit(batch, func(p, q int) {
		if p >= 0 {
			out[p] += y[q]
		}
	})
	return out
}

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.NormFloat64()
	}
	return s
}

// randConfig draws small configurations that exercise every code path:
// 1x1 images, patches as large as (or larger than) the image, odd sizes,
// strides and dilations up to 3, all paddings, layouts and column orders,
// and occasionally many channels (long runs for the SIMD chunk loops).
func randConfig(rng *rand.Rand) Config {
	c := Config{
		Height:      1 + rng.IntN(9),
		Width:       1 + rng.IntN(9),
		Channels:    1 + rng.IntN(3),
		Layout:      Layout(rng.IntN(2)),
		StrideH:     rng.IntN(4),
		StrideW:     rng.IntN(4),
		DilationH:   rng.IntN(3),
		DilationW:   rng.IntN(3),
		Padding:     Padding(rng.IntN(3)),
		Columns:     ColumnOrder(rng.IntN(3)),
		Workers:     1 + rng.IntN(3),
		PatchHeight: 1,
		PatchWidth:  1,
	}
	if rng.IntN(8) == 0 {
		c.Channels = 8 + rng.IntN(30)
	}
	c.PatchHeight = 1 + rng.IntN(c.Height+1)
	c.PatchWidth = 1 + rng.IntN(c.Width+1)
	if rng.IntN(4) == 0 {
		c.PatchHeight, c.PatchWidth = c.Height, c.Width
	}
	if c.Padding == Explicit {
		c.PadTop, c.PadBottom = rng.IntN(4), rng.IntN(4)
		c.PadLeft, c.PadRight = rng.IntN(4), rng.IntN(4)
	}
	return c
}

func dot(a, b []float64) (s, abs float64) {
	for i := range a {
		s += a[i] * b[i]
		abs += math.Abs(a[i] * b[i])
	}
	return s, abs
}

// checkConfig compares Im2Col, Col2Im and Col2ImAdd with the reference loops
// and checks adjointness for one configuration and batch size.
func checkConfig(t testing.TB, rng *rand.Rand, c Config, batch int) {
	t.Helper()
	ref, possible := newRef(c)
	g, err := New(c)
	if !possible {
		if err == nil || !errors.Is(err, ErrConfig) {
			t.Fatalf("%+v: impossible configuration accepted (err %v)", c, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%+v: %v", c, err)
	}
	// Check the plan New chose and every other: the direct, padded and
	// over-read plans (setOverread falls back to the direct plan where
	// there is no over-read plan).
	checkGeometry(t, rng, c, batch, &ref, g)
	for _, set := range []func(*Geometry){
		func(o *Geometry) { o.setPadded(false) },
		func(o *Geometry) { o.setPadded(true) },
		(*Geometry).setOverread,
	} {
		other := *g
		set(&other)
		checkGeometry(t, rng, c, batch, &ref, &other)
	}
}

func checkGeometry(t testing.TB, rng *rand.Rand, c Config, batch int, ref *refGeom, g *Geometry) {
	t.Helper()
	if g.OutHeight() != ref.outH || g.OutWidth() != ref.outW {
		t.Fatalf("%+v: output %dx%d, want %dx%d", c, g.OutHeight(), g.OutWidth(), ref.outH, ref.outW)
	}
	if top, _, left, _ := g.Pads(); top != ref.padT || left != ref.padL {
		t.Fatalf("%+v: pads top %d left %d, want %d %d", c, top, left, ref.padT, ref.padL)
	}
	x := randSlice(rng, batch*g.ImageLen())
	y := randSlice(rng, batch*g.NumPatches()*g.PatchLen())

	// Im2Col is a pure copy: bit-exact against the reference. Pre-fill
	// with NaN so unwritten entries are caught, and give dst spare
	// capacity holding a sentinel that must stay untouched (the copies
	// may spill past runs, but never past len(dst); x is cut from a longer
	// slice too, so reads past it would not fault but would be wrong).
	const guard = 2 * vecmath.CopySlack
	buf := make([]float64, len(y)+guard)
	for i := range buf {
		buf[i] = math.NaN()
	}
	for i := len(y); i < len(buf); i++ {
		buf[i] = -7
	}
	got := buf[:len(y)]
	if err := g.Im2Col(got, x, batch); err != nil {
		t.Fatalf("%+v: Im2Col: %v", c, err)
	}
	for i := len(y); i < len(buf); i++ {
		if buf[i] != -7 {
			t.Fatalf("%+v batch %d padded %v: Im2Col wrote past dst (element %d of the spare capacity)", c, batch, g.padded, i-len(y))
		}
	}
	want := ref.im2col(x, batch)
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%+v batch %d padded %v: Im2Col[%d] = %v, want %v", c, batch, g.padded, i, got[i], want[i])
		}
	}

	// Col2Im accumulates in its own order: equal to rounding.
	img := randSlice(rng, len(x)) // garbage that must be overwritten
	if err := g.Col2Im(img, y, batch); err != nil {
		t.Fatalf("%+v: Col2Im: %v", c, err)
	}
	wantImg := ref.col2im(y, batch)
	for i := range wantImg {
		if math.Abs(img[i]-wantImg[i]) > 1e-12*(1+math.Abs(wantImg[i])) {
			t.Fatalf("%+v batch %d padded %v: Col2Im[%d] = %v, want %v", c, batch, g.padded, i, img[i], wantImg[i])
		}
	}
	// Col2ImAdd adds the same values: base + Col2Im(y), bit for bit
	// when the base is 0 and to rounding otherwise.
	base := randSlice(rng, len(x))
	acc := append([]float64(nil), base...)
	if err := g.Col2ImAdd(acc, y, batch); err != nil {
		t.Fatalf("%+v: Col2ImAdd: %v", c, err)
	}
	for i := range acc {
		if math.Abs(acc[i]-(base[i]+img[i])) > 1e-12*(1+math.Abs(acc[i])) {
			t.Fatalf("%+v: Col2ImAdd[%d] = %v, want %v + %v", c, i, acc[i], base[i], img[i])
		}
	}

	// Adjointness: <Im2Col(x), y> = <x, Col2Im(y)>.
	lhs, labs := dot(got, y)
	rhs, rabs := dot(x, img)
	if math.Abs(lhs-rhs) > 1e-12*(1+labs+rabs) {
		t.Fatalf("%+v: <Im2Col x, y> = %v, <x, Col2Im y> = %v", c, lhs, rhs)
	}
}

func TestIm2ColRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	trials := 3000
	if testing.Short() {
		trials = 600
	}
	for trial := 0; trial < trials; trial++ {
		checkConfig(t, rng, randConfig(rng), rng.IntN(4))
	}
}

// TestIm2ColCases covers named corner cases explicitly.
func TestIm2ColCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cases := []Config{
		{Height: 1, Width: 1, Channels: 1, PatchHeight: 1, PatchWidth: 1},
		{Height: 1, Width: 1, Channels: 3, PatchHeight: 3, PatchWidth: 3, Padding: Same},
		{Height: 1, Width: 1, Channels: 2, Layout: NCHW, PatchHeight: 2, PatchWidth: 2, Padding: Same},
		{Height: 5, Width: 7, Channels: 3, PatchHeight: 5, PatchWidth: 7},
		{Height: 5, Width: 7, Channels: 3, Layout: NCHW, PatchHeight: 5, PatchWidth: 7, Columns: ColumnsHWC},
		{Height: 28, Width: 28, Channels: 1, PatchHeight: 5, PatchWidth: 5, Padding: Same},
		{Height: 32, Width: 32, Channels: 3, PatchHeight: 3, PatchWidth: 3, StrideH: 2, StrideW: 2, Padding: Same},
		{Height: 32, Width: 32, Channels: 3, Layout: NCHW, PatchHeight: 5, PatchWidth: 5, StrideH: 2, StrideW: 2},
		{Height: 9, Width: 11, Channels: 2, PatchHeight: 3, PatchWidth: 2, DilationH: 3, DilationW: 4, Padding: Same},
		{Height: 9, Width: 11, Channels: 2, Layout: NCHW, PatchHeight: 3, PatchWidth: 2, DilationH: 2, Columns: ColumnsHWC, Padding: Same},
		{Height: 4, Width: 4, Channels: 1, PatchHeight: 2, PatchWidth: 2, StrideH: 5, StrideW: 5, Padding: Explicit, PadTop: 3, PadBottom: 3, PadLeft: 3, PadRight: 3},
		{Height: 3, Width: 3, Channels: 40, PatchHeight: 3, PatchWidth: 3, Padding: Same, Columns: ColumnsCHW},
		{Height: 6, Width: 6, Channels: 1, PatchHeight: 1, PatchWidth: 1, StrideH: 2, StrideW: 3},
	}
	for _, c := range cases {
		for _, w := range []int{1, 2, 5} {
			c.Workers = w
			for _, batch := range []int{0, 1, 3} {
				checkConfig(t, rng, c, batch)
			}
		}
	}
}

// TestIm2ColHandComputed pins the semantics on a case worked out by hand, so
// the reference loops cannot share a misunderstanding with the package.
func TestIm2ColHandComputed(t *testing.T) {
	// One 3x3 single-channel image 1..9, 2x2 patches, stride 1, SAME: the
	// padding (total 1) goes after, so patches start at (0,0), (0,1),
	// (0,2), (1,0), ...
	g, err := New(Config{Height: 3, Width: 3, Channels: 1, PatchHeight: 2, PatchWidth: 2, Padding: Same})
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	got := make([]float64, 9*4)
	if err := g.Im2Col(got, x, 1); err != nil {
		t.Fatal(err)
	}
	want := []float64{
		1, 2, 4, 5, 2, 3, 5, 6, 3, 0, 6, 0,
		4, 5, 7, 8, 5, 6, 8, 9, 6, 0, 9, 0,
		7, 8, 0, 0, 8, 9, 0, 0, 9, 0, 0, 0,
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Im2Col = %v, want %v", got, want)
		}
	}
	// Col2Im of all ones counts the patches covering each pixel.
	ones := make([]float64, len(got))
	for i := range ones {
		ones[i] = 1
	}
	img := make([]float64, 9)
	if err := g.Col2Im(img, ones, 1); err != nil {
		t.Fatal(err)
	}
	wantImg := []float64{1, 2, 2, 2, 4, 4, 2, 4, 4}
	for i := range wantImg {
		if img[i] != wantImg[i] {
			t.Fatalf("Col2Im(ones) = %v, want %v", img, wantImg)
		}
	}
	// Two channels, NCHW with HWC columns: channel fastest in each patch.
	g2, err := New(Config{Height: 2, Width: 2, Channels: 2, Layout: NCHW, PatchHeight: 2, PatchWidth: 1, StrideW: 1, Columns: ColumnsHWC})
	if err != nil {
		t.Fatal(err)
	}
	x2 := []float64{1, 2, 3, 4, 10, 20, 30, 40} // channel 0 then channel 1
	got2 := make([]float64, 2*4)
	if err := g2.Im2Col(got2, x2, 1); err != nil {
		t.Fatal(err)
	}
	want2 := []float64{1, 10, 3, 30, 2, 20, 4, 40}
	for i := range want2 {
		if got2[i] != want2[i] {
			t.Fatalf("Im2Col NCHW/HWC = %v, want %v", got2, want2)
		}
	}
}

// TestWorkersBitIdentical checks that Col2Im gives the same bits for every
// worker count on a batch large enough to run in parallel.
func TestWorkersBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	c := Config{Height: 12, Width: 12, Channels: 3, PatchHeight: 3, PatchWidth: 3, Padding: Same, Workers: 1}
	g1, _ := New(c)
	const batch = 37
	if batch*g1.NumPatches()*g1.PatchLen() < parallelMin {
		t.Fatal("batch too small to exercise the parallel path")
	}
	y := randSlice(rng, batch*g1.NumPatches()*g1.PatchLen())
	x := randSlice(rng, batch*g1.ImageLen())
	want := make([]float64, len(x))
	if err := g1.Col2Im(want, y, batch); err != nil {
		t.Fatal(err)
	}
	wantCols := make([]float64, len(y))
	if err := g1.Im2Col(wantCols, x, batch); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{2, 3, 8, 64} {
		c.Workers = w
		g, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float64, len(x))
		if err := g.Col2Im(got, y, batch); err != nil {
			t.Fatal(err)
		}
		gotCols := make([]float64, len(y))
		if err := g.Im2Col(gotCols, x, batch); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("workers %d: Col2Im[%d] = %v, want %v", w, i, got[i], want[i])
			}
		}
		for i := range wantCols {
			if math.Float64bits(gotCols[i]) != math.Float64bits(wantCols[i]) {
				t.Fatalf("workers %d: Im2Col[%d] differs", w, i)
			}
		}
	}
}

func TestOutputSize(t *testing.T) {
	cases := []struct {
		in, k, s, d   int
		pad           Padding
		before, after int
		out, pb, pa   int
	}{
		{28, 5, 1, 1, Valid, 0, 0, 24, 0, 0},
		{28, 5, 1, 1, Same, 0, 0, 28, 2, 2},
		{28, 5, 2, 1, Same, 0, 0, 14, 1, 2},
		{32, 3, 2, 1, Same, 0, 0, 16, 0, 1},
		{32, 3, 2, 1, Valid, 0, 0, 15, 0, 0},
		{7, 3, 1, 2, Valid, 0, 0, 3, 0, 0},
		{7, 3, 1, 2, Same, 0, 0, 7, 2, 2},
		{1, 1, 1, 1, Valid, 0, 0, 1, 0, 0},
		{1, 5, 3, 1, Same, 0, 0, 1, 2, 2},
		{5, 5, 1, 1, Valid, 0, 0, 1, 0, 0},
		{4, 2, 5, 1, Explicit, 3, 3, 2, 3, 3},
		{4, 7, 1, 1, Explicit, 1, 2, 1, 1, 2},
	}
	for _, c := range cases {
		out, pb, pa, err := OutputSize(c.in, c.k, c.s, c.d, c.pad, c.before, c.after)
		if err != nil || out != c.out || pb != c.pb || pa != c.pa {
			t.Errorf("OutputSize(%d, %d, %d, %d, %v, %d, %d) = %d, %d, %d, %v; want %d, %d, %d",
				c.in, c.k, c.s, c.d, c.pad, c.before, c.after, out, pb, pa, err, c.out, c.pb, c.pa)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	ok := Config{Height: 8, Width: 8, Channels: 2, PatchHeight: 3, PatchWidth: 3}
	if _, err := New(ok); err != nil {
		t.Fatal(err)
	}
	mods := map[string]func(c *Config){
		"zero height":          func(c *Config) { c.Height = 0 },
		"negative width":       func(c *Config) { c.Width = -1 },
		"zero channels":        func(c *Config) { c.Channels = 0 },
		"zero patch":           func(c *Config) { c.PatchWidth = 0 },
		"negative stride":      func(c *Config) { c.StrideH = -2 },
		"negative dilation":    func(c *Config) { c.DilationW = -1 },
		"patch too big":        func(c *Config) { c.PatchHeight = 9 },
		"dilated too big":      func(c *Config) { c.DilationH = 4 },
		"pads without explict": func(c *Config) { c.PadLeft = 1 },
		"pads with same":       func(c *Config) { c.Padding = Same; c.PadTop = 1 },
		"negative pad":         func(c *Config) { c.Padding = Explicit; c.PadBottom = -1 },
		"explicit too small":   func(c *Config) { c.Padding = Explicit; c.PatchWidth = 12; c.PadLeft = 1; c.PadRight = 2 },
		"bad layout":           func(c *Config) { c.Layout = 7 },
		"bad padding":          func(c *Config) { c.Padding = -1 },
		"bad columns":          func(c *Config) { c.Columns = 9 },
		"negative workers":     func(c *Config) { c.Workers = -1 },
		"huge image":           func(c *Config) { c.Height, c.Width, c.Channels = 1<<30, 1<<30, 1<<30 },
		"huge dilation":        func(c *Config) { c.Padding = Same; c.DilationH = math.MaxInt },
		"huge patch matrix": func(c *Config) {
			c.Height, c.Width, c.PatchHeight, c.PatchWidth, c.Padding = 1<<20, 1<<20, 1<<12, 1<<12, Same
		},
		"huge explicit pad": func(c *Config) { c.Padding = Explicit; c.PadTop = math.MaxInt },
		"huge output":       func(c *Config) { c.Padding = Explicit; c.PadTop, c.PadLeft = 1<<40, 1<<40 },
	}
	for name, mod := range mods {
		c := ok
		mod(&c)
		g, err := New(c)
		if err == nil || !errors.Is(err, ErrConfig) || g != nil {
			t.Errorf("%s: New(%+v) = %v, %v; want ErrConfig", name, c, g, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestHugePadding checks a valid configuration whose padded image is too
// large to materialize: huge padding and stride leave 3x3 patches.
func TestHugePadding(t *testing.T) {
	const p = 1 << 30
	g, err := New(Config{Height: 1, Width: 1, Channels: 1, PatchHeight: 1, PatchWidth: 1,
		StrideH: p, StrideW: p, Padding: Explicit, PadTop: p, PadBottom: p, PadLeft: p, PadRight: p})
	if err != nil {
		t.Fatal(err)
	}
	if g.OutHeight() != 3 || g.OutWidth() != 3 || g.padded {
		t.Fatalf("output %dx%d, padded plan %v", g.OutHeight(), g.OutWidth(), g.padded)
	}
	cols := make([]float64, 9)
	if err := g.Im2Col(cols, []float64{7}, 1); err != nil {
		t.Fatal(err)
	}
	for i, v := range cols {
		if want := map[bool]float64{true: 7, false: 0}[i == 4]; v != want {
			t.Fatalf("Im2Col = %v", cols)
		}
	}
	img := []float64{5}
	if err := g.Col2Im(img, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 1); err != nil || img[0] != 5 {
		t.Fatalf("Col2Im = %v, %v", img, err)
	}
}

func TestShapeErrors(t *testing.T) {
	g, err := New(Config{Height: 4, Width: 4, Channels: 1, PatchHeight: 2, PatchWidth: 2})
	if err != nil {
		t.Fatal(err)
	}
	img := make([]float64, 2*g.ImageLen())
	cols := make([]float64, 2*g.NumPatches()*g.PatchLen())
	calls := map[string]func() error{
		"Im2Col negative batch":    func() error { return g.Im2Col(cols, img, -1) },
		"Im2Col short src":         func() error { return g.Im2Col(cols, img[1:], 2) },
		"Im2Col long dst":          func() error { return g.Im2Col(append(cols, 0), img, 2) },
		"Im2Col batch mismatch":    func() error { return g.Im2Col(cols, img, 3) },
		"Im2Col huge batch":        func() error { return g.Im2Col(cols, img, math.MaxInt) },
		"Col2Im short dst":         func() error { return g.Col2Im(img[:5], cols, 2) },
		"Col2Im short src":         func() error { return g.Col2Im(img, cols[:5], 2) },
		"Col2ImAdd negative batch": func() error { return g.Col2ImAdd(img, cols, -3) },
		"Col2ImAdd swapped":        func() error { return g.Col2ImAdd(cols, img, 2) },
	}
	for name, call := range calls {
		if err := call(); err == nil || !errors.Is(err, ErrShape) {
			t.Errorf("%s: err = %v, want ErrShape", name, err)
		}
	}
	if err := g.Im2Col(nil, nil, 0); err != nil {
		t.Errorf("empty batch: %v", err)
	}
}

func TestLocations(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := 0; trial < 300; trial++ {
		c := randConfig(rng)
		ref, possible := newRef(c)
		if !possible {
			continue
		}
		g, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		loc, ctr := g.Locations(), g.Centers()
		if len(loc) != 2*g.NumPatches() || len(ctr) != 2*g.NumPatches() {
			t.Fatalf("lengths %d, %d for %d patches", len(loc), len(ctr), g.NumPatches())
		}
		rc := ref.c
		for p := 0; p < g.NumPatches(); p++ {
			oh, ow := p/ref.outW, p%ref.outW
			if r, q := g.Location(p); r != oh || q != ow || loc[2*p] != float64(oh) || loc[2*p+1] != float64(ow) {
				t.Fatalf("%+v: Location(%d) = %d, %d, want %d, %d", c, p, r, q, oh, ow)
			}
			r0, q0 := oh*rc.StrideH-ref.padT, ow*rc.StrideW-ref.padL
			if r, q := g.Origin(p); r != r0 || q != q0 {
				t.Fatalf("%+v: Origin(%d) = %d, %d, want %d, %d", c, p, r, q, r0, q0)
			}
			// The center is the mean of the tap coordinates.
			cr := float64(r0) + float64((c.PatchHeight-1)*rc.DilationH)/2
			cq := float64(q0) + float64((c.PatchWidth-1)*rc.DilationW)/2
			if ctr[2*p] != cr || ctr[2*p+1] != cq {
				t.Fatalf("%+v: Center(%d) = %v, %v, want %v, %v", c, p, ctr[2*p], ctr[2*p+1], cr, cq)
			}
		}
	}
	g, _ := New(Config{Height: 3, Width: 3, Channels: 1, PatchHeight: 1, PatchWidth: 1})
	for _, p := range []int{-1, 9} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Location(%d) did not panic", p)
				}
			}()
			g.Location(p)
		}()
	}
}

func TestConfigNormalized(t *testing.T) {
	g, err := New(Config{Height: 28, Width: 28, Channels: 1, Layout: NCHW, PatchHeight: 5, PatchWidth: 5, StrideW: 2, Padding: Same})
	if err != nil {
		t.Fatal(err)
	}
	c := g.Config()
	if c.StrideH != 1 || c.StrideW != 2 || c.DilationH != 1 || c.DilationW != 1 || c.Columns != ColumnsCHW || c.Workers < 1 ||
		c.PadTop != 0 || c.PadBottom != 0 || c.PadLeft != 0 || c.PadRight != 0 || c.Padding != Same {
		t.Fatalf("Config() = %+v", c)
	}
	if top, bottom, left, right := g.Pads(); top != 2 || bottom != 2 || left != 1 || right != 2 {
		t.Fatalf("Pads() = %d, %d, %d, %d; want 2, 2, 1, 2", top, bottom, left, right)
	}
	// The normalized configuration round-trips, and with the computed
	// padding made explicit it describes the same geometry.
	for _, explicit := range []bool{false, true} {
		c2 := c
		if explicit {
			c2.Padding = Explicit
			c2.PadTop, c2.PadBottom, c2.PadLeft, c2.PadRight = g.Pads()
		}
		g2, err := New(c2)
		if err != nil {
			t.Fatal(err)
		}
		if g2.OutHeight() != g.OutHeight() || g2.OutWidth() != g.OutWidth() || g2.Locations()[5] != g.Locations()[5] {
			t.Fatalf("twin (explicit %v) has output %dx%d, want %dx%d", explicit, g2.OutHeight(), g2.OutWidth(), g.OutHeight(), g.OutWidth())
		}
		o2r, o2c := g2.Origin(37)
		or, oc := g.Origin(37)
		if o2r != or || o2c != oc {
			t.Fatalf("twin (explicit %v) origin differs", explicit)
		}
	}
	for _, s := range []string{NHWC.String(), NCHW.String(), Valid.String(), Same.String(), Explicit.String(),
		ColumnsDefault.String(), ColumnsHWC.String(), ColumnsCHW.String(), Layout(5).String(), Padding(5).String(), ColumnOrder(5).String()} {
		if s == "" {
			t.Error("empty String()")
		}
	}
}

// TestPlainIm2Col checks the benchmark baseline against Im2Col, so the
// benchmark compares equal work.
func TestPlainIm2Col(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, bc := range benchCases() {
		g, err := New(bc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		const batch = 2
		x := randSlice(rng, batch*g.ImageLen())
		want := make([]float64, batch*g.NumPatches()*g.PatchLen())
		if err := g.Im2Col(want, x, batch); err != nil {
			t.Fatal(err)
		}
		got := randSlice(rng, len(want))
		plainIm2Col(got, x, batch, g)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: plain loop [%d] = %v, want %v", bc.name, i, got[i], want[i])
			}
		}
	}
}

// TestIm2ColStream covers the non-temporal path taken for patch matrices of
// at least streamMin elements, with both plans and several workers.
func TestIm2ColStream(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	configs := []Config{
		{Height: 28, Width: 28, Channels: 1, PatchHeight: 5, PatchWidth: 5, Padding: Same},
		{Height: 13, Width: 11, Channels: 3, Layout: NCHW, PatchHeight: 3, PatchWidth: 4, StrideW: 2},
		// Patches larger than the chunk: one patch per chunk.
		{Height: 9, Width: 9, Channels: 250, PatchHeight: 9, PatchWidth: 9, Padding: Same, DilationH: 2},
	}
	workers := []int{1, 3}
	if testing.Short() {
		configs, workers = configs[:1], workers[1:]
	}
	for _, c := range configs {
		for _, w := range workers {
			c.Workers = w
			g, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			colImage := g.NumPatches() * g.PatchLen()
			batch := (streamMin + colImage - 1) / colImage
			ref, _ := newRef(c)
			x := randSlice(rng, batch*g.ImageLen())
			want := ref.im2col(x, batch)
			for _, padded := range []bool{false, true} {
				gg := *g
				gg.setPadded(padded)
				got := make([]float64, len(want))
				if err := gg.Im2Col(got, x, batch); err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("%+v padded %v: Im2Col[%d] = %v, want %v", c, padded, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestClearPatches checks clearPatches on short rows (one copy-kernel call
// from zeros) and on rows longer than its zero source (cleared row by row):
// exactly the rows are zeroed in every image, nothing else is touched.
func TestClearPatches(t *testing.T) {
	for _, run := range []int{1, 9, len(zeros), len(zeros) + 5} {
		const rows, count = 3, 2
		ld := run + 7
		imgStride := rows*ld + 11
		col := make([]float64, count*imgStride)
		for i := range col {
			col[i] = float64(i + 1)
		}
		clearPatches(col, run, rows, ld, count, imgStride)
		for i, v := range col {
			r := i % imgStride
			inRow := r < rows*ld && r%ld < run
			if inRow && v != 0 || !inRow && v != float64(i+1) {
				t.Fatalf("run %d: col[%d] = %v (in a cleared row: %v)", run, i, v, inRow)
			}
		}
	}
}

// TestOverreadPlan checks the over-read plan on configurations that have
// one: left and right padding (SAME, stride 1), right padding only (SAME,
// stride 2, which New runs with it), explicit padding with dilation, both
// layouts and every column order. The images are the whole input slice, so
// a read outside them would be caught by the slice bounds of the copy
// kernels, and over-read values that escaped the fixups by the comparison.
func TestOverreadPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	base := []Config{
		{Height: 28, Width: 28, Channels: 1, PatchHeight: 3, PatchWidth: 3, StrideH: 2, StrideW: 2, Padding: Same},
		{Height: 12, Width: 11, Channels: 3, PatchHeight: 5, PatchWidth: 5, StrideH: 1, StrideW: 1, Padding: Same},
		{Height: 9, Width: 11, Channels: 2, PatchHeight: 3, PatchWidth: 2, StrideH: 1, StrideW: 3, DilationH: 2, DilationW: 2,
			Padding: Explicit, PadTop: 1, PadBottom: 0, PadLeft: 2, PadRight: 2},
		{Height: 7, Width: 6, Channels: 1, PatchHeight: 2, PatchWidth: 4, StrideH: 1, StrideW: 1, Padding: Explicit, PadRight: 3},
	}
	// A slack copy of a band ending an image must not spill into the next
	// image's first block, written before it: such a plan is refused
	// (found in review: left padding without top padding, batch 2).
	for _, layout := range []Layout{NHWC, NCHW} {
		c := Config{Height: 150, Width: 3, Channels: 1, PatchHeight: 1, PatchWidth: 2, DilationW: 2,
			Padding: Explicit, PadLeft: 1, Layout: layout}
		g, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		if g.overreadBlocks != nil {
			t.Errorf("%+v: over-read plan whose band's slack would reach the next image", c)
		}
		checkConfig(t, rng, c, 3)
	}
	for i, c0 := range base {
		for _, layout := range []Layout{NHWC, NCHW} {
			for _, cols := range []ColumnOrder{ColumnsHWC, ColumnsCHW} {
				c := c0
				c.Layout, c.Columns = layout, cols
				g, err := New(c)
				if err != nil {
					t.Fatal(err)
				}
				if g.overreadBlocks == nil {
					t.Fatalf("%+v: no over-read plan", c)
				}
				if i == 0 && layout == NHWC && !g.overread {
					t.Errorf("%+v: New did not choose the over-read plan", c)
				}
				g.setOverread()
				ref, _ := newRef(c)
				for _, batch := range []int{1, 3} {
					x := randSlice(rng, batch*g.ImageLen())
					want := ref.im2col(x, batch)
					got := make([]float64, len(want))
					if err := g.Im2Col(got, x, batch); err != nil {
						t.Fatal(err)
					}
					for j := range want {
						if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
							t.Fatalf("%+v batch %d: Im2Col[%d] = %v, want %v", c, batch, j, got[j], want[j])
						}
					}
				}
			}
		}
	}
}

// TestOverreadRandom runs the over-read plan, forced wherever one exists,
// on random configurations with taller images and batches of several
// images (the slack of one image's copies must never spoil another's), some
// split between workers, against the reference.
func TestOverreadRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	plans := 0
	for trial := 0; trial < 400 && !(testing.Short() && trial >= 100); trial++ {
		c := randConfig(rng)
		c.Height = 1 + rng.IntN(40)
		c.PatchHeight = 1 + rng.IntN(min(c.Height, 5))
		if c.Padding == Valid {
			c.Padding = Explicit
			c.PadLeft, c.PadRight = rng.IntN(3), rng.IntN(3)
		}
		if trial%2 == 0 {
			// Short patch rows, side padding only: patches of fewer
			// values than a slack copy may spill.
			c.Channels, c.PatchHeight, c.PatchWidth = 1, 1, 1+rng.IntN(2)
			c.Padding, c.PadTop, c.PadBottom = Explicit, 0, 0
			c.PadLeft, c.PadRight = rng.IntN(3), rng.IntN(3)
		}
		ref, possible := newRef(c)
		g, err := New(c)
		if !possible || err != nil {
			continue
		}
		if g.overreadBlocks == nil {
			continue
		}
		plans++
		g.setOverread()
		batch := 2 + rng.IntN(3)
		if plans%10 == 0 {
			// A batch large enough to be split between workers,
			// whose ranges end in a cut of the patch matrix.
			c.Workers = 2 + rng.IntN(2)
			if g, err = New(c); err != nil {
				t.Fatal(err)
			}
			g.setOverread()
			batch = parallelMin/(g.NumPatches()*g.PatchLen()) + 1 + rng.IntN(5)
		}
		x := randSlice(rng, batch*g.ImageLen())
		want := ref.im2col(x, batch)
		got := make([]float64, len(want), len(want)+vecmath.CopySlack)
		if err := g.Im2Col(got, x, batch); err != nil {
			t.Fatal(err)
		}
		for j := range want {
			if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
				t.Fatalf("%+v batch %d: Im2Col[%d] = %v, want %v", c, batch, j, got[j], want[j])
			}
		}
	}
	if plans < 20 {
		t.Errorf("only %d configurations had an over-read plan", plans)
	}
}
