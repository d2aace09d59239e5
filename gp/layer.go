package gp

import (
	"fmt"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/internal/parallel"
)

// workspace holds the buffers of one evaluation, reused across steps. Its
// buffers only grow; a steady-state step allocates nothing in them.
type workspace struct {
	n     int // batch size of the last forward
	valid bool
	x     *mat.Dense
	mx    []float64 // the mean function's values (forward) or its gradient weights (backward)

	l0u, l0v chol.Cholesky
	jitU     float64
	jitV     float64
	jitVRel  bool // jitV is relative to mean(diag(K_vv)) (relativeJitterOK)

	kuu, kuf, b, e, kff, bsq []float64
	lu, f, pu, au            [][]float64
	puRef, auRef             [][]float64

	kuv, a, kvv, cvv, kvf, dm, gm, dsq []float64
	lv, h, pv, av                      [][]float64
	pvRef, avRef                       [][]float64

	// ODVGP.
	kvs, os, osGrad []float64
	idx             []int
	perm            []int
	cv, wv, tv      [][]float64
	rho             float64
	ncol            int

	mu, vr, dmu, dvar, dlik, htot []float64
	// The tighter bound: residual variances dₙ, marginal variances less
	// dₙ, and the bound's gradient with respect to dₙ.
	res, sv, dres []float64
	// The tighter bound of a ConcaveLikelihood (tighterconcave.go): the
	// scales αₙ, their brackets [alo, ahi] on log αₙ, the previous iterate
	// t = log α and its ρ, whether each point is solved, the variances of
	// the current iterate, the likelihood's gradients there, and the
	// number of ExpectedLogLik calls of the last solve.
	alpha, alo, ahi, tprev, rprev, vt, agm, agv []float64
	adone                                       []bool
	alphaIter                                   int
	klu, klv                                    float64
	klSums                                      []float64 // klBlock's partial sums

	// Backward buffers.
	bbar, fbar, pbar, xu, abar, dbar, xv, vecM, vecM2 []float64
	// amatL holds the block's means a_l as the columns of an m×L matrix.
	amatL []float64
	// The column-chunked loop's accumulators P̄_l and ā_l and its F̄ chunk,
	// one set per goroutine (chunks.go).
	pbarL, abarL, fbarC     []float64
	triC, fwdC              []float64 // chunked loops: packed triangles, per-part scratch
	chunkF                  chunkedFwd
	chunkB                  chunkedBack
	latent                  latentTask
	kuvbar, kvfbar, kvsbar  []float64
	amat, asmat, wmat, cbar []float64

	hKuu, hKuf, hKuv, hKvv, hKvf, hKvs, hOS     *mat.Dense
	hXu, hBbar, hAbar, hXv, hDbar, hKvfb, hKvsb *mat.Dense
	hKuvb, hDZ, hDO, hDOS                       *mat.Dense

	ops []Op
}

func growList(list [][]float64, l, n int) [][]float64 {
	if len(list) < l {
		list = append(list, make([][]float64, l-len(list))...)
	}
	list = list[:l]
	for i := range list {
		list[i] = grow(list[i], n)
	}
	return list
}

// ensure sizes the forward buffers for a batch of n points.
func (mod *Model) ensure(n int) {
	ws := &mod.ws
	M, M2, L := mod.m, mod.m2, mod.nl
	ws.n = n
	ws.kuu = grow(ws.kuu, M*M)
	ws.kuf = grow(ws.kuf, M*n)
	ws.b = grow(ws.b, M*n)
	if !mod.whiten {
		ws.e = grow(ws.e, M*n)
	}
	ws.kff = grow(ws.kff, n)
	ws.bsq = grow(ws.bsq, n)
	ws.lu = growList(ws.lu, L, M*M)
	ws.f = growList(ws.f, L, M*n)
	if !mod.whiten {
		ws.pu = growList(ws.pu, L, M*M)
		ws.au = growList(ws.au, L, M)
	}
	if len(ws.puRef) != L {
		ws.puRef = make([][]float64, L)
		ws.auRef = make([][]float64, L)
		ws.pvRef = make([][]float64, L)
		ws.avRef = make([][]float64, L)
	}
	switch mod.kind {
	case SOLVEGP:
		ws.kuv = grow(ws.kuv, M*M2)
		ws.a = grow(ws.a, M*M2)
		ws.kvv = grow(ws.kvv, M2*M2)
		ws.cvv = grow(ws.cvv, M2*M2)
		ws.kvf = grow(ws.kvf, M2*n)
		ws.dm = grow(ws.dm, M2*n)
		if !mod.whiten {
			ws.gm = grow(ws.gm, M2*n)
			ws.pv = growList(ws.pv, L, M2*M2)
			ws.av = growList(ws.av, L, M2)
		}
		ws.dsq = grow(ws.dsq, n)
		ws.lv = growList(ws.lv, L, M2*M2)
		ws.h = growList(ws.h, L, M2*n)
	case ODVGP:
		s := M2
		if mod.cfg.colSample > 0 {
			s = mod.cfg.colSample
		}
		ws.kuv = grow(ws.kuv, M*M2)
		ws.kvf = grow(ws.kvf, M2*n)
		ws.kvs = grow(ws.kvs, M2*s)
		if mod.cfg.colSample > 0 {
			ws.os = grow(ws.os, s*mod.dz)
			if len(ws.idx) != s {
				ws.idx = make([]int, s)
			}
			if len(ws.perm) != M2 {
				ws.perm = make([]int, M2)
			}
		}
		ws.cv = growList(ws.cv, L, M)
		ws.wv = growList(ws.wv, L, M)
		ws.tv = growList(ws.tv, L, s)
	}
	ws.mu = grow(ws.mu, n*L)
	ws.vr = grow(ws.vr, n*L)
	ws.klSums = grow(ws.klSums, 2*klParts)
}

func (mod *Model) linalg(p Pass) la {
	return la{bi: blas.Implementation{Threads: mod.cfg.threads}, threads: mod.cfg.threads, pass: p, ops: &mod.ws.ops}
}

// klBlock returns ½(‖P‖² + ‖a‖² − m) − Σ log P_ii for the lower-triangular
// m×m matrix P: the KL divergence of N(L0·a, L0·P·Pᵀ·L0ᵀ) from N(0, L0·L0ᵀ).
// The sums over P run over klParts fixed ranges of rows, on up to threads
// goroutines, and are added in range order, so the result does not depend
// on threads.
// parts holds 2·klParts values of scratch.
func klBlock(threads, m int, p, a, parts []float64) float64 {
	t := newElemTask()
	t.pass, t.r, t.c, t.src, t.out = passKLSums, m, m, p, parts
	t.parts = klParts
	workers := parallel.Workers(threads, klParts)
	if m*m/2 < elemParMin {
		workers = 1
	}
	parallel.For(klParts, workers, t)
	*t = elemTask{}
	elemTasks.Put(t)
	var ss, ld float64
	for q := 0; q < klParts; q++ {
		ss += parts[2*q]
		ld += parts[2*q+1]
	}
	for _, v := range a[:m] {
		ss += v * v
	}
	return 0.5*(ss-float64(m)) - ld
}

// qBlock is where one block's variational factors go, one slice per latent
// function: the unpacked triangles, the unwhitened P and a, and the pair
// the bound uses (pRef, aRef).
type qBlock struct {
	tris, p, a, pRef, aRef [][]float64
}

// qFactors unpacks, for each latent function l of a block of m inducing
// points whose prior covariance has the Cholesky factor l0, the variational
// factor (parameters at lOff[l]) into q.tris[l] and takes its mean from
// the parameters at mOff[l]. Whitened, the bound uses them as they are;
// otherwise it uses P = L0⁻¹·L (into q.p[l], recorded as the operation
// pName) and a = L0⁻¹·m (into q.a[l]). q.pRef[l] and q.aRef[l] get the
// pair used. It returns the block's KL divergence summed over the latent
// functions.
func (mod *Model) qFactors(lg *la, pName string, m int, l0 []float64, lOff, mOff []int, q *qBlock) float64 {
	kl := 0.0
	for l := range lOff {
		unpackTri(lg.threads, q.tris[l], m, mod.theta[lOff[l]:])
		mvec := mod.theta[mOff[l] : mOff[l]+m]
		if mod.whiten {
			q.pRef[l], q.aRef[l] = q.tris[l], mvec
		} else {
			copyPar(lg.threads, m, m, q.tris[l], q.p[l])
			lg.trsmLowerL(pName, m, l0, q.p[l])
			copy(q.a[l], mvec)
			lg.trsv(false, m, l0, q.a[l])
			q.pRef[l], q.aRef[l] = q.p[l], q.a[l]
		}
		kl += klBlock(lg.threads, m, q.pRef[l], q.aRef[l], mod.ws.klSums)
	}
	return kl
}

// sampleColumns draws ws.ncol distinct column indices uniformly.
func (mod *Model) sampleColumns() {
	ws := &mod.ws
	for i := range ws.perm {
		ws.perm[i] = i
	}
	s := len(ws.idx)
	for i := 0; i < s; i++ {
		j := i + mod.rng.IntN(len(ws.perm)-i)
		ws.perm[i], ws.perm[j] = ws.perm[j], ws.perm[i]
		ws.idx[i] = ws.perm[i]
	}
}

// forward computes the marginals of every latent function at the rows of x
// (point-major in ws.mu, ws.vr) and the KL terms, following Algorithm 1
// (unwhitened) or its whitened form (Appendix E).
func (mod *Model) forward(x *mat.Dense) error {
	ws := &mod.ws
	ws.valid = false
	N, _ := x.Dims()
	M, L := mod.m, mod.nl
	mod.ensure(N)
	ws.x = x
	ws.ops = ws.ops[:0]
	lg := mod.linalg(Forward)

	kuu := denseOn(&ws.hKuu, M, M, ws.kuu)
	kernUU(mod.kern, kuu, mod.z, mod.z)
	jit, err := lg.chol("L0u = chol(Kuu)", &ws.l0u, M, ws.kuu, mod.cfg.kuuJitter)
	if err != nil {
		return fmt.Errorf("gp: factorizing K_uu: %w", err)
	}
	ws.jitU = jit
	l0u := ws.l0u.RawL()
	mod.kern.Matrix(denseOn(&ws.hKuf, M, N, ws.kuf), mod.z, x)
	mod.kern.Diag(ws.kff, x)
	copyPar(lg.threads, M, N, ws.kuf, ws.b)
	lg.trsmL("B = L0u\\Kuf", false, M, N, l0u, M, ws.b, N)
	basis := ws.b
	if !mod.whiten {
		copyPar(lg.threads, M, N, ws.b, ws.e)
		lg.trsmL("E = L0uᵀ\\B", true, M, N, l0u, M, ws.e, N)
		basis = ws.e
	}
	mu, vr := ws.mu, ws.vr
	clear(mu)
	for n := range N {
		for l := 0; l < L; l++ {
			vr[n*L+l] = ws.kff[n]
		}
	}
	ws.klu = mod.qFactors(&lg, "P = L0u\\Lu", M, l0u, mod.layout.LU, mod.layout.MU, &qBlock{tris: ws.lu, p: ws.pu, a: ws.au, pRef: ws.puRef, aRef: ws.auRef})
	fname := "F = Luᵀ·E"
	if mod.whiten {
		fname = "F = Luᵀ·B"
	}
	mod.wideForward(&lg, fname, &fwdBlock{m: M, basis: basis, src: ws.b, sq: ws.bsq, tris: ws.lu, f: ws.f, meanOff: mod.layout.MU})
	ws.klv = 0
	ws.jitV = 0
	switch mod.kind {
	case SOLVEGP:
		if err := mod.forwardSOLVE(&lg, x); err != nil {
			return err
		}
	case ODVGP:
		mod.forwardODVGP(&lg, x)
	}
	if mod.mean != nil {
		ws.mx = grow(ws.mx, N*L)
		addMean(mod.mean, x, L, ws.mu, ws.mx)
	}
	ws.valid = true
	return nil
}

func (mod *Model) forwardSOLVE(lg *la, x *mat.Dense) error {
	ws := &mod.ws
	N := ws.n
	M, M2 := mod.m, mod.m2
	l0u := ws.l0u.RawL()
	kernUU(mod.kern, denseOn(&ws.hKuv, M, M2, ws.kuv), mod.z, mod.o)
	copyPar(lg.threads, M, M2, ws.kuv, ws.a)
	lg.trsmL("A = L0u\\Kuv", false, M, M2, l0u, M, ws.a, M2)
	kernUU(mod.kern, denseOn(&ws.hKvv, M2, M2, ws.kvv), mod.o, mod.o)
	copyPar(lg.threads, M2, M2, ws.kvv, ws.cvv)
	lg.syrkT("Cvv = Kvv − AᵀA", M2, M, -1, ws.a, M2, 1, ws.cvv, M2)
	pol, rel := relativeJitterOK(mod.cfg.cvvJitter, M2, ws.kvv, ws.cvv)
	jit, err := lg.chol("L0v = chol(Cvv)", &ws.l0v, M2, ws.cvv, pol)
	if err != nil {
		return fmt.Errorf("gp: factorizing C_vv: %w", err)
	}
	ws.jitV, ws.jitVRel = jit, rel
	l0v := ws.l0v.RawL()
	mod.kern.Matrix(denseOn(&ws.hKvf, M2, N, ws.kvf), mod.o, x)
	// D = L0v⁻¹·Cvf is formed in place, C_vf = K_vf − AᵀB first.
	copyPar(lg.threads, M2, N, ws.kvf, ws.dm)
	lg.gemm("Cvf = Kvf − AᵀB", true, false, M2, N, M, -1, ws.a, M2, ws.b, N, 1, ws.dm, N)
	lg.trsmL("D = L0v\\Cvf", false, M2, N, l0v, M2, ws.dm, N)
	basis := ws.dm
	if !mod.whiten {
		copyPar(lg.threads, M2, N, ws.dm, ws.gm)
		lg.trsmL("G = L0vᵀ\\D", true, M2, N, l0v, M2, ws.gm, N)
		basis = ws.gm
	}
	ws.klv = mod.qFactors(lg, "Pv = L0v\\Lv", M2, l0v, mod.layout.LV, mod.layout.MV, &qBlock{tris: ws.lv, p: ws.pv, a: ws.av, pRef: ws.pvRef, aRef: ws.avRef})
	hname := "H = Lvᵀ·G"
	if mod.whiten {
		hname = "H = Lvᵀ·D"
	}
	mod.wideForward(lg, hname, &fwdBlock{m: M2, basis: basis, src: ws.dm, sq: ws.dsq, tris: ws.lv, f: ws.h, meanOff: mod.layout.MV})
	return nil
}

func (mod *Model) forwardODVGP(lg *la, x *mat.Dense) {
	ws := &mod.ws
	N := ws.n
	M, M2, L, d := mod.m, mod.m2, mod.nl, mod.dz
	l0u := ws.l0u.RawL()
	kernUU(mod.kern, denseOn(&ws.hKuv, M, M2, ws.kuv), mod.z, mod.o)
	mod.kern.Matrix(denseOn(&ws.hKvf, M2, N, ws.kvf), mod.o, x)
	s := M2
	var ocols *mat.Dense = mod.o
	if mod.cfg.colSample > 0 {
		s = mod.cfg.colSample
		mod.sampleColumns()
		for j, i := range ws.idx {
			copy(ws.os[j*d:j*d+d], mod.theta[mod.layout.O+i*d:mod.layout.O+i*d+d])
		}
		ocols = denseOn(&ws.hOS, s, d, ws.os)
	}
	ws.ncol = s
	ws.rho = float64(M2) / float64(s)
	kernUU(mod.kern, denseOn(&ws.hKvs, M2, s, ws.kvs), mod.o, ocols)
	for l := 0; l < L; l++ {
		a := mod.theta[mod.layout.MV[l] : mod.layout.MV[l]+M2]
		lg.gemv(false, M, M2, 1, ws.kuv, a, 1, 0, ws.cv[l], 1)
		copy(ws.wv[l], ws.cv[l])
		lg.trsv(false, M, l0u, ws.wv[l])
		lg.gemv(true, M2, N, 1, ws.kvf, a, 1, 1, ws.mu[l:], L)
		lg.gemv(true, M, N, -1, ws.b, ws.wv[l], 1, 1, ws.mu[l:], L)
		lg.gemv(true, M2, s, 1, ws.kvs, a, 1, 0, ws.tv[l], 1)
		var q, ww float64
		for j, t := range ws.tv[l] {
			if mod.cfg.colSample > 0 {
				q += a[ws.idx[j]] * t
			} else {
				q += a[j] * t
			}
		}
		for _, v := range ws.wv[l] {
			ww += v * v
		}
		ws.klv += 0.5*ws.rho*q - 0.5*ww
	}
}

// ensureBackward sizes the backward buffers.
func (mod *Model) ensureBackward() {
	ws := &mod.ws
	M, M2, N := mod.m, mod.m2, ws.n
	ws.bbar = grow(ws.bbar, M*N)
	// The v⊥ block reuses the u block's buffers; only SOLVE-GP has one.
	mb := M
	if mod.kind == SOLVEGP {
		mb = max(M, M2)
	}
	// The whole-row path's scratch F̄ and P̄, one of each per latent
	// function worked on at once (the chunked path has its own F̄, a chunk
	// wide).
	w := mod.latentWorkers(mb, N)
	if mod.chunkCols(M, N) == 0 || (mod.kind == SOLVEGP && mod.chunkCols(M2, N) == 0) {
		ws.fbar = grow(ws.fbar, w*mb*N)
	}
	ws.pbar = grow(ws.pbar, w*mb*mb)
	ws.xu = grow(ws.xu, M*M)
	ws.vecM = grow(ws.vecM, mb)
	ws.amatL = grow(ws.amatL, mb*mod.nl)
	ws.htot = grow(ws.htot, N)
	switch mod.kind {
	case SOLVEGP:
		ws.abar = grow(ws.abar, M*M2)
		ws.dbar = grow(ws.dbar, M2*N)
		ws.xv = grow(ws.xv, M2*M2)
	case ODVGP:
		ws.vecM2 = grow(ws.vecM2, M2)
		ws.kuvbar = grow(ws.kuvbar, M*M2)
		ws.kvfbar = grow(ws.kvfbar, M2*N)
		ws.kvsbar = grow(ws.kvsbar, M2*ws.ncol)
		ws.amat = grow(ws.amat, M2*mod.nl)
		ws.asmat = grow(ws.asmat, ws.ncol*mod.nl)
		ws.wmat = grow(ws.wmat, M*mod.nl)
		ws.cbar = grow(ws.cbar, M*mod.nl)
		if mod.cfg.colSample > 0 {
			ws.osGrad = grow(ws.osGrad, ws.ncol*mod.dz)
		}
	}
}

// backBlock is one variational block (u, or v⊥ for SOLVE-GP) as
// blockBackward reads it: what the forward pass computed, where the
// block's parameters sit in the flat vector, and where the backward pass
// leaves its results.
type backBlock struct {
	// m is the number of inducing variables of the block.
	m int
	// b is B = L0⁻¹·K_f (m×N) and l0 the Cholesky factor L0 (m×m).
	b, l0 []float64
	// p, a and f hold P_l, a_l and F_l for each latent function l.
	p, a, f [][]float64
	// muOff and luOff are the offsets of m_l and L_l in the parameters.
	muOff, luOff []int
	// bbar and x are overwritten with B̄ and X.
	bbar, x []float64
}

// blockBackward back-propagates the contribution of one variational block
// (u, or v⊥ for SOLVE-GP) to the marginals and to the KL term. In the
// block's whitened coordinates the contribution is
//
//	μ_l += Bᵀ·a_l,  σ²_l += colsum((P_lᵀ·B)²) − colsum(B²),
//	KL  += ½(‖P_l‖² + ‖a_l‖² − m) − Σ log (P_l)_ii,
//
// with B = L0⁻¹·K_f, a_l = L0⁻¹·m_l and P_l = L0⁻¹·L_l (unwhitened) or
// a_l = m_l, P_l = L_l (whitened). It overwrites bbar with B̄ and x with X
// such that the adjoint of L0 through a_l and P_l is −L0⁻ᵀ·X, and adds the
// gradients of m_l and L_l into grad. f holds F_l = P_lᵀ·B as wideForward
// stored them (by chunks when chunkCols(m, N) > 0). blk names B, L0,
// P_l, a_l, F_l, the offsets of m_l and L_l, and the outputs B̄ and X.
// Whitened, X is zero and is left unwritten: blockBackward reports whether
// it wrote X, and the caller's first product into X then overwrites it
// instead of clearing M² values first.
func (mod *Model) blockBackward(lg *la, blk *backBlock, dmu, dvar []float64, kappa float64, grad []float64) (wroteX bool) {
	m, l0, p, a := blk.m, blk.l0, blk.p, blk.a
	muOff, luOff, bbar, x := blk.muOff, blk.luOff, blk.bbar, blk.x
	ws := &mod.ws
	N, L := ws.n, mod.nl
	var pbar, abar []float64
	// B̄ = −2·B·diag(Σ_l h_l) + Σ_l (a_l·g_lᵀ + P_l·F̄_l), starting with the
	// first two terms, Σ_l a_l·g_lᵀ = [a_1 … a_L]·Gᵀ with the rows of the
	// N×L matrix G those of dmu; they and the ā_l = B·g_l take one pass
	// over B (backInit) instead of one per term and latent function.
	am := ws.amatL[:m*L]
	for l := 0; l < L; l++ {
		for i, v := range a[l][:m] {
			am[i*L+l] = v
		}
	}
	// With few rows and many columns the loop below runs in column chunks
	// (see chunks.go); otherwise each of its operations is one pass over
	// whole rows.
	cw := mod.chunkCols(m, N)
	var pbars, abars []float64
	if cw > 0 {
		pbars, abars = mod.runChunkedBack(lg, cw, blk, am, dmu, dvar)
	} else {
		ws.abarL = grow(ws.abarL, L*m)
		abars = ws.abarL[:L*m]
		backInit(lg.threads, blk, N, L, ws.htot, am, dmu, abars)
	}
	if !mod.whiten {
		clearPar(lg.threads, m, m, x)
	}
	// The whole-row path works on w latent functions at a time: their
	// products P̄_l = tril(B·F̄_lᵀ) and P_l·F̄_l first (side by side when
	// w > 1), then the rest of each in order.
	w := 1
	if cw == 0 {
		w = mod.latentWorkers(m, N)
	}
	for l := 0; l < L; l++ {
		pl := p[l]
		abar = abars[l*m : (l+1)*m]
		if cw > 0 {
			pbar = pbars[l*m*m : (l+1)*m*m]
		} else {
			first := l - l%w
			if l == first {
				mod.latentBackProducts(lg, blk, dvar, first, min(first+w, L))
			}
			s := l - first
			pbar = ws.pbar[s*m*m : (s+1)*m*m]
			// B̄ += P·F̄.
			addTo(lg.threads, m, N, ws.fbar[s*m*N:(s+1)*m*N], bbar)
		}
		// ā += κ·a, P̄ += κ·(P − diag(1/P_ii)).
		for i, v := range a[l][:m] {
			abar[i] += kappa * v
		}
		mg := grad[muOff[l] : muOff[l]+m]
		lgOff := grad[luOff[l]:]
		if mod.whiten {
			for i, v := range abar {
				mg[i] += v
			}
			// P = L: the KL terms and the packed gradient in one pass.
			addTriGradKL(lg.threads, lgOff, m, pbar, mod.theta[luOff[l]:], kappa)
			continue
		}
		triAdjust(lg.threads, m, pbar, pl, kappa)
		// Unwhitened: a = L0⁻¹·m, P = L0⁻¹·L, so m̄ = L0⁻ᵀ·ā, L̄ = L0⁻ᵀ·P̄
		// and L0 receives −L0⁻ᵀ·(ā·aᵀ + P̄·Pᵀ), of which only the lower
		// triangle of X is read.
		gerLower(lg.threads, m, abar, a[l], x)
		lg.gemmLowerLLT("X += tril(P̄·Pᵀ)", m, pbar, pl, x)
		lg.trsv(true, m, l0, abar)
		for i, v := range abar {
			mg[i] += v
		}
		lg.trsmLowerPartLT("L̄ = tril(L0⁻ᵀ·P̄)", m, l0, pbar)
		addTriGrad(lg.threads, lgOff, m, pbar, mod.theta[luOff[l]:])
	}
	return !mod.whiten
}

// backward back-propagates dmu, dvar (gradients of the outer objective with
// respect to the marginals, point-major) and kappa (its coefficient on the
// total KL divergence) to the flat parameter gradient grad (accumulating)
// and, if dx is non-nil, to the inputs (accumulating). If dres is non-nil
// the objective depends on the residual variances dₙ (splitResidual) with
// gradient dres and on the marginal variances less dₙ with gradient dvar;
// nil means it depends on the marginal variances only.
func (mod *Model) backward(dmu, dvar, dres []float64, kappa float64, grad []float64, dx *mat.Dense) error {
	ws := &mod.ws
	x := ws.x
	N := ws.n
	M, M2, L, d := mod.m, mod.m2, mod.nl, mod.dz
	mod.ensureBackward()
	lg := mod.linalg(Backward)
	lay := mod.layout
	// htot is the gradient with respect to k(xₙ,xₙ) − ‖bₙ‖² (− ‖dₙ‖²):
	// through every marginal variance, or through dₙ alone.
	for n := 0; n < N; n++ {
		if dres != nil {
			ws.htot[n] = dres[n]
			continue
		}
		var s float64
		for l := 0; l < L; l++ {
			s += dvar[n*L+l]
		}
		ws.htot[n] = s
	}
	kgrad := grad[lay.Kernel : lay.Kernel+mod.kern.NumParams()]
	dZ := denseOn(&ws.hDZ, M, d, grad[lay.Z:lay.Z+M*d])
	var dO *mat.Dense
	if M2 > 0 {
		dO = denseOn(&ws.hDO, M2, d, grad[lay.O:lay.O+M2*d])
	}
	l0u := ws.l0u.RawL()
	// beta returns the coefficient of the first product into X_u or X_v:
	// 0 while the blocks have not written it (it is then overwritten).
	beta := func(wrote bool) float64 {
		if wrote {
			return 1
		}
		return 0
	}
	wroteXu := mod.blockBackward(&lg, &backBlock{m: M, b: ws.b, l0: l0u, p: ws.puRef, a: ws.auRef, f: ws.f,
		muOff: lay.MU, luOff: lay.LU, bbar: ws.bbar, x: ws.xu}, dmu, dvar, kappa, grad)

	switch mod.kind {
	case SOLVEGP:
		l0v := ws.l0v.RawL()
		wroteXv := mod.blockBackward(&lg, &backBlock{m: M2, b: ws.dm, l0: l0v, p: ws.pvRef, a: ws.avRef, f: ws.h,
			muOff: lay.MV, luOff: lay.LV, bbar: ws.dbar, x: ws.xv}, dmu, dvar, kappa, grad)
		// D = L0v⁻¹·Cvf: X_v += D̄·Dᵀ, C̄vf = L0v⁻ᵀ·D̄.
		lg.gemmLowerNT("Xv += tril(D̄·Dᵀ)", M2, N, 1, ws.dbar, N, ws.dm, N, beta(wroteXv), ws.xv, M2)
		lg.trsmL("C̄vf = L0v⁻ᵀ·D̄", true, M2, N, l0v, M2, ws.dbar, N)
		if err := lg.cholAdjoint("C̄vv = chol adjoint (L0v)", &ws.l0v, M2, ws.xv); err != nil {
			return err
		}
		// Cvv = Kvv − AᵀA, Cvf = Kvf − AᵀB.
		lg.gemm("Ā = −2A·C̄vv", false, false, M, M2, M2, -2, ws.a, M2, ws.xv, M2, 0, ws.abar, M2)
		lg.gemm("Ā −= B·C̄vfᵀ", false, true, M, M2, N, -1, ws.b, N, ws.dbar, N, 1, ws.abar, M2)
		lg.gemm("B̄ −= A·C̄vf", false, false, M, N, M2, -1, ws.a, M2, ws.dbar, N, 1, ws.bbar, N)
		// C_vv's jitter scales with mean(diag(K_vv)): K̄vv = C̄vv + its term.
		if ws.jitVRel {
			chol.AddJitterAdjoint(M2, ws.jitV, chol.MeanDiag(M2, ws.kvv, M2), ws.xv, M2, ws.xv, M2)
		}
		kernUUGrad(mod.kern, denseOn(&ws.hXv, M2, M2, ws.xv), ws.hKvv, mod.o, mod.o, dO, dO, kgrad)
		mod.kern.MatrixGrad(denseOn(&ws.hDbar, M2, N, ws.dbar), ws.hKvf, mod.o, x, dO, dx, kgrad)
		// A = L0u⁻¹·Kuv.
		lg.gemmLowerNT("Xu += tril(Ā·Aᵀ)", M, M2, 1, ws.abar, M2, ws.a, M2, beta(wroteXu), ws.xu, M)
		wroteXu = true
		lg.trsmL("K̄uv = L0u⁻ᵀ·Ā", true, M, M2, l0u, M, ws.abar, M2)
		kernUUGrad(mod.kern, denseOn(&ws.hAbar, M, M2, ws.abar), ws.hKuv, mod.z, mod.o, dZ, dO, kgrad)
	case ODVGP:
		if !wroteXu {
			clearPar(lg.threads, M, M, ws.xu)
			wroteXu = true
		}
		mod.odvgpBackward(&lg, dmu, kappa, grad, dx, dZ, dO, kgrad)
	}

	// B = L0u⁻¹·Kuf.
	lg.gemmLowerNT("Xu += tril(B̄·Bᵀ)", M, N, 1, ws.bbar, N, ws.b, N, beta(wroteXu), ws.xu, M)
	lg.trsmL("K̄uf = L0u⁻ᵀ·B̄", true, M, N, l0u, M, ws.bbar, N)
	if err := lg.cholAdjoint("K̄uu = chol adjoint (L0u)", &ws.l0u, M, ws.xu); err != nil {
		return err
	}
	// K_uu's jitter scales with its own mean diagonal.
	chol.AddJitterAdjoint(M, ws.jitU, chol.MeanDiag(M, ws.kuu, M), ws.xu, M, ws.xu, M)
	kernUUGrad(mod.kern, denseOn(&ws.hXu, M, M, ws.xu), ws.hKuu, mod.z, mod.z, dZ, dZ, kgrad)
	mod.kern.MatrixGrad(denseOn(&ws.hBbar, M, N, ws.bbar), ws.hKuf, mod.z, x, dZ, dx, kgrad)
	mod.kern.DiagGrad(ws.htot, x, dx, kgrad)
	mod.meanBackward(x, dmu, grad, dx)
	return nil
}

func (mod *Model) odvgpBackward(lg *la, dmu []float64, kappa float64, grad []float64, dx, dZ, dO *mat.Dense, kgrad []float64) {
	ws := &mod.ws
	N := ws.n
	M, M2, L, d := mod.m, mod.m2, mod.nl, mod.dz
	l0u := ws.l0u.RawL()
	s := ws.ncol
	sampled := mod.cfg.colSample > 0
	abar := ws.vecM2[:M2]
	wbar := ws.vecM[:M]
	// Columns l of amat (M₂×C), asmat (S×C), wmat (M×C) and cbar (M×C) hold
	// a_l, its sampled entries, w_l and c̄_l, so that the rank-C adjoint
	// updates below are single products (no clearing passes over the large
	// M₂×N and M₂×S adjoints).
	amat, asmat, wmat, cbar := ws.amat, ws.asmat, ws.wmat, ws.cbar
	half := 0.5 * kappa * ws.rho
	for l := 0; l < L; l++ {
		a := mod.theta[mod.layout.MV[l] : mod.layout.MV[l]+M2]
		g := dmu[l:]
		w := ws.wv[l]
		for i, v := range a {
			amat[i*L+l] = v
		}
		for i, v := range w {
			wmat[i*L+l] = v
		}
		if sampled {
			for j, i := range ws.idx {
				asmat[j*L+l] = a[i]
			}
		} else {
			for j, v := range a {
				asmat[j*L+l] = v
			}
		}
		// μ_l += Kvfᵀ·a − Bᵀ·w, KL_v += ρ/2·Σ_{j∈S} a_j (K_{:,S}ᵀ a)_j − ½‖w‖².
		lg.gemv(false, M2, N, 1, ws.kvf, g, L, 0, abar, 1)
		lg.gemv(false, M2, s, half, ws.kvs, asmat[l:], L, 1, abar, 1)
		for j, t := range ws.tv[l] {
			if sampled {
				abar[ws.idx[j]] += half * t
			} else {
				abar[j] += half * t
			}
		}
		lg.gemv(false, M, N, -1, ws.b, g, L, 0, wbar, 1)
		for i, v := range w {
			wbar[i] -= kappa * v
		}
		lg.bi.Dger(M, M, 1, wbar, 1, w, 1, ws.xu, M)
		lg.trsv(true, M, l0u, wbar) // c̄ = L0u⁻ᵀ·w̄
		for i, v := range wbar {
			cbar[i*L+l] = v
		}
		lg.gemv(true, M, M2, 1, ws.kuv, wbar, 1, 1, abar, 1)
		mg := grad[mod.layout.MV[l] : mod.layout.MV[l]+M2]
		for i, v := range abar {
			mg[i] += v
		}
	}
	// K̄_{v,S} = half·A·A_Sᵀ, K̄vf = A·Gᵀ, K̄uv = C̄·Aᵀ, B̄ −= W·Gᵀ, with G the
	// N×C matrix of marginal-mean gradients.
	lg.bi.Dgemm(gblas.NoTrans, gblas.Trans, M2, s, L, half, amat, L, asmat, L, 0, ws.kvsbar, s)
	lg.bi.Dgemm(gblas.NoTrans, gblas.Trans, M2, N, L, 1, amat, L, dmu, L, 0, ws.kvfbar, N)
	lg.bi.Dgemm(gblas.NoTrans, gblas.Trans, M, M2, L, 1, cbar, L, amat, L, 0, ws.kuvbar, M2)
	lg.bi.Dgemm(gblas.NoTrans, gblas.Trans, M, N, L, -1, wmat, L, dmu, L, 1, ws.bbar, N)
	kernUUGrad(mod.kern, denseOn(&ws.hKuvb, M, M2, ws.kuvbar), ws.hKuv, mod.z, mod.o, dZ, dO, kgrad)
	mod.kern.MatrixGrad(denseOn(&ws.hKvfb, M2, N, ws.kvfbar), ws.hKvf, mod.o, ws.x, dO, dx, kgrad)
	if sampled {
		clear(ws.osGrad)
		dOS := denseOn(&ws.hDOS, s, d, ws.osGrad)
		kernUUGrad(mod.kern, denseOn(&ws.hKvsb, M2, s, ws.kvsbar), ws.hKvs, mod.o, ws.hOS, dO, dOS, kgrad)
		og := grad[mod.layout.O:]
		for j, i := range ws.idx {
			for k := 0; k < d; k++ {
				og[i*d+k] += ws.osGrad[j*d+k]
			}
		}
	} else {
		kernUUGrad(mod.kern, denseOn(&ws.hKvsb, M2, s, ws.kvsbar), ws.hKvs, mod.o, mod.o, dO, dO, kgrad)
	}
}
