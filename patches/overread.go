package patches

import (
	"github.com/solvegp/solvegp/internal/vecmath"
)

// The over-read plan (Im2Col only). Where padding clips the patches at the
// left or right edge of the image but not at the top or bottom, a patch row
// of clipped patches can be copied as if it were unclipped: a tap left of
// column 0 of image row h reads the end of row h-1, and a tap right of the
// last column reads the start of row h+1 (in NHWC, and within a channel
// plane in NCHW), memory inside the image as long as h-1 and h+1 are rows of
// the image. Those values are then overwritten with zeros (the fixups). A
// whole band of patch rows becomes one unclipped block whose destination
// runs tile the patch matrix, which the slack copy kernels move with whole
// vector stores; with the usual direct plan the clipped columns split every
// patch row into three blocks and write the clipped patches twice (zeros,
// then their taps) with short copies. (3x3 stride-2 SAME patches of 28x28x1
// images, whose 13 of 14 patch rows are such a band: see New's cost model.)
//
// The plan applies to the forward copy only: Col2Im must not add the
// over-read taps to the neighbouring rows' pixels, so it keeps the blocks of
// the direct plan.

// overreadPlan returns the forward blocks and fixups of the over-read plan
// over frame f (the image itself), or ok false when no patch row qualifies
// or the configuration does not allow it.
func (g *Geometry) overreadPlan(f *frame) (blocks []block, fix []loopNest, ok bool) {
	c := &g.cfg
	if g.padL == 0 && g.padR == 0 || g.padL > f.w || g.padR > f.w || g.patchLen > len(zeros) {
		return nil, nil, false
	}
	rows := axisGroups(g.outH, c.StrideH, f.padT, c.PatchHeight, c.DilationH, f.h)
	cols := axisGroups(g.outW, c.StrideW, f.padL, c.PatchWidth, c.DilationW, f.w)
	left, right := false, false
	for _, q := range cols {
		if q.k1 <= q.k0 {
			return nil, nil, false // a patch column entirely in the padding
		}
		left = left || q.k0 > 0
		right = right || q.k1 < c.PatchWidth
	}
	if !left && !right {
		return nil, nil, false
	}
	// Patch row o reads image rows o*sH-padT .. o*sH-padT+extH-1; the
	// rows before the first and after the last must exist where the
	// taps over-read into them.
	qualifies := func(o int) bool {
		top := o*c.StrideH - f.padT
		bottom := top + g.extH - 1
		return (!left || top >= 1) && (!right || bottom <= f.h-2)
	}
	var split []axisGroup // row groups, with the qualifying bands split off
	var band []bool
	for _, r := range rows {
		unclipped := r.k0 == 0 && r.k1 == c.PatchHeight
		for o := r.o0; o < r.o0+r.n; {
			q := unclipped && qualifies(o)
			e := o + 1
			for e < r.o0+r.n && (unclipped && qualifies(e)) == q {
				e++
			}
			split = append(split, axisGroup{o, e - o, r.k0, r.k1})
			band = append(band, q)
			ok = ok || q
			o = e
		}
	}
	if !ok {
		return nil, nil, false
	}
	for i, r := range split {
		if !band[i] {
			blocks = append(blocks, g.rowBlocks(f, r, cols)...)
			continue
		}
		b := g.makeBlock(f, r, axisGroup{0, g.outW, 0, c.PatchWidth})
		blocks = append(blocks, b)
		for _, q := range cols {
			if q.k0 > 0 {
				fix = append(fix, g.zeroNest(r, q, 0, q.k0))
			}
			if q.k1 < c.PatchWidth {
				fix = append(fix, g.zeroNest(r, q, q.k1, c.PatchWidth))
			}
		}
	}
	if g.slackWraps(blocks) {
		return nil, nil, false
	}
	return blocks, fix, true
}

// slackWraps reports whether, with blocks, a slack copy could overwrite an
// image's values that were already final. im2colBlocks copies the unclipped
// blocks one after another, each for every image of the batch, and a slack
// copy may write up to vecmath.CopySlack values past a block's last run. If one
// unclipped block ends within that distance of the end of an image's patch
// matrix while another starts within it of the start, the first one's
// spill lands in the next image's values of the second, written before. The
// direct plan has at most one unclipped block; the over-read plan can have
// two such blocks (left clipping without top padding, for example, leaves the
// first patch row's unclipped block at the start and a band at the end), and
// is then not used.
func (g *Geometry) slackWraps(blocks []block) bool {
	colImage := g.numPatches * g.patchLen
	first, last := -1, -1
	for i := range blocks {
		b := &blocks[i]
		if b.clipped || b.empty {
			continue
		}
		start := (b.oh0*g.outW + b.ow0) * g.patchLen
		end := ((b.oh0+b.nh-1)*g.outW + b.ow0 + b.nw) * g.patchLen
		if start < vecmath.CopySlack && first < 0 {
			first = i
		}
		if colImage-end < vecmath.CopySlack {
			last = i
		}
	}
	return first >= 0 && last >= 0 && first != last
}

// zeroNest is the copy nest, from zeros, that clears tap columns [k0, k1)
// of the patches in row band r and column group q. Its source strides
// follow the patch layout within a patch and are 0 between patches, so
// that the cleared taps of a patch are read from zeros[:patchLen] and merge
// into runs exactly as they lie in the patch matrix.
func (g *Geometry) zeroNest(r, q axisGroup, k0, k1 int) loopNest {
	kw := dim{k1 - k0, g.colW, g.colW}
	kh := dim{g.cfg.PatchHeight, g.colH, g.colH}
	ch := dim{g.cfg.Channels, g.colC, g.colC}
	taps := []dim{ch, kw, kh}
	if g.cfg.Columns == ColumnsCHW {
		taps = []dim{kw, kh, ch}
	}
	ow := dim{q.n, 0, g.patchLen}
	oh := dim{r.n, 0, g.outW * g.patchLen}
	return makeNest(k0*g.colW, (r.o0*g.outW+q.o0)*g.patchLen+k0*g.colW, taps, ow, oh)
}
