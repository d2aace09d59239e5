package gp

import (
	"runtime"
	"sync"

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
)

// elemTask is one pass over an r×c row-major block, split into parts
// ranges.
type elemTask struct {
	pass        elemPass
	r, c, parts int
	dst, src    []float64
	v           []float64
	inc         int
	s           float64
}

var elemTasks = sync.Pool{New: func() any { return new(elemTask) }}

// Run performs the pass on the p-th range.
func (t *elemTask) Run(p int) {
	if t.pass == passColSumSq {
		n0, n1 := p*t.c/t.parts, (p+1)*t.c/t.parts
		colSumSqRange(t.dst, t.inc, t.s, t.r, t.c, t.src, n0, n1)
		return
	}
	i0, i1 := p*t.r/t.parts, (p+1)*t.r/t.parts
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
	span := t.r
	if t.pass == passColSumSq {
		span = t.c
	}
	parts := 1
	if t.r*t.c >= elemParMin {
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
