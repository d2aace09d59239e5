//go:build !purego && !noasm

package vecmath

import "golang.org/x/sys/cpu"

// copyBlockAVX2 copies a block of runs (AVX2, copy_avx2_amd64.s).
// It computes copyBlockGeneric's Go loop, bit for bit
// (TestCopyBlockBackends).
//
//go:noescape
func copyBlockAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copyBlockAddAVX2 accumulates a block of runs (AVX2, copy_avx2_amd64.s).
// It computes copyBlockAddGeneric's Go loop, bit for bit
// (TestCopyBlockBackends).
//
//go:noescape
func copyBlockAddAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copyBlockShortAVX2 copies a block of runs of 4 to 8 elements (AVX2,
// copy_avx2_amd64.s).
// It computes copyBlockGeneric's Go loop, bit for bit
// (TestCopyBlockBackends).
//
//go:noescape
func copyBlockShortAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copyBlockTinyAVX2 copies a block of runs of 2 to 4 elements (AVX2,
// copy_avx2_amd64.s).
// It computes copyBlockGeneric's Go loop, bit for bit
// (TestCopyBlockBackends).
//
//go:noescape
func copyBlockTinyAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copyBlockMediumAVX2 copies a block of runs of 8 to 16 elements (AVX2,
// copy_avx2_amd64.s).
// It computes copyBlockGeneric's Go loop, bit for bit
// (TestCopyBlockBackends).
//
//go:noescape
func copyBlockMediumAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copyBlockMediumAVX512 copies a block of runs of 8 to 16 elements
// (AVX-512F, copy_avx512_amd64.s).
// It computes copyBlockGeneric's Go loop, bit for bit
// (TestCopyBlockBackends).
//
//go:noescape
func copyBlockMediumAVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copyBlockShortAVX512 copies a block of runs of 1 to 8 elements (AVX-512F,
// copy_avx512_amd64.s).
// It computes copyBlockGeneric's Go loop, bit for bit
// (TestCopyBlockBackends).
//
//go:noescape
func copyBlockShortAVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copyBlockAddShortAVX2 accumulates a block of runs of 1 to 7 elements
// (AVX2, copy_avx2_amd64.s).
// It computes copyBlockAddGeneric's Go loop, bit for bit
// (TestCopyBlockBackends).
//
//go:noescape
func copyBlockAddShortAVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copyBlockAVX512 copies a block of runs (AVX-512F, copy_avx512_amd64.s).
// It computes copyBlockGeneric's Go loop, bit for bit
// (TestCopyBlockBackends).
//
//go:noescape
func copyBlockAVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copyBlockAddAVX512 accumulates a block of runs (AVX-512F, copy_avx512_amd64.s).
// It computes copyBlockAddGeneric's Go loop, bit for bit
// (TestCopyBlockBackends).
//
//go:noescape
func copyBlockAddAVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copySlack1AVX2 copies a tiled block of runs of at most 4 elements, one YMM each, with slack
// (copy_slack_amd64.s).
// It computes copyBlockGeneric's Go loop on the block, bit for bit
// (TestCopyBlockSlackBackends).
//
//go:noescape
func copySlack1AVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copySlack2AVX2 copies a tiled block of runs of at most 8 elements, two YMM each, with slack
// (copy_slack_amd64.s).
// It computes copyBlockGeneric's Go loop on the block, bit for bit
// (TestCopyBlockSlackBackends).
//
//go:noescape
func copySlack2AVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copySlack3AVX2 copies a tiled block of runs of at most 12 elements, three YMM each, with slack
// (copy_slack_amd64.s).
// It computes copyBlockGeneric's Go loop on the block, bit for bit
// (TestCopyBlockSlackBackends).
//
//go:noescape
func copySlack3AVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copySlack4AVX2 copies a tiled block of runs of at most 16 elements, four YMM each, with slack
// (copy_slack_amd64.s).
// It computes copyBlockGeneric's Go loop on the block, bit for bit
// (TestCopyBlockSlackBackends).
//
//go:noescape
func copySlack4AVX2(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copySlack1AVX512 copies a tiled block of runs of at most 8 elements, one ZMM each, with slack
// (copy_slack_amd64.s).
// It computes copyBlockGeneric's Go loop on the block, bit for bit
// (TestCopyBlockSlackBackends).
//
//go:noescape
func copySlack1AVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copySlack2AVX512 copies a tiled block of runs of at most 16 elements, two ZMM each, with slack
// (copy_slack_amd64.s).
// It computes copyBlockGeneric's Go loop on the block, bit for bit
// (TestCopyBlockSlackBackends).
//
//go:noescape
func copySlack2AVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copyTiled3AVX512 copies a block of 3-element runs that tile the
// destination, eight runs per three ZMM stores (copytiled_avx512_amd64.s).
// It computes copyBlockGeneric's Go loop on the block, bit for bit
// (TestCopyBlockSlackBackends).
//
//go:noescape
func copyTiled3AVX512(dst, src *float64, run, n0, n1, n2, s0, s1, s2, d0, d1, d2 int)

// copyDstTiled2 reports whether the destination runs of g tile one
// contiguous span within each iteration of level 2: levels 0 and 1, where
// they iterate more than once, advance by the extent of the levels inside
// them.
func copyDstTiled2(g *CopyGeom) bool {
	return (g.N[0] == 1 || g.DstStride[0] == g.Run) && (g.N[1] == 1 || g.DstStride[1] == g.Run*g.N[0])
}

// copySlackAVX2Dispatch picks the AVX2 slack kernel for runs of up to 16
// elements: whole YMM vectors per run, no tail.
func copySlackAVX2Dispatch(dst, src []float64, g *CopyGeom) {
	switch {
	case g.Run <= 4:
		copyCall(copySlack1AVX2, dst, src, g)
	case g.Run <= 8:
		copyCall(copySlack2AVX2, dst, src, g)
	case g.Run <= 12:
		copyCall(copySlack3AVX2, dst, src, g)
	case g.Run <= 16:
		copyCall(copySlack4AVX2, dst, src, g)
	default:
		copyBlockAVX2Dispatch(dst, src, g)
	}
}

// copySlackAVX512Dispatch picks the slack kernel on AVX-512 machines. Runs
// of up to 4 elements use one YMM, not one ZMM: im2col of 3x3
// single-channel patches (runs of 3) ran at 48 GB/s per CPU second with YMM
// and 26 with ZMM on the AMD Zen 4 this was tuned on. Runs of 9 to 12 use
// three YMM (as fast as two ZMM). Runs of 3 that tile the destination
// within level 2 (3x3 single-channel patches) are merged eight at a time
// into full ZMM stores: on the Intel Xeon (Emerald Rapids) the YMM kernel's
// overlapping stores ran at about half of copy's bandwidth with the patch
// matrix in L2.
func copySlackAVX512Dispatch(dst, src []float64, g *CopyGeom) {
	switch {
	case g.Run == 3 && g.N[0]*g.N[1] >= 8 && copyDstTiled2(g):
		// The kernel steps through levels 0 and 1 contiguously and adds
		// the level-2 carry after them, so that carry must come from
		// the contiguous strides even where a single-iteration level's
		// stride says otherwise.
		t := *g
		t.DstStride[0], t.DstStride[1] = 3, 3*t.N[0]
		copyCall(copyTiled3AVX512, dst, src, &t)
	case g.Run <= 4:
		copyCall(copySlack1AVX2, dst, src, g)
	case g.Run <= 8:
		copyCall(copySlack1AVX512, dst, src, g)
	case g.Run <= 12:
		copyCall(copySlack3AVX2, dst, src, g)
	case g.Run <= 16:
		copyCall(copySlack2AVX512, dst, src, g)
	default:
		copyBlockAVX512Dispatch(dst, src, g)
	}
}

// copyBlockAVX2Dispatch picks the AVX2 copy kernel for the run length:
// overlapping fixed-size copies for short runs (no per-run branches), the
// chunked loop otherwise.
func copyBlockAVX2Dispatch(dst, src []float64, g *CopyGeom) {
	switch {
	case g.Run >= 2 && g.Run < 4:
		copyCall(copyBlockTinyAVX2, dst, src, g)
	case g.Run >= 4 && g.Run < 8:
		copyCall(copyBlockShortAVX2, dst, src, g)
	case g.Run >= 8 && g.Run <= 16:
		copyCall(copyBlockMediumAVX2, dst, src, g)
	default:
		copyCall(copyBlockAVX2, dst, src, g)
	}
}

// copyBlockAVX512Dispatch picks the AVX-512 copy kernel for the run length.
// Runs of 2 to 7 elements use the AVX2 (VEX) kernels: on the AMD Zen 4 this
// was tuned on, two overlapping unmasked XMM/YMM copies beat one masked ZMM
// copy (measured 37 vs 24 GB/s per CPU second for 3-element runs).
func copyBlockAVX512Dispatch(dst, src []float64, g *CopyGeom) {
	switch {
	case g.Run >= 2 && g.Run < 8:
		copyBlockAVX2Dispatch(dst, src, g)
	case g.Run >= 8 && g.Run <= 16:
		copyCall(copyBlockMediumAVX512, dst, src, g)
	case g.Run < 8:
		copyCall(copyBlockShortAVX512, dst, src, g)
	default:
		copyCall(copyBlockAVX512, dst, src, g)
	}
}

// copyBlockAddAVX2Dispatch picks the AVX2 accumulation kernel for the run
// length.
func copyBlockAddAVX2Dispatch(dst, src []float64, g *CopyGeom) {
	if g.Run < 8 {
		copyCall(copyBlockAddShortAVX2, dst, src, g)
	} else {
		copyCall(copyBlockAddAVX2, dst, src, g)
	}
}

// copyBlockAddAVX512Dispatch picks the AVX-512 accumulation kernel. Runs
// shorter than a ZMM use the AVX2 kernel: a masked 8-wide load overlapping
// the bytes of an earlier masked store to neighbouring pixels cannot be
// forwarded from it (the masks are not considered) and stalls; col2im of 3x3
// single-channel patches ran at 7.7 GB/s per CPU second with masked ZMM.
func copyBlockAddAVX512Dispatch(dst, src []float64, g *CopyGeom) {
	if g.Run < 8 {
		copyCall(copyBlockAddShortAVX2, dst, src, g)
	} else {
		copyCall(copyBlockAddAVX512, dst, src, g)
	}
}

var (
	copyAVX2Impl   = copyImpl{"avx2", copyBlockAVX2Dispatch, copySlackAVX2Dispatch, copyBlockAddAVX2Dispatch, copyStreamAVX2Call}
	copyAVX512Impl = copyImpl{"avx512", copyBlockAVX512Dispatch, copySlackAVX512Dispatch, copyBlockAddAVX512Dispatch, copyStreamAVX2Call}
)

// copyImpls lists every backend this CPU can run, generic first.
var copyImpls = func() []copyImpl {
	impls := []copyImpl{copyGenericImpl}
	if cpu.X86.HasAVX2 {
		impls = append(impls, copyAVX2Impl)
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX2 { // the AVX-512 backend reuses AVX2 kernels
		impls = append(impls, copyAVX512Impl)
	}
	return impls
}()

// copyLevel is the backend used by CopyBlock, CopyBlockAdd and CopyStream:
// the widest in copyImpls (2 AVX-512, 1 AVX2, 0 generic). GODEBUG=
// cpu.avx512f=off or cpu.avx2=off (honoured by golang.org/x/sys/cpu) removes
// entries. The entry points switch on it with direct calls, rather than
// calling through copyImpls' function values, so that the *CopyGeom
// arguments do not escape and calls do not allocate.
var copyLevel = len(copyImpls) - 1

var copyBackend = copyImpls[copyLevel].name

func copyBlockImpl(dst, src []float64, g *CopyGeom) {
	switch copyLevel {
	case 2:
		copyBlockAVX512Dispatch(dst, src, g)
	case 1:
		copyBlockAVX2Dispatch(dst, src, g)
	default:
		copyBlockGeneric(dst, src, g)
	}
}

func copyBlockSlackImpl(dst, src []float64, g *CopyGeom) {
	switch copyLevel {
	case 2:
		copySlackAVX512Dispatch(dst, src, g)
	case 1:
		copySlackAVX2Dispatch(dst, src, g)
	default:
		copyBlockGeneric(dst, src, g)
	}
}

func copyBlockAddImpl(dst, src []float64, g *CopyGeom) {
	switch copyLevel {
	case 2:
		copyBlockAddAVX512Dispatch(dst, src, g)
	case 1:
		copyBlockAddAVX2Dispatch(dst, src, g)
	default:
		copyBlockAddGeneric(dst, src, g)
	}
}

func copyStreamImpl(dst, src []float64) {
	if copyLevel > 0 {
		copyStreamAVX2Call(dst, src)
	} else {
		copyStreamGeneric(dst, src)
	}
}

func copyStreamAVX2Call(dst, src []float64) { copyStreamAVX2(&dst[0], &src[0], len(dst)) }

// copyStreamAVX2 copies n values with non-temporal stores (copy_avx2_amd64.s).
// It computes the Go loop copy(dst[:n], src[:n]) (TestCopyStream).
//
//go:noescape
func copyStreamAVX2(dst, src *float64, n int)
