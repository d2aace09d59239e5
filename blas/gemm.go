package blas

import (
	"sync"

	"gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/internal/gemm"
	"github.com/solvegp/solvegp/internal/parallel"
)

// gemmParallelMin is the m·n·k below which Dgemm runs on one goroutine: the
// fork/join cost (a few microseconds) would exceed the gain.
const gemmParallelMin = 96 * 96 * 96

// Dgemm performs one of the matrix-matrix operations
//
//	C = alpha * A * B + beta * C
//	C = alpha * Aᵀ * B + beta * C
//	C = alpha * A * Bᵀ + beta * C
//	C = alpha * Aᵀ * Bᵀ + beta * C
//
// where A is an m×k or k×m dense matrix, B is an n×k or k×n dense matrix, C is
// an m×n matrix, and alpha and beta are scalars. tA and tB specify whether A or
// B are transposed. When beta is zero, C is not read.
//
// Dgemm panics exactly as gonum's does on bad arguments. It packs A and B into
// cache-sized blocks and runs the micro-kernel of impl's backend on up to
// impl's Threads goroutines.
func (impl Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	switch tA {
	default:
		panic(badTranspose)
	case blas.NoTrans, blas.Trans, blas.ConjTrans:
	}
	switch tB {
	default:
		panic(badTranspose)
	case blas.NoTrans, blas.Trans, blas.ConjTrans:
	}
	if m < 0 {
		panic(mLT0)
	}
	if n < 0 {
		panic(nLT0)
	}
	if k < 0 {
		panic(kLT0)
	}
	aTrans := tA != blas.NoTrans
	if aTrans {
		if lda < max(1, m) {
			panic(badLdA)
		}
	} else if lda < max(1, k) {
		panic(badLdA)
	}
	bTrans := tB != blas.NoTrans
	if bTrans {
		if ldb < max(1, k) {
			panic(badLdB)
		}
	} else if ldb < max(1, n) {
		panic(badLdB)
	}
	if ldc < max(1, n) {
		panic(badLdC)
	}
	if m == 0 || n == 0 {
		return
	}
	if aTrans {
		if len(a) < (k-1)*lda+m {
			panic(shortA)
		}
	} else if len(a) < (m-1)*lda+k {
		panic(shortA)
	}
	if bTrans {
		if len(b) < (n-1)*ldb+k {
			panic(shortB)
		}
	} else if len(b) < (k-1)*ldb+n {
		panic(shortB)
	}
	if len(c) < (m-1)*ldc+n {
		panic(shortC)
	}
	if alpha == 0 || k == 0 {
		gemmScaleC(m, n, beta, c, ldc)
		return
	}
	if m <= gemmThinM || m*n*k < gemmTinyMNK {
		impl.gemmGonumSerial(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	g := gemmProblem{
		be: impl.KernelBackend(), aTrans: aTrans, bTrans: bTrans,
		m: m, n: n, k: k, alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc,
	}
	g.run(impl.threads())
}

// Below these sizes gonum's unpacked loops beat packing: products with at
// most gemmThinM rows (the MR-row tile would be mostly padding) and products
// with fewer than gemmTinyMNK multiply-adds.
const (
	gemmThinM   = 2
	gemmTinyMNK = 512
)

// gemmGonumChunk is the widest column chunk that gonum's Dgemm computes on
// the calling goroutine (it goes parallel from 4 blocks of 64×64 up), so
// that delegating to it keeps impl's Threads bound.
const gemmGonumChunk = 192

// gemmGonumSerial runs gonum's Dgemm on column chunks narrow enough for
// gonum to stay serial when m ≤ 64.
func (impl Implementation) gemmGonumSerial(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for j0 := 0; j0 < n; j0 += gemmGonumChunk {
		nb := min(gemmGonumChunk, n-j0)
		off := j0
		if tB != blas.NoTrans {
			off = j0 * ldb
		}
		impl.Implementation.Dgemm(tA, tB, m, nb, k, alpha, a, lda, b[off:], ldb, beta, c[j0:], ldc)
	}
}

// gemmScaleC sets C := beta·C, writing zeros without reading C when beta is
// zero.
func gemmScaleC(m, n int, beta float64, c []float64, ldc int) {
	if beta == 1 {
		return
	}
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// gemmProblem is one validated Dgemm call with alpha ≠ 0 and k > 0.
type gemmProblem struct {
	be             *gemm.Backend
	aTrans, bTrans bool
	// aSym (bSym) marks op(A) (op(B)) as a symmetric matrix of which only
	// the named triangle of a (b) is stored (Dsymm): the packing reads
	// each element from the stored triangle, so the other one is never
	// formed. The matching Trans flag is false.
	aSym, bSym blas.Uplo
	m, n, k    int
	alpha      float64
	a          []float64
	lda        int
	b          []float64
	ldb        int
	beta       float64
	c          []float64
	ldc        int

	// tri restricts the update to one trapezoid of C bounded by the
	// diagonal j − i = diag (Dsyrk, Dgemmt: the main diagonal of a square
	// C): zero updates all of C; blas.Lower updates only the elements with
	// j − i ≤ diag, blas.Upper only those with j − i ≥ diag. Tiles outside
	// the trapezoid are skipped and tiles crossing the diagonal are
	// computed into scratch and merged element by element.
	tri  blas.Uplo
	diag int
}

// gemmSplit divides total into ⌈total/block⌉ nearly equal parts, each a
// multiple of unit, and returns the part size.
func gemmSplit(total, block, unit int) int {
	if total <= block {
		return (total + unit - 1) / unit * unit
	}
	parts := (total + block - 1) / block
	size := (total + parts - 1) / parts
	return (size + unit - 1) / unit * unit
}

// gemmMaxTile bounds MR·NR over all backends (14×16 for AVX-512).
const gemmMaxTile = 256

// gemmCtx holds the buffers and the state of one Dgemm call; it is pooled
// so that repeated calls do not allocate. It is the parallel.Task of the
// call's parallel sections, so that handing them to the worker pool
// allocates nothing either.
type gemmCtx struct {
	packB   []float64
	workers []gemmWorker

	g gemmProblem
	p gemmPlan

	// The block of the current parallel section: columns jc…jc+ncb of C,
	// nPanels NR-wide panels, the inner range pc…pc+kcb, and the beta that
	// applies to it.
	pack    bool // packing op(B) (true) or multiplying (false)
	jc, ncb int
	nPanels int
	pc, kcb int
	beta    float64

	// share is the length of each share's region of packB when the shares
	// run the loops independently (columnShare), 0 otherwise.
	share int

	// rowBounds[t]…rowBounds[t+1] are the rows of row group t in the
	// current block when only a triangle of C is updated (tri != 0); the
	// groups are balanced by the work in the block, not by rows.
	rowBounds []int
}

// gemmWorker is the state of one share of C in the blocked loops.
type gemmWorker struct {
	packA []float64
	edge  [gemmMaxTile]float64 // scratch tile for partial tiles
}

var gemmPool = sync.Pool{New: func() any { return new(gemmCtx) }}

// gemmGetCtx returns a pooled context with room for threads workers, a B
// block of nb values and A blocks of na values. A buffer too small for a
// call that needs at least a quarter of the full block of be's blocking is
// replaced by one of the full block size, so that contexts cycling through
// calls of different shapes stop growing after one step instead of
// reallocating call after call: each new buffer is fresh memory, and on a
// VM its first-touch page faults cost more than the packing. Small calls
// get buffers of their own size.
func gemmGetCtx(be *gemm.Backend, threads, na, nb int) *gemmCtx {
	bl := be.Blocking()
	ctx := gemmPool.Get().(*gemmCtx)
	if cap(ctx.packB) < nb {
		ctx.packB = make([]float64, blockSize(nb, bl.KC*(bl.NC+threads*be.NR())))
	}
	ctx.packB = ctx.packB[:nb]
	if cap(ctx.workers) < threads {
		ctx.workers = append(ctx.workers[:cap(ctx.workers)], make([]gemmWorker, threads-cap(ctx.workers))...)
	}
	ctx.workers = ctx.workers[:threads]
	for w := range ctx.workers {
		wk := &ctx.workers[w]
		if cap(wk.packA) < na {
			wk.packA = make([]float64, blockSize(na, (bl.MC+be.MR())*bl.KC))
		}
		wk.packA = wk.packA[:na]
	}
	return ctx
}

// blockSize returns the length of a new packing buffer for a call needing
// n values: full, the block size, if n is at least a quarter of it (or n if
// larger), else n.
func blockSize(n, full int) int {
	if 4*n < full {
		return n
	}
	return max(n, full)
}

// gemmPlan is the blocking and work partition of one call.
type gemmPlan struct {
	mc, kc, nc int
	threads    int
	tm, tn     int // threads = tm·tn: row groups × panel groups
	mTiles     int // ⌈m/MR⌉
}

// plan chooses block sizes and the 2-D partition of C among goroutines.
func (g *gemmProblem) plan(threads int) gemmPlan {
	be := g.be
	mr, nr := be.MR(), be.NR()
	bl := be.Blocking()
	p := gemmPlan{kc: min(bl.KC, g.k)}
	if g.k > bl.KC {
		p.kc = gemmSplit(g.k, bl.KC, 1)
	}
	p.mc = gemmSplit(g.m, bl.MC, mr)
	// The KC×NC block of B has a budget of values (a share of L3), not a
	// width: with a shallow product (k < KC) the block is widened to keep
	// it, so that a wide, shallow product (the 64 × 36864 × 64 updates of a
	// convolutional GP's hidden layer) runs in a few blocks rather than
	// dozens, each costing two parallel sections.
	ncMax := bl.NC
	if p.kc < bl.KC {
		ncMax = bl.NC * (bl.KC / max(p.kc, 1))
	}
	p.nc = gemmSplit(g.n, ncMax, nr)
	p.mTiles = (g.m + mr - 1) / mr
	nTiles := (min(g.n, p.nc) + nr - 1) / nr
	if threads < 1 || g.m*g.n*g.k < gemmParallelMin {
		threads = 1
	}
	threads = min(threads, p.mTiles*nTiles)
	// Pick tm×tn = threads minimizing the largest share of tiles; prefer
	// splitting rows (splitting panels repacks each A block per group).
	p.threads, p.tm, p.tn = threads, threads, 1
	best := -1
	for tm := threads; tm >= 1; tm-- {
		if threads%tm != 0 {
			continue
		}
		tn := threads / tm
		if tm > p.mTiles || tn > nTiles {
			continue
		}
		cost := ((p.mTiles + tm - 1) / tm) * ((nTiles + tn - 1) / tn)
		if best < 0 || cost < best {
			best, p.tm, p.tn = cost, tm, tn
		}
	}
	if g.tri != 0 && threads > 1 {
		// Triangular updates split rows only, balanced by work per block.
		p.tm, p.tn = min(threads, p.mTiles), 1
		p.threads = p.tm
		return p
	}
	if best < 0 { // fewer tiles than a clean split needs: use what fits
		p.tm, p.tn = min(threads, p.mTiles), 1
		p.threads = p.tm
	}
	return p
}

// run executes the BLIS five loops, sharing each block among p.threads
// shares of the work on the parallel worker pool.
func (g *gemmProblem) run(threads int) {
	p := g.plan(threads)
	if p.threads > 1 && p.tm == 1 && g.tri == 0 {
		// Column shares only: each share runs the loops on its own.
		nr := g.be.NR()
		per := ((p.nc+nr-1)/nr + p.threads - 1) / p.threads * nr * p.kc
		ctx := gemmGetCtx(g.be, p.threads, p.mc*p.kc, p.threads*per)
		ctx.g, ctx.p, ctx.share = *g, p, per
		parallel.For(p.threads, p.threads, ctx)
		ctx.g, ctx.share = gemmProblem{}, 0
		gemmPool.Put(ctx)
		return
	}
	ctx := gemmGetCtx(g.be, p.threads, p.mc*p.kc, p.kc*p.nc)
	ctx.g, ctx.p = *g, p
	ctx.loops()
	ctx.g = gemmProblem{} // drop the references to the operands
	gemmPool.Put(ctx)
}

// columnShare runs the whole loop nest for share t of the columns of C
// when the rows are not split among the shares (tm = 1, no triangle): the
// panels q·T/threads … of every column block, with T panels in the block.
// The shares then touch disjoint columns of C and their own regions of
// packB (share values each), so they run without a barrier between blocks;
// with two parallel sections per KC×NC block instead, a product with a
// short dimension (64×64 with depth 36864: 72 blocks) spent more time
// waking and waiting than computing on two threads. Every tile of C sees
// the same packed panels and kernel calls as in loops, in the same order,
// so the results are the same bit for bit.
func (ctx *gemmCtx) columnShare(t int) {
	g, p := &ctx.g, &ctx.p
	nr := g.be.NR()
	wk := &ctx.workers[t]
	pb := ctx.packB[t*ctx.share : (t+1)*ctx.share]
	for jc := 0; jc < g.n; jc += p.nc {
		ncb := min(p.nc, g.n-jc)
		nPanels := (ncb + nr - 1) / nr
		q0, q1 := t*nPanels/p.threads, (t+1)*nPanels/p.threads
		if q0 == q1 {
			continue
		}
		j0 := jc + q0*nr             // the share's first column
		w := min(ncb, q1*nr) - q0*nr // and its width
		for pc := 0; pc < g.k; pc += p.kc {
			kcb := min(p.kc, g.k-pc)
			beta := g.beta
			if pc > 0 {
				beta = 1
			}
			for q := 0; q < q1-q0; q++ {
				j := j0 + q*nr
				g.packBPanel(pb[q*nr*kcb:(q+1)*nr*kcb], pc, kcb, j, min(nr, j0+w-j))
			}
			for ic := 0; ic < g.m; ic += p.mc {
				mcb := min(p.mc, g.m-ic)
				g.packABlock(wk.packA, ic, mcb, pc, kcb)
				g.macroKernel(wk, ic, mcb, j0, w, 0, q1-q0, kcb, pb, beta)
			}
		}
	}
}

// loops runs the jc (NC columns of C) and pc (KC of the inner dimension)
// loops. Each block is two parallel sections: packing op(B) jointly, then
// the ic (MC rows; A block packed per share), jr (NR) and ir (MR) loops of
// every share of the tm×tn partition of C.
func (ctx *gemmCtx) loops() {
	g, p := &ctx.g, &ctx.p
	nr := g.be.NR()
	for jc := 0; jc < g.n; jc += p.nc {
		ncb := min(p.nc, g.n-jc)
		ctx.jc, ctx.ncb, ctx.nPanels = jc, ncb, (ncb+nr-1)/nr
		if g.tri != 0 {
			ctx.balanceRows()
		}
		for pc := 0; pc < g.k; pc += p.kc {
			ctx.pc, ctx.kcb = pc, min(p.kc, g.k-pc)
			ctx.beta = g.beta
			if pc > 0 {
				ctx.beta = 1
			}
			ctx.pack = true
			parallel.For(p.threads, p.threads, ctx)
			ctx.pack = false
			parallel.For(p.threads, p.threads, ctx)
		}
	}
}

// balanceRows splits the rows of the current column block jc…jc+ncb of a
// triangular update into p.tm groups of whole MR tiles with nearly equal
// work, stored in ctx.rowBounds. The work of a row tile is the elements of
// the micro-tiles macroKernel computes for it, those crossing the diagonal
// in full: counting only the elements inside the triangle left the group
// holding the diagonal with up to a tenth more to do.
func (ctx *gemmCtx) balanceRows() {
	g, p := &ctx.g, &ctx.p
	mr, nr := g.be.MR(), g.be.NR()
	// tileWork returns the elements of the micro-tiles macroKernel
	// computes for the row tile of the given rows from r0.
	tileWork := func(r0, rows int) int {
		w := 0
		for q := 0; q < ctx.nPanels; q++ {
			c0, cols := ctx.jc+q*nr, min(nr, ctx.ncb-q*nr)
			if in, _ := g.triTile(r0, rows, c0, cols); in {
				w += rows * cols
			}
		}
		return w
	}
	total := 0
	for tile := 0; tile < p.mTiles; tile++ {
		total += tileWork(tile*mr, min(mr, g.m-tile*mr))
	}
	if cap(ctx.rowBounds) < p.tm+1 {
		ctx.rowBounds = make([]int, p.tm+1)
	}
	b := ctx.rowBounds[:p.tm+1]
	b[0], b[p.tm] = 0, g.m
	group, acc := 1, 0
	for tile := 0; tile < p.mTiles && group < p.tm; tile++ {
		acc += tileWork(tile*mr, min(mr, g.m-tile*mr))
		// Close groups whose share of the work has been reached.
		for group < p.tm && acc*p.tm >= total*group {
			b[group] = min(g.m, (tile+1)*mr)
			group++
		}
	}
	for ; group < p.tm; group++ {
		b[group] = g.m
	}
	ctx.rowBounds = b
}

// Run performs share t of the current parallel section, or all of share
// t's work when the shares run independently.
func (ctx *gemmCtx) Run(t int) {
	if ctx.share > 0 {
		ctx.columnShare(t)
		return
	}
	if ctx.pack {
		ctx.packShare(t)
	} else {
		ctx.multiplyShare(t)
	}
}

// packShare packs share t of op(B)[pc:pc+kcb, jc:jc+ncb] into ctx.packB.
func (ctx *gemmCtx) packShare(t int) {
	g, p := &ctx.g, &ctx.p
	nr := g.be.NR()
	jc, ncb, kcb, pc := ctx.jc, ctx.ncb, ctx.kcb, ctx.pc
	for q := t * ctx.nPanels / p.threads; q < (t+1)*ctx.nPanels/p.threads; q++ {
		j := jc + q*nr
		g.packBPanel(ctx.packB[q*nr*kcb:(q+1)*nr*kcb], pc, kcb, j, min(nr, jc+ncb-j))
	}
}

// packBPanel packs rows pc…pc+kcb of columns j…j+cols of op(B) (cols ≤ NR)
// as one micro-panel into dst.
func (g *gemmProblem) packBPanel(dst []float64, pc, kcb, j, cols int) {
	if g.bSym != 0 {
		g.packSymBPanel(dst, pc, kcb, j, cols)
		return
	}
	off := pc*g.ldb + j
	if g.bTrans {
		off = j*g.ldb + pc
	}
	gemm.PackB(g.be.NR(), dst, g.b[off:], g.ldb, g.bTrans, kcb, cols)
}

// packABlock packs rows ic…ic+mcb, columns pc…pc+kcb of op(A) into dst as
// MR-row micro-panels.
func (g *gemmProblem) packABlock(dst []float64, ic, mcb, pc, kcb int) {
	if g.aSym != 0 {
		g.packSymABlock(dst, ic, mcb, pc, kcb)
		return
	}
	off := ic*g.lda + pc
	if g.aTrans {
		off = pc*g.lda + ic
	}
	gemm.PackA(g.be.MR(), dst, g.a[off:], g.lda, g.aTrans, mcb, kcb)
}

// multiplyShare updates share t of the current block of C: the rows of row
// group t/tn (whole MR tiles) and the panels of panel group t%tn.
func (ctx *gemmCtx) multiplyShare(t int) {
	g, p := &ctx.g, &ctx.p
	mr := g.be.MR()
	wk := &ctx.workers[t]
	ti, tj := t/p.tn, t%p.tn
	r0 := ti * p.mTiles / p.tm * mr
	r1 := min(g.m, (ti+1)*p.mTiles/p.tm*mr)
	if g.tri != 0 {
		r0, r1 = ctx.rowBounds[ti], ctx.rowBounds[ti+1]
	}
	q0, q1 := tj*ctx.nPanels/p.tn, (tj+1)*ctx.nPanels/p.tn
	pc, kcb := ctx.pc, ctx.kcb
	for ic := r0; ic < r1; ic += p.mc {
		mcb := min(p.mc, r1-ic)
		// Skip row blocks that have no element of the triangle in the
		// column block.
		if g.tri == blas.Lower && ctx.jc > ic+mcb-1+g.diag || g.tri == blas.Upper && ctx.jc+ctx.ncb-1 < ic+g.diag {
			continue
		}
		g.packABlock(wk.packA, ic, mcb, pc, kcb)
		g.macroKernel(wk, ic, mcb, ctx.jc, ctx.ncb, q0, q1, kcb, ctx.packB, ctx.beta)
	}
}

// nextB returns the part of the packed B block that the full tile in row
// ip of panel q prefetches: the ip-th quarter of panel q+1 for the first
// four row tiles, so that panel q+1 is in L2 when its tiles start, and a
// part of panel q itself (already in cache) otherwise.
func nextB(packB []float64, q, q1, ip, nr, kcb int) []float64 {
	n := gemm.NextPrefetch(kcb)
	panel := nr * kcb
	if q+1 < q1 && ip < 4 && (ip+1)*n <= panel {
		return packB[(q+1)*panel+ip*n : (q+1)*panel+(ip+1)*n]
	}
	return packB[q*panel : q*panel+min(n, panel)]
}

// triTile reports whether the micro-tile of rows r0…r0+rows−1 and columns
// c0…c0+cols−1 of C holds an element of the trapezoid being updated (in),
// and whether all its elements are in it (full); without a trapezoid every
// tile is in and full.
func (g *gemmProblem) triTile(r0, rows, c0, cols int) (in, full bool) {
	switch d := g.diag; g.tri {
	case blas.Lower:
		return c0 <= r0+rows-1+d, c0+cols-1 <= r0+d
	case blas.Upper:
		return c0+cols-1 >= r0+d, c0 >= r0+rows-1+d
	}
	return true, true
}

// macroKernel runs the micro-kernel over the packed A block (rows ic…ic+mcb)
// and B panels q0…q1−1 of the block starting at column jc.
func (g *gemmProblem) macroKernel(wk *gemmWorker, ic, mcb, jc, ncb, q0, q1, kcb int, packB []float64, beta float64) {
	be := g.be
	mr, nr := be.MR(), be.NR()
	ldc := g.ldc
	pa := wk.packA
	nip := (mcb + mr - 1) / mr
	for q := q0; q < q1; q++ {
		j := q * nr
		cols := min(nr, ncb-j)
		bp := packB[q*nr*kcb : (q+1)*nr*kcb]
		for ip := 0; ip < nip; ip++ {
			i := ip * mr
			rows := min(mr, mcb-i)
			ap := pa[ip*mr*kcb : (ip+1)*mr*kcb]
			off := (ic+i)*ldc + jc + j
			// full: every element of the tile is to be updated.
			in, full := g.triTile(ic+i, rows, jc+j, cols)
			if !in {
				continue
			}
			if cols == nr && full {
				// Full-width tile: the kernel (or its partial-row variant
				// for the last row tile) updates C in place.
				if rows == mr {
					be.KernelNextNoCheck(kcb, g.alpha, ap, bp, beta, g.c[off:], ldc, nextB(packB, q, q1, ip, nr, kcb))
					continue
				}
				be.KernelRowsNoCheck(rows, kcb, g.alpha, ap, bp, beta, g.c[off:], ldc)
				continue
			}
			t := wk.edge[:rows*nr]
			be.KernelRowsNoCheck(rows, kcb, g.alpha, ap, bp, 0, t, nr)
			for r := 0; r < rows; r++ {
				lo, hi := 0, cols // columns of the tile to merge
				if !full {
					d := ic + i + r + g.diag - (jc + j) // this row's diagonal column in the tile
					if g.tri == blas.Lower {
						hi = min(cols, d+1)
					} else {
						lo = max(0, d)
					}
					if lo >= hi {
						continue
					}
				}
				crow := g.c[off+r*ldc+lo : off+r*ldc+hi]
				trow := t[r*nr+lo : r*nr+hi]
				if beta == 0 {
					copy(crow, trow)
					continue
				}
				for s, v := range trow {
					crow[s] = beta*crow[s] + v
				}
			}
		}
	}
}
