package chol

import (
	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/blas"
)

// triBase is the order at and below which the recursive triangular
// inversion and LᵀL product use their unblocked kernels.
const triBase = 32

// trtriLower inverts the order-n lower-triangular matrix in the lower
// triangle of a in place (unit selects an implicit unit diagonal, which is
// then not referenced). The diagonal must be nonzero. With
// L = [L11 0; L21 L22], L⁻¹ = [L11⁻¹ 0; −L22⁻¹·L21·L11⁻¹ L22⁻¹]; the
// off-diagonal block is formed by two triangular solves with the original
// diagonal blocks before those are inverted recursively.
func trtriLower(bi blas.Implementation, n int, a []float64, lda int, unit bool) {
	if n <= triBase {
		trti2Lower(n, a, lda, unit)
		return
	}
	diag := gblas.NonUnit
	if unit {
		diag = gblas.Unit
	}
	n1 := potrfSplit(n)
	n2 := n - n1
	a21 := a[n1*lda:]
	a22 := a[n1*lda+n1:]
	bi.Dtrsm(gblas.Right, gblas.Lower, gblas.NoTrans, diag, n2, n1, -1, a, lda, a21, lda)
	bi.Dtrsm(gblas.Left, gblas.Lower, gblas.NoTrans, diag, n2, n1, 1, a22, lda, a21, lda)
	trtriLower(bi, n1, a, lda, unit)
	trtriLower(bi, n2, a22, lda, unit)
}

// trti2Lower is the unblocked row-oriented kernel of trtriLower (n ≤ triBase).
func trti2Lower(n int, a []float64, lda int, unit bool) {
	var tmp [triBase]float64
	for i := 0; i < n; i++ {
		ri := a[i*lda : i*lda+i+1]
		t := tmp[:i]
		clear(t)
		for k := 0; k < i; k++ {
			axpy(ri[k], a[k*lda:k*lda+k], t[:k])
			if unit {
				t[k] += ri[k]
			} else {
				t[k] += ri[k] * a[k*lda+k]
			}
		}
		inv := 1.0
		if !unit {
			inv = 1 / ri[i]
			ri[i] = inv
		}
		for j := range t {
			ri[j] = -inv * t[j]
		}
	}
}

// lauumLower overwrites the order-n lower-triangular matrix M in the lower
// triangle of a with the lower triangle of Mᵀ·M. With M = [M11 0; M21 M22]:
// (MᵀM)11 = M11ᵀM11 + M21ᵀM21, (MᵀM)21 = M22ᵀM21, (MᵀM)22 = M22ᵀM22.
func lauumLower(bi blas.Implementation, n int, a []float64, lda int) {
	if n <= triBase {
		lauu2Lower(n, a, lda)
		return
	}
	n1 := potrfSplit(n)
	n2 := n - n1
	a21 := a[n1*lda:]
	a22 := a[n1*lda+n1:]
	lauumLower(bi, n1, a, lda)
	bi.Dsyrk(gblas.Lower, gblas.Trans, n1, n2, 1, a21, lda, 1, a, lda)
	bi.Dtrmm(gblas.Left, gblas.Lower, gblas.Trans, gblas.NonUnit, n2, n1, 1, a22, lda, a21, lda)
	lauumLower(bi, n2, a22, lda)
}

// lauu2Lower is the unblocked kernel of lauumLower: row i of the result is
// Σ_{k≥i} M_ki·M[k, 0:i+1], which only reads rows k ≥ i of M.
func lauu2Lower(n int, a []float64, lda int) {
	for i := 0; i < n; i++ {
		ri := a[i*lda : i*lda+i+1]
		d := ri[i]
		for j := range ri {
			ri[j] *= d
		}
		for k := i + 1; k < n; k++ {
			axpy(a[k*lda+i], a[k*lda:k*lda+i+1], ri)
		}
	}
}

// gemmtBase is the order at and below which gemmtLower forms a diagonal
// block with one Dgemm into scratch space.
const gemmtBase = 64

// gemmtLower updates the lower triangle (diagonal included) of the order-n
// matrix C with
//
//	C += alpha · Aᵀ·B   (trans == Trans;   A and B are k×n),
//	C += alpha · A·Bᵀ   (trans == NoTrans; A and B are n×k),
//
// leaving the strict upper triangle untouched. work must hold at least
// gemmtBase² elements. The off-diagonal blocks go straight to Dgemm; the
// diagonal blocks go through work.
func gemmtLower(bi blas.Implementation, trans gblas.Transpose, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int, work []float64) {
	if n == 0 || k == 0 || alpha == 0 {
		return
	}
	if n <= gemmtBase {
		w := work[:n*n]
		if trans == gblas.Trans {
			bi.Dgemm(gblas.Trans, gblas.NoTrans, n, n, k, alpha, a, lda, b, ldb, 0, w, n)
		} else {
			bi.Dgemm(gblas.NoTrans, gblas.Trans, n, n, k, alpha, a, lda, b, ldb, 0, w, n)
		}
		for i := 0; i < n; i++ {
			ci := c[i*ldc : i*ldc+i+1]
			for j, v := range w[i*n : i*n+i+1] {
				ci[j] += v
			}
		}
		return
	}
	n1 := potrfSplit(n)
	n2 := n - n1
	if trans == gblas.Trans {
		gemmtLower(bi, trans, n1, k, alpha, a, lda, b, ldb, c, ldc, work)
		bi.Dgemm(gblas.Trans, gblas.NoTrans, n2, n1, k, alpha, a[n1:], lda, b, ldb, 1, c[n1*ldc:], ldc)
		gemmtLower(bi, trans, n2, k, alpha, a[n1:], lda, b[n1:], ldb, c[n1*ldc+n1:], ldc, work)
		return
	}
	gemmtLower(bi, trans, n1, k, alpha, a, lda, b, ldb, c, ldc, work)
	bi.Dgemm(gblas.NoTrans, gblas.Trans, n2, n1, k, alpha, a[n1*lda:], lda, b, ldb, 1, c[n1*ldc:], ldc)
	gemmtLower(bi, trans, n2, k, alpha, a[n1*lda:], lda, b[n1*ldb:], ldb, c[n1*ldc+n1:], ldc, work)
}

// trtriUpper is trtriLower for an upper-triangular matrix:
// U⁻¹ = [U11⁻¹ −U11⁻¹·U12·U22⁻¹; 0 U22⁻¹].
func trtriUpper(bi blas.Implementation, n int, a []float64, lda int, unit bool) {
	if n <= triBase {
		trti2Upper(n, a, lda, unit)
		return
	}
	diag := gblas.NonUnit
	if unit {
		diag = gblas.Unit
	}
	n1 := potrfSplit(n)
	n2 := n - n1
	a12 := a[n1:]
	a22 := a[n1*lda+n1:]
	bi.Dtrsm(gblas.Right, gblas.Upper, gblas.NoTrans, diag, n1, n2, -1, a22, lda, a12, lda)
	bi.Dtrsm(gblas.Left, gblas.Upper, gblas.NoTrans, diag, n1, n2, 1, a, lda, a12, lda)
	trtriUpper(bi, n1, a, lda, unit)
	trtriUpper(bi, n2, a22, lda, unit)
}

// trti2Upper is the unblocked kernel of trtriUpper, computing the rows of
// the inverse from the last: X[i, i+1:] = −(1/U_ii)·Σ_{k>i} U_ik·X[k, i+1:].
func trti2Upper(n int, a []float64, lda int, unit bool) {
	var tmp [triBase]float64
	for i := n - 1; i >= 0; i-- {
		ri := a[i*lda+i : i*lda+n]
		t := tmp[:n-i-1]
		clear(t)
		for k := i + 1; k < n; k++ {
			if unit {
				t[k-i-1] += ri[k-i]
			} else {
				t[k-i-1] += ri[k-i] * a[k*lda+k]
			}
			axpy(ri[k-i], a[k*lda+k+1:k*lda+n], t[k-i:])
		}
		inv := 1.0
		if !unit {
			inv = 1 / ri[0]
			ri[0] = inv
		}
		for j := range t {
			ri[j+1] = -inv * t[j]
		}
	}
}

// lauumUpper overwrites the order-n upper-triangular matrix X in the upper
// triangle of a with the upper triangle of X·Xᵀ.
func lauumUpper(bi blas.Implementation, n int, a []float64, lda int) {
	if n <= triBase {
		lauu2Upper(n, a, lda)
		return
	}
	n1 := potrfSplit(n)
	n2 := n - n1
	a12 := a[n1:]
	a22 := a[n1*lda+n1:]
	lauumUpper(bi, n1, a, lda)
	bi.Dsyrk(gblas.Upper, gblas.NoTrans, n1, n2, 1, a12, lda, 1, a, lda)
	bi.Dtrmm(gblas.Right, gblas.Upper, gblas.Trans, gblas.NonUnit, n1, n2, 1, a22, lda, a12, lda)
	lauumUpper(bi, n2, a22, lda)
}

// lauu2Upper is the unblocked kernel of lauumUpper:
// (X·Xᵀ)_ij = Σ_{k≥j} X_ik·X_jk for j ≥ i, computed row by row.
func lauu2Upper(n int, a []float64, lda int) {
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a[i*lda+j] = dot(a[i*lda+j:i*lda+n], a[j*lda+j:j*lda+n])
		}
	}
}
