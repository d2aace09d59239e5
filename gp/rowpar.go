package gp

import (
	"math"
	"runtime"
	"sync"

	"github.com/solvegp/solvegp/gp/transform"
	"github.com/solvegp/solvegp/internal/parallel"
)

// The layer's elementwise passes over its M×N blocks (the column sums of
// squares behind the marginal variances, the diagonal scalings and rank-one
// updates of the backward pass) are O(M·N) each, and on the calling
// goroutine alone they left the other cores idle for a tenth of a step. They
// are split here into ranges of rows, or of columns for the column sums,
// each written by one goroutine, so results are bitwise the same for any
// number of goroutines.

// elemParMin is the number of elements below which a pass stays on the
// calling goroutine.
const elemParMin = 1 << 15

// maxElemParts bounds the number of ranges of a pass.
const maxElemParts = 16

// elemPass selects the pass of an elemTask.
type elemPass int

const (
	passColSumSq  elemPass = iota // s[n·inc] += sign·Σ_i a[i,n]² (ranges of columns)
	passScaleCols                 // dst[i,n] = s·src[i,n]·v[n·inc]
	passAddTo                     // dst[i,n] += src[i,n]
	passCopy                      // dst[i,n] = src[i,n]
	passClear                     // dst[i,n] = 0
	passTriAdjust                 // lower-triangle adjoint terms of a block (triAdjust)
	passTriGrad                   // packed-gradient accumulation (addTriGrad), triangular work
	passUnpackTri                 // packed parameters to a dense triangle (unpackTri)
	passBackInit                  // the first terms of B̄ and the ā_l (backInit)
	passTriGradKL                 // addTriGradKL, triangular work
	passKLSums                    // klBlock's sums over a range of rows
	passFwdCols                   // fwdCols (ranges of columns)
	passGerLower                  // gerLower, triangular work
)

// klParts is the fixed number of row ranges of klBlock's sums.
const klParts = 16

// elemTask is one pass over an r×c row-major block, split into parts
// ranges.
type elemTask struct {
	pass        elemPass
	r, c, parts int
	dst, src    []float64
	v           []float64
	inc         int
	s           float64
	// passBackInit's operands: the m×L means, the N×L mean gradients,
	// the L×m output and L.
	am, g, out []float64
	l          int
}

var elemTasks = sync.Pool{New: func() any { return new(elemTask) }}

// Run performs the pass on the p-th range.
func (t *elemTask) Run(p int) {
	switch t.pass {
	case passColSumSq:
		n0, n1 := p*t.c/t.parts, (p+1)*t.c/t.parts
		colSumSqRange(t.dst, t.inc, t.s, t.r, t.c, t.src, n0, n1)
		return
	case passFwdCols:
		n0, n1 := p*t.c/t.parts, (p+1)*t.c/t.parts
		clear(t.dst[n0:n1])
		colSumSqRange(t.dst, 1, 1, t.r, t.c, t.src, n0, n1)
		fwdMeanRange(t, n0, n1)
		return
	}
	i0, i1 := p*t.r/t.parts, (p+1)*t.r/t.parts
	switch t.pass {
	case passTriGrad:
		i0, i1 = triRowSplit(t.r, p, t.parts), triRowSplit(t.r, p+1, t.parts)
		addTriGradRows(t.dst, t.r, t.src, t.v, i0, i1)
		return
	case passGerLower:
		i0, i1 = triRowSplit(t.r, p, t.parts), triRowSplit(t.r, p+1, t.parts)
		gerLowerRows(t.dst, t.r, t.src, t.v, i0, i1)
		return
	case passKLSums:
		i0, i1 = triRowSplit(t.r, p, t.parts), triRowSplit(t.r, p+1, t.parts)
		t.out[2*p], t.out[2*p+1] = klSumsRows(t.r, t.src, i0, i1)
		return
	case passTriGradKL:
		i0, i1 = triRowSplit(t.r, p, t.parts), triRowSplit(t.r, p+1, t.parts)
		addTriGradKLRows(t.dst, t.r, t.src, t.v, t.s, i0, i1)
		return
	case passTriAdjust:
		triAdjustRows(t.dst, t.r, t.src, t.s, i0, i1)
		return
	case passUnpackTri:
		unpackTriRows(t.dst, t.r, t.src, i0, i1)
		return
	case passCopy:
		copy(t.dst[i0*t.c:i1*t.c], t.src[i0*t.c:i1*t.c])
		return
	case passClear:
		clear(t.dst[i0*t.c : i1*t.c])
		return
	case passBackInit:
		backInitRows(t, i0, i1)
		return
	}
	c := t.c
	for i := i0; i < i1; i++ {
		d := t.dst[i*c : i*c+c]
		switch t.pass {
		case passScaleCols:
			src := t.src[i*c : i*c+c]
			for n, a := range src {
				d[n] = t.s * a * t.v[n*t.inc]
			}
		case passAddTo:
			src := t.src[i*c : i*c+c]
			for n, a := range src {
				d[n] += a
			}
		}
	}
}

// runElem runs the pass described by t on up to threads goroutines (≤ 0:
// GOMAXPROCS), on the calling goroutine alone for small blocks, and returns
// t to the pool.
func runElem(threads int, t *elemTask) {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	span, elems := t.r, t.r*t.c
	switch t.pass {
	case passColSumSq, passFwdCols:
		span = t.c
	case passTriGrad, passTriGradKL, passGerLower:
		elems /= 2
	}
	parts := 1
	if elems >= elemParMin {
		parts = max(1, min(threads, maxElemParts, span))
	}
	t.parts = parts
	if parts == 1 {
		t.Run(0)
	} else {
		parallel.For(parts, parts, t)
	}
	*t = elemTask{}
	elemTasks.Put(t)
}

func newElemTask() *elemTask { return elemTasks.Get().(*elemTask) }

// colSumSq adds sign·Σ_i a[i,n]² to s[n·inc] for the r×c row-major a.
func colSumSq(threads int, s []float64, inc int, sign float64, r, c int, a []float64) {
	t := newElemTask()
	t.pass, t.r, t.c, t.dst, t.inc, t.s, t.src = passColSumSq, r, c, s, inc, sign, a
	runElem(threads, t)
}

// colSumSqRange is colSumSq on the columns [n0, n1).
func colSumSqRange(s []float64, inc int, sign float64, r, c int, a []float64, n0, n1 int) {
	for i := 0; i < r; i++ {
		row := a[i*c+n0 : i*c+n1]
		for n, v := range row {
			s[(n0+n)*inc] += sign * v * v
		}
	}
}

// scaleCols sets dst[i,n] = s·src[i,n]·v[n·inc] for the r×c blocks dst and src.
func scaleCols(threads, r, c int, s float64, src, v []float64, inc int, dst []float64) {
	t := newElemTask()
	t.pass, t.r, t.c, t.s, t.src, t.v, t.inc, t.dst = passScaleCols, r, c, s, src, v, inc, dst
	runElem(threads, t)
}

// addTo adds the r×c block src to dst.
func addTo(threads, r, c int, src, dst []float64) {
	t := newElemTask()
	t.pass, t.r, t.c, t.src, t.dst = passAddTo, r, c, src, dst
	runElem(threads, t)
}

// triRowSplit returns the first row of part p of parts ranges of the rows
// of an order-n lower triangle, balanced for work proportional to the
// row's length.
func triRowSplit(n, p, parts int) int {
	if p >= parts {
		return n
	}
	return min(n, int(math.Sqrt(float64(p)/float64(parts))*float64(n)))
}

// copyPar copies the r×c block src to dst.
func copyPar(threads, r, c int, src, dst []float64) {
	t := newElemTask()
	t.pass, t.r, t.c, t.src, t.dst = passCopy, r, c, src, dst
	runElem(threads, t)
}

// clearPar zeroes the r×c block dst.
func clearPar(threads, r, c int, dst []float64) {
	t := newElemTask()
	t.pass, t.r, t.c, t.dst = passClear, r, c, dst
	runElem(threads, t)
}

// clearVec zeroes v, in ranges of clearVecWidth values on up to threads
// goroutines.
func clearVec(threads int, v []float64) {
	r := len(v) / clearVecWidth
	clearPar(threads, r, clearVecWidth, v[:r*clearVecWidth])
	clear(v[r*clearVecWidth:])
}

// clearVecWidth is the length of clearVec's ranges.
const clearVecWidth = 1 << 12

// triAdjust adds a block's KL terms to the adjoint of its order-n lower
// triangle P, pbar ← tril(pbar) + kappa·(P − diag(1/P_ii)), and zeroes
// pbar's strict upper triangle.
func triAdjust(threads, n int, pbar, p []float64, kappa float64) {
	t := newElemTask()
	t.pass, t.r, t.c, t.dst, t.src, t.s = passTriAdjust, n, n, pbar, p, kappa
	runElem(threads, t)
}

// triAdjustRows is triAdjust on rows [i0, i1).
func triAdjustRows(pbar []float64, n int, p []float64, kappa float64, i0, i1 int) {
	for i := i0; i < i1; i++ {
		row := pbar[i*n : i*n+n]
		prow := p[i*n : i*n+i+1]
		for j, v := range prow {
			row[j] += kappa * v
		}
		row[i] -= kappa / prow[i]
		clear(row[i+1:])
	}
}

// addTriGrad adds the lower triangle of the dense gradient g (n×n) with
// respect to L into the packed gradient dst, applying the softplus chain
// rule on the diagonal with the packed unconstrained values src.
func addTriGrad(threads int, dst []float64, n int, g []float64, src []float64) {
	t := newElemTask()
	t.pass, t.r, t.c, t.dst, t.src, t.v = passTriGrad, n, n, dst, g, src
	runElem(threads, t)
}

// addTriGradRows is addTriGrad on rows [i0, i1).
func addTriGradRows(dst []float64, n int, g []float64, src []float64, i0, i1 int) {
	for i := i0; i < i1; i++ {
		base := i * (i + 1) / 2
		row := dst[base : base+i+1]
		gr := g[i*n : i*n+i+1]
		for j := 0; j < i; j++ {
			row[j] += gr[j]
		}
		row[i] += gr[i] * transform.SoftplusDeriv(src[base+i])
	}
}

// unpackTri expands the packed lower triangle src (row-major, softplus
// applied to the diagonal) into the dense n×n dst, zeroing the strict
// upper triangle.
func unpackTri(threads int, dst []float64, n int, src []float64) {
	t := newElemTask()
	t.pass, t.r, t.c, t.dst, t.src = passUnpackTri, n, n, dst, src
	runElem(threads, t)
}

// unpackTriRows is unpackTri on rows [i0, i1).
func unpackTriRows(dst []float64, n int, src []float64, i0, i1 int) {
	for i := i0; i < i1; i++ {
		row := dst[i*n : i*n+n]
		copy(row, src[i*(i+1)/2:i*(i+1)/2+i])
		row[i] = transform.Softplus(src[i*(i+1)/2+i])
		clear(row[i+1:])
	}
}

// backInit starts the backward pass of the block blk (its m, B and B̄ are
// read) in one pass over the m×n matrix B: with h the n values of htot,
// [a_1 … a_L] the m×L matrix am and G the n×L matrix g of marginal-mean
// gradients, it sets
//
//	B̄ = −2·B·diag(h) + [a_1 … a_L]·Gᵀ,   ā_l = B·g_l (into abars[l·m:]).
//
// Each row of B̄ and each ā_l entry is one goroutine's, so the results do
// not depend on the number of goroutines.
func backInit(threads int, blk *backBlock, n, L int, h, am, g, abars []float64) {
	t := newElemTask()
	t.pass, t.r, t.c, t.src, t.v, t.dst, t.am, t.g, t.out, t.l = passBackInit, blk.m, n, blk.b, h, blk.bbar, am, g, abars, L
	runElem(threads, t)
}

// backInitRows is backInit on rows [i0, i1).
func backInitRows(t *elemTask, i0, i1 int) {
	n, L := t.c, t.l
	h, g := t.v[:n], t.g[:n*L]
	for i := i0; i < i1; i++ {
		src, dst := t.src[i*n:i*n+n], t.dst[i*n:i*n+n]
		ai := t.am[i*L : i*L+L]
		if L == 1 {
			a0 := ai[0]
			for k, v := range src {
				dst[k] = -2*v*h[k] + a0*g[k]
			}
			var s float64
			for k, v := range src {
				s += v * g[k]
			}
			t.out[i] = s
			continue
		}
		for k, v := range src {
			acc := -2 * v * h[k]
			gk := g[k*L : k*L+L]
			for l, a := range ai {
				acc += a * gk[l]
			}
			dst[k] = acc
		}
		for l := 0; l < L; l++ {
			var s float64
			for k, v := range src {
				s += v * g[k*L+l]
			}
			t.out[l*t.r+i] = s
		}
	}
}

// addTriGradKL is triAdjust followed by addTriGrad for a whitened block,
// whose triangle P is the L held packed in src: it adds
// tril(pbar) + kappa·(L − diag(1/L_ii)), L's diagonal entry being
// softplus of the packed value, into the packed gradient dst with the
// softplus chain rule on the diagonal, reading only pbar's lower triangle
// and leaving pbar unchanged. The sums are those of the two passes.
func addTriGradKL(threads int, dst []float64, n int, pbar, src []float64, kappa float64) {
	t := newElemTask()
	t.pass, t.r, t.c, t.dst, t.src, t.v, t.s = passTriGradKL, n, n, dst, pbar, src, kappa
	runElem(threads, t)
}

// addTriGradKLRows is addTriGradKL on rows [i0, i1).
func addTriGradKLRows(dst []float64, n int, pbar, src []float64, kappa float64, i0, i1 int) {
	for i := i0; i < i1; i++ {
		base := i * (i + 1) / 2
		row := dst[base : base+i+1]
		gr := pbar[i*n : i*n+i+1]
		lr := src[base : base+i+1]
		for j := 0; j < i; j++ {
			row[j] += gr[j] + kappa*lr[j]
		}
		lii := transform.Softplus(lr[i])
		d := gr[i] + kappa*lii
		d -= kappa / lii
		row[i] += d * transform.SoftplusDeriv(lr[i])
	}
}

// klSumsRows returns the sum of squares of rows [i0, i1) of the lower
// triangle of the m×m matrix p and the sum of the logarithms of their
// diagonal entries.
func klSumsRows(m int, p []float64, i0, i1 int) (ss, ld float64) {
	for i := i0; i < i1; i++ {
		row := p[i*m : i*m+i+1]
		for _, v := range row {
			ss += v * v
		}
		ld += math.Log(row[i])
	}
	return ss, ld
}

// fwdCols starts a block's forward marginals in one pass over its m×n
// matrices: sq = colsum(src²) and, with [m_1 … m_L] the m×L matrix am and
// μ point-major with L values per point, μ_l += basisᵀ·m_l. Each column is
// one goroutine's, summed over the rows in order, so the results do not
// depend on the number of goroutines.
func fwdCols(threads int, blk *fwdBlock, n, L int, am, mu []float64) {
	t := newElemTask()
	t.pass, t.r, t.c, t.src, t.dst, t.v, t.am, t.out, t.l = passFwdCols, blk.m, n, blk.src, blk.sq, blk.basis, am, mu, L
	runElem(threads, t)
}

// fwdMeanRange adds basisᵀ·m_l (basis in t.v, the m_l in t.am) to μ on the
// columns [n0, n1).
func fwdMeanRange(t *elemTask, n0, n1 int) {
	n, L := t.c, t.l
	for i := 0; i < t.r; i++ {
		row := t.v[i*n+n0 : i*n+n1]
		ai := t.am[i*L : i*L+L]
		for l, a := range ai {
			mu := t.out[n0*L+l:]
			for k, v := range row {
				mu[k*L] += v * a
			}
		}
	}
}

// gerLower adds the lower triangle (diagonal included) of x·yᵀ to that of
// the n×n matrix a; the strict upper triangle is not touched.
func gerLower(threads, n int, x, y, a []float64) {
	t := newElemTask()
	t.pass, t.r, t.c, t.dst, t.src, t.v = passGerLower, n, n, a, x, y
	runElem(threads, t)
}

// gerLowerRows is gerLower on rows [i0, i1).
func gerLowerRows(a []float64, n int, x, y []float64, i0, i1 int) {
	for i := i0; i < i1; i++ {
		xi := x[i]
		row := a[i*n : i*n+i+1]
		for j, v := range y[:i+1] {
			row[j] += xi * v
		}
	}
}
