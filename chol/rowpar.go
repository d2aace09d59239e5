package chol

import (
	"math"
	"sync"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/internal/parallel"
)

// The symmetric congruence behind the adjoints does O(n²) elementwise work
// between its level-3 calls: forming V and Z, the symmetric update
// W11 −= G + Gᵀ, and the final scaling and mirroring. Run on
// the calling goroutine alone, these passes left the other cores idle for
// about half of the adjoint's wall time at n = 1024 on two cores. They are
// split here into ranges of rows (of tiles, for the passes that read
// transposed),
// each written by one goroutine, so that the results are bitwise the same
// for any number of goroutines.

// rowTile is the tile order of the passes that read or write transposed;
// row ranges start at multiples of it.
const rowTile = 32

// rowParMin is the number of elements below which a pass stays on the
// calling goroutine: about 20 µs of copying, well above the cost of
// handing the pass to the worker pool.
const rowParMin = 1 << 15

// maxRowParts bounds the number of row ranges of a pass.
const maxRowParts = 16

// rowPass selects the elementwise pass of a rowTask.
type rowPass int

const (
	passMirror       rowPass = iota // mirrorStrictLower
	passScale                       // scaleRows
	passVZ                          // formVZ
	passSymUpdate                   // symUpdate
	passCopyLower                   // copyLowerRows
	passCopyTriangle                // copyTriangleRows
)

// rowTask is one pass split into row ranges [bounds[p], bounds[p+1]).
// Tasks are pooled so that parallel passes do not allocate.
type rowTask struct {
	pass     rowPass
	bounds   [maxRowParts + 1]int
	r, c     int
	a, b     []float64
	lda, ldb int
	s        float64
	// bad[p] is the first non-finite value found by passCopyLower in
	// range p, if any.
	bad [maxRowParts]nonFinite
}

// nonFinite locates a NaN or infinite entry.
type nonFinite struct {
	found    bool
	row, col int
	value    float64
}

var rowTasks = sync.Pool{New: func() any { return new(rowTask) }}

// Run performs the pass on the p-th row range.
func (t *rowTask) Run(p int) {
	i0, i1 := t.bounds[p], t.bounds[p+1]
	switch t.pass {
	case passMirror:
		mirrorStrictLowerRows(t.r, t.s, t.a, t.lda, i0, i1)
	case passScale:
		scaleRows(t.c, t.s, t.a, t.lda, i0, i1)
	case passVZ:
		formVZRows(t.c, t.a, t.lda, t.b, t.ldb, i0, i1)
	case passSymUpdate:
		symUpdateRows(t.r, t.a, t.lda, t.b, t.ldb, i0, i1)
	case passCopyLower:
		t.bad[p] = copyLowerRows(t.r, t.a, t.lda, t.b, t.ldb, i0, i1)
	case passCopyTriangle:
		copyTriangleRows(t.a, t.lda, t.b, t.ldb, i0, i1)
	}
}

// rowParts returns the number of row ranges for a pass over elems
// elements with r rows under the goroutine budget of bi.
func rowParts(bi blas.Implementation, r, elems int) int {
	if elems < rowParMin {
		return 1
	}
	return parallel.Workers(bi.Threads, min(maxRowParts, (r+rowTile-1)/rowTile))
}

// runRows runs t over rows [0, r) in parts ranges, on the calling goroutine
// when parts is 1. With triangular set, the ranges are balanced for work
// proportional to the row index (a lower triangle); otherwise they are of
// nearly equal length. Inner boundaries are multiples of rowTile.
func runRows(t *rowTask, r, parts int, triangular bool) {
	t.bounds[0] = 0
	for p := 1; p < parts; p++ {
		f := float64(p) / float64(parts)
		if triangular {
			f = math.Sqrt(f)
		}
		b := (int(f*float64(r)) + rowTile/2) / rowTile * rowTile
		t.bounds[p] = min(max(b, t.bounds[p-1]), r)
	}
	t.bounds[parts] = r
	if parts == 1 {
		t.Run(0)
		return
	}
	parallel.For(parts, parts, t)
}

// rowPassRun runs pass over the r×c operands (their lower triangle when
// triangular is set) from a pooled task, which it returns to the pool.
func rowPassRun(bi blas.Implementation, pass rowPass, triangular bool, r, c int, a []float64, lda int, b []float64, ldb int, s float64) {
	elems := r * c
	if triangular {
		elems /= 2
	}
	parts := rowParts(bi, r, elems)
	t := rowTasks.Get().(*rowTask)
	*t = rowTask{pass: pass, r: r, c: c, a: a, lda: lda, b: b, ldb: ldb, s: s}
	runRows(t, r, parts, triangular)
	t.a, t.b = nil, nil
	rowTasks.Put(t)
}

// mirrorStrictLower copies the strict lower triangle of the n×n matrix a
// into its strict upper triangle, by tiles.
func mirrorStrictLower(bi blas.Implementation, n int, a []float64, lda int) {
	rowPassRun(bi, passMirror, true, n, n, a, lda, nil, 0, 1)
}

// halveMirrorStrictLower multiplies the strict lower triangle of the n×n
// matrix a by ½ and copies it into the strict upper triangle, by tiles.
func halveMirrorStrictLower(bi blas.Implementation, n int, a []float64, lda int) {
	rowPassRun(bi, passMirror, true, n, n, a, lda, nil, 0, 0.5)
}

// mirrorTileCols is the width of the tiles of mirrorStrictLowerRows: the
// rows of the upper triangle one tile writes at a time. With a power-of-two
// leading dimension those rows fall in one set of the L1 cache, so they
// must fit in its ways: 32 rows (rowTile) thrashed the 12-way L1 of a
// Zen 5 and took 14–19 ms at n = 2048; 8 take 5–6 (4 the same).
const mirrorTileCols = 8

// mirrorStrictLowerRows sets a[i][j] and a[j][i] to s·a[i][j] for rows
// [i0, i1) of the strict lower triangle (so it writes columns [i0, i1) of
// the strict upper triangle). s = 1 leaves the lower triangle as it is.
func mirrorStrictLowerRows(n int, s float64, a []float64, lda int, i0, i1 int) {
	for ib := i0; ib < i1; ib += rowTile {
		iEnd := min(ib+rowTile, i1, n)
		for jb := 0; jb < iEnd-1; jb += mirrorTileCols {
			for i := max(ib, jb+1); i < iEnd; i++ {
				for j := jb; j < min(jb+mirrorTileCols, i); j++ {
					v := s * a[i*lda+j]
					a[i*lda+j] = v
					a[j*lda+i] = v
				}
			}
		}
	}
}

// copyTriangle copies the lower triangle (diagonal included) of the n×n
// src into dst, leaving dst's strict upper triangle as it is.
func copyTriangle(bi blas.Implementation, n int, src []float64, lds int, dst []float64, ldd int) {
	rowPassRun(bi, passCopyTriangle, true, n, n, src, lds, dst, ldd, 0)
}

// copyTriangleRows is copyTriangle on rows [i0, i1).
func copyTriangleRows(src []float64, lds int, dst []float64, ldd int, i0, i1 int) {
	for i := i0; i < i1; i++ {
		copy(dst[i*ldd:i*ldd+i+1], src[i*lds:i*lds+i+1])
	}
}

// scaleRows multiplies rows [i0, i1) of the c-column matrix a by s.
func scaleRows(c int, s float64, a []float64, lda int, i0, i1 int) {
	for i := i0; i < i1; i++ {
		row := a[i*lda : i*lda+c]
		for j := range row {
			row[j] *= s
		}
	}
}

// formVZRows sets, on rows [i0, i1) of the c-column matrices w (on entry
// L22⁻ᵀ·W21) and u (on entry C22·L21), w to V = w − u and u to
// Z = ½·u + V.
func formVZRows(c int, w []float64, ldw int, u []float64, ldu int, i0, i1 int) {
	for i := i0; i < i1; i++ {
		wr := w[i*ldw : i*ldw+c]
		ur := u[i*ldu : i*ldu+c]
		for j := range wr {
			wr[j] -= ur[j]
			ur[j] = 0.5*ur[j] + wr[j]
		}
	}
}

// symUpdateRows sets W −= G + Gᵀ on rows [i0, i1) of the lower triangle of
// the n×n matrix w, by tiles so that the transposed reads of G stay in
// cache.
func symUpdateRows(n int, w []float64, ldw int, g []float64, ldg int, i0, i1 int) {
	for ib := i0; ib < i1; ib += rowTile {
		for jb := 0; jb <= ib; jb += rowTile {
			for i := ib; i < min(ib+rowTile, i1, n); i++ {
				for j := jb; j < min(jb+rowTile, i+1); j++ {
					w[i*ldw+j] = w[i*ldw+j] - g[i*ldg+j] - g[j*ldg+i]
				}
			}
		}
	}
}

// copyLower copies the lower triangle of the n×n matrix src into dst,
// zeroing dst's strict upper triangle, and returns the first NaN or
// infinite entry of src's lower triangle in row-major order (the copy
// stops there).
func copyLower(bi blas.Implementation, n int, src []float64, lds int, dst []float64, ldd int) nonFinite {
	parts := rowParts(bi, n, n*n)
	t := rowTasks.Get().(*rowTask)
	*t = rowTask{pass: passCopyLower, r: n, a: src, lda: lds, b: dst, ldb: ldd}
	runRows(t, n, parts, false)
	var bad nonFinite
	for p := 0; p < parts; p++ {
		if t.bad[p].found {
			bad = t.bad[p]
			break
		}
	}
	t.a, t.b = nil, nil
	rowTasks.Put(t)
	return bad
}

// copyLowerRows is copyLower on rows [i0, i1).
func copyLowerRows(n int, src []float64, lds int, dst []float64, ldd int, i0, i1 int) nonFinite {
	for i := i0; i < i1; i++ {
		s := src[i*lds : i*lds+i+1]
		d := dst[i*ldd : i*ldd+n]
		for j, v := range s {
			if v-v != 0 { // NaN or ±Inf
				return nonFinite{true, i, j, v}
			}
			d[j] = v
		}
		clear(d[i+1:])
	}
	return nonFinite{}
}
