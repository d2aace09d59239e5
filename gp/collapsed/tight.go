package collapsed

import (
	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/blas"
)

// The tighter bound of Appendix A, in the notation of the package
// documentation (K = M inducing inputs, Ã = L⁻¹K_uf, G = ÃÃᵀ,
// B = I + G/σ²): by the matrix inversion lemma
//
//	(Q_ff + σ²I)⁻¹ = I/σ² − ÃᵀB⁻¹Ã/σ⁴,
//
// so −½·tr[(Q_ff + σ²I)⁻¹(K_ff − Q_ff)] = −tr(K_ff − Q_ff)/(2σ²) + T with
//
//	T = tr(B⁻¹·R)/(2σ⁴),  R = Ã·(K_ff − Q_ff)·Ãᵀ = Ã·K_ff·Ãᵀ − G²,
//
// the first part being Titsias' trace term. T ≥ 0, which makes the bound
// tighter. K_ff enters only through V = (K_ff − Q_ff)·Ãᵀ, formed block by
// block from K_bc − Ã_bᵀ·Ã_c. R is Ã·V, not Ã·K_ff·Ãᵀ − G²: where Q_ff
// nearly equals K_ff (Z near the data, a large signal-to-noise ratio) that
// difference cancels almost entirely and its rounding, amplified by 1/σ⁴,
// swamped T (T < 0, or a bound above the exact log marginal likelihood).

// tightForward computes V, B⁻¹, R and T.
func (md *Model) tightForward(st *state, x *mat.Dense) error {
	n, d := x.Dims()
	k := md.m
	s := st.s
	bi := blas.Implementation{Threads: md.threads}
	at := st.at.RawMatrix() // k×n, stride n (single chunk)
	st.v = make([]float64, n*k)
	blk := min(md.chunk, n)
	kb := mat.NewDense(blk, blk, nil)
	for b0 := 0; b0 < n; b0 += blk {
		nb := min(blk, n-b0)
		xb := x.Slice(b0, b0+nb, 0, d).(*mat.Dense)
		for c0 := 0; c0 < n; c0 += blk {
			nc := min(blk, n-c0)
			xc := x.Slice(c0, c0+nc, 0, d).(*mat.Dense)
			kbc := kb.Slice(0, nb, 0, nc).(*mat.Dense)
			md.kern.Matrix(kbc, xb, xc)
			kr := kbc.RawMatrix()
			// D_bc = K_bc − Ã_bᵀ·Ã_c, then V_b += D_bc·Ã_cᵀ.
			bi.Dgemm(gblas.Trans, gblas.NoTrans, nb, nc, k, -1, at.Data[b0:], at.Stride, at.Data[c0:], at.Stride, 1, kr.Data, kr.Stride)
			bi.Dgemm(gblas.NoTrans, gblas.Trans, nb, k, nc, 1, kr.Data, kr.Stride, at.Data[c0:], at.Stride, 1, st.v[b0*k:], k)
		}
	}
	// R = Ã·V.
	st.r = make([]float64, k*k)
	bi.Dgemm(gblas.NoTrans, gblas.NoTrans, k, k, n, 1, at.Data, at.Stride, st.v, k, 0, st.r, k)
	st.binv = make([]float64, k*k)
	if err := st.lb.Inverse(st.binv, k); err != nil {
		return err
	}
	var tr float64
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			tr += st.binv[i*k+j] * st.r[j*k+i]
		}
	}
	st.t = tr / (2 * s * s)
	return nil
}

// tightGbar adds the tight term's part of Ḡ into gbar and returns its
// direct derivative with respect to σ².
//
// With V = (K_ff − ÃᵀÃ)·Ãᵀ and B̄ = −B⁻¹RB⁻¹/(2σ⁴) (from T through
// B = I + G/σ²), T's adjoint of Ã is 2B̄·Ã/σ² − G·B⁻¹·Ã/σ⁴ + B⁻¹·Vᵀ/σ⁴.
// The backward pass forms Ā as 2Ḡ·Ã + … + B⁻¹·Vᵀ/σ⁴, so Ḡ gains
// B̄/σ² − G·B⁻¹/(2σ⁴) (not symmetric; only 2Ḡ·Ã is used), and
// ∂T/∂σ² = −2T/σ² − ⟨B̄, G⟩/σ⁴.
func (md *Model) tightGbar(st *state, gbar []float64) float64 {
	k := md.m
	s := st.s
	bi := blas.Implementation{Threads: md.threads}
	tmp := make([]float64, k*k)
	bbar := make([]float64, k*k)
	// bbar = −B⁻¹·R·B⁻¹/(2σ⁴).
	bi.Dgemm(gblas.NoTrans, gblas.NoTrans, k, k, k, 1, st.binv, k, st.r, k, 0, tmp, k)
	bi.Dgemm(gblas.NoTrans, gblas.NoTrans, k, k, k, -1/(2*s*s), tmp, k, st.binv, k, 0, bbar, k)
	// tmp = B⁻¹·G.
	bi.Dgemm(gblas.NoTrans, gblas.NoTrans, k, k, k, 1, st.binv, k, st.g, k, 0, tmp, k)
	var bg float64
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			bbarSym := 0.5 * (bbar[i*k+j] + bbar[j*k+i])
			gbar[i*k+j] += bbarSym/s - tmp[j*k+i]/(2*s*s) // (G·B⁻¹)_ij = (B⁻¹·G)_ji
			bg += bbarSym * st.g[i*k+j]
		}
	}
	return -2*st.t/s - bg/(s*s)
}

// tightKffGrad adds the gradient through K_ff, with adjoint
// K̄_ff = Ãᵀ·B⁻¹·Ã/(2σ⁴), to dtheta, block by block.
func (md *Model) tightKffGrad(st *state, x *mat.Dense, dtheta []float64) {
	n, d := x.Dims()
	k := md.m
	s := st.s
	bi := blas.Implementation{Threads: md.threads}
	at := st.at.RawMatrix()
	// W = B⁻¹·Ã/(2σ⁴) (k×n).
	w := make([]float64, k*n)
	bi.Dgemm(gblas.NoTrans, gblas.NoTrans, k, n, k, 1/(2*s*s), st.binv, k, at.Data, at.Stride, 0, w, n)
	blk := min(md.chunk, n)
	kb := mat.NewDense(blk, blk, nil)
	kbar := mat.NewDense(blk, blk, nil)
	for b0 := 0; b0 < n; b0 += blk {
		nb := min(blk, n-b0)
		xb := x.Slice(b0, b0+nb, 0, d).(*mat.Dense)
		for c0 := 0; c0 < n; c0 += blk {
			nc := min(blk, n-c0)
			xc := x.Slice(c0, c0+nc, 0, d).(*mat.Dense)
			kbc := kb.Slice(0, nb, 0, nc).(*mat.Dense)
			md.kern.Matrix(kbc, xb, xc)
			gbc := kbar.Slice(0, nb, 0, nc).(*mat.Dense)
			gr := gbc.RawMatrix()
			// K̄_bc = Ã_bᵀ·W_c.
			bi.Dgemm(gblas.Trans, gblas.NoTrans, nb, nc, k, 1, at.Data[b0:], at.Stride, w[c0:], n, 0, gr.Data, gr.Stride)
			md.kern.MatrixGrad(gbc, kbc, xb, xc, nil, nil, dtheta)
		}
	}
}
