package vecmath

import "math"

// RBFPairRow sums one row of a weighted squared-exponential Gram matrix
// formed from inner products, the inner loop of a convolutional kernel's
// image variance Σ_{p,q} w_p w_q t_pq k(x_p, x_q). For j < len(g), with
//
//	d_j = max((np + xn[j]) − 2·g[j], 0)   (squared distance; NaN stays NaN)
//	e_j = exp(c·d_j)                      (with Exp's bits)
//	h_j = t[j]·e_j
//	a_j = w[j]·h_j
//
// it returns s = Σ_j a_j and, if gs is not nil, l = Σ_j a_j·d_j, adding
// wp·h_j to gs[j]; if dt is not nil, o = Σ_j w[j]·(dt[j]·e_j). With keepH
// it overwrites g[j] with h_j. xn, t, w, and dt and gs when not nil, must
// be at least as long as g.
//
// Every product is rounded before it is added (no fused multiply-add), and
// element j goes into partial sum j mod 8; the partial sums are added as
// ((0+4)+(2+6))+((1+5)+(3+7)). So every path (the AVX-512 and AVX2+FMA
// kernels, the NEON kernel; without them, rbfPairsBlocked; the pure-Go twin
// rbfPairsGeneric)
// gives the same bits, and s does not depend on which of the other results
// are asked for.
func RBFPairRow(g, xn, t, w, dt, gs []float64, np, c, wp float64, keepH bool) (s, l, o float64) {
	n := len(g)
	xn, t, w = xn[:n], t[:n], w[:n]
	flags := 0
	if gs != nil {
		gs = gs[:n]
		flags |= pairPieces
	}
	if dt != nil {
		dt = dt[:n]
		flags |= pairDT
	}
	if keepH {
		flags |= pairKeepH
	}
	var acc [24]float64
	if !rbfPairsKernelOK {
		rbfPairsBlocked(&acc, n, g, xn, t, w, dt, gs, np, c, wp, flags)
		return laneSum(&acc, 0), laneSum(&acc, 8), laneSum(&acc, 16)
	}
	for done := 0; done < n; {
		if n8 := (n - done) &^ 7; n8 > 0 {
			done += rbfPairsKernel(&acc, done, n8, g, xn, t, w, dt, gs, np, c, wp, flags)
			if done == n {
				break
			}
		}
		// A group with an exponential argument in [−746, expLo), above
		// expHi or NaN, or the last elements: the pure-Go twin.
		end := min(done+8, n)
		rbfPairsGeneric(&acc, done, end, g, xn, t, w, dt, gs, np, c, wp, flags)
		done = end
	}
	return laneSum(&acc, 0), laneSum(&acc, 8), laneSum(&acc, 16)
}

// Flags of the pair kernels.
const (
	pairPieces = 1 << iota // l and gs
	pairDT                 // o
	pairKeepH              // g[j] = h_j
)

// laneSum adds the eight partial sums acc[i:i+8] in RBFPairRow's order.
func laneSum(acc *[24]float64, i int) float64 {
	a := acc[i : i+8]
	return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
}

// rbfPairsGeneric is the pure-Go twin of the pair kernels: it adds the
// elements lo ≤ j < hi of RBFPairRow into the partial sums acc (s in
// acc[0:8], l in acc[8:16], o in acc[16:24], element j in lane j mod 8).
func rbfPairsGeneric(acc *[24]float64, lo, hi int, g, xn, t, w, dt, gs []float64, np, c, wp float64, flags int) {
	for j := lo; j < hi; j++ {
		d := float64(np+xn[j]) - float64(2*g[j])
		if d < 0 { // rounding of nearby points; NaN and −0 stay
			d = 0
		}
		x := float64(c * d)
		e, ok := expFast(x)
		if !ok {
			e = math.Exp(x)
		}
		h := float64(t[j] * e)
		a := float64(w[j] * h)
		lane := j & 7
		acc[lane] += a
		if flags&pairPieces != 0 {
			acc[8+lane] += float64(a * d)
			gs[j] += float64(wp * h)
		}
		if flags&pairDT != 0 {
			acc[16+lane] += float64(w[j] * float64(dt[j]*e))
		}
		if flags&pairKeepH != 0 {
			g[j] = h
		}
	}
}

// pairBlock is the number of elements per block of rbfPairsBlocked.
const pairBlock = 256

// rbfPairsBlocked is RBFPairRow without a pair kernel (no AVX2+FMA, other
// architectures, purego): block by block, the squared distances, then Exp
// on the block (which has its own SIMD kernels), then the sums. It gives
// rbfPairsGeneric's bits: the same operations in the same order, and Exp
// gives expFast's bits (math.Exp's outside [expLo, expHi]).
func rbfPairsBlocked(acc *[24]float64, n int, g, xn, t, w, dt, gs []float64, np, c, wp float64, flags int) {
	var dbuf, ebuf [pairBlock]float64
	for lo := 0; lo < n; lo += pairBlock {
		hi := min(lo+pairBlock, n)
		d, e := dbuf[:hi-lo], ebuf[:hi-lo]
		for i := range d {
			j := lo + i
			dj := float64(np+xn[j]) - float64(2*g[j])
			if dj < 0 {
				dj = 0
			}
			d[i], e[i] = dj, float64(c*dj)
		}
		Exp(e, e)
		for i, ej := range e {
			j := lo + i
			h := float64(t[j] * ej)
			a := float64(w[j] * h)
			lane := j & 7
			acc[lane] += a
			if flags&pairPieces != 0 {
				acc[8+lane] += float64(a * d[i])
				gs[j] += float64(wp * h)
			}
			if flags&pairDT != 0 {
				acc[16+lane] += float64(w[j] * float64(dt[j]*ej))
			}
			if flags&pairKeepH != 0 {
				g[j] = h
			}
		}
	}
}
