package patches

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/solvegp/solvegp/blas"
)

// refPack packs rows [row0, row0+rows) and columns [col0, col0+kc) of the
// row-major matrix a (ld columns) into panels of w rows, by the definition.
func refPack(a []float64, ld, row0, rows, col0, kc, w int) []float64 {
	out := make([]float64, PackedLen(rows, kc, w))
	for i := 0; i < rows; i++ {
		q, r := i/w, i%w
		for j := 0; j < kc; j++ {
			out[q*w*kc+j*w+r] = a[(row0+i)*ld+col0+j]
		}
	}
	return out
}

func TestPackRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	trials := 1500
	if testing.Short() {
		trials = 300
	}
	for trial := 0; trial < trials; trial++ {
		c := randConfig(rng)
		ref, ok := newRef(c)
		if !ok {
			continue
		}
		g, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		batch := 1 + rng.IntN(3)
		x := randSlice(rng, batch*g.ImageLen())
		cols := ref.im2col(x, batch)
		total := batch * g.NumPatches()
		row0 := rng.IntN(total)
		rows := rng.IntN(total - row0 + 1)
		col0 := rng.IntN(g.PatchLen())
		kc := rng.IntN(g.PatchLen() - col0 + 1)
		w := 1 + rng.IntN(9)
		want := refPack(cols, g.PatchLen(), row0, rows, col0, kc, w)
		got := randSlice(rng, len(want)+3)
		tail := append([]float64(nil), got[len(want):]...)
		if err := g.PackRows(got, x, batch, row0, rows, col0, kc, w); err != nil {
			t.Fatalf("%+v: PackRows: %v", c, err)
		}
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%+v batch %d rows [%d,+%d) cols [%d,+%d) w %d: packed[%d] = %v, want %v",
					c, batch, row0, rows, col0, kc, w, i, got[i], want[i])
			}
		}
		for i, v := range tail {
			if got[len(want)+i] != v {
				t.Fatalf("%+v: PackRows wrote past the packed block", c)
			}
		}
	}
}

// TestPackRowsMatchesPackA checks the documented equivalence with
// Im2Col followed by blas.PackA, on the benchmark shapes.
func TestPackRowsMatchesPackA(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, bc := range benchCases()[:4] {
		g, err := New(bc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		const batch = 3
		x := randSlice(rng, batch*g.ImageLen())
		cols := make([]float64, batch*g.NumPatches()*g.PatchLen())
		if err := g.Im2Col(cols, x, batch); err != nil {
			t.Fatal(err)
		}
		rows, w := batch*g.NumPatches(), 8
		want := make([]float64, PackedLen(rows, g.PatchLen(), w))
		blas.PackA(w, want, cols, g.PatchLen(), false, rows, g.PatchLen())
		got := make([]float64, len(want))
		if err := g.PackRows(got, x, batch, 0, rows, 0, g.PatchLen(), w); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: packed[%d] = %v, want %v", bc.name, i, got[i], want[i])
			}
		}
	}
}

func TestPackRowsErrors(t *testing.T) {
	g, err := New(Config{Height: 4, Width: 4, Channels: 2, PatchHeight: 2, PatchWidth: 2})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 2*g.ImageLen())
	dst := make([]float64, 1000)
	total := 2 * g.NumPatches()
	calls := map[string]func() error{
		"negative batch": func() error { return g.PackRows(dst, x, -1, 0, 1, 0, 1, 4) },
		"short src":      func() error { return g.PackRows(dst, x[1:], 2, 0, 1, 0, 1, 4) },
		"zero width":     func() error { return g.PackRows(dst, x, 2, 0, 1, 0, 1, 0) },
		"row past end":   func() error { return g.PackRows(dst, x, 2, total-1, 2, 0, 1, 4) },
		"negative row":   func() error { return g.PackRows(dst, x, 2, -1, 1, 0, 1, 4) },
		"col past end":   func() error { return g.PackRows(dst, x, 2, 0, 1, 7, 2, 4) },
		"negative kc":    func() error { return g.PackRows(dst, x, 2, 0, 1, 0, -1, 4) },
		"short dst":      func() error { return g.PackRows(dst[:PackedLen(9, 8, 4)-1], x, 2, 0, 9, 0, 8, 4) },
		// ceil(rows/w)·w·kc overflowed to a negative length, which passed
		// the check on len(dst).
		"width MaxInt":   func() error { return g.PackRows(dst, x, 2, 0, 2, 0, 1, math.MaxInt) },
		"width MaxInt/2": func() error { return g.PackRows(dst, x, 2, 0, 2, 0, 3, math.MaxInt/2) },
	}
	for name, call := range calls {
		if err := call(); err == nil || !errors.Is(err, ErrShape) {
			t.Errorf("%s: err = %v, want ErrShape", name, err)
		}
	}
	if err := g.PackRows(nil, x, 2, 3, 0, 0, 8, 4); err != nil {
		t.Errorf("empty block: %v", err)
	}
	if PackedLen(0, 3, 4) != 0 || PackedLen(5, 3, 4) != 24 {
		t.Errorf("PackedLen wrong")
	}
	for _, c := range [][3]int{{2, 1, math.MaxInt}, {1, 2, math.MaxInt/2 + 1}, {1 << 40, 1 << 30, 1}, {3, 1 << 31, 1 << 32}} {
		if n := PackedLen(c[0], c[1], c[2]); n != math.MaxInt {
			t.Errorf("PackedLen(%d, %d, %d) = %d, want math.MaxInt", c[0], c[1], c[2], n)
		}
	}
	if n := PackedLen(1, 1, math.MaxInt); n != math.MaxInt {
		t.Errorf("PackedLen(1, 1, MaxInt) = %d", n)
	}
}

// TestPackRowsWidePanel checks that a panel much wider than the block packs
// correctly and that PackRows's scratch grows with the rows packed, not with
// the panel width.
func TestPackRowsWidePanel(t *testing.T) {
	g, err := New(Config{Height: 1, Width: 1, Channels: 1, PatchHeight: 16, PatchWidth: 16, Padding: Same})
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{3}
	cols := make([]float64, g.NumPatches()*g.PatchLen())
	if err := g.Im2Col(cols, x, 1); err != nil {
		t.Fatal(err)
	}
	const w = 1 << 14                                    // a window of w patches of 256 values: 32 MiB
	want := refPack(cols, g.PatchLen(), 0, 1, 119, 1, w) // column 119: the pixel (tap 7, 7)
	if want[0] != 3 {
		t.Fatalf("packed[0] = %v, want the pixel", want[0])
	}
	got := make([]float64, len(want))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := g.PackRows(got, x, 1, 0, 1, 119, 1, w); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("packed[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 1<<20 {
		t.Errorf("PackRows of one row in a panel of %d rows allocated %d bytes", w, a)
	}
}
