package convgp

import (
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/transform"
	"github.com/solvegp/solvegp/internal/floats"
	"github.com/solvegp/solvegp/internal/vecmath"
)

// ---------------------------------------------------------------------------
// image variances
//
// The variance of image x is
//
//	v = σ² Σ_{p,q} w_p w_q t_pq e_pq,  e_pq = exp(−‖x[p] − x[q]‖² / (2ℓ²)),
//
// with t the location kernel (k.klocPP; all ones without TICK). The
// summand is symmetric in p and q, so v is formed from the pairs p < q
// alone: v = σ² Σ_p w_p (w_p t_pp + 2 Σ_{q>p} w_q t_pq e_pq). The patches
// are taken in blocks of diagBlock rows p; one GEMM forms the block's inner
// products x[p]·x[q] for all q ≥ its first row, and vecmath.RBFPairRow turns
// each row's strictly upper part into the row's sums (distances,
// exponentials and weighted sums in registers, with AVX-512 or AVX2
// kernels) and, when the pixel gradients are wanted, overwrites it with
// t_pq e_pq.
// Everything stays in the L2 cache, and no exponential is taken twice.
//
// (Grouping each image's patches into its distinct patches first and taking
// the exponentials among those is slower: on Fashion-MNIST an image has 478
// distinct 5×5 patches of 576 on average, so it saves a third of the
// exponentials but costs a hash table, a scattered P×P sum and a mirrored
// copy of the Gram matrix, three times the time of this loop.)
//
// The variance of one image is a scalar, so its gradient with respect to
// every parameter and pixel is the adjoint dDiag[n] times a fixed vector:
// the pieces of image n (see diagEntry). DiagGrad forms the pieces and
// scales them. Since a training step calls Diag and then DiagGrad on the
// same images with the same parameters, Diag computes the pieces too once a
// DiagGrad has been seen, and keeps the last batch's pieces (with a copy of
// its images and the parameter generation) so that DiagGrad only scales
// them; on any mismatch DiagGrad recomputes them with the same code, so
// results do not depend on whether the cache was used. Diag with and
// without the pieces adds the variance's terms in the same order, so both
// give the same bits.

// diagEntry holds the gradient pieces of Diag for a batch of n images:
// with v_n = Diag(x)_n and k_pq = σ² t_pq e_pq,
//
//	sv[n] = v_n = Σ_{p,q} w_p w_q k_pq              (∂v_n/∂log σ²)
//	sl[n] = Σ_{p,q} w_p w_q k_pq r²_pq               (ℓ³ ∂v_n/∂ℓ)
//	so[n] = Σ_{p,q} w_p w_q σ² t'_pq e_pq            (∂v_n/∂ℓ_loc, TICK)
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
	return e != nil && e.gen == gen && e.n == n && (e.hasX || !needX) && floats.EqualBits(e.x, x)
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

// diagBlock is the number of patch rows whose pairs imageSums forms at a
// time: with P = 576 the block buffer is 147 KB.
const diagBlock = 32

// imageSums returns, for the image whose patches are s.xp (P×d, squared
// norms s.xn), the sums of the variance (see diagEntry) without the factor
// σ²: sv = Σ_{p,q} w_p w_q t_pq e_pq and, with pieces, sl (the same with
// r²_pq) and, with TICK, so (with t'_pq = k.dlocPP); it then also leaves
// s.gs[p] = Σ_q w_q t_pq e_pq. With pixels (which needs pieces) it also
// leaves in s.dxp the rows Σ_q w_q t_pq e_pq (x[q] − x[p]), which the
// pixel gradients scale.
func (k *Kernel) imageSums(s *scratch, pieces, pixels bool) (sv, sl, so float64) {
	P, d := k.geom.NumPatches(), k.geom.PatchLen()
	c := -0.5 / (k.ell * k.ell)
	w := k.w
	s.gb = grow(s.gb, diagBlock*P)
	if pieces {
		s.gs = grow(s.gs, P)
		clear(s.gs)
	}
	if pixels {
		s.wx = grow(s.wx, P*d)
		for p := 0; p < P; p++ {
			wp := w[p]
			for j, v := range s.xp[p*d : p*d+d] {
				s.wx[p*d+j] = wp * v
			}
		}
		s.dxp = grow(s.dxp, P*d)
		clear(s.dxp)
	}
	for p0 := 0; p0 < P; p0 += diagBlock {
		nb, W := min(diagBlock, P-p0), P-p0
		gb := s.gb[:nb*W]
		gemm(false, true, nb, W, d, 1, s.xp[p0*d:], d, s.xp[p0*d:], d, 0, gb, W)
		for i := 0; i < nb; i++ {
			p := p0 + i
			// row holds the pairs (p, q), q = p+1, ..., P−1.
			row := gb[i*W+i+1 : i*W+W]
			t, tpp := k.ones[p+1:P], k.tpp(p)
			var dt, gs []float64
			if k.tick {
				t = k.klocPP[p*P+p+1 : p*P+P]
				if pieces {
					dt = k.dlocPP[p*P+p+1 : p*P+P]
				}
			}
			if pieces {
				gs = s.gs[p+1 : P]
			}
			wp := w[p]
			rs, rl, ro := vecmath.RBFPairRow(row, s.xn[p+1:P], t, w[p+1:P], dt, gs, s.xn[p], c, wp, pixels)
			sv += wp * (wp*tpp + 2*rs)
			if !pieces {
				continue
			}
			sl += wp * (2 * rl)
			if dt != nil {
				so += wp * (wp*k.dlocPP[p*P+p] + 2*ro)
			}
			s.gs[p] += rs + wp*tpp
			if pixels {
				// The GEMMs below take the pairs q > p of the row, so the
				// row's other entries (inner products with the block's
				// earlier rows, and the diagonal, whose term in
				// Σ_q w_q t_pq e_pq (x[q] − x[p]) vanishes) become 0.
				clear(gb[i*W : i*W+i+1])
			}
		}
		if pixels {
			// dxp[p] += Σ_{q>p} h_pq w_q x[q] for the block's rows, and
			// dxp[q] += Σ_p h_pq w_p x[p] for every q after them, with
			// h_pq = t_pq e_pq (zero on and below the diagonal).
			gemm(false, false, nb, d, W, 1, gb, W, s.wx[p0*d:], d, 1, s.dxp[p0*d:], d)
			gemm(true, false, W, d, nb, 1, gb, W, s.wx[p0*d:], d, 1, s.dxp[p0*d:], d)
		}
	}
	if pixels {
		for p := 0; p < P; p++ {
			g := s.gs[p] - w[p]*k.tpp(p)
			xr := s.xp[p*d : p*d+d]
			for j, v := range xr {
				s.dxp[p*d+j] -= g * v
			}
		}
	}
	return sv, sl, so
}

// tpp is the location kernel of a patch with itself (1).
func (k *Kernel) tpp(p int) float64 {
	if k.tick {
		P := k.geom.NumPatches()
		return k.klocPP[p*P+p]
	}
	return 1
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
	k.parallel(N, func(_, lo, hi int) {
		s := k.scratches.get()
		defer k.scratches.put(s)
		for n := lo; n < hi; n++ {
			k.patchesOf(s, xd, n)
			sv, _, _ := k.imageSums(s, false, false)
			dst[n] = k.variance * sv
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
	v := k.variance
	ell2 := k.ell * k.ell
	k.parallel(N, func(_, lo, hi int) {
		s := k.scratches.get()
		defer k.scratches.put(s)
		for n := lo; n < hi; n++ {
			k.patchesOf(s, xd, n)
			sv, sl, so := k.imageSums(s, true, needX)
			e.sv[n], e.sl[n] = v*sv, v*sl
			if k.tick {
				e.so[n] = v * so
			}
			if k.learnW {
				gw := e.gw[n*P : n*P+P]
				for p, g := range s.gs[:P] {
					gw[p] = 2 * v * g / float64(P)
				}
			}
			if needX {
				// ∂v/∂x_p = 2σ² w_p/ℓ² Σ_q w_q t_pq e_pq (x[q] − x[p])
				for p := 0; p < P; p++ {
					sc := 2 * v * k.w[p] / ell2
					row := s.dxp[p*d : p*d+d]
					for j := range row {
						row[j] *= sc
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
