package convgp

import (
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/transform"
	"github.com/solvegp/solvegp/internal/floats"
	"github.com/solvegp/solvegp/internal/vecmath"
)

// ---------------------------------------------------------------------------
// inducing × image
//
// K[m, n] = σ² Σ_p w_p k_l(l_m, l_p) E_mnp with E_mnp = exp(−r²_mnp/(2ℓ²))
// and r²_mnp = ‖z_m − x_n[p]‖². A training step calls Matrix and then
// MatrixGrad with the same inducing points, images and parameters, so Matrix
// can keep the exponentials E of the last two calls (SOLVE-GP has two sets
// of inducing points) for MatrixGrad, which then needs no exponential. As
// for Diag, Matrix starts keeping them once a MatrixGrad has been seen, the
// cache is keyed by exact copies of z and x and the parameter generation,
// and a MatrixGrad that misses recomputes E with the same code, so results
// do not depend on the cache. Batches whose E would exceed Config.CacheBytes
// are not kept.
//
// MatrixGrad needs the squared distances only for the lengthscale gradient
// Σ A_mnp r²_mnp (A the adjoint-weighted kernel values), which it forms
// without them as Σ_m ‖z_m‖² Σ_np A_mnp + Σ_np ‖x_n[p]‖² Σ_m A_mnp −
// 2 Σ_m z_m·(Σ_np A_mnp x_n[p]); the last sum is the inducing-point
// gradient's matrix product, needed anyway.

// matEntry holds E (N blocks of M×P, image-major) for inducing points z and
// images x. MatrixGrad turns E into its adjoint-weighted values in place
// (copying it out first cost a read and a write of up to 128 MiB per call)
// and marks the entry spent: it then only lends its buffers to the next
// Matrix.
type matEntry struct {
	gen   uint64
	m, n  int
	z, x  []float64
	e     []float64
	used  bool
	spent bool
}

func (e *matEntry) matches(gen uint64, z, x []float64, m, n int) bool {
	return e != nil && !e.spent && e.gen == gen && e.m == m && e.n == n && floats.EqualBits(e.z, z) && floats.EqualBits(e.x, x)
}

// matState is the cache: entries most recent first. An entry is only
// written or read by the call that took it out of the list.
type matState struct {
	entries []*matEntry
	want    bool
}

const matEntries = 2

// takeMat removes and returns the entry matching (z, x) or, if none does
// and keep is set, the least recently used entry (or nil) for reuse of its
// buffers.
func (k *Kernel) takeMat(z, x []float64, m, n int, keep bool) (e *matEntry, hit bool) {
	k.dmu.Lock()
	defer k.dmu.Unlock()
	st := &k.mstate
	for i, c := range st.entries {
		if c.matches(k.gen, z, x, m, n) {
			st.entries = append(st.entries[:i], st.entries[i+1:]...)
			return c, true
		}
	}
	if !keep || len(st.entries) < matEntries {
		return nil, false
	}
	last := len(st.entries) - 1
	e = st.entries[last]
	st.entries = st.entries[:last]
	return e, false
}

// putMat makes e the most recent entry.
func (k *Kernel) putMat(e *matEntry) {
	k.dmu.Lock()
	defer k.dmu.Unlock()
	st := &k.mstate
	st.entries = append([]*matEntry{e}, st.entries...)
	if len(st.entries) > matEntries {
		st.entries = st.entries[:matEntries]
	}
}

// expBlock fills e (M×P) with the exponentials e_mp = exp(−‖z_m − x[p]‖²/(2ℓ²))
// of inducing patches zp (norms zn) against the patches in s (s.xp, s.xn):
// one GEMM for the inner products, then vecmath.RBFPairRow on each row, which
// forms the distances and exponentials in registers and overwrites the row
// with them (its location factors are k.ones). If sums is not nil it also
// sets sums[m] = Σ_p wz[m·ws + p]·e_mp (ws = 0: the same weights for every
// row).
func (k *Kernel) expBlock(e []float64, s *scratch, zp, zn []float64, M int, wz []float64, ws int, sums []float64) {
	P, d := k.geom.NumPatches(), k.geom.PatchLen()
	gemm(false, true, M, P, d, 1, zp, d, s.xp, d, 0, e, P)
	c := -0.5 / (k.ell * k.ell)
	w := k.ones
	for m := 0; m < M; m++ {
		if wz != nil {
			w = wz[m*ws : m*ws+P]
		}
		sum, _, _ := vecmath.RBFPairRow(e[m*P:m*P+P], s.xn, k.ones, w, nil, nil, zn[m], c, 0, true)
		if sums != nil {
			sums[m] = sum
		}
	}
}

// Matrix sets dst (rows(z)×rows(x)) to the cross-covariance between inducing
// points z (InducingDim columns) and images x (Dim columns).
func (k *Kernel) Matrix(dst *mat.Dense, z, x mat.Matrix) {
	zraw, _, _ := rawOf(z)
	zp, zl, M := k.splitInducing(z)
	defer k.putSplit(zp, zl)
	xd, N, xc := rawOf(x)
	if xc != k.Dim() {
		panic(mat.ErrShape)
	}
	if r, c := dst.Dims(); r != M || c != N {
		panic(mat.ErrShape)
	}
	P, d, L := k.geom.NumPatches(), k.geom.PatchLen(), k.geom.ImageLen()
	zn := make([]float64, M)
	sqNorms(zn, zp, d)
	// K[m, n] = σ² Σ_p wz[m·ws + p] e_mp for image n, with wz = the weights
	// w_p (ws = 0) or, with TICK, w_p times the location kernel
	// k_l(zl_m, l_p) (ws = P).
	wz, ws := k.w, 0
	if k.tick {
		wz, ws = k.bufs.get(M*P), P
		defer k.bufs.put(wz)
		k.locKernel(wz, nil, zl, M, true)
	}
	k.dmu.Lock()
	keep := k.mstate.want && k.cache > 0 && M*P*N <= k.cache/8
	k.dmu.Unlock()
	var ent *matEntry
	if keep {
		var hit bool
		ent, hit = k.takeMat(zraw, xd[:N*L], M, N, true)
		if ent != nil && !hit && !ent.used {
			// The evicted entry was never used: stop keeping entries
			// until the next MatrixGrad asks.
			k.dmu.Lock()
			k.mstate.want = false
			k.dmu.Unlock()
		}
		if ent == nil {
			ent = new(matEntry)
		}
		ent.gen, ent.m, ent.n, ent.used, ent.spent = k.gen, M, N, false, false
		ent.z = append(ent.z[:0], zraw...)
		ent.x = append(ent.x[:0], xd[:N*L]...)
		ent.e = grow(ent.e, N*M*P)
	}
	out := dst.RawMatrix()
	k.parallel(N, func(_, lo, hi int) {
		s := k.scratches.get()
		defer k.scratches.put(s)
		if ent == nil {
			s.g = grow(s.g, M*P)
		}
		s.gs = grow(s.gs, M)
		for n := lo; n < hi; n++ {
			k.patchesOf(s, xd, n)
			e := s.g
			if ent != nil {
				e = ent.e[n*M*P : (n+1)*M*P]
			}
			k.expBlock(e, s, zp, zn, M, wz, ws, s.gs)
			for m, sum := range s.gs[:M] {
				out.Data[m*out.Stride+n] = k.variance * sum
			}
		}
	})
	if ent != nil {
		k.putMat(ent)
	}
}

// MatrixGrad back-propagates an adjoint dK of K = Matrix(z, x): it adds the
// gradients with respect to the inducing points into dz, with respect to
// the images into dx and with respect to the unconstrained parameters into
// dparams; any of them may be nil. K is not used and may be nil.
func (k *Kernel) MatrixGrad(dK, K *mat.Dense, z, x mat.Matrix, dz, dx *mat.Dense, dparams []float64) {
	zraw, _, _ := rawOf(z)
	zp, zl, M := k.splitInducing(z)
	defer k.putSplit(zp, zl)
	xd, N, xc := rawOf(x)
	if xc != k.Dim() {
		panic(mat.ErrShape)
	}
	if r, c := dK.Dims(); r != M || c != N {
		panic(mat.ErrShape)
	}
	if dparams != nil && len(dparams) != k.NumParams() {
		panic(mat.ErrShape)
	}
	if dz == nil && dx == nil && dparams == nil {
		return
	}
	P, d, L := k.geom.NumPatches(), k.geom.PatchLen(), k.geom.ImageLen()
	g := &gradPass{zp: zp, zl: zl, xd: xd, m: M, n: N, p: P, d: d, l: L, id: k.InducingDim(),
		dkr: dK.RawMatrix(), ell2: k.ell * k.ell, wantDX: dx != nil}
	g.zn = make([]float64, M)
	sqNorms(g.zn, zp, d)
	if k.tick {
		g.kloc, g.eloc = k.bufs.get(M*P), k.bufs.get(M*P)
		defer func() {
			k.bufs.put(g.kloc)
			k.bufs.put(g.eloc)
		}()
		k.locKernel(g.kloc, g.eloc, zl, M, false)
	}
	g.ent, g.hit = k.takeMat(zraw, xd[:N*L], M, N, false)
	if !g.hit {
		k.dmu.Lock()
		k.mstate.want = true
		k.dmu.Unlock()
	}
	var dzDone, dxDone func()
	g.dzRows, dzDone = gradRows(dz, M, g.id)
	g.dxRows, dxDone = gradRows(dx, N, L)
	accs := k.gradAccumulate(g)
	defer k.putGradAccs(accs)
	if g.hit {
		g.ent.used, g.ent.spent = true, true
		k.putMat(g.ent)
	}
	sum := k.sumGradAccs(accs)
	if dz != nil {
		for m := 0; m < M; m++ {
			for j := 0; j < d; j++ {
				g.dzRows[m*g.id+j] += (sum.dzpT[j*M+m] - sum.rs[m]*zp[m*d+j]) / g.ell2
			}
		}
	}
	if dparams != nil {
		k.scaleGrad(g, &sum, dparams)
	}
	if k.tick {
		k.locGrad(g, sum.dmp, dz != nil, dparams)
	} else if sum.dw != nil && dparams != nil {
		for p, v := range sum.dw {
			dparams[k.wOff()+p] += v / float64(P)
		}
	}
	dzDone()
	dxDone()
}

// gradPass is what the stages of one MatrixGrad call share.
type gradPass struct {
	// zp holds the patch parts of the M inducing points (M×d), zl their
	// locations (M×2, TICK only) and zn the squared norms of zp.
	zp, zl, zn []float64
	// xd holds the N images (N×l).
	xd []float64
	// m, n, p, d, l and id are M, N, the number of patches, the patch
	// length, the image length and the inducing points' dimension.
	m, n, p, d, l, id int
	// kloc and eloc are the location kernel and its exponentials (M×P,
	// TICK only).
	kloc, eloc []float64
	// ent is the cached exponentials of Matrix(z, x) if hit.
	ent *matEntry
	hit bool
	// dkr is the adjoint dK; dzRows and dxRows receive the gradients.
	dkr            blas64.General
	dzRows, dxRows []float64
	// ell2 is the squared lengthscale.
	ell2 float64
	// wantDX asks for the gradient with respect to the images.
	wantDX bool
}

// gradAcc is one worker's (or, summed, all workers') sums of MatrixGrad.
type gradAcc struct {
	dzpT []float64 // d×M: (Σ A x)ᵀ (patch part before the rowsum term)
	rs   []float64 // M: row sums of A
	dmp  []float64 // M×P: Σ_n dK[m,n] kg[m,np] (TICK location & weights)
	dw   []float64 // P
	sVar float64   // Σ A
	sXn  float64   // Σ A ‖x_p‖²
}

// gradAccumulate runs over the images in parallel, adding each image's
// gradient into g.dxRows and returning each worker's sums.
func (k *Kernel) gradAccumulate(g *gradPass) []gradAcc {
	M, P, d := g.m, g.p, g.d
	accs := make([]gradAcc, k.nworkers(g.n))
	k.parallel(g.n, func(w, lo, hi int) {
		a := &accs[w]
		a.dzpT = k.bufs.getZero(d * M)
		a.rs = k.bufs.getZero(M)
		if k.tick {
			a.dmp = k.bufs.getZero(M * P)
		} else if k.learnW {
			a.dw = k.bufs.getZero(P)
		}
		s := k.scratches.get()
		defer k.scratches.put(s)
		if !g.hit {
			s.g = grow(s.g, M*P)
		}
		s.gs = grow(s.gs, P)
		if g.wantDX {
			s.dxp = grow(s.dxp, P*d)
			s.dxpT = grow(s.dxpT, d*P)
		}
		for n := lo; n < hi; n++ {
			k.gradImage(g, a, s, n)
		}
	})
	return accs
}

// gradImage adds image n's terms to a and its gradient to g.dxRows.
func (k *Kernel) gradImage(g *gradPass, a *gradAcc, s *scratch, n int) {
	M, P, d, L := g.m, g.p, g.d, g.l
	k.patchesOf(s, g.xd, n)
	var e []float64
	if g.hit {
		e = g.ent.e[n*M*P : (n+1)*M*P] // overwritten below: the entry is spent
	} else {
		e = s.g
		k.expBlock(e, s, g.zp, g.zn, M, nil, 0, nil)
	}
	// A[m, p] = σ² dK[m, n] w_p k_l(zl_m, l_p) e_mp overwrites e;
	// cs gets its column sums.
	cs := s.gs[:P]
	clear(cs)
	for m := 0; m < M; m++ {
		dk := g.dkr.Data[m*g.dkr.Stride+n] * k.variance
		var kl, dv []float64
		if g.kloc != nil {
			kl, dv = g.kloc[m*P:m*P+P], a.dmp[m*P:m*P+P]
		} else if a.dw != nil {
			dv = a.dw
		}
		rs := vecmath.KernelGradRow(e[m*P:m*P+P], kl, k.w, dv, cs, dk)
		a.sVar += rs
		a.rs[m] += rs
	}
	for p, v := range cs {
		a.sXn += v * s.xn[p]
	}
	// The products with the d-column patches are formed transposed, with
	// d rows: the micro-kernel's tiles are 14 rows by 16 columns on
	// AVX-512, so 25 rows fill 89% of two tiles where 25 columns fill 78%
	// (Zen 4: 40–42 against 31–35 GFLOP/s).
	gemm(true, true, d, M, P, 1, s.xp, d, e, P, 1, a.dzpT, M)
	if !g.wantDX {
		return
	}
	// dxp = (Aᵀ Z − colsum(A) ⊙ xp) / ℓ², from dxpᵀ = Zᵀ A / ℓ².
	gemm(true, false, d, P, M, 1/g.ell2, g.zp, d, e, P, 0, s.dxpT, P)
	for p := 0; p < P; p++ {
		c := cs[p] / g.ell2
		row := s.dxp[p*d : p*d+d]
		xr := s.xp[p*d : p*d+d]
		for j := range row {
			row[j] = s.dxpT[j*P+p] - c*xr[j]
		}
	}
	if err := k.geom.Col2ImAdd(g.dxRows[n*L:n*L+L], s.dxp, 1); err != nil {
		panic(err)
	}
}

// sumGradAccs adds the workers' sums into the first worker's, in worker
// order (deterministic for a fixed worker count), and returns them. The
// elements of the largest, dmp (M×P), are split among the workers, each
// element still summed in worker order.
func (k *Kernel) sumGradAccs(accs []gradAcc) gradAcc {
	sum := accs[0]
	for _, a := range accs[1:] {
		sum.sVar += a.sVar
		sum.sXn += a.sXn
		addTo(sum.dw, a.dw)
		addTo(sum.dzpT, a.dzpT)
		addTo(sum.rs, a.rs)
	}
	if len(accs) > 1 && sum.dmp != nil {
		k.parallel(len(sum.dmp), func(_, lo, hi int) {
			for _, a := range accs[1:] {
				addTo(sum.dmp[lo:hi], a.dmp[lo:hi])
			}
		})
	}
	return sum
}

// putGradAccs returns the workers' buffers to the kernel's pool.
func (k *Kernel) putGradAccs(accs []gradAcc) {
	for _, a := range accs {
		k.bufs.put(a.dzpT)
		k.bufs.put(a.rs)
		k.bufs.put(a.dmp)
		k.bufs.put(a.dw)
	}
}

// scaleGrad adds the gradients with respect to the variance and the
// lengthscale into dparams.
func (k *Kernel) scaleGrad(g *gradPass, sum *gradAcc, dparams []float64) {
	// Σ A r² = Σ_m ‖z_m‖² rs_m + Σ A ‖x_p‖² − 2 Σ_m z_m·(A X)_m
	d := g.d
	sLen := sum.sXn
	for m := 0; m < g.m; m++ {
		sLen += g.zn[m] * sum.rs[m]
		zx := 0.0
		for j, v := range g.zp[m*d : m*d+d] {
			zx += v * sum.dzpT[j*g.m+m]
		}
		sLen -= 2 * zx
	}
	dparams[0] += sum.sVar / k.variance * transform.SoftplusDeriv(k.uVar)
	dparams[1] += sLen / (g.ell2 * k.ell) * transform.SoftplusDeriv(k.uLen)
}

// locGradBlocks is the number of fixed blocks of rows in which locGrad
// runs; their sums are added in block order, so the result does not depend
// on the number of workers.
const locGradBlocks = 16

// locGrad adds TICK's terms: the gradients with respect to the inducing
// locations (into g.dzRows if wantDZ), the patch weights and the location
// lengthscale (into dparams if not nil). dmp[m,p] = Σ_n dK k_g; the
// contribution to K is w_p kloc[m,p] dmp. The rows are worked on in
// locGradBlocks blocks, split among the kernel's workers.
func (k *Kernel) locGrad(g *gradPass, dmp []float64, wantDZ bool, dparams []float64) {
	P := g.p
	nb := min(locGradBlocks, g.m)
	sLoc := make([]float64, nb)
	var dw []float64
	if k.learnW && dparams != nil {
		dw = make([]float64, nb*P)
	}
	k.parallel(nb, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			var dwb []float64
			if dw != nil {
				dwb = dw[b*P : (b+1)*P]
			}
			sLoc[b] = k.locGradRows(g, dmp, wantDZ, dwb, b*g.m/nb, (b+1)*g.m/nb)
		}
	})
	if dparams == nil {
		return
	}
	var s float64
	for b := 0; b < nb; b++ {
		s += sLoc[b]
		if dw != nil {
			for p, v := range dw[b*P : (b+1)*P] {
				dparams[k.wOff()+p] += v / float64(P)
			}
		}
	}
	dparams[2] += s * transform.SoftplusDeriv(k.uLoc)
}

// locGradRows computes locGrad's terms of rows m0 to m1: it adds the
// location gradients into g.dzRows if wantDZ and Σ_m dmp[m,p]·kloc[m,p]
// into dw[p] if dw is not nil, and returns the rows' share of the location
// lengthscale's gradient (before the softplus factor).
func (k *Kernel) locGradRows(g *gradPass, dmp []float64, wantDZ bool, dw []float64, m0, m1 int) (sLoc float64) {
	P, d := g.p, g.d
	le := k.locEll
	for m := m0; m < m1; m++ {
		r0, c0 := g.zl[2*m], g.zl[2*m+1]
		var gr, gc float64
		for p := 0; p < P; p++ {
			v := dmp[m*P+p]
			if dw != nil {
				dw[p] += v * g.kloc[m*P+p]
			}
			v *= k.w[p]
			dr, dc := r0-k.locs[2*p], c0-k.locs[2*p+1]
			sq := math.Sqrt(3*(dr*dr+dc*dc)) / le
			ex := g.eloc[m*P+p]
			sLoc += v * sq * sq * ex / le
			f := -3 / (le * le) * ex * v
			gr += f * dr
			gc += f * dc
		}
		if wantDZ {
			g.dzRows[m*g.id+d] += gr
			g.dzRows[m*g.id+d+1] += gc
		}
	}
	return sLoc
}
