package gemm

import "math"

// Reference computes the mr×nr tile C := β·C + α·A·B from packed panels
// exactly as every micro-kernel of this package does: for each element the
// products a[p·mr+i]·b[p·nr+j], p = 0…k−1, are accumulated in order with
// fused multiply-adds starting from zero; then C is set to α·acc when β = 0
// (C is not read) and to fma(β, C, α·acc) otherwise.
//
// Reference is the test oracle for the assembly kernels and the definition of
// their rounding behaviour. It is deliberately simple, not fast.
func Reference(mr, nr, k int, alpha float64, a, b []float64, beta float64, c []float64, ldc int) {
	for i := 0; i < mr; i++ {
		for j := 0; j < nr; j++ {
			var acc float64
			for p := 0; p < k; p++ {
				acc = math.FMA(a[p*mr+i], b[p*nr+j], acc)
			}
			t := float64(alpha * acc)
			if beta == 0 {
				c[i*ldc+j] = t
			} else {
				c[i*ldc+j] = math.FMA(beta, c[i*ldc+j], t)
			}
		}
	}
}

const (
	genericMR = 4
	genericNR = 4
)

// kernelGeneric is the portable 4×4 kernel. It follows Reference's
// arithmetic exactly, with the tile held in local variables.
func kernelGeneric(k int, alpha float64, a, b []float64, beta float64, c []float64, ldc int) {
	var (
		c00, c01, c02, c03 float64
		c10, c11, c12, c13 float64
		c20, c21, c22, c23 float64
		c30, c31, c32, c33 float64
	)
	a = a[:k*genericMR]
	b = b[:k*genericNR]
	for len(a) >= genericMR && len(b) >= genericNR {
		a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		c00 = math.FMA(a0, b0, c00)
		c01 = math.FMA(a0, b1, c01)
		c02 = math.FMA(a0, b2, c02)
		c03 = math.FMA(a0, b3, c03)
		c10 = math.FMA(a1, b0, c10)
		c11 = math.FMA(a1, b1, c11)
		c12 = math.FMA(a1, b2, c12)
		c13 = math.FMA(a1, b3, c13)
		c20 = math.FMA(a2, b0, c20)
		c21 = math.FMA(a2, b1, c21)
		c22 = math.FMA(a2, b2, c22)
		c23 = math.FMA(a2, b3, c23)
		c30 = math.FMA(a3, b0, c30)
		c31 = math.FMA(a3, b1, c31)
		c32 = math.FMA(a3, b2, c32)
		c33 = math.FMA(a3, b3, c33)
		a = a[genericMR:]
		b = b[genericNR:]
	}
	storeRow4(c[0*ldc:0*ldc+4], alpha, beta, c00, c01, c02, c03)
	storeRow4(c[1*ldc:1*ldc+4], alpha, beta, c10, c11, c12, c13)
	storeRow4(c[2*ldc:2*ldc+4], alpha, beta, c20, c21, c22, c23)
	storeRow4(c[3*ldc:3*ldc+4], alpha, beta, c30, c31, c32, c33)
}

// storeRow4 writes one row of the generic tile with Reference's update rule.
func storeRow4(c []float64, alpha, beta, x0, x1, x2, x3 float64) {
	c = c[:4]
	t0, t1, t2, t3 := float64(alpha*x0), float64(alpha*x1), float64(alpha*x2), float64(alpha*x3)
	if beta == 0 {
		c[0], c[1], c[2], c[3] = t0, t1, t2, t3
		return
	}
	c[0] = math.FMA(beta, c[0], t0)
	c[1] = math.FMA(beta, c[1], t1)
	c[2] = math.FMA(beta, c[2], t2)
	c[3] = math.FMA(beta, c[3], t3)
}
