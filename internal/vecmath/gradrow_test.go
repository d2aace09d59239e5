package vecmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// twinGradRow is KernelGradRow computed by kernelGradGeneric alone.
func twinGradRow(e, t, w, dv, cs []float64, a float64) float64 {
	var acc [8]float64
	kernelGradGeneric(&acc, 0, len(e), e, t, w, dv, cs, a)
	return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]))
}

// TestKernelGradRowTwin checks KernelGradRow (the AVX-512, AVX2 or NEON kernel where the
// CPU has it) against its pure-Go twin, bit for bit, at every length up to
// 70 and a few longer ones, with and without t and dv, and against the
// definition.
func TestKernelGradRowTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	lengths := []int{100, 127, 128, 129, 576}
	for n := 0; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		e, tt, w, dv, cs := randSlice(rng, n), randSlice(rng, n), randSlice(rng, n), randSlice(rng, n), randSlice(rng, n)
		a := rng.NormFloat64()
		for opt := 0; opt < 4; opt++ {
			name := fmt.Sprintf("n=%d t=%v dv=%v", n, opt&1 != 0, opt&2 != 0)
			run := func(f func(e, t, w, dv, cs []float64, a float64) float64) (float64, [][]float64) {
				ec, dvc, csc := append([]float64(nil), e...), append([]float64(nil), dv...), append([]float64(nil), cs...)
				tc, wc := append([]float64(nil), tt...), append([]float64(nil), w...)
				var tArg, dvArg []float64
				if opt&1 != 0 {
					tArg = tc
				}
				if opt&2 != 0 {
					dvArg = dvc
				}
				sum := f(ec, tArg, wc, dvArg, csc, a)
				// t and w are inputs only, whether used or not.
				if j := sameFloats(tc, tt); j >= 0 {
					t.Fatalf("n=%d opt %d: t[%d] written", n, opt, j)
				}
				if j := sameFloats(wc, w); j >= 0 {
					t.Fatalf("n=%d opt %d: w[%d] written", n, opt, j)
				}
				return sum, [][]float64{ec, dvc, csc}
			}
			got, gotS := run(KernelGradRow)
			want, wantS := run(twinGradRow)
			if !sameFloat(got, want) {
				t.Fatalf("%s: sum %v, twin %v", name, got, want)
			}
			for i, what := range []string{"e", "dv", "cs"} {
				if j := sameFloats(gotS[i], wantS[i]); j >= 0 {
					t.Fatalf("%s: %s[%d] = %v, twin %v", name, what, j, gotS[i][j], wantS[i][j])
				}
			}
			// The definition.
			var sum float64
			for j := 0; j < n; j++ {
				v := a * e[j]
				h := v
				if opt&1 != 0 {
					h *= tt[j]
				}
				r := w[j] * h
				sum += r
				if math.Abs(gotS[0][j]-r) > 1e-15*math.Max(1, math.Abs(r)) ||
					math.Abs(gotS[2][j]-(cs[j]+r)) > 1e-14*math.Max(1, math.Abs(cs[j]+r)) {
					t.Fatalf("%s: element %d: e %v cs %v, want %v, %v", name, j, gotS[0][j], gotS[2][j], r, cs[j]+r)
				}
				wantDV := dv[j]
				if opt&2 != 0 {
					wantDV += v
				}
				if math.Abs(gotS[1][j]-wantDV) > 1e-14*math.Max(1, math.Abs(wantDV)) {
					t.Fatalf("%s: dv[%d] = %v, want %v", name, j, gotS[1][j], wantDV)
				}
			}
			if math.Abs(got-sum) > 1e-12*math.Max(1, math.Abs(sum)) {
				t.Fatalf("%s: sum %v, want %v", name, got, sum)
			}
		}
	}
}

// BenchmarkKernelGradRow times a row of 576 elements with t and dv (and a
// copy of the row, which the call overwrites), KernelGradRow against its
// pure-Go twin.
func BenchmarkKernelGradRow(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	e, tt, w, dv, cs := randSlice(rng, 576), randSlice(rng, 576), randSlice(rng, 576), randSlice(rng, 576), randSlice(rng, 576)
	for _, impl := range []struct {
		name string
		f    func(e, t, w, dv, cs []float64, a float64) float64
	}{{"KernelGradRow", KernelGradRow}, {"twin", twinGradRow}} {
		b.Run(impl.name, func(b *testing.B) {
			ec := make([]float64, len(e))
			for i := 0; i < b.N; i++ {
				copy(ec, e) // the row is overwritten
				impl.f(ec, tt, w, dv, cs, 1)
			}
			b.ReportMetric(float64(576*b.N)/b.Elapsed().Seconds()/1e6, "Melem/s")
		})
	}
}

// TestKernelGradKernelAcc checks that the KernelGradRow kernel adds into
// the partial sums it is given (KernelGradRow starts them at zero), bit for
// bit against the twin, with every option.
func TestKernelGradKernelAcc(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	const n = 48
	for opt := 0; opt < 4; opt++ {
		e, tt, w, dv, cs := randSlice(rng, n), randSlice(rng, n), randSlice(rng, n), randSlice(rng, n), randSlice(rng, n)
		var acc [8]float64
		for i := range acc {
			acc[i] = rng.NormFloat64()
		}
		twAcc := acc
		e2, dv2, cs2 := append([]float64(nil), e...), append([]float64(nil), dv...), append([]float64(nil), cs...)
		var tArg, dvArg, dvArg2 []float64
		if opt&1 != 0 {
			tArg = tt
		}
		if opt&2 != 0 {
			dvArg, dvArg2 = dv, dv2
		}
		done := kernelGradKernel(&acc, n, e, tArg, w, dvArg, cs, 0.7)
		if done == 0 {
			t.Skip("no KernelGradRow kernel on this CPU or build")
		}
		kernelGradGeneric(&twAcc, 0, done, e2, tArg, w, dvArg2, cs2, 0.7)
		for i := range acc {
			if !sameFloat(acc[i], twAcc[i]) {
				t.Fatalf("opt %d: acc[%d] = %v, twin %v", opt, i, acc[i], twAcc[i])
			}
		}
		for _, c := range []struct {
			name      string
			got, want []float64
		}{{"e", e, e2}, {"dv", dv, dv2}, {"cs", cs, cs2}} {
			if j := sameFloats(c.got, c.want); j >= 0 {
				t.Fatalf("opt %d: %s[%d] = %v, twin %v", opt, c.name, j, c.got[j], c.want[j])
			}
		}
	}
}

// randSlice returns n values drawn uniformly from [-1, 1).
func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.Float64()*2 - 1
	}
	return s
}
