package vecmath

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzRBFPairRow checks RBFPairRow and KernelGradRow against their pure-Go
// twins bit for bit (NaN payloads aside) on fuzzer-chosen rows: the values
// of g, xn, t, w, dt and gs are read in turn from data (so extreme, infinite
// and NaN values reach every operand), with every option.
func FuzzRBFPairRow(f *testing.F) {
	f.Add(float64Bytes(0.3, 1, 2, -1, 0.5, 0.1, 0.7, 1.2, 3, 0.2, 0.4, 0.9), 1.0, -0.5, 0.7, uint8(7))
	f.Add(float64Bytes(-2000, 1, 1, 1, 1, 1, 1e300, 1, 1, 1, 1, 1, math.NaN(), 1, 1, 1, 1, 1, math.Inf(1), 1, 1, 1, 1, 1), 1.0, -0.5, 2.0, uint8(3))
	f.Add(float64Bytes(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18), 2.0, 300.0, -1.0, uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, np, c, wp float64, opt uint8) {
		n := len(data) / 48 // six operands per element
		vals := make([]float64, 6*n)
		for i := range vals {
			vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
		}
		pc := pairRowCase{np: np, c: c, wp: wp}
		for k, p := range []*[]float64{&pc.g, &pc.xn, &pc.t, &pc.w, &pc.dt, &pc.gs} {
			*p = make([]float64, n)
			for j := range *p {
				(*p)[j] = vals[6*j+k]
			}
		}
		pieces, withDT, keepH := opt&1 != 0, opt&2 != 0, opt&4 != 0
		got, gotG, gotGS := pc.clone().run(RBFPairRow, pieces, withDT, keepH)
		want, wantG, wantGS := pc.clone().run(twinPairRow, pieces, withDT, keepH)
		for i := range got {
			if !sameFloat(got[i], want[i]) {
				t.Fatalf("RBFPairRow result %d = %v, twin %v", i, got[i], want[i])
			}
		}
		if i := sameFloats(gotG, wantG); i >= 0 {
			t.Fatalf("RBFPairRow g[%d] = %v, twin %v", i, gotG[i], wantG[i])
		}
		if i := sameFloats(gotGS, wantGS); i >= 0 {
			t.Fatalf("RBFPairRow gs[%d] = %v, twin %v", i, gotGS[i], wantGS[i])
		}
		// KernelGradRow on the same operands: e = g, t, w, dv = dt, cs = gs.
		var tArg, dvArg []float64
		if withDT {
			tArg = pc.t
		}
		a, b := pc.clone(), pc.clone()
		if pieces {
			dvArg = a.dt
		}
		sa := KernelGradRow(a.g, tArg, a.w, dvArg, a.gs, np)
		if pieces {
			dvArg = b.dt
		}
		sb := twinGradRow(b.g, tArg, b.w, dvArg, b.gs, np)
		if !sameFloat(sa, sb) {
			t.Fatalf("KernelGradRow sum %v, twin %v", sa, sb)
		}
		for _, s := range [][2][]float64{{a.g, b.g}, {a.dt, b.dt}, {a.gs, b.gs}} {
			if i := sameFloats(s[0], s[1]); i >= 0 {
				t.Fatalf("KernelGradRow element %d = %v, twin %v", i, s[0][i], s[1][i])
			}
		}
	})
}
