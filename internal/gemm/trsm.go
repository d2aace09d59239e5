package gemm

import (
	"fmt"
	"math"
)

// trsmFunc is the calling convention of the gemm-trsm kernels; see
// Backend.TrsmTile. The caller guarantees the lengths TrsmTile checks.
type trsmFunc func(upper bool, k int, alpha float64, a, b, t, c []float64, ldc int, x []float64)

// TrsmTile computes one MR×NR tile of a triangular solve fused with the
// GEMM update before it (BLIS's gemm-trsm micro-kernel):
//
//	X := T⁻¹ · (α·C − A·B)
//
// a and b are packed micro-panels of k steps, as for Kernel; C is the
// row-major tile at c with leading dimension ldc; T is an MR×MR triangle
// held row-major in t with its diagonal replaced by the reciprocals of the
// diagonal (1 for a unit triangle). With upper false T is lower triangular
// and the rows of X are found first to last, row i reading t[i·MR+p] for
// p < i; with upper true T is upper triangular and the rows are found last
// to first, row i reading t[i·MR+p] for p > i. Entries of t outside the
// triangle are not read.
//
// X is written over C and into x, MR×NR values in a row (the layout of MR
// consecutive steps of a packed NR-column panel), so that a solver can use
// the finished rows in the GEMM updates of later tiles without packing them
// again. c may be x itself (with ldc = NR): every backend reads each row of
// C before it writes that row of X, and writes nothing else.
//
// The arithmetic is fixed: R = fma(α, C, −acc) with acc accumulated as in
// Reference, then for each row in solving order R_i = fma(−t_ip, R_p, R_i)
// for p in increasing order, and R_i = R_i·t_ii. Every backend gives
// bit-identical results; those without an assembly kernel (see
// HasTrsmKernel) run this definition in Go on their GEMM kernel. TrsmTile
// panics if a slice is too short or ldc < NR.
func (be *Backend) TrsmTile(upper bool, k int, alpha float64, a, b, t, c []float64, ldc int, x []float64) {
	mr, nr := be.mr, be.nr
	switch {
	case k < 0:
		panic("gemm: negative k")
	case ldc < nr:
		panic(fmt.Sprintf("gemm: ldc %d < NR %d", ldc, nr))
	case len(a) < k*mr || len(b) < k*nr:
		panic("gemm: packed panel too short")
	case len(t) < mr*mr:
		panic("gemm: triangle too short")
	case len(c) < (mr-1)*ldc+nr:
		panic("gemm: C too short")
	case len(x) < mr*nr:
		panic("gemm: x too short")
	}
	be.TrsmTileNoCheck(upper, k, alpha, a, b, t, c, ldc, x)
}

// TrsmTileNoCheck is TrsmTile without argument validation, for callers that
// establish the preconditions themselves. Violating them is undefined
// behaviour in the assembly backends.
func (be *Backend) TrsmTileNoCheck(upper bool, k int, alpha float64, a, b, t, c []float64, ldc int, x []float64) {
	if be.trsm != nil {
		be.trsm(upper, k, alpha, a, b, t, c, ldc, x)
		return
	}
	trsmTileGo(be, upper, k, alpha, a, b, t, c, ldc, x)
}

// HasTrsmKernel reports whether TrsmTile runs an assembly gemm-trsm kernel
// on this backend. Without one, TrsmTile runs its definition in Go around
// the GEMM kernel, which is correct but too slow for the inner loop of a
// solver; callers use it to choose their algorithm.
func (be *Backend) HasTrsmKernel() bool { return be.trsm != nil }

// trsmTileGo is TrsmTile's definition in Go, on the backend's GEMM kernel.
func trsmTileGo(be *Backend, upper bool, k int, alpha float64, a, b, t, c []float64, ldc int, x []float64) {
	mr, nr := be.mr, be.nr
	tp := tilePool.Get().(*[maxTile]float64)
	defer tilePool.Put(tp)
	acc := tp[:mr*nr]
	// acc = 1·(A·B) exactly: the kernel's α·acc with α = 1.
	be.kernel(k, 1, a, b, 0, acc, nr)
	for i := 0; i < mr; i++ {
		row := c[i*ldc : i*ldc+nr]
		for j, v := range acc[i*nr : i*nr+nr] {
			row[j] = math.FMA(alpha, row[j], -v)
		}
	}
	for s := 0; s < mr; s++ {
		i, p0, p1 := s, 0, s
		if upper {
			i, p0, p1 = mr-1-s, mr-s, mr
		}
		row := c[i*ldc : i*ldc+nr]
		for p := p0; p < p1; p++ {
			tip := t[i*mr+p]
			for j, v := range c[p*ldc : p*ldc+nr] {
				row[j] = math.FMA(-tip, v, row[j])
			}
		}
		d := t[i*mr+i]
		for j := range row {
			row[j] *= d
		}
		copy(x[i*nr:i*nr+nr], row)
	}
}
