package patches

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"

	"github.com/solvegp/solvegp/internal/vecmath"
)

// Layout is the memory layout of a batch of images.
type Layout int

const (
	// NHWC stores image n, row h, column w, channel c at
	// ((n*H+h)*W+w)*C+c: channels fastest (TensorFlow's default).
	NHWC Layout = iota
	// NCHW stores image n, channel c, row h, column w at
	// ((n*C+c)*H+h)*W+w: columns fastest (PyTorch's default).
	NCHW
)

// String returns "NHWC" or "NCHW".
func (l Layout) String() string {
	switch l {
	case NHWC:
		return "NHWC"
	case NCHW:
		return "NCHW"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// Padding selects how the border of an image is padded with zeros.
type Padding int

const (
	// Valid uses no padding: only patches that lie entirely inside the
	// image. The (dilated) patch must fit in the image.
	Valid Padding = iota
	// Same pads so that the output has ceil(in/stride) patches along each
	// axis, splitting the padding as TensorFlow does: the smaller half
	// before (top, left), the larger half after (bottom, right).
	Same
	// Explicit uses the PadTop, PadBottom, PadLeft and PadRight fields of
	// Config.
	Explicit
)

// String returns "VALID", "SAME" or "EXPLICIT".
func (p Padding) String() string {
	switch p {
	case Valid:
		return "VALID"
	case Same:
		return "SAME"
	case Explicit:
		return "EXPLICIT"
	}
	return fmt.Sprintf("Padding(%d)", int(p))
}

// ColumnOrder is the order of the values of one patch within its row of the
// patch matrix. Inducing patches of a convolutional GP must use the same order.
type ColumnOrder int

const (
	// ColumnsDefault is ColumnsHWC for NHWC images and ColumnsCHW for NCHW
	// images: the order in which patch values are most contiguous in memory.
	ColumnsDefault ColumnOrder = iota
	// ColumnsHWC orders a patch as (patch row, patch column, channel), the
	// channel fastest: column index (i*PatchWidth+j)*Channels+c.
	ColumnsHWC
	// ColumnsCHW orders a patch as (channel, patch row, patch column), the
	// patch column fastest: column index (c*PatchHeight+i)*PatchWidth+j.
	ColumnsCHW
)

// String returns "default", "HWC" or "CHW".
func (o ColumnOrder) String() string {
	switch o {
	case ColumnsDefault:
		return "default"
	case ColumnsHWC:
		return "HWC"
	case ColumnsCHW:
		return "CHW"
	}
	return fmt.Sprintf("ColumnOrder(%d)", int(o))
}

// Config describes the images of a batch and how patches are cut from them.
// Zero strides and dilations mean 1; zero Workers means runtime.GOMAXPROCS(0).
type Config struct {
	Height, Width, Channels int    // image size; all >= 1
	Layout                  Layout // memory layout of the images

	PatchHeight, PatchWidth int // patch size in taps; both >= 1
	StrideH, StrideW        int // distance between patch origins; 0 means 1
	DilationH, DilationW    int // distance between taps of a patch; 0 means 1

	Padding                              Padding // Valid, Same or Explicit
	PadTop, PadBottom, PadLeft, PadRight int     // zero rows/columns; Explicit only

	Columns ColumnOrder // column order of the patch matrix

	// Workers bounds the goroutines Im2Col and Col2Im use (they split the
	// batch by images). 0 means runtime.GOMAXPROCS(0); 1 is serial.
	Workers int
}

// maxElems bounds every size the package computes (elements per image,
// per patch matrix), far below overflow of int on 64-bit platforms and
// far above any image that fits in memory.
const maxElems = 1 << 46

// ErrConfig is wrapped by every error New and OutputSize return for an
// impossible or invalid configuration.
var ErrConfig = errors.New("patches: invalid configuration")

// ErrShape is wrapped by every error returned for slices of the wrong length
// or an invalid batch size.
var ErrShape = errors.New("patches: wrong shape")

func configErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
}

// OutputSize returns the number of patch positions along one axis of length
// in, for patches of the given size, stride and dilation (all >= 1), and the
// zero padding added before and after the axis. For Valid and Same padding,
// before and after must be 0; for Explicit they are the padding (>= 0) and
// are returned unchanged.
func OutputSize(in, patch, stride, dilation int, pad Padding, before, after int) (out, padBefore, padAfter int, err error) {
	switch {
	case in < 1:
		return 0, 0, 0, configErr("axis length %d < 1", in)
	case patch < 1:
		return 0, 0, 0, configErr("patch size %d < 1", patch)
	case stride < 1:
		return 0, 0, 0, configErr("stride %d < 1", stride)
	case dilation < 1:
		return 0, 0, 0, configErr("dilation %d < 1", dilation)
	case in > maxElems || patch > maxElems || stride > maxElems || dilation > maxElems:
		return 0, 0, 0, configErr("axis parameters too large (in %d, patch %d, stride %d, dilation %d)", in, patch, stride, dilation)
	}
	hi, lo := bits.Mul64(uint64(patch-1), uint64(dilation))
	if hi != 0 || lo >= maxElems {
		return 0, 0, 0, configErr("dilated patch extent overflows (patch %d, dilation %d)", patch, dilation)
	}
	extent := int(lo) + 1 // taps span (patch-1)*dilation+1 pixels
	switch pad {
	case Valid, Same:
		if before != 0 || after != 0 {
			return 0, 0, 0, configErr("explicit padding (%d, %d) given with %v padding", before, after, pad)
		}
	case Explicit:
		if before < 0 || after < 0 {
			return 0, 0, 0, configErr("negative padding (%d, %d)", before, after)
		}
		if before > maxElems || after > maxElems {
			return 0, 0, 0, configErr("padding (%d, %d) too large", before, after)
		}
	default:
		return 0, 0, 0, configErr("unknown padding %v", pad)
	}
	switch pad {
	case Valid:
		if extent > in {
			return 0, 0, 0, configErr("VALID padding: dilated patch extent %d exceeds axis length %d", extent, in)
		}
		return (in-extent)/stride + 1, 0, 0, nil
	case Same:
		out = (in + stride - 1) / stride
		total := (out-1)*stride + extent - in
		if total < 0 {
			total = 0
		}
		return out, total / 2, total - total/2, nil
	default:
		padded := in + before + after
		if extent > padded {
			return 0, 0, 0, configErr("dilated patch extent %d exceeds padded axis length %d", extent, padded)
		}
		return (padded-extent)/stride + 1, before, after, nil
	}
}

// Geometry is a validated patch configuration: output size, padding and the
// copy plan used by Im2Col and Col2Im. It is immutable and safe for
// concurrent use.
type Geometry struct {
	cfg        Config // normalized: strides, dilations, columns, workers set
	outH, outW int
	padT, padB int
	padL, padR int
	imageLen   int // elements per image
	patchLen   int // elements per patch (columns of the patch matrix)
	numPatches int // patches per image (rows of the patch matrix per image)
	extH, extW int // dilated patch extents

	// Strides of a patch row of the patch matrix along the tap row, tap
	// column and channel axes.
	colH, colW, colC int

	// The copy plan: either blocks over the image itself (padded false), or,
	// when padding would split the patches into many clipped blocks, one
	// block over a zero-padded copy of each image (padded true), filled by
	// fill from the image at offset fillOff of the padded copy.
	direct, pad  frame
	padOK        bool // the padded image's size is representable
	padded       bool
	blocks       []block
	directBlocks []block // the plan over the image itself (used by PackRows)
	// The over-read plan (overread.go), for Im2Col of unpadded copies
	// when overread is set: its blocks and the fixups that zero the
	// over-read taps.
	overread       bool
	overreadBlocks []block
	overreadFix    []loopNest
	fill           vecmath.CopyGeom
	fillOff        int
}

// New validates cfg and returns its Geometry. Every impossible configuration
// (non-positive sizes, negative strides, dilations or paddings, padding given
// without Explicit, a patch that does not fit, sizes that overflow, unknown
// enum values, negative Workers) is reported as an error wrapping ErrConfig.
func New(cfg Config) (*Geometry, error) {
	if cfg.Channels < 1 {
		return nil, configErr("channels %d < 1", cfg.Channels)
	}
	if cfg.Layout != NHWC && cfg.Layout != NCHW {
		return nil, configErr("unknown layout %v", cfg.Layout)
	}
	switch cfg.Columns {
	case ColumnsDefault:
		if cfg.Layout == NHWC {
			cfg.Columns = ColumnsHWC
		} else {
			cfg.Columns = ColumnsCHW
		}
	case ColumnsHWC, ColumnsCHW:
	default:
		return nil, configErr("unknown column order %v", cfg.Columns)
	}
	if cfg.Workers < 0 {
		return nil, configErr("workers %d < 0", cfg.Workers)
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	for _, p := range []*int{&cfg.StrideH, &cfg.StrideW, &cfg.DilationH, &cfg.DilationW} {
		if *p < 0 {
			return nil, configErr("negative stride or dilation in %+v", cfg)
		}
		if *p == 0 {
			*p = 1
		}
	}
	g := &Geometry{cfg: cfg}
	var err error
	g.outH, g.padT, g.padB, err = OutputSize(cfg.Height, cfg.PatchHeight, cfg.StrideH, cfg.DilationH, cfg.Padding, cfg.PadTop, cfg.PadBottom)
	if err != nil {
		return nil, fmt.Errorf("height axis: %w", err)
	}
	g.outW, g.padL, g.padR, err = OutputSize(cfg.Width, cfg.PatchWidth, cfg.StrideW, cfg.DilationW, cfg.Padding, cfg.PadLeft, cfg.PadRight)
	if err != nil {
		return nil, fmt.Errorf("width axis: %w", err)
	}
	var ok bool
	if g.imageLen, ok = mulSizes(cfg.Height, cfg.Width, cfg.Channels); !ok {
		return nil, configErr("image %dx%dx%d too large", cfg.Height, cfg.Width, cfg.Channels)
	}
	if g.patchLen, ok = mulSizes(cfg.PatchHeight, cfg.PatchWidth, cfg.Channels); !ok {
		return nil, configErr("patch %dx%dx%d too large", cfg.PatchHeight, cfg.PatchWidth, cfg.Channels)
	}
	if _, ok = mulSizes(g.outH, g.outW, g.patchLen); !ok {
		return nil, configErr("patch matrix of %dx%d patches of %d values too large", g.outH, g.outW, g.patchLen)
	}
	g.numPatches = g.outH * g.outW
	g.extH = (cfg.PatchHeight-1)*cfg.DilationH + 1
	g.extW = (cfg.PatchWidth-1)*cfg.DilationW + 1

	H, W, C := cfg.Height, cfg.Width, cfg.Channels
	PH, PW := cfg.PatchHeight, cfg.PatchWidth
	if cfg.Columns == ColumnsHWC {
		g.colH, g.colW, g.colC = PW*C, C, 1
	} else {
		g.colH, g.colW, g.colC = PW, 1, PH*PW
	}
	pH, pW := H+g.padT+g.padB, W+g.padL+g.padR
	_, g.padOK = mulSizes(pH, pW, C) // else only the direct plan is used
	g.direct = newFrame(cfg.Layout, H, W, C, g.padT, g.padL)
	if g.padOK {
		g.pad = newFrame(cfg.Layout, pH, pW, C, 0, 0)
		g.fillOff = g.padT*g.pad.sh + g.padL*g.pad.sw
		g.fill = vecmath.CopyGeom{Run: W * C, N: [3]int{H, 1, 1}, SrcStride: [3]int{W * C}, DstStride: [3]int{pW * C}}
		if cfg.Layout == NCHW {
			g.fill = vecmath.CopyGeom{Run: W, N: [3]int{H, C, 1}, SrcStride: [3]int{W, H * W}, DstStride: [3]int{pW, pH * pW}}
		}
	}
	g.directBlocks = g.plan(&g.direct)
	g.blocks = g.directBlocks
	// Padding a copy of each image costs a pass over the padded image and
	// a kernel call; the direct plan costs a kernel call per block and
	// writes clipped patches twice (zeros, then their valid taps). Only
	// the unclipped block may spill past short runs (see im2colBlocks): the
	// clipped blocks' runs of up to 4 values take two stores instead of
	// one, which makes each of their values about half as dear again. Pick
	// the cheaper, counting a kernel call as about 100 values copied. (3x3
	// stride-2 SAME patches of 28x28x1 images, GB/s per CPU second over
	// three runs: direct 17.9-20.5, padded 15.5-19.7; 3x3 stride-1 SAME,
	// with a clipped frame of 108 of the 784 patches: direct 18.5-23.2,
	// padded 24.9-26.4.) The over-read plan (overread.go) costs a call per
	// block and per fixup, the clipped blocks left, and the zeros of the
	// fixups. (Medians over 7-15 alternated runs on the Intel Xeon, GB/s
	// per CPU second: 3x3 stride-2 SAME on 28x28x1, over-read 17.7, direct
	// 16.2, padded 15.4; on 32x32x3, 12.9, 11.2, 12.1, and in NCHW 12.9,
	// 10.1, 10.3; 5x5 stride-2 SAME on 32x32x3, where the fixups clear
	// 75 values per patch row and the model picks padding, 14.1, 13.3,
	// 16.2.)
	direct := g.planCost(g.directBlocks, nil)
	padded := g.pad.size + 2*callCost
	if bl, fix, ok := g.overreadPlan(&g.direct); ok {
		g.overreadBlocks, g.overreadFix = bl, fix
	}
	overread := direct
	if g.overreadBlocks != nil {
		overread = g.planCost(g.overreadBlocks, g.overreadFix)
	}
	switch {
	case g.padOK && padded < min(direct, overread):
		g.setPadded(true)
	case overread < direct:
		g.setOverread()
	}
	return g, nil
}

// callCost is the cost model's price of a kernel call, in values copied.
const callCost = 100

// planCost estimates the extra cost, over copying every tap once, of
// copying the patches of one image with blocks and fixups, in values copied
// (see New).
func (g *Geometry) planCost(blocks []block, fix []loopNest) int {
	cost, clipped, maxRun := (len(blocks)+len(fix))*callCost, 0, 0
	for i := range blocks {
		if b := &blocks[i]; b.clipped {
			clipped += b.nh * b.nw * g.patchLen
		}
		if b := &blocks[i]; !b.empty {
			maxRun = max(maxRun, b.fwd.run)
		}
	}
	if maxRun <= 4 {
		cost += clipped / 2
	}
	// The fixups write their zeros with runs of a few values, as the
	// clipped blocks do.
	for i := range fix {
		n := fix[i].run
		for _, d := range fix[i].dims[:fix[i].nd] {
			n *= d.n
		}
		if fix[i].run <= 4 {
			n += n / 2
		}
		cost += n
	}
	return cost + clipped
}

// mulSizes returns a*b*c for positive a, b, c, and false if it exceeds
// maxElems.
func mulSizes(a, b, c int) (int, bool) {
	hi, ab := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || ab > maxElems {
		return 0, false
	}
	hi, abc := bits.Mul64(ab, uint64(c))
	if hi != 0 || abc > maxElems {
		return 0, false
	}
	return int(abc), true
}

// Config returns the configuration with defaults filled in: strides and
// dilations of 0 replaced by 1, ColumnsDefault by the layout's order and
// Workers 0 by GOMAXPROCS at the time of New. New(g.Config()) describes the
// same geometry. The padding of Same configurations is given by Pads.
func (g *Geometry) Config() Config { return g.cfg }

// OutHeight returns the number of patch rows (output feature-map height).
func (g *Geometry) OutHeight() int { return g.outH }

// OutWidth returns the number of patch columns (output feature-map width).
func (g *Geometry) OutWidth() int { return g.outW }

// NumPatches returns the number of patches per image, OutHeight*OutWidth:
// the rows of the patch matrix per image.
func (g *Geometry) NumPatches() int { return g.numPatches }

// PatchLen returns the number of values per patch,
// PatchHeight*PatchWidth*Channels: the columns of the patch matrix.
func (g *Geometry) PatchLen() int { return g.patchLen }

// ImageLen returns the number of values per image, Height*Width*Channels.
func (g *Geometry) ImageLen() int { return g.imageLen }

// Pads returns the zero padding on each side of the image.
func (g *Geometry) Pads() (top, bottom, left, right int) {
	return g.padT, g.padB, g.padL, g.padR
}

// Location returns the position of patch p (0 <= p < NumPatches) on the
// output grid: row p / OutWidth and column p % OutWidth. Patch p of image n
// is row n*NumPatches+p of the patch matrix. It panics if p is out of range.
func (g *Geometry) Location(p int) (row, col int) {
	if p < 0 || p >= g.numPatches {
		panic(fmt.Sprintf("patches: Location(%d) out of range [0, %d)", p, g.numPatches))
	}
	return p / g.outW, p % g.outW
}

// Origin returns the input-pixel coordinates of the top-left tap of patch p.
// They are negative for patches that start in the padding. It panics if p is
// out of range.
func (g *Geometry) Origin(p int) (row, col int) {
	r, c := g.Location(p)
	return r*g.cfg.StrideH - g.padT, c*g.cfg.StrideW - g.padL
}

// Center returns the input-pixel coordinates of the center of the taps of
// patch p (half-integers for even dilated extents). It panics if p is out of
// range.
func (g *Geometry) Center(p int) (row, col float64) {
	r, c := g.Origin(p)
	return float64(r) + float64(g.extH-1)/2, float64(c) + float64(g.extW-1)/2
}

// Locations returns the output-grid locations of all patches as a row-major
// NumPatches x 2 matrix of (row, column): the inputs of the location kernel
// of a TICK (translation-insensitive) convolutional kernel.
func (g *Geometry) Locations() []float64 {
	loc := make([]float64, 2*g.numPatches)
	for p := 0; p < g.numPatches; p++ {
		r, c := g.Location(p)
		loc[2*p], loc[2*p+1] = float64(r), float64(c)
	}
	return loc
}

// Centers returns the input-pixel centers of all patches (see Center) as a
// row-major NumPatches x 2 matrix of (row, column).
func (g *Geometry) Centers() []float64 {
	ctr := make([]float64, 2*g.numPatches)
	for p := 0; p < g.numPatches; p++ {
		ctr[2*p], ctr[2*p+1] = g.Center(p)
	}
	return ctr
}
