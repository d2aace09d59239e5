package blas

import (
	"sync"

	"gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/internal/parallel"
)

// trmmLeftBlockedMin is the order of the triangle from which Dtrmm with
// side Left runs on the GEMM loops (trmmLeftBlocked) rather than by
// recursive halving.
const trmmLeftBlockedMin = 64

// trmmLeftBlocked computes B := alpha·op(A)·B in place for the m×m triangle
// A and the m×n matrix B on the BLIS loops, the way BLIS and OpenBLAS do:
// the inner dimension is walked in KC blocks in the order in which B's rows
// are last needed (from the bottom for a lower op(A), from the top for an
// upper one), so a block of B is packed while it still holds its original
// values and the rows it produces are written after it was packed. For KC
// block P the rows of B in P are written for the first time (beta = 0) with
// the diagonal block of op(A), each of its micro-panels packed only over the
// columns its rows reach, with the other triangle zeroed there (and a unit
// diagonal when d is blas.Unit), and the rows that the rest of op(A)'s block
// column reaches are updated (beta = 1) with dense packed blocks.
// Every product runs on the GEMM micro-kernel with a full KC depth. The
// rows are split among up to impl's Threads goroutines.
func (impl Implementation) trmmLeftBlocked(ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	g := gemmProblem{
		be: impl.KernelBackend(), aTrans: tA != blas.NoTrans,
		m: m, n: n, k: m, alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, c: b, ldc: ldb,
	}
	threads := impl.threads()
	if m*n*m < gemmParallelMin {
		threads = 1
	}
	p := g.plan(1) // block sizes; the row split is trmmLeftBlocked's own
	ctx := gemmGetCtx(g.be, threads, p.mc*p.kc, p.kc*p.nc)
	task := trmmTasks.Get().(*trmmTask)
	*task = trmmTask{ctx: ctx, g: g, mc: p.mc, kc: p.kc, threads: threads, lower: trsmOpLower(ul, tA), unit: d == blas.Unit}
	task.run(p.nc)
	ctx.g = gemmProblem{} // drop the references to the operands
	*task = trmmTask{}
	trmmTasks.Put(task)
	gemmPool.Put(ctx)
}

// trmmTask holds one trmmLeftBlocked call; it is the parallel.Task of its
// packing and multiplying sections and is pooled so calls do not allocate.
type trmmTask struct {
	ctx     *gemmCtx
	g       gemmProblem
	mc, kc  int
	threads int
	lower   bool // op(A) is lower triangular
	unit    bool // op(A) has a unit diagonal

	// The current block: inner rows p0…p1 (the column block, and p0 and
	// p1 − p0 as pc and kcb, are in ctx, whose packShare packs B), and the
	// rows [r0, r1) that the block updates (the diagonal rows among them).
	pack   bool
	p0, p1 int
	r0, r1 int
}

var trmmTasks = sync.Pool{New: func() any { return new(trmmTask) }}

// run walks the jc (NC columns) and pc (KC rows of B) loops.
func (t *trmmTask) run(nc int) {
	g := &t.g
	nr := g.be.NR()
	nb := (g.m + t.kc - 1) / t.kc
	t.ctx.g, t.ctx.p.threads = *g, t.threads // for ctx.packShare
	for jc := 0; jc < g.n; jc += nc {
		t.ctx.jc, t.ctx.ncb = jc, min(nc, g.n-jc)
		t.ctx.nPanels = (t.ctx.ncb + nr - 1) / nr
		for q := 0; q < nb; q++ {
			blk := q
			if t.lower {
				blk = nb - 1 - q
			}
			t.p0, t.p1 = blk*t.kc, min(g.m, (blk+1)*t.kc)
			t.ctx.pc, t.ctx.kcb = t.p0, t.p1-t.p0
			if t.lower {
				t.r0, t.r1 = t.p0, g.m
			} else {
				t.r0, t.r1 = 0, t.p1
			}
			t.pack = true
			parallel.For(t.threads, t.threads, t)
			t.pack = false
			parallel.For(t.threads, t.threads, t)
		}
	}
}

// Run performs share w of the current section.
func (t *trmmTask) Run(w int) {
	if t.pack {
		t.ctx.packShare(w)
		return
	}
	lo, hi := t.share(w)
	// The diagonal rows p0…p1 (first write, masked triangle) and the
	// others (accumulated, dense) are separate ranges of the share.
	t.multiply(w, max(lo, t.p0), min(hi, t.p1), true)
	if t.lower {
		t.multiply(w, max(lo, t.p1), hi, false)
	} else {
		t.multiply(w, lo, min(hi, t.p0), false)
	}
}

// share returns the rows [lo, hi) of r0…r1 that share w multiplies: a
// contiguous range of whole MR tiles, chosen so that every share gets about
// the same number of kernel flops. A tile of the diagonal block costs its
// depth (the prefix or suffix of the block its rows reach), one of the dense
// rows the whole block, so an equal count of tiles would leave the share
// with the diagonal rows idle for up to half of the block's time (1.4× on
// two goroutines for order 1024, against 1.9× for Dgemm).
func (t *trmmTask) share(w int) (lo, hi int) {
	mr := t.g.be.MR()
	kcb := t.p1 - t.p0
	cost := func(i int) int { // tile starting at row i
		rows := min(mr, t.r1-i)
		if i+rows <= t.p0 || i >= t.p1 {
			return rows * kcb
		}
		r := i - t.p0 // relative to the diagonal block; the tile may straddle its edge
		if t.lower {
			return rows * min(kcb, r+rows)
		}
		return rows * (kcb - max(r, 0))
	}
	total := 0
	for i := t.r0; i < t.r1; i += mr {
		total += cost(i)
	}
	// Share w starts at the first tile whose cumulative cost before it
	// reaches w/threads of the total.
	start := func(w int) int {
		if w >= t.threads {
			return t.r1
		}
		want, acc := total*w/t.threads, 0
		i := t.r0
		for ; i < t.r1 && acc < want; i += mr {
			acc += cost(i)
		}
		return min(i, t.r1)
	}
	return start(w), start(w + 1)
}

// multiply updates rows [i0, i1) of the current column block with the
// current KC block: the diagonal block of op(A) when diag is set (beta 0),
// the dense block off the diagonal otherwise (beta 1).
func (t *trmmTask) multiply(w, i0, i1 int, diag bool) {
	g := &t.g
	wk := &t.ctx.workers[w]
	kcb := t.p1 - t.p0
	beta := 1.0
	if diag {
		beta = 0
	}
	for ic := i0; ic < i1; ic += t.mc {
		mcb := min(t.mc, i1-ic)
		if diag {
			t.packDiagonal(wk.packA, ic, mcb, kcb)
			t.diagonalKernel(wk, ic, mcb, kcb)
			continue
		}
		g.packABlock(wk.packA, ic, mcb, t.p0, kcb)
		g.macroKernel(wk, ic, mcb, t.ctx.jc, t.ctx.ncb, 0, t.ctx.nPanels, kcb, t.ctx.packB, beta)
	}
}

// diagonalKernel writes rows ic…ic+mcb (inside the diagonal block) of the
// current column block: B := alpha·op(A)[rows, p0:p1]·B_packed. A row tile
// of a lower op(A) has no nonzero beyond its last row's diagonal column, and
// one of an upper op(A) none before its first row's, so each tile's product
// runs over that prefix (lower) or suffix (upper) of the packed panels only,
// which halves the diagonal block's work.
func (t *trmmTask) diagonalKernel(wk *gemmWorker, ic, mcb, kcb int) {
	g := &t.g
	be := g.be
	mr, nr := be.MR(), be.NR()
	for q := 0; q < t.ctx.nPanels; q++ {
		j := q * nr
		cols := min(nr, t.ctx.ncb-j)
		bp := t.ctx.packB[q*nr*kcb : (q+1)*nr*kcb]
		for i := 0; i < mcb; i += mr {
			rows := min(mr, mcb-i)
			ap := wk.packA[i*kcb : i*kcb+mr*kcb]
			k0, k1 := t.tileDepth(ic+i, rows, kcb)
			ap, bpk := ap[k0*mr:k1*mr], bp[k0*nr:k1*nr]
			off := (ic+i)*g.ldc + t.ctx.jc + j
			if cols == nr {
				be.KernelRowsNoCheck(rows, k1-k0, g.alpha, ap, bpk, 0, g.c[off:], g.ldc)
				continue
			}
			tile := wk.edge[:rows*nr]
			be.KernelRowsNoCheck(rows, k1-k0, g.alpha, ap, bpk, 0, tile, nr)
			for rr := 0; rr < rows; rr++ {
				copy(g.c[off+rr*g.ldc:off+rr*g.ldc+cols], tile[rr*nr:rr*nr+cols])
			}
		}
	}
}

// tileDepth returns the columns [k0, k1) of the diagonal block that the
// row tile starting at row i (rows rows, inside the block) reaches: the
// prefix up to its last row's diagonal column for a lower op(A), the suffix
// from its first row's for an upper one.
func (t *trmmTask) tileDepth(i, rows, kcb int) (k0, k1 int) {
	r := i - t.p0 // first row of the tile, relative to the block
	if t.lower {
		return 0, min(kcb, r+rows)
	}
	return r, kcb
}

// packDiagonal packs rows ic…ic+mcb of op(A)'s diagonal block (columns
// p0…p0+kcb) as MR-row micro-panels, each only over the columns its tile
// reaches (tileDepth), which is all diagonalKernel reads: half the block,
// read from A once. Inside that range it zeroes the entries on the other
// side of the diagonal, fewer than MR per row, and sets the diagonal to one
// for a unit triangle.
func (t *trmmTask) packDiagonal(pa []float64, ic, mcb, kcb int) {
	g := &t.g
	mr := g.be.MR()
	for i := 0; i < mcb; i += mr {
		rows := min(mr, mcb-i)
		k0, k1 := t.tileDepth(ic+i, rows, kcb)
		panel := pa[i*kcb : i*kcb+mr*kcb]
		g.packABlock(panel[k0*mr:k1*mr], ic+i, rows, t.p0+k0, k1-k0)
		for r := 0; r < rows; r++ {
			row := ic + i + r - t.p0 // the row's diagonal column in the block
			if t.lower {
				for p := row + 1; p < k1; p++ {
					panel[p*mr+r] = 0
				}
			} else {
				for p := k0; p < row; p++ {
					panel[p*mr+r] = 0
				}
			}
			if t.unit {
				panel[row*mr+r] = 1
			}
		}
	}
}
