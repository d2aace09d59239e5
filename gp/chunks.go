package gp

import (
	"time"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/internal/parallel"
)

// Column chunks. When a variational block has few inducing points and the
// batch has many columns (a convolutional GP's hidden layer: m = 64
// inducing patches against N = 64 images × 576 patches), every M×N matrix
// of the layer is tens of megabytes while each product with an m×m factor
// costs only 2m flops per element, so a loop that makes one full pass over
// them per operation and latent function is bound by memory bandwidth.
// Every operation of the forward and backward passes' loops over latent
// functions acts on the columns independently (or sums over them), so those
// loops run over chunks of columns instead: each chunk of E (or B), B̄ and
// the scratch F̄ stays in the cache for all L latent functions, and each
// F_l is written once and read once.
//
// The matrices F_l, which only these two loops use, are then stored chunk
// by chunk: the m×c chunk of F_l that starts at column j0 is row-major with
// row stride c at F_l[m·j0 : m·(j0+c)], so that each chunk is one
// contiguous block. With row stride N instead, reading a chunk back in the
// backward pass meant m short runs 8·N bytes apart, which the hardware
// prefetchers do not follow: that read, and the scaling that consumes it,
// were 10% of a two-layer convolutional GP's step.
//
// The products with the m×m triangles inside the loops call the GEMM
// micro-kernel directly on operands packed once (chunkkern.go).

// chunkMaxRows is the largest block (m) whose loops run in column chunks;
// larger blocks are compute-bound and their m×m factors would not stay in
// cache beside the chunks.
const chunkMaxRows = 256

// chunkElems is the target size m·c of one chunk of one matrix (128 KiB),
// so that the chunks of B, B̄ and F̄ with the m×m factors fit in a core's
// L2 cache.
const chunkElems = 1 << 14

// chunkCols returns the width of the column chunks in which wideForward and
// blockBackward run their loops for a block of m rows and n columns, or 0
// to run them over whole rows.
func (mod *Model) chunkCols(m, n int) int {
	c := mod.cfg.colChunk
	switch {
	case c < 0:
		return 0
	case c > 0:
		if c >= n {
			return 0
		}
		return c
	}
	if m > chunkMaxRows {
		return 0
	}
	c = min(max((chunkElems/m+7)&^7, 64), 512)
	if n < 2*c {
		return 0
	}
	return c
}

// chunkParts returns how many goroutines run a chunked loop over nch
// chunks, each taking a range of whole chunks: the evaluation's budget
// (≤ 0: GOMAXPROCS), at most one per chunk.
func (l *la) chunkParts(nch int) int {
	return parallel.Workers(l.threads, nch)
}

// recInterleaved records the operations of a chunked loop, each repeated
// count times (once per latent function): they run interleaved, so the
// loop's time d is shared among them in proportion to their flops.
func (l *la) recInterleaved(d time.Duration, count int, ops ...Op) {
	if l.ops == nil {
		return
	}
	var total float64
	for _, op := range ops {
		total += op.Flops
	}
	for _, op := range ops {
		op.Class, op.Pass = MatMul, l.pass
		op.Time = time.Duration(float64(d) * op.Flops / total / float64(count))
		for range count {
			*l.ops = append(*l.ops, op)
		}
	}
}

// chunkedBack is the column-chunked part of blockBackward: with G the N×L
// matrix of marginal-mean gradients and F̄_l = 2·F_l·diag(h_l), it sets
//
//	B̄ = −2·B·diag(h) + [a_1 … a_L]·Gᵀ + Σ_l P_l·F̄_l
//
// and accumulates ā_l = B·g_l and P̄_l = tril(B·F̄_lᵀ). The columns are split
// into parts ranges of whole chunks, one per goroutine, each with its own
// accumulators, which are then summed in part order, so the result depends
// on the number of parts but not on the scheduling.
type chunkedBack struct {
	bi                blas.Implementation // one thread; Backend set
	m, n, l           int
	chunk, nch, parts int
	b, bbar, htot, am []float64
	dmu, dvar         []float64
	p                 []float64   // the L triangles P_l, packed (packTriPanels)
	f                 [][]float64 // F_l stored by chunks
	pbars, abars      []float64   // per part: L·m·m and L·m values
	scratch           []float64   // per part: per values (backScratch)
	per               int
}

// backScratch returns the scratch values one part of chunkedBack uses: F̄
// (m·cw), h_l of a chunk (cw), the chunk of B packed as row panels, F̄ᵀ and
// F̄ packed as column panels, and a kernel tile.
func backScratch(mr, nr, m, cw int) int {
	return m*cw + cw + blas.PackedLen(mr, m, cw) + blas.PackedLen(nr, m, cw) + blas.PackedLen(nr, cw, m) + mr*nr
}

// Run processes the chunks of part q.
func (t *chunkedBack) Run(q int) {
	m, n, L, cw := t.m, t.n, t.l, t.chunk
	be := t.bi.Kernel()
	mr, nr := be.MR(), be.NR()
	pb := t.pbars[q*L*m*m : (q+1)*L*m*m]
	ab := t.abars[q*L*m : (q+1)*L*m]
	s := t.scratch[q*t.per : (q+1)*t.per]
	cut := func(k int) []float64 { v := s[:k]; s = s[k:]; return v }
	fb, w := cut(m*cw), cut(cw) // F̄_l and h_l of the chunk's columns
	pbA := cut(blas.PackedLen(mr, m, cw))
	pfT := cut(blas.PackedLen(nr, m, cw))
	pf := cut(blas.PackedLen(nr, cw, m))
	tile := cut(mr * nr)
	tri := blas.PackedLen(mr, m, m)
	clear(pb)
	clear(ab)
	for ch := q * t.nch / t.parts; ch < (q+1)*t.nch/t.parts; ch++ {
		j0 := ch * cw
		c := min(cw, n-j0)
		bj, bbj := t.b[j0:], t.bbar[j0:]
		h := t.htot[j0 : j0+c]
		for i := 0; i < m; i++ {
			src, dst := bj[i*n:i*n+c], bbj[i*n:i*n+c]
			for k, v := range src {
				dst[k] = -2 * v * h[k]
			}
		}
		t.bi.Dgemm(gblas.NoTrans, gblas.Trans, m, c, L, 1, t.am, L, t.dmu[j0*L:], L, 1, bbj, n)
		blas.PackA(mr, pbA, bj, n, false, m, c)
		for l := 0; l < L; l++ {
			t.bi.Dgemv(gblas.NoTrans, m, c, 1, bj, n, t.dmu[j0*L+l:], L, 1, ab[l*m:(l+1)*m], 1)
			fl := t.f[l][m*j0 : m*(j0+c)]
			w := w[:c]
			for k := range w {
				w[k] = t.dvar[(j0+k)*L+l]
			}
			fb := fb[:m*c]
			for i := 0; i < m; i++ {
				src, dst := fl[i*c:i*c+c], fb[i*c:i*c+c]
				for k, v := range src {
					dst[k] = 2 * v * w[k]
				}
			}
			// P̄_l += B·F̄_lᵀ on the tiles that meet the lower triangle
			// (runChunkedBack clears the rest).
			blas.PackB(nr, pfT, fb, c, true, c, m)
			pbl := pb[l*m*m : (l+1)*m*m]
			for i0 := 0; i0 < m; i0 += mr {
				rows := min(mr, m-i0)
				for jc := 0; jc < i0+rows; jc += nr {
					tileMul(be, rows, min(nr, m-jc), c, pbA[i0*c:], pfT[jc*c:], 1, pbl[i0*m+jc:], m, tile)
				}
			}
			// B̄ += P_l·F̄_l: row tile i0 of the lower triangle P_l is
			// zero from column i0+MR on.
			blas.PackB(nr, pf, fb, c, false, m, c)
			pl := t.p[l*tri : (l+1)*tri]
			for jc := 0; jc < c; jc += nr {
				bp := pf[jc*m : jc*m+nr*m]
				for i0 := 0; i0 < m; i0 += mr {
					rows := min(mr, m-i0)
					tileMul(be, rows, min(nr, c-jc), min(m, i0+rows), pl[i0*m:], bp, 1, bbj[i0*n+jc:], n, tile)
				}
			}
		}
	}
}

// runChunkedBack runs the column-chunked loop of blockBackward with chunks
// of cw columns and leaves P̄_l in pbars[l·m·m:] and ā_l in abars[l·m:]. It
// records the L products P̄_l and P_l·F̄_l of the loop as separate operations
// in the cost profile (recInterleaved).
func (mod *Model) runChunkedBack(lg *la, cw int, blk *backBlock, am, dmu, dvar []float64) (pbars, abars []float64) {
	m, b, bbar, p, f := blk.m, blk.b, blk.bbar, blk.p, blk.f
	ws := &mod.ws
	N, L := ws.n, mod.nl
	nch := (N + cw - 1) / cw
	parts := lg.chunkParts(nch)
	be := lg.bi.Kernel()
	mr, nr := be.MR(), be.NR()
	ws.pbarL = grow(ws.pbarL, parts*L*m*m)
	ws.abarL = grow(ws.abarL, parts*L*m)
	ws.triC = packTriangles(mr, ws.triC, p[:L], m, false)
	per := backScratch(mr, nr, m, cw)
	ws.fbarC = grow(ws.fbarC, parts*per)
	// The task lives in the workspace so that handing it to the worker
	// pool does not allocate.
	t := &ws.chunkB
	*t = chunkedBack{bi: be.Implementation(1), m: m, n: N, l: L, chunk: cw, nch: nch,
		parts: parts, b: b, bbar: bbar, htot: ws.htot, am: am, dmu: dmu, dvar: dvar, p: ws.triC, f: f,
		pbars: ws.pbarL, abars: ws.abarL, scratch: ws.fbarC, per: per}
	t0 := time.Now()
	parallel.For(parts, parts, t)
	*t = chunkedBack{} // drop the references to the caller's slices
	pbars, abars = ws.pbarL[:L*m*m], ws.abarL[:L*m]
	for q := 1; q < parts; q++ {
		for i, v := range ws.pbarL[q*L*m*m : (q+1)*L*m*m] {
			pbars[i] += v
		}
		for i, v := range ws.abarL[q*L*m : (q+1)*L*m] {
			abars[i] += v
		}
	}
	// The diagonal tiles of P̄_l also wrote above the diagonal.
	for l := 0; l < L; l++ {
		for i := 0; i < m; i++ {
			clear(pbars[l*m*m+i*m+i+1 : l*m*m+i*m+m])
		}
	}
	mf, nf := float64(m), float64(N)
	lg.recInterleaved(time.Since(t0), L,
		Op{Name: "P̄ = tril(B·F̄ᵀ)", Dims: [3]int{m, m, N}, Flops: mf * (mf + 1) * nf},
		Op{Name: "B̄ += P·F̄", Dims: [3]int{m, N, m}, Flops: mf * mf * nf})
	return pbars, abars
}

// fwdBlock is one variational block as wideForward reads and writes it.
type fwdBlock struct {
	// m is the number of inducing variables of the block.
	m int
	// basis is the m×N matrix the triangles multiply; sq receives
	// colsum(src²) of the m×N matrix src.
	basis, src, sq []float64
	// tris holds the lower triangles T_l; f receives the F_l.
	tris, f [][]float64
	// meanOff holds the offsets of the m_l in the parameters.
	meanOff []int
}

// wideForward computes the forward pass's per-latent-function products of
// one block: for l = 0 … L−1,
//
//	F_l = T_lᵀ·basis,  μ_l += basisᵀ·m_l,  σ²_l += colsum(F_l²) − sq,
//
// with T_l the lower triangle tris[l], m_l the m parameters at meanOff[l]
// and sq = colsum(src²) (written to sq), μ and σ² point-major with L values
// per point; blk holds m, basis, src, sq, the T_l, the F_l and the
// offsets of the m_l. name labels the products T_lᵀ·basis in the cost
// profile.
// With few rows and many columns it runs in column chunks, so that the
// chunk of the basis stays in cache for all L functions and each F_l is
// written once, and stores F_l by chunks (see the top of this file);
// otherwise F_l is row-major m×N.
func (mod *Model) wideForward(lg *la, name string, blk *fwdBlock) {
	m, basis, src, sq, tris, f, meanOff := blk.m, blk.basis, blk.src, blk.sq, blk.tris, blk.f, blk.meanOff
	ws := &mod.ws
	N, L := ws.n, mod.nl
	cw := mod.chunkCols(m, N)
	if cw == 0 {
		ws.amatL = grow(ws.amatL, m*L)
		am := ws.amatL[:m*L]
		for l := 0; l < L; l++ {
			for i, v := range mod.theta[meanOff[l] : meanOff[l]+m] {
				am[i*L+l] = v
			}
		}
		fwdCols(lg.threads, blk, N, L, am, ws.mu)
		mod.latentForward(lg, name, blk, mod.latentWorkers(m, N))
		return
	}
	nch := (N + cw - 1) / cw
	parts := lg.chunkParts(nch)
	be := lg.bi.Kernel()
	mr, nr := be.MR(), be.NR()
	ws.triC = packTriangles(mr, ws.triC, tris[:L], m, true)
	per := fwdScratch(mr, nr, m, cw)
	ws.fwdC = grow(ws.fwdC, parts*per)
	t := &ws.chunkF
	*t = chunkedFwd{bi: be.Implementation(1), m: m, n: N, l: L, chunk: cw, nch: nch,
		parts: parts, basis: basis, src: src, sq: sq, tris: ws.triC, f: f, theta: mod.theta, meanOff: meanOff,
		mu: ws.mu, vr: ws.vr, scratch: ws.fwdC, per: per}
	t0 := time.Now()
	parallel.For(t.parts, t.parts, t)
	*t = chunkedFwd{}
	lg.recInterleaved(time.Since(t0), L, Op{Name: name, Dims: [3]int{m, N, m}, Flops: float64(m) * float64(m) * float64(N)})
}

// fwdScratch returns the scratch values one part of chunkedFwd uses: the
// packed chunk of the basis and a kernel tile.
func fwdScratch(mr, nr, m, cw int) int { return blas.PackedLen(nr, cw, m) + mr*nr }

// chunkedFwd is the column-chunked loop of wideForward; its parts are
// ranges of whole chunks, and every output column is written by one part
// in the order of the loop over whole rows.
type chunkedFwd struct {
	bi                     blas.Implementation // one thread; Backend set
	m, n, l                int
	chunk, nch, parts      int
	basis, src, sq, mu, vr []float64
	theta                  []float64
	meanOff                []int
	tris                   []float64 // the L triangles T_lᵀ, packed (packTriPanels)
	f                      [][]float64
	scratch                []float64 // per part: per values (fwdScratch)
	per                    int
}

// Run processes the chunks of part q.
func (t *chunkedFwd) Run(q int) {
	m, n, L, cw := t.m, t.n, t.l, t.chunk
	be := t.bi.Kernel()
	mr, nr := be.MR(), be.NR()
	scratch := t.scratch[q*t.per : (q+1)*t.per]
	pe, tile := scratch[:blas.PackedLen(nr, cw, m)], scratch[blas.PackedLen(nr, cw, m):]
	tri := blas.PackedLen(mr, m, m)
	for ch := q * t.nch / t.parts; ch < (q+1)*t.nch/t.parts; ch++ {
		j0 := ch * cw
		c := min(cw, n-j0)
		sq := t.sq[j0 : j0+c]
		clear(sq)
		colSumSqRange(sq, 1, 1, m, n, t.src[j0:], 0, c)
		bj := t.basis[j0:]
		blas.PackB(nr, pe, bj, n, false, m, c)
		for l := 0; l < L; l++ {
			// F_l = T_lᵀ·basis: row tile i0 of the upper triangle T_lᵀ
			// is zero before column i0.
			fl := t.f[l][m*j0 : m*(j0+c)]
			tl := t.tris[l*tri : (l+1)*tri]
			for jc := 0; jc < c; jc += nr {
				bp := pe[jc*m : jc*m+nr*m]
				for i0 := 0; i0 < m; i0 += mr {
					tileMul(be, min(mr, m-i0), min(nr, c-jc), m-i0, tl[i0*m+i0*mr:], bp[i0*nr:], 0, fl[i0*c+jc:], c, tile)
				}
			}
			t.bi.Dgemv(gblas.Trans, m, c, 1, bj, n, t.theta[t.meanOff[l]:t.meanOff[l]+m], 1, 1, t.mu[j0*L+l:], L)
			vr := t.vr[j0*L+l:]
			colSumSqRange(vr, L, 1, m, c, fl, 0, c)
			for k, v := range sq {
				vr[k*L] -= v
			}
		}
	}
}
