package patches

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/solvegp/solvegp/internal/parallel"
	"github.com/solvegp/solvegp/internal/vecmath"
)

// A copy plan. The patches of one image are partitioned into blocks:
// rectangles of patches whose taps are clipped by the padding in the same
// way (all interior patches form one block). The valid taps of a block are a
// nest of at most six equally spaced loops (channel, tap column, tap row,
// patch column, patch row, and the image of the batch), which are merged
// where they are contiguous in both the image and the patch matrix and then
// handed to the strided copy kernels of package internal/vecmath three levels at a time.

// dim is one loop of a copy nest: n iterations, advancing src elements in the
// image and dst elements in the patch matrix per iteration.
type dim struct{ n, img, col int }

// maxDims bounds the loops of a nest: three tap loops, patch columns, patch
// rows and images.
const maxDims = 6

// loopNest is a copy nest of (part of) a block: offsets of the first valid
// tap of the first patch, the contiguous run, and the loops around it,
// innermost first. It is a value type so building one does not allocate.
type loopNest struct {
	imgOff, colOff int
	run            int
	nd             int
	dims           [maxDims]dim
}

// block is a rectangle of patches with identical clipping.
type block struct {
	oh0, nh, ow0, nw int // patch rows [oh0, oh0+nh), columns [ow0, ow0+nw)
	clipped          bool
	empty            bool       // every tap of every patch lies in the padding
	fwd              loopNest   // Im2Col
	adj              []loopNest // Col2Im: patch columns in phases (see plan)
	taps             []dim      // tap loops, innermost first (for sub-rectangles)
	ow, oh           dim        // patch-column and patch-row loops
}

// push appends loop d (outer to every loop already in the nest), merging it
// into the run or the previous loop when contiguous in both the image and
// the patch matrix.
func (n *loopNest) push(d dim) {
	switch {
	case d.n == 1:
	case n.nd == 0 && d.img == n.run && d.col == n.run:
		n.run *= d.n
	case n.nd > 0 && d.img == n.dims[n.nd-1].n*n.dims[n.nd-1].img && d.col == n.dims[n.nd-1].n*n.dims[n.nd-1].col:
		n.dims[n.nd-1].n *= d.n
	default:
		n.dims[n.nd] = d
		n.nd++
	}
}

// tapRange returns the taps [k0, k1) of a patch whose first tap is at input
// coordinate origin that fall inside [0, size); k0 >= k1 if none do.
func tapRange(origin, taps, dilation, size int) (k0, k1 int) {
	if origin < 0 {
		k0 = (-origin + dilation - 1) / dilation
	}
	last := size - 1 - origin // largest offset from the origin inside the axis
	if last < 0 {
		return taps, 0
	}
	k1 = min(taps, last/dilation+1)
	return min(k0, taps), k1
}

// axisGroup is a run of consecutive patch positions along one axis with the
// same valid taps.
type axisGroup struct{ o0, n, k0, k1 int }

func axisGroups(out, stride, pad, taps, dilation, size int) []axisGroup {
	var gs []axisGroup
	for o := 0; o < out; o++ {
		k0, k1 := tapRange(o*stride-pad, taps, dilation, size)
		if k1 <= k0 {
			k0, k1 = 0, 0
		}
		if n := len(gs); n > 0 && gs[n-1].k0 == k0 && gs[n-1].k1 == k1 {
			gs[n-1].n++
			continue
		}
		gs = append(gs, axisGroup{o, 1, k0, k1})
	}
	return gs
}

// frame is an image as a copy plan sees it: its size, the padding before it
// (patch origins are shifted by it) and its strides in elements.
type frame struct {
	h, w, padT, padL int
	sh, sw, sc       int // strides along rows, columns and channels
	size             int // elements per image
}

func newFrame(l Layout, h, w, c, padT, padL int) frame {
	f := frame{h: h, w: w, padT: padT, padL: padL, size: h * w * c}
	if l == NHWC {
		f.sh, f.sw, f.sc = w*c, c, 1
	} else {
		f.sh, f.sw, f.sc = w, 1, h*w
	}
	return f
}

// setPadded selects the copy plan: over a zero-padded copy of each image
// (true) or over the image itself (false). Both give identical Im2Col
// results; New picks the faster one (tests force each).
func (g *Geometry) setPadded(padded bool) {
	padded = padded && g.padOK
	g.padded = padded
	g.overread = false
	if padded {
		g.blocks = g.plan(&g.pad)
	} else {
		g.blocks = g.directBlocks
	}
}

// makeNest merges the tap loops (innermost first) and the patch-column and
// patch-row loops into a nest.
func makeNest(imgOff, colOff int, taps []dim, ow, oh dim) loopNest {
	n := loopNest{imgOff: imgOff, colOff: colOff, run: 1}
	for _, d := range taps {
		n.push(d)
	}
	n.push(ow)
	n.push(oh)
	return n
}

// plan builds the copy blocks of one image of frame f.
func (g *Geometry) plan(f *frame) []block {
	c := &g.cfg
	rows := axisGroups(g.outH, c.StrideH, f.padT, c.PatchHeight, c.DilationH, f.h)
	cols := axisGroups(g.outW, c.StrideW, f.padL, c.PatchWidth, c.DilationW, f.w)
	var blocks []block
	for _, r := range rows {
		blocks = append(blocks, g.rowBlocks(f, r, cols)...)
	}
	return blocks
}

// rowBlocks returns the blocks of row group r, one per column group.
func (g *Geometry) rowBlocks(f *frame, r axisGroup, cols []axisGroup) []block {
	blocks := make([]block, 0, len(cols))
	for _, q := range cols {
		blocks = append(blocks, g.makeBlock(f, r, q))
	}
	return blocks
}

// makeBlock returns the block of the patches in row group r and column
// group q, whose taps [r.k0, r.k1) x [q.k0, q.k1) are read.
func (g *Geometry) makeBlock(f *frame, r, q axisGroup) block {
	c := &g.cfg
	b := block{oh0: r.o0, nh: r.n, ow0: q.o0, nw: q.n}
	b.clipped = r.k0 > 0 || r.k1 < c.PatchHeight || q.k0 > 0 || q.k1 < c.PatchWidth
	b.empty = r.k1 <= r.k0 || q.k1 <= q.k0
	if !b.empty {
		ih := r.o0*c.StrideH - f.padT + r.k0*c.DilationH
		iw := q.o0*c.StrideW - f.padL + q.k0*c.DilationW
		imgOff := ih*f.sh + iw*f.sw
		colOff := (r.o0*g.outW+q.o0)*g.patchLen + r.k0*g.colH + q.k0*g.colW
		kw := dim{q.k1 - q.k0, c.DilationW * f.sw, g.colW}
		kh := dim{r.k1 - r.k0, c.DilationH * f.sh, g.colH}
		ch := dim{c.Channels, f.sc, g.colC}
		taps := []dim{ch, kw, kh}
		if c.Columns == ColumnsCHW {
			taps = []dim{kw, kh, ch}
		}
		ow := dim{q.n, c.StrideW * f.sw, g.patchLen}
		oh := dim{r.n, c.StrideH * f.sh, g.outW * g.patchLen}
		b.fwd = makeNest(imgOff, colOff, taps, ow, oh)
		b.taps, b.ow, b.oh = taps, ow, oh
		// Col2Im: when the same tap of neighbouring patches
		// covers partly overlapping pixels (patch columns
		// closer than a run), accumulating patch after patch
		// makes each load wait for the previous, partly
		// overlapping store (no store-to-load forwarding).
		// Visiting the patch columns in P interleaved phases,
		// ow = p, p+P, p+2P, ..., makes consecutive runs of a
		// phase disjoint. It pays for small patches only: with
		// 64 or more values per patch the overlapping store has
		// long retired when the next patch reaches it, and the
		// phases' strided reads of the patch matrix cost more
		// (col2im of 5x5 RGB patches: 39 GB/s without phases,
		// 28 with; of 3x3 single-channel: 10 without, 23 with).
		tapRun := makeNest(0, 0, taps, dim{n: 1}, dim{n: 1}).run
		tapVolume := (r.k1 - r.k0) * (q.k1 - q.k0) * c.Channels
		phases := 1
		if ow.img < tapRun && tapVolume < 64 {
			phases = min((tapRun+ow.img-1)/ow.img, q.n)
		}
		for p := 0; p < phases; p++ {
			owp := dim{(q.n - p + phases - 1) / phases, phases * ow.img, phases * ow.col}
			b.adj = append(b.adj, makeNest(imgOff+p*ow.img, colOff+p*ow.col, taps, owp, oh))
		}
	}
	return b
}

// parallelMin is the patch-matrix size (elements) below which Im2Col and
// Col2Im stay on the calling goroutine: about 256 KiB, a few tens of
// microseconds of copying, well above the cost of starting goroutines.
const parallelMin = 1 << 15

// forImages calls fn on disjoint ranges of images [n0, n1) covering
// [0, batch), on up to Workers goroutines.
func (g *Geometry) forImages(batch int, fn func(n0, n1 int)) {
	if batch == 0 {
		return
	}
	w := min(g.cfg.Workers, batch)
	if batch*g.numPatches*g.patchLen < parallelMin {
		w = 1
	}
	if w <= 1 {
		fn(0, batch)
		return
	}
	parallel.Ranges(batch, w, func(_, n0, n1 int) { fn(n0, n1) })
}

// checkLens validates the batch size and the lengths of an image slice and
// a patch-matrix slice.
func (g *Geometry) checkLens(op string, batch, imgLen, colLen int) error {
	if batch < 0 {
		return fmt.Errorf("%w: %s: negative batch size %d", ErrShape, op, batch)
	}
	hi, wantImg := bits.Mul64(uint64(batch), uint64(g.imageLen))
	hi2, wantCol := bits.Mul64(uint64(batch), uint64(g.numPatches*g.patchLen))
	if hi != 0 || hi2 != 0 || wantImg > maxElems || wantCol > maxElems {
		return fmt.Errorf("%w: %s: batch size %d too large", ErrShape, op, batch)
	}
	if uint64(imgLen) != wantImg {
		return fmt.Errorf("%w: %s: image slice has %d values, want %d images x %d = %d", ErrShape, op, imgLen, batch, g.imageLen, wantImg)
	}
	if uint64(colLen) != wantCol {
		return fmt.Errorf("%w: %s: patch-matrix slice has %d values, want %d x %d patches x %d = %d", ErrShape, op, colLen, batch, g.numPatches, g.patchLen, wantCol)
	}
	return nil
}

// Im2Col writes the patch matrix of a batch of images: dst is a row-major
// (batch*NumPatches) x PatchLen matrix whose row n*NumPatches+p holds patch p
// (see Location) of image n, in the configured column order, with zeros for
// taps in the padding. src holds batch images in the configured layout.
// Values are copied bit for bit (NaN and Inf included). Patch matrices of 16
// MiB or more are written with non-temporal stores, which bypass the caches.
//
// It returns an error wrapping ErrShape if batch < 0, len(src) !=
// batch*ImageLen or len(dst) != batch*NumPatches*PatchLen.
func (g *Geometry) Im2Col(dst, src []float64, batch int) error {
	if err := g.checkLens("Im2Col", batch, len(src), len(dst)); err != nil {
		return err
	}
	colImage := g.numPatches * g.patchLen
	stream := batch*colImage >= streamMin
	g.forImages(batch, func(n0, n1 int) {
		if stream {
			g.im2colStream(dst, src, n0, n1)
			return
		}
		if !g.padded {
			g.im2colBlocks(dst[n0*colImage:n1*colImage], src[n0*g.imageLen:], g.imageLen, n1-n0)
			return
		}
		// The border of the padded copy stays zero; only its interior
		// is rewritten per image.
		// Its CopySlack extra values let the copies read past the image;
		// each image's patches may spill into the next one's (written
		// after them), and the last one's stay within dst[:n1*colImage].
		sp := getScratch(g.pad.size+vecmath.CopySlack, true)
		defer putScratch(sp)
		scratch := *sp
		for n := n0; n < n1; n++ {
			vecmath.CopyBlock(scratch[g.fillOff:], src[n*g.imageLen:(n+1)*g.imageLen], &g.fill)
			g.im2colBlocks(dst[n*colImage:n1*colImage], scratch, g.pad.size, 1)
		}
	})
	return nil
}

// Large patch matrices are written with non-temporal stores (vecmath.CopyStream),
// as the builtin copy does for large copies: cached stores would first read
// every destination line from memory. The patches are gathered a few hundred
// at a time into a scratch buffer that stays in the L2 cache, then streamed
// out. On the AMD Zen 4 (32 MiB L3) this was tuned on, streaming a 30 MiB
// patch matrix ran at 19.7 GB/s against 12.6 GB/s for cached stores, while
// patch matrices of 12 MiB and less, which stay in L3, were faster with
// cached stores. At batch 256 (30-160 MiB patch matrices) the streamed writes
// are the limit: 16 or 32 KiB chunks (in L1), one store fence per call instead
// of per chunk, and streaming the previous chunk from inside the gather
// kernel (non-temporal stores interleaved with the gather's) all measured no
// faster, the last 10-15% slower.
const (
	streamMin   = 1 << 21 // patch-matrix elements (16 MiB) from which to stream
	streamChunk = 1 << 14 // scratch elements (128 KiB) per streamed chunk
)

func (g *Geometry) im2colStream(dst, src []float64, n0, n1 int) {
	NP, PL := g.numPatches, g.patchLen
	// Chunks of whole patch rows where possible (one rectangle per image
	// in a chunk); a chunk may span images, so that the patch matrices of
	// small images are streamed in pieces of about streamChunk values too.
	rows := max(1, streamChunk/PL)
	if rows > g.outW {
		rows -= rows % g.outW
	}
	cp := getScratch(rows*PL+vecmath.CopySlack, false) // slack for CopyBlockSlack
	defer putScratch(cp)
	cols := *cp
	// With the padded plan, SAME and explicit padding become VALID on a
	// zero-padded copy of each image: one block, no clipped patches.
	blocks, f := g.directBlocks, &g.direct
	var scratch []float64
	if g.padded {
		sp := getScratch(g.pad.size+vecmath.CopySlack, true)
		defer putScratch(sp)
		scratch = *sp
		blocks, f = g.blocks, &g.pad
	}
	fill, start := 0, n0*NP // rows staged in cols; patch-matrix row of the first
	for n := n0; n < n1; n++ {
		img := src[n*g.imageLen:] // later images are slack for the copies' reads
		if g.padded {
			vecmath.CopyBlock(scratch[g.fillOff:], img[:g.imageLen], &g.fill)
			img = scratch
		}
		for lo := 0; lo < NP; {
			hi := min(NP, lo+rows-fill)
			g.im2colRangePlan(cols[fill*PL:], img, lo, hi, blocks, f)
			fill += hi - lo
			lo = hi
			if fill == rows {
				vecmath.CopyStream(dst[start*PL:(start+fill)*PL], cols[:fill*PL])
				start, fill = start+fill, 0
			}
		}
	}
	if fill > 0 {
		vecmath.CopyStream(dst[start*PL:(start+fill)*PL], cols[:fill*PL])
	}
}

// setOverread selects the over-read plan for Im2Col when it exists (and the
// direct plan otherwise); Col2Im keeps the direct plan.
func (g *Geometry) setOverread() {
	g.setPadded(false)
	g.overread = g.overreadBlocks != nil
}

// tiledPlan reports whether blocks is one unclipped block: then every nest
// writes the patch matrix of an image front to back, each run starting where
// the previous one ends, and a copy may spill past the end of a run into
// values that are written later (vecmath.CopyBlockSlack).
func tiledPlan(blocks []block) bool {
	return len(blocks) == 1 && !blocks[0].clipped && !blocks[0].empty
}

// im2colBlocks runs every block of the plan for count consecutive images of
// imgLen elements each. col may extend past the count patch matrices and img
// past the count images: with a tiled plan the copies then spill into them
// (into col values the caller rewrites later or does not need).
//
// With several blocks, the unclipped ones go first, with slack copies too:
// their runs come in increasing order in the patch matrix, so what a copy
// spills past a run lands in a later run of the block, in a later block
// (rewritten after) or in a clipped patch. Each block is copied for all
// images before the next, so a spill past an image's last unclipped block
// could reach the next image's first one, already written: the direct plan
// has a single unclipped block, and the over-read plan is refused where that
// can happen (slackWraps). The over-read plan's fixups then zero the taps
// its bands read from neighbouring rows, and the clipped blocks, which
// follow, clear their patches before writing their taps.
func (g *Geometry) im2colBlocks(col, img []float64, imgLen, count int) {
	colImage := g.numPatches * g.patchLen
	blocks, fix := g.blocks, []loopNest(nil)
	if g.overread {
		blocks, fix = g.overreadBlocks, g.overreadFix
	}
	if tiledPlan(blocks) && fix == nil {
		// All images but the last spill into the next image's patches;
		// the last spills past col[count*colImage] if col extends there.
		b := &blocks[0]
		if count > 1 {
			g.copyNest(img, col, imgLen, &b.fwd, count-1, gatherSlack)
		}
		last := count - 1
		g.copyNest(img[last*imgLen:], col[last*colImage:], imgLen, &b.fwd, 1, gatherSlack)
		return
	}
	col = col[:count*colImage]
	for bi := range blocks {
		if b := &blocks[bi]; !b.clipped {
			g.copyNest(img, col, imgLen, &b.fwd, count, gatherSlack)
		}
	}
	for fi := range fix {
		g.copyNest(zeros[:], col, 0, &fix[fi], count, gather)
	}
	for bi := range blocks {
		b := &blocks[bi]
		if !b.clipped {
			continue
		}
		clearPatches(col[(b.oh0*g.outW+b.ow0)*g.patchLen:], b.nw*g.patchLen, b.nh, g.outW*g.patchLen, count, colImage)
		if !b.empty {
			g.copyNest(img, col, imgLen, &b.fwd, count, gather)
		}
	}
}

// Col2Im writes the adjoint of Im2Col: dst (batch images in the configured
// layout) is overwritten with the sum, over every patch tap that reads a
// pixel, of the corresponding entry of the patch matrix src. Taps in the
// padding are dropped. For every x and y,
// <Im2Col(x), y> = <x, Col2Im(y)> up to rounding.
//
// Each pixel accumulates in a fixed order that depends only on the
// configuration, so results are bit-identical for any Workers and on every
// SIMD backend. It returns an error wrapping ErrShape if batch < 0,
// len(dst) != batch*ImageLen or len(src) != batch*NumPatches*PatchLen.
func (g *Geometry) Col2Im(dst, src []float64, batch int) error {
	return g.col2im(dst, src, batch, true)
}

// Col2ImAdd is Col2Im that adds to dst instead of overwriting it, for
// accumulating gradients.
func (g *Geometry) Col2ImAdd(dst, src []float64, batch int) error {
	return g.col2im(dst, src, batch, false)
}

func (g *Geometry) col2im(dst, src []float64, batch int, overwrite bool) error {
	op := "Col2ImAdd"
	if overwrite {
		op = "Col2Im"
	}
	if err := g.checkLens(op, batch, len(dst), len(src)); err != nil {
		return err
	}
	colImage := g.numPatches * g.patchLen
	g.forImages(batch, func(n0, n1 int) {
		if !g.padded {
			img := dst[n0*g.imageLen : n1*g.imageLen]
			if overwrite {
				clear(img)
			}
			g.col2imBlocks(img, src[n0*colImage:n1*colImage], g.imageLen, n1-n0)
			return
		}
		// Accumulate each image into a zeroed padded copy, then crop.
		sp := getScratch(g.pad.size, true)
		defer putScratch(sp)
		scratch := *sp
		crop := g.fill
		crop.SrcStride, crop.DstStride = g.fill.DstStride, g.fill.SrcStride
		for n := n0; n < n1; n++ {
			if n > n0 {
				clear(scratch)
			}
			g.col2imBlocks(scratch, src[n*colImage:(n+1)*colImage], g.pad.size, 1)
			img := dst[n*g.imageLen : (n+1)*g.imageLen]
			if overwrite {
				vecmath.CopyBlock(img, scratch[g.fillOff:], &crop)
			} else {
				vecmath.CopyBlockAdd(img, scratch[g.fillOff:], &crop)
			}
		}
	})
	return nil
}

// col2imBlocks accumulates every block of the plan for count consecutive
// images of imgLen elements each.
func (g *Geometry) col2imBlocks(img, col []float64, imgLen, count int) {
	for bi := range g.blocks {
		for ni := range g.blocks[bi].adj {
			g.copyNest(img, col, imgLen, &g.blocks[bi].adj[ni], count, scatterAdd)
		}
	}
}

// nestMode selects what a loop nest does.
type nestMode int

const (
	// gather copies from the images to the patch matrix (vecmath.CopyBlock).
	gather nestMode = iota
	// gatherSlack copies like gather with vecmath.CopyBlockSlack: the caller
	// guarantees that the vecmath.CopySlack values after each of the nest's
	// runs in the patch matrix (as far as the slice extends) are either
	// scratch or rewritten later by the same goroutine.
	gatherSlack
	// scatterAdd accumulates from the patch matrix into the images
	// (vecmath.CopyBlockAdd).
	scatterAdd
)

// copyNest runs loop nest ln for count images of imgLen elements starting at
// img and col.
func (g *Geometry) copyNest(img, col []float64, imgLen int, ln *loopNest, count int, mode nestMode) {
	n := *ln
	n.push(dim{count, imgLen, g.numPatches * g.patchLen})
	runNest(img, col, &n, mode)
}

// runNest executes a loop nest over img and col, handing the innermost three
// loops to one kernel call and looping over the others.
func runNest(img, col []float64, n *loopNest, mode nestMode) {
	nestLevel(img, col, n.imgOff, n.colOff, n.run, n.dims[:n.nd], mode)
}

func nestLevel(img, col []float64, imgOff, colOff, run int, dims []dim, mode nestMode) {
	if len(dims) == 4 && mode == gatherSlack {
		// One call for the fourth loop (for Im2Col of several images,
		// the images of the batch),
		// checked once.
		cg := vecmath.CopyGeom{Run: run}
		for k, d := range dims[:3] {
			cg.N[k], cg.SrcStride[k], cg.DstStride[k] = d.n, d.img, d.col
		}
		d := dims[3]
		vecmath.CopyBlockSlackN(col[colOff:], img[imgOff:], &cg, d.n, d.img, d.col)
		return
	}
	if len(dims) > 3 {
		d := dims[len(dims)-1]
		for i := 0; i < d.n; i++ {
			nestLevel(img, col, imgOff+i*d.img, colOff+i*d.col, run, dims[:len(dims)-1], mode)
		}
		return
	}
	cg := vecmath.CopyGeom{Run: run, N: [3]int{1, 1, 1}}
	var imgStride, colStride [3]int
	for k, d := range dims {
		cg.N[k], imgStride[k], colStride[k] = d.n, d.img, d.col
	}
	switch mode {
	case scatterAdd:
		cg.SrcStride, cg.DstStride = colStride, imgStride
		vecmath.CopyBlockAdd(img[imgOff:], col[colOff:], &cg)
	case gatherSlack:
		cg.SrcStride, cg.DstStride = imgStride, colStride
		vecmath.CopyBlockSlack(col[colOff:], img[imgOff:], &cg)
	default:
		cg.SrcStride, cg.DstStride = imgStride, colStride
		vecmath.CopyBlock(col[colOff:], img[imgOff:], &cg)
	}
}

// zeros is the source of clearPatches' copies (never written).
var zeros [4096]float64

// clearPatches zeroes a rectangle of patches in count patch matrices: rows
// runs of run values, ld apart, starting at col[0], col[imgStride], ... For
// short runs it is one call of the copy kernels (from zeros, with source
// strides 0) rather than a clear per run, which costs more than the zeroing
// itself when the runs are a few patches long (the clipped column of 3x3
// patches of 28x28 images: a call per patch).
func clearPatches(col []float64, run, rows, ld, count, imgStride int) {
	if run <= len(zeros) {
		vecmath.CopyBlock(col, zeros[:run], &vecmath.CopyGeom{Run: run, N: [3]int{rows, count, 1}, DstStride: [3]int{ld, imgStride, 0}})
		return
	}
	for n := 0; n < count; n++ {
		for r := 0; r < rows; r++ {
			off := n*imgStride + r*ld
			clear(col[off : off+run])
		}
	}
}

// scratchPool recycles the per-call scratch buffers (padded images, staged
// patch matrices, PackRows windows) so that steady-state calls do not
// allocate.
var scratchPool = sync.Pool{New: func() any { return new([]float64) }}

// getScratch returns a buffer of n values, zeroed if zero is true. Return
// it with putScratch.
func getScratch(n int, zero bool) *[]float64 {
	p := scratchPool.Get().(*[]float64)
	if cap(*p) < n {
		*p = make([]float64, n)
		return p
	}
	*p = (*p)[:n]
	if zero {
		clear(*p)
	}
	return p
}

func putScratch(p *[]float64) { scratchPool.Put(p) }
