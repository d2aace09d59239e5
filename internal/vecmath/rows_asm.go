//go:build !purego && !noasm && (amd64 || arm64)

package vecmath

// The operands of the row kernels' assembly (pairs_*.s, gradrow_*.s),
// shared by the amd64 and arm64 dispatchers.

// pairOperands returns the kernels' dt and gs operands for elements from
// lo. Unused ones point at t (read) and g (which the caller owns and the
// kernel may write anyway): the AVX-512 kernel's accesses to them are masked
// out entirely and the others branch around them, so nothing is read or
// written there, but an address that is not mapped (nil) would make every
// masked-out access a microcode assist (measured 2× slower on the Intel
// Xeon).
func pairOperands(lo int, g, t, dt, gs []float64, flags int) (pdt, pgs *float64) {
	pdt, pgs = &t[lo], &g[lo]
	if flags&pairDT != 0 {
		pdt = &dt[lo]
	}
	if flags&pairPieces != 0 {
		pgs = &gs[lo]
	}
	return pdt, pgs
}

// Flags of the KernelGradRow kernels.
const (
	gradDV = 1 << iota // dv[j] += v_j
	gradT              // h_j = t[j]·v_j
)

// gradOperands returns the kernels' t and dv operands and flags. Absent
// operands point at w (read) and cs (written anyway); see pairOperands: an
// unmapped address would make every masked-out access of the AVX-512
// kernel a microcode assist.
func gradOperands(t, w, dv, cs []float64) (pt, pdv *float64, flags int) {
	pt, pdv = &w[0], &cs[0]
	if t != nil {
		pt, flags = &t[0], flags|gradT
	}
	if dv != nil {
		pdv, flags = &dv[0], flags|gradDV
	}
	return pt, pdv, flags
}
