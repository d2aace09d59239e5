package vecmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// pairRowCase is one random input of RBFPairRow.
type pairRowCase struct {
	g, xn, t, w, dt, gs []float64
	np, c, wp           float64
}

// newPairRowCase draws a row of n pairs with squared distances of a few
// units. With far, some pairs are so far apart that the exponential's
// argument is below −746 (e = +0 exactly), and others have arguments in
// [−746, expLo), where the exponential is subnormal; with nan, one norm is
// NaN; some pairs are nearly equal points whose distance rounds below 0
// (and is clamped).
// (hotPairRow makes c positive instead, so that arguments exceed expHi.)
func newPairRowCase(rng *rand.Rand, n int, far, nan bool) pairRowCase {
	pc := pairRowCase{g: make([]float64, n), xn: make([]float64, n), t: make([]float64, n),
		w: make([]float64, n), dt: make([]float64, n), gs: make([]float64, n),
		np: 1 + rng.Float64(), c: -0.5 / (0.5 + rng.Float64()), wp: rng.NormFloat64()}
	for j := 0; j < n; j++ {
		pc.xn[j] = 1 + rng.Float64()
		// |x_p − x_q|² = np + xn − 2g with g in a range that gives
		// distances in [0, 4].
		pc.g[j] = (pc.np + pc.xn[j] - 4*rng.Float64()) / 2
		switch r := rng.IntN(10); {
		case r == 0:
			pc.g[j] = (pc.np+pc.xn[j])/2 + 1e-15 // rounds below 0
		case r == 1 && far:
			pc.g[j] = -2000 // c·d < −746
		case r == 2 && far:
			subnormalPair(&pc, j, rng.Float64())
		}
		pc.t[j] = rng.Float64()
		pc.w[j] = rng.NormFloat64()
		pc.dt[j] = rng.NormFloat64()
		pc.gs[j] = rng.NormFloat64()
	}
	if nan && n > 0 {
		pc.xn[rng.IntN(n)] = math.NaN()
	}
	return pc
}

// subnormalPair sets g[j] so that pair j's exponential argument c·d is
// −720 − 25u, in [−746, expLo) for u in [0, 1).
func subnormalPair(pc *pairRowCase, j int, u float64) {
	d := (-720 - 25*u) / pc.c
	pc.g[j] = (pc.np + pc.xn[j] - d) / 2
}

// hotPairRow returns pc with c = +300: squared distances above 709/300
// give arguments above expHi.
func hotPairRow(pc pairRowCase) pairRowCase {
	pc.c = 300
	return pc
}

func (pc pairRowCase) clone() pairRowCase {
	c := pc
	for _, s := range []*[]float64{&c.g, &c.xn, &c.t, &c.w, &c.dt, &c.gs} {
		*s = append([]float64(nil), (*s)...)
	}
	return c
}

// run calls f (RBFPairRow or the twin) with the options.
func (pc pairRowCase) run(f func(g, xn, t, w, dt, gs []float64, np, c, wp float64, keepH bool) (s, l, o float64),
	pieces, withDT, keepH bool) (res [3]float64, g, gs []float64) {
	dt, gsl := pc.dt, pc.gs
	if !pieces {
		gsl = nil
	}
	if !withDT {
		dt = nil
	}
	res[0], res[1], res[2] = f(pc.g, pc.xn, pc.t, pc.w, dt, gsl, pc.np, pc.c, pc.wp, keepH)
	return res, pc.g, pc.gs
}

// twinPairRow is RBFPairRow computed by rbfPairsGeneric alone.
func twinPairRow(g, xn, t, w, dt, gs []float64, np, c, wp float64, keepH bool) (s, l, o float64) {
	flags := 0
	if gs != nil {
		flags |= pairPieces
	}
	if dt != nil {
		flags |= pairDT
	}
	if keepH {
		flags |= pairKeepH
	}
	var acc [24]float64
	rbfPairsGeneric(&acc, 0, len(g), g, xn, t, w, dt, gs, np, c, wp, flags)
	return laneSum(&acc, 0), laneSum(&acc, 8), laneSum(&acc, 16)
}

// sameFloat is bitwise equality, with every NaN equal to every NaN.
func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

func sameFloats(a, b []float64) int {
	for i := range a {
		if !sameFloat(a[i], b[i]) {
			return i
		}
	}
	return -1
}

// TestRBFPairRowTwin checks RBFPairRow (the AVX-512, AVX2 or NEON kernel where
// the CPU has one) against its pure-Go twin, bit for bit, at every length up to 70
// and a few longer ones, with every combination of options, with and
// without far pairs and NaN and with arguments above expHi; that s does not
// depend on the options; and that the call writes only g (with keepH) and
// gs (with pieces).
func TestRBFPairRowTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	lengths := []int{100, 127, 128, 129, 257, 575}
	for n := 0; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		for mode := 0; mode < 5; mode++ {
			far, nan := mode&1 != 0, mode&2 != 0
			pc := newPairRowCase(rng, n, far, nan)
			if mode == 4 {
				pc = hotPairRow(pc)
			}
			var s0 float64
			for opt := 0; opt < 8; opt++ {
				pieces, withDT, keepH := opt&1 != 0, opt&2 != 0, opt&4 != 0
				name := fmt.Sprintf("n=%d far=%v nan=%v hot=%v pieces=%v dt=%v keepH=%v", n, far, nan, mode == 4, pieces, withDT, keepH)
				in := pc.clone()
				kc := pc.clone()
				got, gotG, gotGS := kc.run(RBFPairRow, pieces, withDT, keepH)
				want, wantG, wantGS := pc.clone().run(twinPairRow, pieces, withDT, keepH)
				// Inputs the call must not write.
				for _, a := range []struct {
					what      string
					got, want []float64
				}{{"xn", kc.xn, in.xn}, {"t", kc.t, in.t}, {"w", kc.w, in.w}, {"dt", kc.dt, in.dt}} {
					if i := sameFloats(a.got, a.want); i >= 0 {
						t.Fatalf("%s: %s[%d] written", name, a.what, i)
					}
				}
				if i := sameFloats(gotG, in.g); !keepH && i >= 0 {
					t.Fatalf("%s: g[%d] written without keepH", name, i)
				}
				if i := sameFloats(gotGS, in.gs); !pieces && i >= 0 {
					t.Fatalf("%s: gs[%d] written without pieces", name, i)
				}
				for i := range got {
					if !sameFloat(got[i], want[i]) {
						t.Fatalf("%s: result %d = %v, twin %v", name, i, got[i], want[i])
					}
				}
				if i := sameFloats(gotG, wantG); i >= 0 {
					t.Fatalf("%s: g[%d] = %v, twin %v", name, i, gotG[i], wantG[i])
				}
				if i := sameFloats(gotGS, wantGS); i >= 0 {
					t.Fatalf("%s: gs[%d] = %v, twin %v", name, i, gotGS[i], wantGS[i])
				}
				if opt == 0 {
					s0 = got[0]
				} else if !sameFloat(got[0], s0) {
					t.Fatalf("%s: s = %v, without options %v", name, got[0], s0)
				}
			}
		}
	}
}

// TestRBFPairRowDefinition checks RBFPairRow against its definition with
// math.Exp and plain sums.
func TestRBFPairRowDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 7, 8, 9, 40, 333} {
		pc := newPairRowCase(rng, n, true, false)
		in := pc.clone()
		res, g, gs := pc.run(RBFPairRow, true, true, true)
		var s, l, o float64
		for j := 0; j < n; j++ {
			d := math.Max(in.np+in.xn[j]-2*in.g[j], 0)
			e := math.Exp(in.c * d)
			h := in.t[j] * e
			s += in.w[j] * h
			l += in.w[j] * h * d
			o += in.w[j] * in.dt[j] * e
			if math.Abs(g[j]-h) > 1e-15 {
				t.Fatalf("n=%d: h[%d] = %v, want %v", n, j, g[j], h)
			}
			if want := in.gs[j] + in.wp*h; math.Abs(gs[j]-want) > 1e-14*math.Max(1, math.Abs(want)) {
				t.Fatalf("n=%d: gs[%d] = %v, want %v", n, j, gs[j], want)
			}
		}
		for i, want := range []float64{s, l, o} {
			if math.Abs(res[i]-want) > 1e-13*math.Max(1, math.Abs(want)) {
				t.Errorf("n=%d: result %d = %v, want %v", n, i, res[i], want)
			}
		}
	}
}

// TestRBFPairsKernelStops checks that the assembly kernel, where the CPU
// has it, does the groups of eight before the first one with an argument in
// [−746, expLo) (where the exponential is subnormal), above expHi, or NaN,
// with every option,
// leaves that group and those after it untouched, and sums the groups it
// did as the twin does; and that it does groups whose arguments are below
// −746 itself, giving the twin's bits (math.Exp's +0).
func TestRBFPairsKernelStops(t *testing.T) {
	if !rbfPairsKernelOK {
		if expKernelOK && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64") {
			t.Fatal("Exp has an assembly kernel here but RBFPairRow has none")
		}
		t.Skip("no pair kernel on this CPU or build")
	}
	for x := -746.0; x > -2000; x -= 0.37 {
		if v := math.Exp(x); math.Float64bits(v) != 0 {
			t.Fatalf("math.Exp(%v) = %v, not +0: the kernel's underflow shortcut is wrong here", x, v)
		}
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for flags := 0; flags < 8; flags++ {
		for _, bad := range []int{-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 20, 63} {
			for _, veryFar := range []bool{false, true} {
				pc := newPairRowCase(rng, 64, false, false)
				want := 64
				if bad >= 0 {
					if veryFar {
						pc.g[bad] = -2000
						// A subnormal-range pair in the next group.
						if next := (bad | 7) + 1 + rng.IntN(8); next < 64 {
							subnormalPair(&pc, next, rng.Float64())
							want = next &^ 7
						}
					} else {
						// A subnormal-range argument, NaN, or one above
						// expHi.
						switch rng.IntN(3) {
						case 0:
							subnormalPair(&pc, bad, rng.Float64())
						case 1:
							pc.xn[bad] = math.NaN()
						default:
							// c = 300: distances below 2 give arguments
							// in range, and 3 gives 900 > expHi.
							pc.c = 300
							for j := range pc.g {
								pc.g[j] = (pc.np + pc.xn[j] - 2*rng.Float64()) / 2
							}
							pc.g[bad] = (pc.np + pc.xn[bad] - 3) / 2
						}
						want = bad &^ 7
					}
				}
				in, tw := pc.clone(), pc.clone()
				var acc, twAcc [24]float64
				done := rbfPairsKernel(&acc, 0, 64, pc.g, pc.xn, pc.t, pc.w, pc.dt, pc.gs, pc.np, pc.c, pc.wp, flags)
				name := fmt.Sprintf("flags %d, pair %d (very far %v)", flags, bad, veryFar)
				if done != want {
					t.Fatalf("%s: done %d, want %d", name, done, want)
				}
				rbfPairsGeneric(&twAcc, 0, done, tw.g, tw.xn, tw.t, tw.w, tw.dt, tw.gs, tw.np, tw.c, tw.wp, flags)
				for i := range acc {
					if !sameFloat(acc[i], twAcc[i]) {
						t.Fatalf("%s: acc[%d] = %v, twin %v", name, i, acc[i], twAcc[i])
					}
				}
				if i := sameFloats(pc.g, tw.g); i >= 0 {
					t.Fatalf("%s: g[%d] = %v, twin %v", name, i, pc.g[i], tw.g[i])
				}
				if i := sameFloats(pc.gs, tw.gs); i >= 0 {
					t.Fatalf("%s: gs[%d] = %v, twin %v", name, i, pc.gs[i], tw.gs[i])
				}
				if i := sameFloats(pc.g[done:], in.g[done:]); i >= 0 {
					t.Fatalf("%s: g[%d] written after the stop", name, done+i)
				}
			}
		}
	}
}

// TestRBFPairsKernelLimits checks the pair kernel's range test at its
// edges, in every lane of two groups: arguments of exactly expLo and expHi,
// and just below −746, are done in the kernel; the next values outside
// [expLo, expHi], and −746 itself, stop it before their group. With np =
// xn = 0 and c = ±1 the argument is exactly −2g·c.
func TestRBFPairsKernelLimits(t *testing.T) {
	if !rbfPairsKernelOK {
		t.Skip("no pair kernel on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(17, 18))
	for _, lim := range []struct {
		x    float64
		stop bool
	}{
		{expLo, false}, {expHi, false}, {math.Nextafter(-746, math.Inf(-1)), false},
		{math.Nextafter(expLo, math.Inf(-1)), true}, {math.Nextafter(expHi, math.Inf(1)), true}, {-746, true},
	} {
		for bad := 0; bad < 16; bad++ {
			const n = 32
			pc := pairRowCase{g: make([]float64, n), xn: make([]float64, n), t: make([]float64, n),
				w: make([]float64, n), dt: make([]float64, n), gs: make([]float64, n), c: math.Copysign(1, lim.x), wp: 0.3}
			for j := range pc.g {
				pc.g[j] = -rng.Float64() // d = −2g in [0, 2]
				pc.t[j], pc.w[j], pc.dt[j], pc.gs[j] = rng.Float64(), 0.1*rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
			}
			pc.g[bad] = -math.Abs(lim.x) / 2
			want := n
			if lim.stop {
				want = bad &^ 7
			}
			tw := pc.clone()
			var acc, twAcc [24]float64
			flags := pairPieces | pairDT | pairKeepH
			done := rbfPairsKernel(&acc, 0, n, pc.g, pc.xn, pc.t, pc.w, pc.dt, pc.gs, pc.np, pc.c, pc.wp, flags)
			if done != want {
				t.Fatalf("argument %v in element %d: done %d, want %d", lim.x, bad, done, want)
			}
			rbfPairsGeneric(&twAcc, 0, done, tw.g, tw.xn, tw.t, tw.w, tw.dt, tw.gs, tw.np, tw.c, tw.wp, flags)
			for i := range acc {
				if !sameFloat(acc[i], twAcc[i]) {
					t.Fatalf("argument %v in element %d: acc[%d] = %v, twin %v", lim.x, bad, i, acc[i], twAcc[i])
				}
			}
			if i := sameFloats(pc.g, tw.g); i >= 0 {
				t.Fatalf("argument %v in element %d: g[%d] = %v, twin %v", lim.x, bad, i, pc.g[i], tw.g[i])
			}
		}
	}
}

// TestRBFPairsBlocked checks the path of machines without a pair kernel (blocks of distances, then Exp) against the twin, bit for bit, on
// every machine.
func TestRBFPairsBlocked(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{0, 1, 7, 8, 9, 255, 256, 257, 513, 575} {
		for mode := 0; mode < 5; mode++ {
			pc := newPairRowCase(rng, n, mode&1 != 0, mode&2 != 0)
			if mode == 4 {
				pc = hotPairRow(pc)
			}
			for flags := 0; flags < 8; flags++ {
				a, b := pc.clone(), pc.clone()
				var accA, accB [24]float64
				rbfPairsBlocked(&accA, n, a.g, a.xn, a.t, a.w, a.dt, a.gs, a.np, a.c, a.wp, flags)
				rbfPairsGeneric(&accB, 0, n, b.g, b.xn, b.t, b.w, b.dt, b.gs, b.np, b.c, b.wp, flags)
				for i := range accA {
					if !sameFloat(accA[i], accB[i]) {
						t.Fatalf("n=%d mode %d flags %d: acc[%d] = %v, twin %v", n, mode, flags, i, accA[i], accB[i])
					}
				}
				if i := sameFloats(a.g, b.g); i >= 0 {
					t.Fatalf("n=%d mode %d flags %d: g[%d] = %v, twin %v", n, mode, flags, i, a.g[i], b.g[i])
				}
				if i := sameFloats(a.gs, b.gs); i >= 0 {
					t.Fatalf("n=%d mode %d flags %d: gs[%d] = %v, twin %v", n, mode, flags, i, a.gs[i], b.gs[i])
				}
			}
		}
	}
}

// BenchmarkRBFPairRow times one row of 575 pairs (a 28×28 image's 5×5
// patches), RBFPairRow against its pure-Go twin: with every option but
// keepH (an image variance's row), and with keepH alone (a row of the
// exponentials of a cross-covariance, convgp's Matrix). The keepH rows
// overwrite g with exponentials, so each iteration restores it first, in
// both cases alike.
func BenchmarkRBFPairRow(b *testing.B) {
	pc := newPairRowCase(rand.New(rand.NewPCG(1, 2)), 575, false, false)
	g0 := append([]float64(nil), pc.g...)
	for _, impl := range []struct {
		name string
		f    func(g, xn, t, w, dt, gs []float64, np, c, wp float64, keepH bool) (s, l, o float64)
	}{{"RBFPairRow", RBFPairRow}, {"twin", twinPairRow}} {
		for _, keepH := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/keepH=%v", impl.name, keepH), func(b *testing.B) {
				dt, gs := pc.dt, pc.gs
				if keepH {
					dt, gs = nil, nil
				}
				for i := 0; i < b.N; i++ {
					copy(pc.g, g0)
					impl.f(pc.g, pc.xn, pc.t, pc.w, dt, gs, pc.np, pc.c, pc.wp, keepH)
				}
				b.ReportMetric(float64(575*b.N)/b.Elapsed().Seconds()/1e6, "Mpairs/s")
			})
		}
	}
}
