package patches

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/internal/vecmath"
)

// PackedLen returns the length of the buffer PackRows fills for rows patch
// rows, kc columns and panels of w rows: ceil(rows/w)*w*kc, or math.MaxInt
// if that overflows int (no slice is that long).
func PackedLen(rows, kc, w int) int {
	if rows <= 0 || kc <= 0 || w <= 0 {
		return 0
	}
	panels := rows / w
	if rows%w != 0 {
		panels++
	}
	hi, pw := bits.Mul64(uint64(panels), uint64(w))
	if hi != 0 {
		return math.MaxInt
	}
	hi, n := bits.Mul64(pw, uint64(kc))
	if hi != 0 || n > math.MaxInt {
		return math.MaxInt
	}
	return int(n)
}

// PackRows writes a block of the patch matrix of a batch of images straight
// into the micro-panel format of the GEMM kernels of package blas, without
// materializing the patch matrix: rows [row0, row0+rows) (row n*NumPatches+p
// is patch p of image n, as in Im2Col) and columns [col0, col0+kc) are packed
// into ceil(rows/w) panels of w rows; in panel q, the value of block row
// q*w+i and block column j is at dst[q*w*kc + j*w + i], and rows past the
// end of the block are zero. This is the layout of blas.PackA (the patches as
// the A operand, mr = w) and of blas.PackB with trans (the patches as the
// transposed B operand, nr = w), so a kernel matrix between image patches
// and inducing patches can be formed block by block.
//
// Only the patches of the requested rows are gathered, one image at a time
// through a small scratch buffer; PackRows runs on the calling goroutine
// (GEMM drivers parallelize over blocks). It returns an error wrapping
// ErrShape if batch < 0, len(src) != batch*ImageLen, the row or column range
// is outside the patch matrix, w < 1 or len(dst) < PackedLen(rows, kc, w).
func (g *Geometry) PackRows(dst, src []float64, batch, row0, rows, col0, kc, w int) error {
	if err := g.checkLens("PackRows", batch, len(src), batch*g.numPatches*g.patchLen); err != nil {
		return err
	}
	total := batch * g.numPatches
	switch {
	case w < 1:
		return fmt.Errorf("%w: PackRows: panel width %d < 1", ErrShape, w)
	case row0 < 0 || rows < 0 || row0 > total || rows > total-row0:
		return fmt.Errorf("%w: PackRows: rows [%d, %d+%d) outside the %d rows of the patch matrix", ErrShape, row0, row0, rows, total)
	case col0 < 0 || kc < 0 || col0 > g.patchLen || kc > g.patchLen-col0:
		return fmt.Errorf("%w: PackRows: columns [%d, %d+%d) outside the %d columns of the patch matrix", ErrShape, col0, col0, kc, g.patchLen)
	case len(dst) < PackedLen(rows, kc, w):
		if PackedLen(rows, kc, w) == math.MaxInt {
			return fmt.Errorf("%w: PackRows: %d rows of %d columns in panels of %d rows: packed length overflows", ErrShape, rows, kc, w)
		}
		return fmt.Errorf("%w: PackRows: dst has %d values, want at least %d", ErrShape, len(dst), PackedLen(rows, kc, w))
	}
	if rows == 0 || kc == 0 {
		return nil
	}
	PL, NP := g.patchLen, g.numPatches
	// The window holds the rows carried over from the previous image (a
	// panel may span two images: fewer than w rows, and fewer than rows)
	// followed by this image's rows. CopySlack more values let the copies
	// spill past the rows. Its size grows with rows, not with w, which only
	// the length of dst bounds.
	wp := getScratch((min(w, rows)-1+min(NP, rows))*PL+vecmath.CopySlack, false)
	defer putScratch(wp)
	win := *wp
	carry := 0
	out := dst
	first, last := row0/NP, (row0+rows-1)/NP
	for n := first; n <= last; n++ {
		lo, hi := 0, NP
		if n == first {
			lo = row0 - n*NP
		}
		if n == last {
			hi = row0 + rows - n*NP
		}
		g.im2colRange(win[carry*PL:], src[n*g.imageLen:], lo, hi)
		avail := carry + hi - lo
		m := avail / w * w
		if n == last {
			m = avail
		}
		if m > 0 {
			blas.PackA(w, out, win[col0:], PL, false, m, kc)
			out = out[PackedLen(m, kc, w):]
		}
		carry = avail - m
		copy(win, win[m*PL:avail*PL])
	}
	return nil
}

// patchRect is a rectangle of patches: rows [oh0, oh0+nh), columns
// [ow0, ow0+nw).
type patchRect struct{ oh0, nh, ow0, nw int }

// im2colRange writes patches [lo, hi) of one image (patch p at row p-lo of
// col) using the plan over the image itself. img starts at the image and may
// extend past it (later images); col may extend past the hi-lo rows with
// scratch values that the copies may overwrite.
func (g *Geometry) im2colRange(col, img []float64, lo, hi int) {
	g.im2colRangePlan(col, img, lo, hi, g.directBlocks, &g.direct)
}

// im2colRangePlan writes patches [lo, hi) of one image of frame f (the image
// itself or its zero-padded copy) with the blocks of the plan over f. The
// copies may read past the image and overwrite values of col past row hi-lo,
// as far as the slices extend: the unclipped block goes first, with slack
// copies (see im2colBlocks), and the clipped blocks after it.
func (g *Geometry) im2colRangePlan(col, img []float64, lo, hi int, blocks []block, f *frame) {
	r0, c0 := lo/g.outW, lo%g.outW
	r1, c1 := hi/g.outW, hi%g.outW
	rects := []patchRect{{r0, 1, c0, c1 - c0}}
	if r1 > r0 {
		rects = []patchRect{{r0, 1, c0, g.outW - c0}, {r0 + 1, r1 - r0 - 1, 0, g.outW}, {r1, 1, 0, c1}}
	}
	for pass := 0; pass < 2; pass++ {
		for bi := range blocks {
			if b := &blocks[bi]; b.clipped == (pass == 1) {
				g.im2colRects(col, img, lo, b, rects, f)
			}
		}
	}
}

// im2colRects writes the patches of block b inside rects; the unclipped
// block with slack copies, the clipped ones cleared first.
func (g *Geometry) im2colRects(col, img []float64, lo int, b *block, rects []patchRect, f *frame) {
	mode := gatherSlack
	if b.clipped {
		mode = gather
	}
	c := &g.cfg
	for _, r := range rects {
		oh0, oh1 := max(r.oh0, b.oh0), min(r.oh0+r.nh, b.oh0+b.nh)
		ow0, ow1 := max(r.ow0, b.ow0), min(r.ow0+r.nw, b.ow0+b.nw)
		if oh0 >= oh1 || ow0 >= ow1 {
			continue
		}
		base := (oh0*g.outW + ow0 - lo) * g.patchLen
		if b.clipped {
			clearPatches(col[base:], (ow1-ow0)*g.patchLen, oh1-oh0, g.outW*g.patchLen, 1, 0)
		}
		if b.empty {
			continue
		}
		imgOff := b.fwd.imgOff + (oh0-b.oh0)*c.StrideH*f.sh + (ow0-b.ow0)*c.StrideW*f.sw
		// b.fwd.colOff is the block's first patch plus the offset of its
		// first valid tap within a patch.
		colOff := base + b.fwd.colOff - (b.oh0*g.outW+b.ow0)*g.patchLen
		ln := makeNest(imgOff, colOff, b.taps, dim{ow1 - ow0, b.ow.img, b.ow.col}, dim{oh1 - oh0, b.oh.img, b.oh.col})
		runNest(img, col, &ln, mode)
	}
}
