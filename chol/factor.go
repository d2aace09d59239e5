package chol

import (
	"math"
	"runtime"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/internal/gemm"
)

// potrfBase is the order at and below which the factorization runs the
// unblocked kernel. Against the tiled leaf (leaf_tiles.go) on an AMD Zen 3,
// one thread, it was 2.5–3.5× faster at orders 4–16, 1.2–1.7× at 24–32
// and 0.5–0.8× at 48.
const potrfBase = 32

// goodPivot reports whether d is a usable Cholesky pivot: positive and finite.
func goodPivot(d float64) bool {
	return d > 0 && d <= math.MaxFloat64
}

// potrfSplit returns the size of the leading block when an order-n problem
// is split in two by the recursive algorithms: about n/2, rounded to a
// multiple of 16 so that the trailing blocks stay aligned with the
// micro-kernel tiles.
func potrfSplit(n int) int {
	n1 := (n/2 + 8) &^ 15
	if n1 == 0 || n1 >= n {
		n1 = n / 2
	}
	return n1
}

// potrfLower computes the lower Cholesky factor of the order-n matrix in
// the lower triangle of a in place, A = L·Lᵀ, using the recursive blocked
// algorithm: factor A11, solve L21 = A21·L11⁻ᵀ, update A22 −= L21·L21ᵀ,
// factor A22. The strict upper triangle is not referenced.
//
// It returns pivot = -1 on success. Otherwise pivot is the index of the
// first pivot that was not positive and finite, value is that pivot's
// Schur-complement value, which is also stored at a[pivot*lda+pivot], and
// the rows and columns from pivot on are partially updated.
func potrfLower(bi blas.Implementation, n int, a []float64, lda int) (pivot int, value float64) {
	if n <= potrfBase {
		return potf2Lower(n, a, lda)
	}
	if threads := dagGoroutines(bi, n); threads > 1 {
		return potrfDAG(bi, threads, n, a, lda)
	}
	lf := potrfLeaf{be: tiledBackend(bi)}
	if lf.be == nil {
		wp := leafPool.Get().(*[]float64)
		defer leafPool.Put(wp)
		lf.work = *wp
	}
	return potrfRecLower(bi, &lf, n, a, lda)
}

// goroutines returns the goroutine budget of bi: bi.Threads, or GOMAXPROCS
// when that is not positive.
func goroutines(bi blas.Implementation) int {
	if bi.Threads > 0 {
		return bi.Threads
	}
	return runtime.GOMAXPROCS(0)
}

// potrfLeaf selects the leaf factorization of the recursion: the tiled leaf
// on backend be when it is not nil (blocks of order ≤ tilesLeafMax), else
// potrfLeafLower with the scratch space work (order ≤ leafMax).
type potrfLeaf struct {
	be   *gemm.Backend
	work []float64
}

// max returns the largest order the leaf takes.
func (lf *potrfLeaf) max() int {
	if lf.be != nil {
		return tilesLeafMax
	}
	return leafMax
}

// factor runs the leaf on a block of order n ≤ lf.max().
func (lf *potrfLeaf) factor(bi blas.Implementation, n int, a []float64, lda int) (pivot int, value float64) {
	if lf.be != nil {
		return potrfTiles(lf.be, false, n, a, lda)
	}
	return potrfLeafLower(bi, n, a, lda, lf.work)
}

// potrfRecLower is the recursion of potrfLower down to the leaves lf.
func potrfRecLower(bi blas.Implementation, lf *potrfLeaf, n int, a []float64, lda int) (pivot int, value float64) {
	if n <= lf.max() {
		return lf.factor(bi, n, a, lda)
	}
	n1 := potrfSplit(n)
	n2 := n - n1
	if p, v := potrfRecLower(bi, lf, n1, a, lda); p >= 0 {
		return p, v
	}
	bi.Dtrsm(gblas.Right, gblas.Lower, gblas.Trans, gblas.NonUnit, n2, n1, 1, a, lda, a[n1*lda:], lda)
	bi.Dsyrk(gblas.Lower, gblas.NoTrans, n2, n1, -1, a[n1*lda:], lda, 1, a[n1*lda+n1:], lda)
	if p, v := potrfRecLower(bi, lf, n2, a[n1*lda+n1:], lda); p >= 0 {
		return n1 + p, v
	}
	return -1, 0
}

// potrfUpper is potrfLower for the upper factor, A = Uᵀ·U, reading and
// writing only the upper triangle of a.
func potrfUpper(bi blas.Implementation, n int, a []float64, lda int) (pivot int, value float64) {
	if n <= potrfBase {
		return potf2Upper(n, a, lda)
	}
	if be := tiledBackend(bi); be != nil && n <= tilesLeafMax {
		return potrfTiles(be, true, n, a, lda)
	}
	n1 := potrfSplit(n)
	n2 := n - n1
	if p, v := potrfUpper(bi, n1, a, lda); p >= 0 {
		return p, v
	}
	bi.Dtrsm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, n1, n2, 1, a, lda, a[n1:], lda)
	bi.Dsyrk(gblas.Upper, gblas.Trans, n2, n1, -1, a[n1:], lda, 1, a[n1*lda+n1:], lda)
	if p, v := potrfUpper(bi, n2, a[n1*lda+n1:], lda); p >= 0 {
		return n1 + p, v
	}
	return -1, 0
}

// dot returns Σ x[i]·y[i] over len(x) elements, with four partial sums.
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy computes y += alpha·x over len(x) elements.
func axpy(alpha float64, x, y []float64) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		y[i] += alpha * x[i]
		y[i+1] += alpha * x[i+1]
		y[i+2] += alpha * x[i+2]
		y[i+3] += alpha * x[i+3]
	}
	for ; i < len(x); i++ {
		y[i] += alpha * x[i]
	}
}

// potf2Lower is the unblocked row-oriented (Cholesky–Banachiewicz) lower
// factorization used for diagonal blocks; the contract is potrfLower's.
// Rows are processed in groups of four (then two) so that each earlier
// row is loaded once for several dot products. The pivots are kept in a local array (divisions, not
// reciprocal multiplications, keep gonum's tight Dpotri accuracy test
// passing).
func potf2Lower(n int, a []float64, lda int) (pivot int, value float64) {
	var diagBuf [potrfBase]float64
	var diag []float64
	if n <= potrfBase {
		diag = diagBuf[:n]
	} else {
		diag = make([]float64, n)
	}
	i := 0
	for ; i+3 < n; i += 4 {
		r0 := a[i*lda : i*lda+i+1]
		r1 := a[(i+1)*lda : (i+1)*lda+i+2]
		r2 := a[(i+2)*lda : (i+2)*lda+i+3]
		r3 := a[(i+3)*lda : (i+3)*lda+i+4]
		for j := 0; j < i; j++ {
			s0, s1, s2, s3 := dot4(r0[:j], r1[:j], r2[:j], r3[:j], a[j*lda:j*lda+j])
			dj := diag[j]
			r0[j] = (r0[j] - s0) / dj
			r1[j] = (r1[j] - s1) / dj
			r2[j] = (r2[j] - s2) / dj
			r3[j] = (r3[j] - s3) / dj
		}
		// The 4×4 diagonal block, row by row.
		for k := 0; k < 4; k++ {
			rk := a[(i+k)*lda : (i+k)*lda+i+k+1]
			for j := i; j < i+k; j++ {
				rk[j] = (rk[j] - dot(rk[:j], a[j*lda:j*lda+j])) / diag[j]
			}
			d := rk[i+k] - dot(rk[:i+k], rk[:i+k])
			if !goodPivot(d) {
				rk[i+k] = d
				return i + k, d
			}
			d = math.Sqrt(d)
			rk[i+k] = d
			diag[i+k] = d
		}
	}
	for ; i+1 < n; i += 2 {
		r0 := a[i*lda : i*lda+i+1]
		r1 := a[(i+1)*lda : (i+1)*lda+i+2]
		for j := 0; j < i; j++ {
			s0, s1 := dot2(r0[:j], r1[:j], a[j*lda:j*lda+j])
			r0[j] = (r0[j] - s0) / diag[j]
			r1[j] = (r1[j] - s1) / diag[j]
		}
		s0, s1 := dot2(r0[:i], r1[:i], r0[:i])
		d := r0[i] - s0
		if !goodPivot(d) {
			r0[i] = d
			return i, d
		}
		d = math.Sqrt(d)
		r0[i] = d
		diag[i] = d
		r1[i] = (r1[i] - s1) / d
		d = r1[i+1] - dot(r1[:i+1], r1[:i+1])
		if !goodPivot(d) {
			r1[i+1] = d
			return i + 1, d
		}
		d = math.Sqrt(d)
		r1[i+1] = d
		diag[i+1] = d
	}
	if i < n {
		ri := a[i*lda : i*lda+i+1]
		for j := 0; j < i; j++ {
			ri[j] = (ri[j] - dot(ri[:j], a[j*lda:j*lda+j])) / diag[j]
		}
		d := ri[i] - dot(ri[:i], ri[:i])
		if !goodPivot(d) {
			ri[i] = d
			return i, d
		}
		ri[i] = math.Sqrt(d)
	}
	return -1, 0
}

// dot4 returns Σ x0[i]·z[i], …, Σ x3[i]·z[i] over len(z) elements,
// loading z once.
func dot4(x0, x1, x2, x3, z []float64) (float64, float64, float64, float64) {
	x0 = x0[:len(z)]
	x1 = x1[:len(z)]
	x2 = x2[:len(z)]
	x3 = x3[:len(z)]
	var s0, s1, s2, s3 float64
	for i, v := range z {
		s0 += x0[i] * v
		s1 += x1[i] * v
		s2 += x2[i] * v
		s3 += x3[i] * v
	}
	return s0, s1, s2, s3
}

// dot2 returns Σ x[i]·z[i] and Σ y[i]·z[i] over len(z) elements, loading z
// once, with two partial sums each.
func dot2(x, y, z []float64) (float64, float64) {
	x = x[:len(z)]
	y = y[:len(z)]
	var a0, a1, b0, b1 float64
	i := 0
	for ; i+2 <= len(z); i += 2 {
		z0, z1 := z[i], z[i+1]
		a0 += x[i] * z0
		a1 += x[i+1] * z1
		b0 += y[i] * z0
		b1 += y[i+1] * z1
	}
	if i < len(z) {
		a0 += x[i] * z[i]
		b0 += y[i] * z[i]
	}
	return a0 + a1, b0 + b1
}

// potf2Upper is the unblocked right-looking upper factorization used for
// diagonal blocks; the contract is potrfUpper's.
func potf2Upper(n int, a []float64, lda int) (pivot int, value float64) {
	for k := 0; k < n; k++ {
		rk := a[k*lda+k : k*lda+n]
		d := rk[0]
		if !goodPivot(d) {
			return k, d
		}
		d = math.Sqrt(d)
		rk[0] = d
		inv := 1 / d
		for j := 1; j < len(rk); j++ {
			rk[j] *= inv
		}
		for i := k + 1; i < n; i++ {
			axpy(-rk[i-k], rk[i-k:], a[i*lda+i:i*lda+n])
		}
	}
	return -1, 0
}
