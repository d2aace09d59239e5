package convgp

import (
	"math"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/asm"
	"github.com/solvegp/solvegp/gp/transform"
)

// ---------------------------------------------------------------------------
// image variances
//
// The variance of image x is Σ_{p,q} w_p w_q k_l(l_p, l_q) k_g(x[p], x[q]).
// Images often repeat patches (a uniform background gives many identical
// patches), and k_g only depends on the patch values, so the patches of an
// image are first grouped into its nu distinct patches u_a (exactly equal
// values; rep[p] = a): then only nu(nu−1)/2 exponentials are needed, and
// with F_pb = Σ_{q: rep q = b} w_q k_l(l_p, l_q) the variance is
// Σ_p w_p Σ_b F_pb k_g(u_{rep p}, u_b). Building F takes P² additions and
// the sums P·nu multiply-adds, cheap next to an exponential. (Grouping the
// rows of F first, C_ab = Σ_{p: rep p = a} w_p F_pb, would make the sum
// Σ_ab C_ab k_g(u_a, u_b), but clearing and accumulating the nu×nu matrix C
// cost about a fifth of a training step when few patches repeat.)
//
// The variance of one image is a scalar, so its gradient with respect to
// every parameter and pixel is the adjoint dDiag[n] times a fixed vector:
// the pieces of image n (see diagEntry). DiagGrad forms the pieces and
// scales them. Since a training step calls Diag and then DiagGrad on the
// same images with the same parameters, Diag computes the pieces too once a
// DiagGrad has been seen, and keeps the last batch's pieces (with a copy of
// its images and the parameter generation) so that DiagGrad only scales
// them; on any mismatch DiagGrad recomputes them with the same code, so
// results do not depend on whether the cache was used.

// diagEntry holds the gradient pieces of Diag for a batch of n images:
// with v_n = Diag(x)_n,
//
//	sv[n] = v_n = Σ_p w_p Σ_b F_pb k_ab         (∂v_n/∂log σ²; a = rep p)
//	sl[n] = Σ_p w_p Σ_b F_pb k_ab r²_ab         (ℓ³ ∂v_n/∂ℓ)
//	so[n] = Σ_p w_p Σ_b F'_pb k_ab              (∂v_n/∂ℓ_loc, TICK)
//	gw[n·P + p] = ∂v_n/∂(P·w_p)           (if the weights are learned)
//	gx[n·L + i] = ∂v_n/∂x_n,i             (if hasX)
type diagEntry struct {
	gen        uint64
	n          int
	x          []float64
	hasX, used bool
	sv, sl, so []float64
	gw, gx     []float64
}

// matches reports whether e holds the pieces of images x (n × L) for the
// parameter generation gen, with the pixel gradients if needX.
func (e *diagEntry) matches(gen uint64, x []float64, n int, needX bool) bool {
	return e != nil && e.gen == gen && e.n == n && (e.hasX || !needX) && equalBits(e.x, x)
}

// diagState is the cache of the last batch's pieces. An entry is only
// written by the call that took it out of the state (entry or spare), so
// concurrent calls never share one.
type diagState struct {
	entry *diagEntry
	spare *diagEntry
	// wantPieces makes Diag compute the pieces (a DiagGrad followed an
	// earlier Diag); wantX makes it include the pixel gradients.
	wantPieces, wantX bool
}

// dedupe groups the patches s.xp (P×d) of one image into distinct patches:
// s.rep[p] is the group of patch p, s.xu (nu×d) holds one patch per group
// and s.xun their squared norms. It returns nu.
func (s *scratch) dedupe(P, d int) int {
	if s.seen == nil {
		s.seen = make(map[uint64][]int32)
	}
	clear(s.seen)
	s.rep = growI(s.rep, P)
	s.xu = grow(s.xu, P*d)[:0]
	nu := 0
	for p := 0; p < P; p++ {
		row := s.xp[p*d : p*d+d]
		h := uint64(14695981039346656037)
		for _, v := range row {
			h ^= math.Float64bits(v)
			h *= 1099511628211
		}
		found := -1
		for _, a := range s.seen[h] {
			if equalBits(s.xu[int(a)*d:int(a)*d+d], row) {
				found = int(a)
				break
			}
		}
		if found < 0 {
			found = nu
			s.seen[h] = append(s.seen[h], int32(nu))
			s.xu = append(s.xu, row...)
			nu++
		}
		s.rep[p] = found
	}
	s.xun = grow(s.xun, nu)
	sqNorms(s.xun, s.xu, d)
	return nu
}

func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func growI(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

// uniqueGram fills s.ku (nu×nu, symmetric) with k_g among the distinct
// patches and, if r2 is set, s.r2 with their squared distances. Each row's
// strict upper part is formed in place (Dsyrk wrote only the upper
// triangle), then mirrorUpper copies it below the diagonal: writing the
// mirror column by column inside the row loop missed the cache on every
// store once the matrix outgrew L2 (784 patches: 4.9 MB).
func (k *Kernel) uniqueGram(s *scratch, nu, d int, r2 bool) {
	s.ku = grow(s.ku, nu*nu)
	serial.Dsyrk(gblas.Upper, gblas.NoTrans, nu, d, 1, s.xu, d, 0, s.ku, nu)
	if r2 {
		s.r2 = grow(s.r2, nu*nu)
	}
	c := -0.5 / (k.ell * k.ell)
	for a := 0; a < nu; a++ {
		s.ku[a*nu+a] = k.variance
		// The strict upper part of row a holds inner products; it becomes
		// the exponents, then (by asm.Exp) the covariances.
		row := s.ku[a*nu+a+1 : a*nu+nu]
		var r2row []float64
		if r2 {
			s.r2[a*nu+a] = 0
			r2row = s.r2[a*nu+a+1 : a*nu+nu]
		}
		for j, g := range row {
			b := a + 1 + j
			d2 := max(s.xun[a]+s.xun[b]-2*g, 0) // NaN stays NaN, as with math.Max
			if r2row != nil {
				r2row[j] = d2
			}
			row[j] = c * d2
		}
		asm.Exp(row, row)
		for j, e := range row {
			row[j] = k.variance * e
		}
	}
	mirrorUpper(s.ku[:nu*nu], nu)
	if r2 {
		mirrorUpper(s.r2[:nu*nu], nu)
	}
}

// mirrorUpper copies the strict upper triangle of the row-major n×n matrix
// a into its strict lower triangle, in square tiles that stay in the L1
// cache, so that each store goes to a line the tile has already loaded.
func mirrorUpper(a []float64, n int) {
	const bs = 32
	for i0 := 0; i0 < n; i0 += bs {
		i1 := min(i0+bs, n)
		for j0 := i0; j0 < n; j0 += bs {
			j1 := min(j0+bs, n)
			for j := j0; j < j1; j++ {
				dst := a[j*n : j*n+n]
				for i := i0; i < min(i1, j); i++ {
					dst[i] = a[i*n+j]
				}
			}
		}
	}
}

// patchSums forms, row by row, F_pb = Σ_{q: rep q = b} w_q t_pq for the
// location table t (k.klocPP; without TICK all ones, so that every row is
// the same) and G_pb = F_pb k_g(u_{rep p}, u_b) from s.ku, and returns the
// variance sv = Σ_p w_p Σ_b G_pb. With pieces it also returns
// sl = Σ_p w_p Σ_b G_pb r²_{rep p, b} (from s.r2) and, with TICK,
// so = Σ_p w_p Σ_b F'_pb k_g(u_{rep p}, u_b) with F' built from the
// derivative table k.dlocPP, and keeps the row sums of G in s.gs and, if
// keepG (for the pixel gradients), G itself in s.f (P×nu: several MB per
// image, written only when needed). F and F' only ever live one row at a time, in the L1 cache: stored
// whole they were several MB per image, and clearing, filling and rereading
// them from memory cost more than the arithmetic.
//
// The sums over b run in four interleaved partial sums (rowDot, rowPieces):
// with one accumulator every row was a chain of dependent additions. Diag
// without pieces and with them add in the same order, so both give the same
// bits. (Gathering each F_pb over a list of its group's patches instead of
// scattering w_q t_pq into F_p,rep q measured 1.3-3x slower on the Intel
// Xeon, even for groups of a dozen patches: the scatter's store-to-load
// forwarding costs little there.)
func (k *Kernel) patchSums(s *scratch, nu int, pieces, keepG bool) (sv, sl, so float64) {
	rep := s.rep
	P := len(rep)
	s.fr = grow(s.fr, nu)
	fr := s.fr[:nu]
	var dfr []float64
	if k.tick && pieces {
		s.dfr = grow(s.dfr, nu)
		dfr = s.dfr[:nu]
	}
	if pieces {
		s.gs = grow(s.gs, P)
	}
	if keepG {
		s.f = grow(s.f, P*nu)
	}
	if !k.tick {
		clear(fr)
		for q, b := range rep {
			fr[b] += k.w[q]
		}
	}
	for p := 0; p < P; p++ {
		if k.tick {
			clear(fr)
			tr := k.klocPP[p*P : p*P+P]
			if dfr == nil {
				for q, b := range rep {
					fr[b] += float64(k.w[q] * tr[q])
				}
			} else {
				clear(dfr)
				dtr := k.dlocPP[p*P : p*P+P]
				for q, b := range rep {
					wq := k.w[q]
					fr[b] += float64(wq * tr[q])
					dfr[b] += float64(wq * dtr[q])
				}
			}
		}
		a := rep[p]
		kr := s.ku[a*nu : a*nu+nu]
		wp := k.w[p]
		if !pieces {
			sv += wp * rowDot(fr, kr)
			continue
		}
		var g []float64
		if keepG {
			g = s.f[p*nu : p*nu+nu]
		}
		gs, gl := rowPieces(g, fr, kr, s.r2[a*nu:a*nu+nu])
		s.gs[p] = gs
		sv += wp * gs
		sl += wp * gl
		if dfr != nil {
			so += wp * rowDot(dfr, kr)
		}
	}
	return sv, sl, so
}

// rowDot returns Σ_b f[b]·k[b] in four interleaved partial sums, in the
// order rowPieces uses for its first result.
func rowDot(f, k []float64) float64 {
	k = k[:len(f)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(f); i += 4 {
		s0 += float64(f[i] * k[i])
		s1 += float64(f[i+1] * k[i+1])
		s2 += float64(f[i+2] * k[i+2])
		s3 += float64(f[i+3] * k[i+3])
	}
	for ; i < len(f); i++ {
		s0 += float64(f[i] * k[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// rowPieces sets g[b] = f[b]·k[b] (unless g is nil) and returns Σ_b g[b]
// (bit for bit rowDot(f, k)) and Σ_b g[b]·r2[b].
func rowPieces(g, f, k, r2 []float64) (gs, gl float64) {
	n := len(f)
	k, r2 = k[:n], r2[:n]
	if g != nil {
		g = g[:n]
	}
	var s0, s1, s2, s3, l0, l1, l2, l3 float64
	i := 0
	for ; i+4 <= n; i += 4 {
		g0 := float64(f[i] * k[i])
		g1 := float64(f[i+1] * k[i+1])
		g2 := float64(f[i+2] * k[i+2])
		g3 := float64(f[i+3] * k[i+3])
		if g != nil {
			g[i], g[i+1], g[i+2], g[i+3] = g0, g1, g2, g3
		}
		s0 += g0
		s1 += g1
		s2 += g2
		s3 += g3
		l0 += float64(g0 * r2[i])
		l1 += float64(g1 * r2[i+1])
		l2 += float64(g2 * r2[i+2])
		l3 += float64(g3 * r2[i+3])
	}
	for ; i < n; i++ {
		gi := float64(f[i] * k[i])
		if g != nil {
			g[i] = gi
		}
		s0 += gi
		l0 += float64(gi * r2[i])
	}
	return (s0 + s1) + (s2 + s3), (l0 + l1) + (l2 + l3)
}

// Diag sets dst[n] to the prior variance k_ff(x_n, x_n) of image n.
func (k *Kernel) Diag(dst []float64, x mat.Matrix) {
	xd, N, xc := rawOf(x)
	if xc != k.Dim() || len(dst) != N {
		panic(mat.ErrShape)
	}
	k.dmu.Lock()
	pieces, needX := k.dstate.wantPieces, k.dstate.wantX
	if e := k.dstate.entry; pieces && e != nil && !e.used {
		// The last pieces were never used: stop computing them until
		// the next DiagGrad asks.
		k.dstate.wantPieces, pieces = false, false
	}
	var e *diagEntry
	if pieces {
		e, k.dstate.spare = k.dstate.spare, nil
	}
	k.dmu.Unlock()
	if pieces {
		e = k.diagPieces(e, xd, N, needX)
		copy(dst, e.sv)
		k.dmu.Lock()
		if k.dstate.entry != nil {
			k.dstate.spare = k.dstate.entry
		}
		k.dstate.entry = e
		k.dmu.Unlock()
		return
	}
	P, d := k.geom.NumPatches(), k.geom.PatchLen()
	k.parallel(N, func(_, lo, hi int) {
		s := k.getScratch()
		defer k.pool.Put(s)
		for n := lo; n < hi; n++ {
			k.patchesOf(s, xd, n)
			nu := s.dedupe(P, d)
			k.uniqueGram(s, nu, d, false)
			dst[n], _, _ = k.patchSums(s, nu, false, false)
		}
	})
}

// diagPieces fills e (allocated or grown as needed) with the pieces of the
// images xd (N × L) for the current parameters, including the pixel
// gradients if needX, and returns it.
func (k *Kernel) diagPieces(e *diagEntry, xd []float64, N int, needX bool) *diagEntry {
	if e == nil {
		e = new(diagEntry)
	}
	P, d, L := k.geom.NumPatches(), k.geom.PatchLen(), k.geom.ImageLen()
	e.gen, e.n, e.hasX, e.used = k.gen, N, needX, false
	e.x = append(e.x[:0], xd[:N*L]...)
	e.sv, e.sl = grow(e.sv, N), grow(e.sl, N)
	if k.tick {
		e.so = grow(e.so, N)
	}
	if k.learnW {
		e.gw = grow(e.gw, N*P)
	}
	if needX {
		e.gx = grow(e.gx, N*L)
	}
	ell2 := k.ell * k.ell
	k.parallel(N, func(_, lo, hi int) {
		s := k.getScratch()
		defer k.pool.Put(s)
		for n := lo; n < hi; n++ {
			k.patchesOf(s, xd, n)
			nu := s.dedupe(P, d)
			k.uniqueGram(s, nu, d, true)
			sv, sl, so := k.patchSums(s, nu, true, needX)
			e.sv[n], e.sl[n] = sv, sl
			if k.tick {
				e.so[n] = so
			}
			if k.learnW {
				gw := e.gw[n*P : n*P+P]
				for p, v := range s.gs[:P] {
					gw[p] = 2 * v / float64(P)
				}
			}
			if needX {
				// ∂v/∂x_p = 2 w_p/ℓ² (Σ_b G_pb u_b − (Σ_b G_pb) x_p)
				s.dxp = grow(s.dxp, P*d)
				gemm(false, false, P, d, nu, 1, s.f, nu, s.xu, d, 0, s.dxp, d)
				for p := 0; p < P; p++ {
					sc := 2 * k.w[p] / ell2
					row := s.dxp[p*d : p*d+d]
					xr := s.xp[p*d : p*d+d]
					for j := range row {
						row[j] = sc * (row[j] - s.gs[p]*xr[j])
					}
				}
				if err := k.geom.Col2Im(e.gx[n*L:n*L+L], s.dxp, 1); err != nil {
					panic(err)
				}
			}
		}
	})
	return e
}

// DiagGrad back-propagates an adjoint dDiag of Diag(x), adding the gradients
// with respect to the images into dx and the unconstrained parameters into
// dparams (either may be nil).
func (k *Kernel) DiagGrad(dDiag []float64, x mat.Matrix, dx *mat.Dense, dparams []float64) {
	xd, N, xc := rawOf(x)
	if xc != k.Dim() || len(dDiag) != N {
		panic(mat.ErrShape)
	}
	if dparams != nil && len(dparams) != k.NumParams() {
		panic(mat.ErrShape)
	}
	P, L := k.geom.NumPatches(), k.geom.ImageLen()
	dxRows, dxDone := gradRows(dx, N, L)
	if dx == nil && dparams == nil {
		return
	}
	needX := dx != nil
	// Take the cached entry (or the spare buffers) out of the cache while
	// using it, so that concurrent calls never write into it.
	k.dmu.Lock()
	e := k.dstate.entry
	hit := e.matches(k.gen, xd, N, needX)
	if hit {
		k.dstate.entry = nil
	} else {
		k.dstate.wantPieces, k.dstate.wantX = true, needX
		e, k.dstate.spare = k.dstate.spare, nil
	}
	k.dmu.Unlock()
	if !hit {
		e = k.diagPieces(e, xd, N, needX)
	}
	defer func() {
		e.used = true
		k.dmu.Lock()
		if k.dstate.entry != nil {
			k.dstate.spare = k.dstate.entry
		}
		k.dstate.entry = e
		k.dmu.Unlock()
	}()
	if dparams != nil {
		var sVar, sLen, sLoc float64
		for n, dd := range dDiag {
			sVar += dd * e.sv[n]
			sLen += dd * e.sl[n]
			if k.tick {
				sLoc += dd * e.so[n]
			}
		}
		if k.learnW {
			dw := dparams[k.wOff():]
			for n, dd := range dDiag {
				for p, v := range e.gw[n*P : n*P+P] {
					dw[p] += dd * v
				}
			}
		}
		dparams[0] += sVar / k.variance * transform.SoftplusDeriv(k.uVar)
		dparams[1] += sLen / (k.ell * k.ell * k.ell) * transform.SoftplusDeriv(k.uLen)
		if k.tick {
			dparams[2] += sLoc * transform.SoftplusDeriv(k.uLoc)
		}
	}
	if dx != nil {
		for n, dd := range dDiag {
			row := dxRows[n*L : n*L+L]
			for i, v := range e.gx[n*L : n*L+L] {
				row[i] += dd * v
			}
		}
	}
	dxDone()
}
