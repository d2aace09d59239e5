package vecmath

// KernelGradRow turns one row of kernel values into its share of a kernel
// matrix's adjoint: the inner loop of the backward pass of a convolutional
// kernel K[m, n] = σ² Σ_p w_p t_mp e_mp, for the adjoint a = σ²·dK[m, n].
// For j < len(e), with
//
//	v_j = a·e[j]
//	h_j = t[j]·v_j   (h_j = v_j if t is nil)
//	r_j = w[j]·h_j
//
// it adds v_j to dv[j] (unless dv is nil) and r_j to cs[j], overwrites e[j]
// with r_j, and returns Σ_j r_j. t, w, cs, and dv when not nil, must be at
// least as long as e.
//
// Every product is rounded before it is added, and the sum goes through
// eight partial sums as in RBFPairRow, so the AVX-512, AVX2 and NEON kernels
// and the pure-Go twin kernelGradGeneric give the same bits.
func KernelGradRow(e, t, w, dv, cs []float64, a float64) float64 {
	n := len(e)
	w, cs = w[:n], cs[:n]
	if t != nil {
		t = t[:n]
	}
	if dv != nil {
		dv = dv[:n]
	}
	var acc [8]float64
	done := 0
	if n8 := n &^ 7; n8 > 0 {
		done = kernelGradKernel(&acc, n8, e, t, w, dv, cs, a)
	}
	kernelGradGeneric(&acc, done, n, e, t, w, dv, cs, a)
	return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]))
}

// kernelGradGeneric is the pure-Go twin of the KernelGradRow kernels: it
// does elements lo ≤ j < hi, adding r_j into acc[j mod 8].
func kernelGradGeneric(acc *[8]float64, lo, hi int, e, t, w, dv, cs []float64, a float64) {
	for j := lo; j < hi; j++ {
		v := float64(a * e[j])
		if dv != nil {
			dv[j] += v
		}
		h := v
		if t != nil {
			h = float64(t[j] * v)
		}
		r := float64(w[j] * h)
		acc[j&7] += r
		cs[j] += r
		e[j] = r
	}
}
