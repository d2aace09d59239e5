package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// pairRowCase is one random input of RBFPairRow.
type pairRowCase struct {
	g, xn, t, w, dt, gs []float64
	np, c, wp           float64
}

// newPairRowCase draws a row of n pairs with squared distances of a few
// units. With far, some pairs are so far apart that the exponential's
// argument is below expLo; with nan, one norm is NaN; some pairs are
// nearly equal points whose distance rounds below 0 (and is clamped).
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
			pc.g[j] = -2000 // c·d < expLo
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

// TestRBFPairRowTwin checks RBFPairRow (the AVX-512 kernel where the CPU
// has it) against its pure-Go twin, bit for bit, at every length up to 70
// and a few longer ones, with every combination of options, with and
// without far pairs and NaN, and that s does not depend on the options.
func TestRBFPairRowTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	lengths := []int{100, 127, 128, 129, 257, 575}
	for n := 0; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		for _, far := range []bool{false, true} {
			for _, nan := range []bool{false, true} {
				pc := newPairRowCase(rng, n, far, nan)
				var s0 float64
				for opt := 0; opt < 8; opt++ {
					pieces, withDT, keepH := opt&1 != 0, opt&2 != 0, opt&4 != 0
					name := fmt.Sprintf("n=%d far=%v nan=%v pieces=%v dt=%v keepH=%v", n, far, nan, pieces, withDT, keepH)
					got, gotG, gotGS := pc.clone().run(RBFPairRow, pieces, withDT, keepH)
					want, wantG, wantGS := pc.clone().run(twinPairRow, pieces, withDT, keepH)
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
// has it, does the groups of eight before the first one with an argument
// outside [expLo, expHi], and none after.
func TestRBFPairsKernelStops(t *testing.T) {
	if !rbfPairsKernelOK {
		t.Skip("no AVX-512 pair kernel on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	pc := newPairRowCase(rng, 64, false, false)
	var acc [24]float64
	if done := rbfPairsKernel(&acc, 0, 64, pc.g, pc.xn, pc.t, pc.w, nil, nil, pc.np, pc.c, pc.wp, 0); done != 64 {
		t.Fatalf("in range: done %d of 64", done)
	}
	for _, bad := range []int{0, 7, 8, 20, 63} {
		pc := newPairRowCase(rng, 64, false, false)
		pc.g[bad] = -2000
		acc = [24]float64{}
		if done, want := rbfPairsKernel(&acc, 0, 64, pc.g, pc.xn, pc.t, pc.w, nil, nil, pc.np, pc.c, pc.wp, 0), bad&^7; done != want {
			t.Errorf("far pair %d: done %d, want %d", bad, done, want)
		}
	}
}

// BenchmarkRBFPairRow times one row of 575 pairs (a 28×28 image's 5×5
// patches) with every option, RBFPairRow against its pure-Go twin.
func BenchmarkRBFPairRow(b *testing.B) {
	pc := newPairRowCase(rand.New(rand.NewPCG(1, 2)), 575, false, false)
	for _, impl := range []struct {
		name string
		f    func(g, xn, t, w, dt, gs []float64, np, c, wp float64, keepH bool) (s, l, o float64)
	}{{"RBFPairRow", RBFPairRow}, {"twin", twinPairRow}} {
		b.Run(impl.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				impl.f(pc.g, pc.xn, pc.t, pc.w, pc.dt, pc.gs, pc.np, pc.c, pc.wp, false)
			}
			b.ReportMetric(float64(575*b.N)/b.Elapsed().Seconds()/1e6, "Mpairs/s")
		})
	}
}
