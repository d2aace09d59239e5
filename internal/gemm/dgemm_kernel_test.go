package gemm

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// guard is written around every tile to catch out-of-bounds writes.
const guard = -12345.678

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.Float64()*2 - 1
	}
	return s
}

// TestKernelsBitExact checks every usable backend, and its twin, against
// Reference bit for bit, through Kernel and KernelNextNoCheck, including k = 0, β = 0 with NaN in C, padded ldc
// and guard cells around the tile.
func TestKernelsBitExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, be := range Backends() {
		for _, impl := range []*Backend{be, be.Twin()} {
			mr, nr := impl.MR(), impl.NR()
			for _, k := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 63, 256, 259} {
				for _, alpha := range []float64{1, -0.7, 0, 3.5} {
					for _, beta := range []float64{0, math.Copysign(0, -1), 1, 0.3, -2} {
						for _, pad := range []int{0, 3} {
							ldc := nr + pad
							a := randSlice(rng, k*mr)
							b := randSlice(rng, k*nr)
							// C occupies rows 1..mr of a buffer with one guard row above and below.
							buf := make([]float64, (mr+2)*ldc+nr)
							for i := range buf {
								buf[i] = guard
							}
							for i := 0; i < mr; i++ {
								for j := 0; j < nr; j++ {
									if beta == 0 {
										buf[(i+1)*ldc+j] = math.NaN()
									} else {
										buf[(i+1)*ldc+j] = rng.Float64()*2 - 1
									}
								}
							}
							want := append([]float64(nil), buf...)
							Reference(mr, nr, k, alpha, a, b, beta, want[ldc:], ldc)
							// The kernel, and its variant prefetching the
							// next panel, from the same C.
							buf2 := append([]float64(nil), buf...)
							next := randSlice(rng, NextPrefetch(k))
							impl.Kernel(k, alpha, a, b, beta, buf[ldc:], ldc)
							impl.KernelNextNoCheck(k, alpha, a, b, beta, buf2[ldc:], ldc, next)
							for i := range buf {
								if math.Float64bits(buf[i]) != math.Float64bits(want[i]) || math.Float64bits(buf2[i]) != math.Float64bits(want[i]) {
									t.Fatalf("%s k=%d alpha=%v beta=%v ldc=%d: element %d (row %d col %d of buffer) = %v (prefetching next: %v), want %v",
										impl.Name(), k, alpha, beta, ldc, i, i/ldc-1, i%ldc, buf[i], buf2[i], want[i])
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestReferenceIsFused makes sure the oracle itself is not trivially
// satisfiable: a kernel rounding a·b before adding would differ from it.
func TestReferenceIsFused(t *testing.T) {
	a := []float64{1 + 0x1p-30}
	b := []float64{1 - 0x1p-30}
	c := []float64{0}
	// k = 2: the first step sets acc = -1, the second adds (1+2⁻³⁰)(1−2⁻³⁰) = 1−2⁻⁶⁰,
	// which is exact only when fused.
	a2 := []float64{-1, a[0]}
	b2 := []float64{1, b[0]}
	Reference(1, 1, 2, 1, a2, b2, 0, c, 1)
	if c[0] != -0x1p-60 {
		t.Fatalf("Reference is not fused: got %g, want %g", c[0], -0x1p-60)
	}
}

func TestBackends(t *testing.T) {
	bs := Backends()
	if len(bs) == 0 || bs[len(bs)-1].Name() != "generic" {
		t.Fatalf("Backends() = %v, want a list ending with generic", bs)
	}
	if Default() != bs[0] {
		t.Fatalf("Default() = %v, want %v", Default(), bs[0])
	}
	for _, be := range bs {
		if Lookup(be.Name()) != be {
			t.Errorf("Lookup(%q) = %v", be.Name(), Lookup(be.Name()))
		}
		bl := be.Blocking()
		t.Logf("%s: %d×%d tile, blocking %+v", be.Name(), be.MR(), be.NR(), bl)
		if bl.MC%be.MR() != 0 || bl.NC%be.NR() != 0 || bl.KC <= 0 || bl.MC <= 0 || bl.NC <= 0 {
			t.Errorf("%s: bad blocking %+v for %d×%d tile", be.Name(), bl, be.MR(), be.NR())
		}
	}
	if Lookup("no-such-backend") != nil {
		t.Error("Lookup of an unknown name returned a backend")
	}
}

// TestExpectBackend fails when SOLVEGP_EXPECT_BACKEND names a backend other
// than the one dispatched, so CI can prove that GODEBUG, build tags or
// emulation selected the intended kernel.
func TestExpectBackend(t *testing.T) {
	want := os.Getenv("SOLVEGP_EXPECT_BACKEND")
	if want == "" {
		t.Skip("SOLVEGP_EXPECT_BACKEND not set")
	}
	if got := Default().ISA(); got != want {
		t.Fatalf("default backend is %q, SOLVEGP_EXPECT_BACKEND=%q", got, want)
	}
}

func TestKernelPanics(t *testing.T) {
	be := Default()
	mr, nr := be.MR(), be.NR()
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	a := make([]float64, 4*mr)
	b := make([]float64, 4*nr)
	c := make([]float64, mr*nr)
	mustPanic("short a", func() { be.Kernel(5, 1, a, b, 0, c, nr) })
	mustPanic("short b", func() { be.Kernel(4, 1, a, b[1:], 0, c, nr) })
	mustPanic("short c", func() { be.Kernel(4, 1, a, b, 0, c[1:], nr) })
	mustPanic("small ldc", func() { be.Kernel(4, 1, a, b, 0, c, nr-1) })
	mustPanic("negative k", func() { be.Kernel(-1, 1, a, b, 0, c, nr) })
}

func TestWithBlocking(t *testing.T) {
	be := Default()
	nb := be.WithBlocking(Blocking{MC: 1, KC: 3, NC: 1})
	bl := nb.Blocking()
	if bl.MC != be.MR() || bl.KC != 3 || bl.NC != be.NR() {
		t.Errorf("WithBlocking rounded to %+v", bl)
	}
	if be.Blocking() == bl {
		t.Error("WithBlocking modified the original backend")
	}
	if d := be.WithBlocking(Blocking{}); d.Blocking() != be.Blocking() {
		t.Errorf("WithBlocking(zero) = %+v, want %+v", d.Blocking(), be.Blocking())
	}
}

// TestKernelRowsBitExact checks the partial-row kernels (and the generic
// full-tile fallback) against Reference bit for bit, and that rows beyond
// the requested ones are neither read nor written.
func TestKernelRowsBitExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, be := range Backends() {
		noPartial := *be
		noPartial.partial = nil
		noPartial.name += "-fallback"
		for _, impl := range []*Backend{be, &noPartial, be.Twin()} {
			mr, nr := impl.MR(), impl.NR()
			for rows := 1; rows <= mr; rows++ {
				for _, k := range []int{0, 1, 5, 8, 37} {
					for _, beta := range []float64{0, 1, -0.75} {
						alpha := []float64{1, -2.5, 0}[rng.IntN(3)]
						ldc := nr + rng.IntN(3)
						a := randSlice(rng, k*mr)
						b := randSlice(rng, k*nr)
						// Rows 1..rows of buf hold C; everything else is guard.
						buf := make([]float64, (mr+2)*ldc)
						for i := range buf {
							buf[i] = guard
						}
						full := make([]float64, mr*ldc)
						for i := 0; i < rows; i++ {
							for j := 0; j < nr; j++ {
								v := rng.Float64()*2 - 1
								if beta == 0 {
									v = math.NaN()
								}
								buf[(i+1)*ldc+j] = v
								full[i*ldc+j] = v
							}
						}
						Reference(mr, nr, k, alpha, a, b, beta, full, ldc)
						impl.KernelRows(rows, k, alpha, a, b, beta, buf[ldc:ldc+(rows-1)*ldc+nr], ldc)
						for i := range buf {
							r, j := i/ldc-1, i%ldc
							want := guard
							if r >= 0 && r < rows && j < nr {
								want = full[r*ldc+j]
							}
							if math.Float64bits(buf[i]) != math.Float64bits(want) {
								t.Fatalf("%s rows=%d k=%d alpha=%v beta=%v: buffer row %d col %d = %v, want %v",
									impl.Name(), rows, k, alpha, beta, r, j, buf[i], want)
							}
						}
					}
				}
			}
		}
	}
}
