package gp

import (
	"fmt"
	"math"
	"time"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/chol"
)

// la runs the level-3 operations of an evaluation and records each one in
// a cost profile. All matrices are row-major []float64 with stride equal to
// their column count.
type la struct {
	bi      blas.Implementation
	threads int
	pass    Pass
	ops     *[]Op
}

func (l *la) rec(c OpClass, name string, d0, d1, d2 int, flops float64, t0 time.Time) {
	if l.ops == nil {
		return
	}
	*l.ops = append(*l.ops, Op{Class: c, Pass: l.pass, Name: name, Dims: [3]int{d0, d1, d2}, Flops: flops, Time: time.Since(t0)})
}

// gemm computes C (m×n) = alpha·op(A)·op(B) + beta·C with inner size k.
func (l *la) gemm(name string, tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	t0 := time.Now()
	ta, tb := gblas.NoTrans, gblas.NoTrans
	if tA {
		ta = gblas.Trans
	}
	if tB {
		tb = gblas.Trans
	}
	l.bi.Dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	l.rec(MatMul, name, m, n, k, 2*float64(m)*float64(n)*float64(k), t0)
}

// gemmLowerNT computes the lower triangle (diagonal included) of
// C (m×m) = alpha·A·Bᵀ + beta·C for A and B of size m×k with blas's Dgemmt,
// which never computes the upper triangle and leaves it untouched: half the
// work of the full product.
func (l *la) gemmLowerNT(name string, m, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	t0 := time.Now()
	l.bi.Dgemmt(gblas.Lower, gblas.NoTrans, gblas.Trans, m, k, alpha, a, lda, b, ldb, beta, c, ldc)
	l.rec(MatMul, name, m, m, k, float64(m)*float64(m+1)*float64(k), t0)
}

// triBlock returns the column-block size used by the triangle-restricted
// operations: about n/8, a multiple of 64.
func triBlock(n int) int { return max(64, (n/8+63)&^63) }

// trsmLowerPartLT overwrites the lower triangle of the lower-triangular
// n×n matrix B with the lower triangle of L⁻ᵀ·B. Because row r of Lᵀ·Y = B
// only involves rows ≥ r of Y, column block J of the result's lower part
// solves the trailing system Lᵀ[j0:, j0:]·Y[j0:, J] = B[j0:, J], about n³/3
// flops instead of n³. Entries above the diagonal are left unspecified.
func (l *la) trsmLowerPartLT(name string, n int, tri []float64, b []float64) {
	t0 := time.Now()
	bs := triBlock(n)
	var flops float64
	for j0 := 0; j0 < n; j0 += bs {
		j1 := min(j0+bs, n)
		l.bi.Dtrsm(gblas.Left, gblas.Lower, gblas.Trans, gblas.NonUnit, n-j0, j1-j0, 1, tri[j0*n+j0:], n, b[j0*n+j0:], n)
		flops += float64(n-j0) * float64(n-j0) * float64(j1-j0)
	}
	l.rec(TriSolve, name, n, n, n, flops, t0)
}

// trsmLowerL overwrites the lower-triangular n×n matrix B (zero above the
// diagonal) with L⁻¹·B, which is lower triangular too: column block J of
// the result solves only the trailing system L[j0:, j0:]·Y[j0:, J] =
// B[j0:, J], about n³/3 flops instead of n³.
func (l *la) trsmLowerL(name string, n int, tri []float64, b []float64) {
	t0 := time.Now()
	bs := triBlock(n)
	var flops float64
	for j0 := 0; j0 < n; j0 += bs {
		j1 := min(j0+bs, n)
		l.bi.Dtrsm(gblas.Left, gblas.Lower, gblas.NoTrans, gblas.NonUnit, n-j0, j1-j0, 1, tri[j0*n+j0:], n, b[j0*n+j0:], n)
		flops += float64(n-j0) * float64(n-j0) * float64(j1-j0)
	}
	l.rec(TriSolve, name, n, n, n, flops, t0)
}

// gemmLowerLLT adds the lower triangle of A·Bᵀ into C (all n×n) for lower-
// triangular A and B: column block J of the lower part is
// A[j0:, :j1]·B[J, :j1]ᵀ, about n³/2 flops instead of the n³ of a
// triangular product. Entries of C above the diagonal may be modified.
func (l *la) gemmLowerLLT(name string, n int, a, b, c []float64) {
	t0 := time.Now()
	bs := triBlock(n)
	var flops float64
	for j0 := 0; j0 < n; j0 += bs {
		j1 := min(j0+bs, n)
		l.bi.Dgemm(gblas.NoTrans, gblas.Trans, n-j0, j1-j0, j1, 1, a[j0*n:], n, b[j0*n:], n, 1, c[j0*n+j0:], n)
		flops += 2 * float64(n-j0) * float64(j1-j0) * float64(j1)
	}
	l.rec(MatMul, name, n, n, n, flops, t0)
}

// syrkT computes the lower triangle of C (n×n) = alpha·Aᵀ·A + beta·C for
// A of size k×n.
func (l *la) syrkT(name string, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	t0 := time.Now()
	l.bi.Dsyrk(gblas.Lower, gblas.Trans, n, k, alpha, a, lda, beta, c, ldc)
	l.rec(MatMul, name, n, n, k, float64(n)*float64(n)*float64(k), t0)
}

// trsmL solves op(L)·X = alpha·B in place for the order-m lower triangle L
// and n right-hand sides.
func (l *la) trsmL(name string, trans bool, m, n int, tri []float64, ldt int, b []float64, ldb int) {
	t0 := time.Now()
	t := gblas.NoTrans
	if trans {
		t = gblas.Trans
	}
	l.bi.Dtrsm(gblas.Left, gblas.Lower, t, gblas.NonUnit, m, n, 1, tri, ldt, b, ldb)
	l.rec(TriSolve, name, m, n, m, float64(m)*float64(m)*float64(n), t0)
}

// trmmL computes B ← op(L)·B in place for the order-m lower triangle L and
// n columns.
func (l *la) trmmL(name string, trans bool, m, n int, tri []float64, ldt int, b []float64, ldb int) {
	t0 := time.Now()
	t := gblas.NoTrans
	if trans {
		t = gblas.Trans
	}
	l.bi.Dtrmm(gblas.Left, gblas.Lower, t, gblas.NonUnit, m, n, 1, tri, ldt, b, ldb)
	l.rec(MatMul, name, m, n, m, float64(m)*float64(m)*float64(n), t0)
}

// chol factors the order-n matrix a (lower triangle read) into c.
func (l *la) chol(name string, c *chol.Cholesky, n int, a []float64, p chol.JitterPolicy) (float64, error) {
	t0 := time.Now()
	j, err := c.Factor(n, a, max(n, 1), p, l.threads)
	l.rec(Cholesky, name, n, n, n, float64(n)*float64(n)*float64(n)/3, t0)
	return j, err
}

// relativeJitter returns the policy p rescaled so that, when chol applies
// it to the n×n matrix a (which scales jitter and the pivot floor by
// mean(diag(a))), the jitter and the floor are relative to mean(diag(ref))
// instead. C_vv = K_vv − K_vu·K_uu⁻¹·K_uv can be zero up to rounding (an
// orthogonal point on an inducing point), so its own diagonal is no scale
// for its jitter; K_vv's is. (When ref's mean diagonal is not positive, or
// a rescaled value is not finite, p is returned unchanged.)
func relativeJitter(p chol.JitterPolicy, n int, ref, a []float64) chol.JitterPolicy {
	q, _ := relativeJitterOK(p, n, ref, a)
	return q
}

// relativeJitterOK is relativeJitter, also reporting whether the policy
// was rescaled, so that the jitter it gives is proportional to
// mean(diag(ref)).
func relativeJitterOK(p chol.JitterPolicy, n int, ref, a []float64) (chol.JitterPolicy, bool) {
	if p.MaxTries == 0 && p.MinPivot == 0 || n == 0 {
		return p, false
	}
	rs, as := chol.MeanDiag(n, ref, n), chol.MeanDiag(n, a, n)
	if !(rs > 0) || math.IsInf(rs, 0) {
		return p, false
	}
	if !(as > 0) || math.IsInf(as, 0) {
		as = 1 // chol's scale for a non-positive mean diagonal
	}
	q := p
	q.Start = p.Start * rs / as
	q.MinPivot = p.MinPivot * rs / as
	if p.MaxTries > 0 && !(q.Start > 0) || math.IsInf(q.Start, 0) || math.IsInf(q.MinPivot, 0) {
		return p, false
	}
	return q, true
}

// trsv solves op(L)·x = b in place (quadratic cost; not recorded).
func (l *la) trsv(trans bool, n int, tri []float64, x []float64) {
	if n == 0 {
		return
	}
	t := gblas.NoTrans
	if trans {
		t = gblas.Trans
	}
	l.bi.Dtrsv(gblas.Lower, t, gblas.NonUnit, n, tri, n, x, 1)
}

// gemv computes y = alpha·op(A)·x + beta·y for the r×c matrix A, with y
// strided by incY (quadratic cost; not recorded).
func (l *la) gemv(trans bool, r, c int, alpha float64, a []float64, x []float64, incX int, beta float64, y []float64, incY int) {
	if r == 0 || c == 0 {
		if beta != 1 {
			n := c
			if !trans {
				n = r
			}
			for i := 0; i < n; i++ {
				y[i*incY] *= beta
			}
		}
		return
	}
	t := gblas.NoTrans
	if trans {
		t = gblas.Trans
	}
	l.bi.Dgemv(t, r, c, alpha, a, max(c, 1), x, incX, beta, y, incY)
}

// grow returns a slice of length n reusing buf's storage when possible.
// The contents are unspecified.
func grow(buf []float64, n int) []float64 {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]float64, n)
}

// growZero is grow followed by zeroing.
func growZero(buf []float64, n int) []float64 {
	b := grow(buf, n)
	clear(b)
	return b
}

// denseOn points hdr at the r×c row-major matrix stored in buf and returns
// it, without allocating when hdr already exists.
func denseOn(hdr **mat.Dense, r, c int, buf []float64) *mat.Dense {
	raw := blas64.General{Rows: r, Cols: c, Stride: max(c, 1), Data: buf[:r*c]}
	if *hdr == nil {
		*hdr = &mat.Dense{}
	}
	if r == 0 || c == 0 {
		// gonum does not accept empty matrices; callers never pass them to
		// kernels (sizes are validated to be positive).
		return *hdr
	}
	(*hdr).SetRawMatrix(raw)
	return *hdr
}

// cholAdjoint overwrites the n×n matrix x with the symmetric adjoint K̄ of
// K = L·Lᵀ (the matrix factored by c) when the adjoint of the factor is
// L̄ = −L⁻ᵀ·X, X lower triangular (only x's lower triangle is read):
//
//	K̄ = −sym(L⁻ᵀ·Φ(X)·L⁻¹),
//
// where Φ takes the lower triangle and halves the diagonal. chol computes
// it as a recursive symmetric congruence, about n³ flops, recorded as one
// backward Cholesky-class operation (the adjoint of a factorization).
func (l *la) cholAdjoint(name string, c *chol.Cholesky, n int, x []float64) error {
	t0 := time.Now()
	if err := c.AdjointFromProduct(-1, x, max(n, 1)); err != nil {
		return fmt.Errorf("gp: %s: %w", name, err)
	}
	l.rec(Cholesky, name, n, n, n, float64(n)*float64(n)*float64(n), t0)
	return nil
}
