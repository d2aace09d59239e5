package vecmath

import "fmt"

// CopyGeom describes a strided block of contiguous runs: up to three nested
// levels of equally spaced runs, each run Run consecutive float64 values.
//
// Level 0 is the innermost. The run with level indices (i0, i1, i2) starts at
//
//	src offset i0*SrcStride[0] + i1*SrcStride[1] + i2*SrcStride[2]
//	dst offset i0*DstStride[0] + i1*DstStride[1] + i2*DstStride[2]
//
// for 0 <= ik < N[k]. Runs are processed in lexicographic order of (i2, i1, i0)
// and, within a run, in increasing address order. Strides are in elements and
// must be non-negative; they may be smaller than Run (overlapping runs).
type CopyGeom struct {
	Run       int    // elements per contiguous run
	N         [3]int // number of runs at each level, innermost first
	SrcStride [3]int // source stride between runs at each level, in elements
	DstStride [3]int // destination stride between runs at each level, in elements
}

// CopyContiguous returns the geometry that writes runs back to back in dst:
// DstStride = (Run, N[0]*Run, N[0]*N[1]*Run). n and srcStride are innermost first.
func CopyContiguous(run int, n, srcStride [3]int) CopyGeom {
	return CopyGeom{
		Run:       run,
		N:         n,
		SrcStride: srcStride,
		DstStride: [3]int{run, n[0] * run, n[0] * n[1] * run},
	}
}

// copySpan returns one past the largest element offset touched through the
// given strides, or 0 if the block is empty.
func copySpan(g *CopyGeom, stride *[3]int) int {
	if g.Run == 0 || g.N[0] == 0 || g.N[1] == 0 || g.N[2] == 0 {
		return 0
	}
	return (g.N[0]-1)*stride[0] + (g.N[1]-1)*stride[1] + (g.N[2]-1)*stride[2] + g.Run
}

// copyCheck validates g against the slice lengths and reports whether there is
// anything to do. It panics, like the BLAS entry points of gonum, on invalid
// arguments: these kernels are internal building blocks whose callers have
// already validated user input.
func copyCheck(name string, g *CopyGeom, ldst, lsrc int) bool {
	if g.Run < 0 || g.N[0] < 0 || g.N[1] < 0 || g.N[2] < 0 {
		panic(fmt.Sprintf("vecmath: %s: negative count in %+v", name, *g))
	}
	for k := 0; k < 3; k++ {
		if g.SrcStride[k] < 0 || g.DstStride[k] < 0 {
			panic(fmt.Sprintf("vecmath: %s: negative stride in %+v", name, *g))
		}
	}
	if n := copySpan(g, &g.SrcStride); n > lsrc {
		panic(fmt.Sprintf("vecmath: %s: src too short: need %d, have %d", name, n, lsrc))
	}
	n := copySpan(g, &g.DstStride)
	if n > ldst {
		panic(fmt.Sprintf("vecmath: %s: dst too short: need %d, have %d", name, n, ldst))
	}
	return n > 0
}

// copyBlockGeneric is the pure-Go reference for CopyBlock. It is always
// compiled and is the oracle the SIMD kernels are tested against.
func copyBlockGeneric(dst, src []float64, g *CopyGeom) {
	run := g.Run
	for i2 := 0; i2 < g.N[2]; i2++ {
		s2, d2 := i2*g.SrcStride[2], i2*g.DstStride[2]
		for i1 := 0; i1 < g.N[1]; i1++ {
			s1, d1 := s2+i1*g.SrcStride[1], d2+i1*g.DstStride[1]
			for i0 := 0; i0 < g.N[0]; i0++ {
				s, d := s1+i0*g.SrcStride[0], d1+i0*g.DstStride[0]
				copy(dst[d:d+run], src[s:s+run])
			}
		}
	}
}

// copyBlockAddGeneric is the pure-Go reference for CopyBlockAdd.
func copyBlockAddGeneric(dst, src []float64, g *CopyGeom) {
	run := g.Run
	for i2 := 0; i2 < g.N[2]; i2++ {
		s2, d2 := i2*g.SrcStride[2], i2*g.DstStride[2]
		for i1 := 0; i1 < g.N[1]; i1++ {
			s1, d1 := s2+i1*g.SrcStride[1], d2+i1*g.DstStride[1]
			for i0 := 0; i0 < g.N[0]; i0++ {
				s, d := s1+i0*g.SrcStride[0], d1+i0*g.DstStride[0]
				ds := dst[d : d+run]
				for t, v := range src[s : s+run] {
					ds[t] += v
				}
			}
		}
	}
}

// CopyBlock copies the runs described by g from src to dst:
// dst[dstOffset(run)+t] = src[srcOffset(run)+t]. Runs are written in the
// documented order, so where destination runs overlap the later run wins.
// dst and src must not overlap. It panics if g has negative counts or
// strides or if either slice is too short.
func CopyBlock(dst, src []float64, g *CopyGeom) {
	if !copyCheck("CopyBlock", g, len(dst), len(src)) {
		return
	}
	copyBlockImpl(dst, src, g)
}

// CopyBlockAdd accumulates the runs described by g from src into dst:
// dst[dstOffset(run)+t] += src[srcOffset(run)+t], one floating-point addition
// per element, runs in the documented order. Destination runs may overlap
// (for example overlapping image patches); overlapping elements accumulate in
// run order, so the result is bit-identical across backends. It panics if g
// has negative counts or strides or if either slice is too short.
func CopyBlockAdd(dst, src []float64, g *CopyGeom) {
	if !copyCheck("CopyBlockAdd", g, len(dst), len(src)) {
		return
	}
	copyBlockAddImpl(dst, src, g)
}

// CopySlack is the number of values CopyBlockSlack may read past the end of
// the source span of a block and write past the end of its destination span.
const CopySlack = 8

// copyIncreasing reports whether g visits its destination runs in increasing
// address order without overlap: each run starts at or after the end of the
// run before it (tiled runs, or runs with gaps between them).
func copyIncreasing(g *CopyGeom) bool {
	ext := g.Run // destination extent of one iteration of level k
	for k := 0; k < 3; k++ {
		if g.N[k] > 1 {
			if g.DstStride[k] < ext {
				return false
			}
			ext += (g.N[k] - 1) * g.DstStride[k]
		}
	}
	return true
}

// CopyBlockSlack is CopyBlock for blocks of short runs whose destination runs
// come in increasing address order, each starting at or after the end of the
// previous one: runs that tile dst (such as the patch rows of consecutive
// image patches) or runs with gaps between them (the patches of a rectangle
// that is part of a wider patch matrix). When both slices extend at least
// CopySlack values past the spans of the block, the SIMD backends move each
// run with whole vectors and no tail handling: they may read up to CopySlack
// values past each source run and may overwrite, with unspecified values, up
// to CopySlack values after the end of each destination run (in the gap
// after it, in a later run, which is written after, or past the destination
// span), and nothing else. The values of the runs are exactly those of
// CopyBlock.
// Blocks whose destination runs are not in increasing order, or slices
// without the slack, are copied by CopyBlock.
//
// It panics if g has negative counts or strides or if either slice is too
// short for the block itself.
func CopyBlockSlack(dst, src []float64, g *CopyGeom) {
	if !copyCheck("CopyBlockSlack", g, len(dst), len(src)) {
		return
	}
	if len(src) < copySpan(g, &g.SrcStride)+CopySlack || len(dst) < copySpan(g, &g.DstStride)+CopySlack || !copyIncreasing(g) {
		copyBlockImpl(dst, src, g)
		return
	}
	copyBlockSlackImpl(dst, src, g)
}

// CopyBlockSlackN is count calls of CopyBlockSlack with the same geometry,
// call i on dst[i*dstStep:] and src[i*srcStep:], with the slices checked
// once: the blocks of a batch of images, for example. The blocks' runs are
// written in increasing address order when each block's runs are and
// dstStep is at least the destination span of a block; then, as in
// CopyBlockSlack, up to CopySlack values after the end of each run may be
// overwritten: in the block, in the gap before the next block or in the next
// block's first values (which are written after), and past the last block's
// span if dst extends there.
// Otherwise the blocks are copied one by one: by CopyBlockSlack, or, where
// they overlap, exactly as by CopyBlock (later blocks win where runs
// overlap; earlier blocks' runs in the gaps of later ones are kept).
//
// It panics if count, srcStep or dstStep is negative, if g has negative
// counts or strides, or if either slice is too short for the blocks.
func CopyBlockSlackN(dst, src []float64, g *CopyGeom, count, srcStep, dstStep int) {
	if count < 0 || srcStep < 0 || dstStep < 0 {
		panic(fmt.Sprintf("vecmath: CopyBlockSlackN: negative count or step (%d, %d, %d)", count, srcStep, dstStep))
	}
	if count == 0 {
		return
	}
	last := count - 1
	if !copyCheck("CopyBlockSlackN", g, len(dst)-min(len(dst), last*dstStep), len(src)-min(len(src), last*srcStep)) {
		return
	}
	ns, nd := copySpan(g, &g.SrcStride), copySpan(g, &g.DstStride)
	switch {
	case count > 1 && dstStep < nd:
		// Overlapping blocks: exact copies, so that the slack of a
		// block cannot overwrite an earlier block's runs in its gaps.
		for i := 0; i < count; i++ {
			copyBlockImpl(dst[i*dstStep:], src[i*srcStep:], g)
		}
		return
	case len(src)-last*srcStep < ns+CopySlack || len(dst)-last*dstStep < nd+CopySlack || !copyIncreasing(g):
		for i := 0; i < count; i++ {
			CopyBlockSlack(dst[i*dstStep:], src[i*srcStep:], g)
		}
		return
	}
	for i := 0; i < count; i++ {
		copyBlockSlackImpl(dst[i*dstStep:], src[i*srcStep:], g)
	}
}

// CopyStream copies min(len(dst), len(src)) values from src to dst, like the
// builtin copy, but with non-temporal (cache-bypassing) stores where the
// backend has them (amd64), and returns the number copied. Use it for large
// outputs that will not be read again soon; the slices must not overlap.
func CopyStream(dst, src []float64) int {
	n := min(len(dst), len(src))
	if n > 0 {
		copyStreamImpl(dst[:n], src[:n])
	}
	return n
}

// CopyBackend names the copy kernel implementation chosen for this process:
// "avx512", "avx2", "neon" or "generic".
func CopyBackend() string { return copyBackend }

// copyImpl is one backend of the copy kernels; tests run every backend the
// CPU supports against the generic one.
type copyImpl struct {
	name   string
	block  func(dst, src []float64, g *CopyGeom)
	slack  func(dst, src []float64, g *CopyGeom) // CopyBlockSlack
	add    func(dst, src []float64, g *CopyGeom)
	stream func(dst, src []float64) // len(dst) == len(src) > 0
}

func copyStreamGeneric(dst, src []float64) { copy(dst, src) }

var copyGenericImpl = copyImpl{"generic", copyBlockGeneric, copyBlockGeneric, copyBlockAddGeneric, copyStreamGeneric}
