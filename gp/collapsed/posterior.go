package collapsed

import (
	"fmt"
	"math"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
)

// Posterior is the predictive distribution of a collapsed model with its
// variational distributions at their optimum for one data set. It keeps
// its own copy of the inducing inputs and the kernel given to the model;
// changing the kernel's parameters afterwards (for example through the
// model's SetParams) invalidates it.
//
// Predict may be called from several goroutines at once.
type Posterior struct {
	kern    kernel.Kernel
	w       *mat.Dense
	m, m2   int
	lw      []float64 // L, (m+m2)×(m+m2) lower triangular (private copies, so
	lbu     []float64 // that Predict only reads them): L_Bu, m×m
	lbv     []float64 // L_Bv, m2×m2
	alpha   []float64 // mean weights: mean = aᵀα with a = L⁻¹k_w*
	noise   float64
	threads int
	mean    gp.MeanFunction // a copy of the model's mean function, or nil
}

// Posterior computes the optimal q(u) (and q*(v⊥)) for the data x, y.
// For a model with Options.Tight, whose bound fixes no q(u) of this form,
// it is the SGPR posterior at the model's current hyperparameters.
// Options.Bound = Tighter or BlockDiagonal does not change the optimal
// q(u) and q*(v⊥), so the posterior is that of the Standard bound at the
// same hyperparameters.
func (md *Model) Posterior(x *mat.Dense, y []float64) (*Posterior, error) {
	if _, err := md.checkData(x, y); err != nil {
		return nil, err
	}
	st, err := md.forward(x, md.residual(x, y), true)
	if err != nil {
		return nil, err
	}
	alpha := make([]float64, len(st.beta))
	for i, b := range st.beta {
		alpha[i] = b / st.s
	}
	p := &Posterior{
		kern: md.kern, w: mat.DenseCopyOf(md.w), m: md.m, m2: md.m2,
		alpha: alpha, noise: st.s, threads: md.threads,
	}
	if md.mean != nil {
		if p.mean, err = cloneMean(md.mean); err != nil {
			return nil, fmt.Errorf("collapsed: Posterior: %w", err)
		}
	}
	p.lw = append([]float64(nil), st.lw.RawL()...)
	p.lbu = append([]float64(nil), st.lbu.RawL()...)
	if md.m2 > 0 {
		p.lbv = append([]float64(nil), st.lbv.RawL()...)
	}
	return p, nil
}

// NoiseVariance returns σ², to add to the latent variance for the
// predictive variance of y.
func (p *Posterior) NoiseVariance() float64 { return p.noise }

// Predict writes the predictive mean and variance of the latent function
// at the rows of xs into mean and variance (each of length rows(xs);
// variance may be nil).
func (p *Posterior) Predict(xs *mat.Dense, mean, variance []float64) error {
	if xs == nil {
		return fmt.Errorf("collapsed: Predict: nil inputs")
	}
	t, d := xs.Dims()
	if d != p.kern.Dim() {
		return fmt.Errorf("collapsed: Predict: inputs have %d columns, the kernel dimension is %d", d, p.kern.Dim())
	}
	if len(mean) != t || (variance != nil && len(variance) != t) {
		return fmt.Errorf("collapsed: Predict: %d inputs but mean has %d and variance %d values", t, len(mean), len(variance))
	}
	if err := checkFinite("prediction inputs", xs); err != nil {
		return err
	}
	k := p.m + p.m2
	bi := blas.Implementation{Threads: p.threads}
	const chunk = 2048
	c := min(chunk, t)
	a := mat.NewDense(k, c, nil)
	buf := make([]float64, k*c)
	kdiag := make([]float64, c)
	for t0 := 0; t0 < t; t0 += c {
		tc := min(c, t-t0)
		xc := xs.Slice(t0, t0+tc, 0, d).(*mat.Dense)
		ac := a.Slice(0, k, 0, tc).(*mat.Dense)
		p.kern.Matrix(ac, p.w, xc)
		ar := ac.RawMatrix()
		bi.Dtrsm(gblas.Left, gblas.Lower, gblas.NoTrans, gblas.NonUnit, k, tc, 1, p.lw, k, ar.Data, ar.Stride)
		if p.mean != nil {
			p.mean.Eval(xc, mean[t0:t0+tc])
			bi.Dgemv(gblas.Trans, k, tc, 1, ar.Data, ar.Stride, p.alpha, 1, 1, mean[t0:t0+tc], 1)
		} else {
			bi.Dgemv(gblas.Trans, k, tc, 1, ar.Data, ar.Stride, p.alpha, 1, 0, mean[t0:t0+tc], 1)
		}
		if variance == nil {
			continue
		}
		// var = k** − ‖a‖² + ‖L_Bu⁻¹a_u‖² + ‖L_Bv⁻¹a_v‖².
		p.kern.Diag(kdiag[:tc], xc)
		vc := variance[t0 : t0+tc]
		copy(vc, kdiag[:tc])
		colSq(vc, ar.Data, ar.Stride, 0, k, tc, -1)
		b := buf[:k*tc]
		for i := 0; i < k; i++ {
			copy(b[i*tc:(i+1)*tc], ar.Data[i*ar.Stride:i*ar.Stride+tc])
		}
		bi.Dtrsm(gblas.Left, gblas.Lower, gblas.NoTrans, gblas.NonUnit, p.m, tc, 1, p.lbu, p.m, b, tc)
		colSq(vc, b, tc, 0, p.m, tc, 1)
		if p.m2 > 0 {
			bi.Dtrsm(gblas.Left, gblas.Lower, gblas.NoTrans, gblas.NonUnit, p.m2, tc, 1, p.lbv, p.m2, b[p.m*tc:], tc)
			colSq(vc, b, tc, p.m, k, tc, 1)
		}
		for i := range vc {
			vc[i] = math.Max(vc[i], 0) // rounding can make a tiny variance negative
		}
	}
	return nil
}

// colSq adds sign·Σ_{i∈[r0,r1)} a[i][j]² to v[j] for j < nc.
func colSq(v, a []float64, lda, r0, r1, nc int, sign float64) {
	for i := r0; i < r1; i++ {
		row := a[i*lda : i*lda+nc]
		for j, x := range row {
			v[j] += sign * x * x
		}
	}
}

// OptimalQ returns the optimal variational distributions of the
// uncollapsed model for the data x, y at the model's current
// hyperparameters and inducing inputs: q(u) = N(mu, su) and, for SOLVE-GP,
// q(v⊥) = N(mv, sv) (nil for SGPR), in the unwhitened parameterization of
// package gp. The uncollapsed bound at these q equals the collapsed bound;
// they are a natural initialization for mini-batch training.
//
// In the whitened coordinates w̃ = L⁻¹[u; v] of the joint prior the
// optimum is m̃ = B⁻¹e/σ² and S̃ = blockdiag(B_u⁻¹, B_v⁻¹); since
// v⊥ = L_c·w̃_v, with L_c the lower-right block of L, this gives
// m_u = L_u·m̃_u, S_u = L_u·B_u⁻¹·L_uᵀ, m_v = L_c·m̃_v and
// S_v = L_c·B_v⁻¹·L_cᵀ.
func (md *Model) OptimalQ(x *mat.Dense, y []float64) (mu []float64, su *mat.SymDense, mv []float64, sv *mat.SymDense, err error) {
	mu, tu, mv, tv, err := md.optimalFactors(x, y)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	bi := blas.Implementation{Threads: md.threads}
	cov := func(n int, t []float64) *mat.SymDense {
		c := mat.NewSymDense(n, nil)
		cr := c.RawSymmetric()
		bi.Dsyrk(gblas.Upper, gblas.NoTrans, n, n, 1, t, n, 0, cr.Data, cr.Stride)
		return c
	}
	su = cov(md.m, tu)
	if md.m2 > 0 {
		sv = cov(md.m2, tv)
	}
	return mu, su, mv, sv, nil
}

// optimalFactors returns the means of the optimal q(u) and q*(v⊥) (see
// OptimalQ) and square factors of their covariances, S_u = T_u·T_uᵀ and
// S_v = T_v·T_vᵀ (n×n row-major, T = L_blk·L_B⁻ᵀ, not triangular); mv and
// tv are nil for SGPR.
func (md *Model) optimalFactors(x *mat.Dense, y []float64) (mu, tu, mv, tv []float64, err error) {
	p, err := md.Posterior(x, y)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	k := md.m + md.m2
	bi := blas.Implementation{Threads: md.threads}
	block := func(off, n int, lb []float64) (mean, t []float64) {
		// L_blk = rows/cols [off, off+n) of L; mean = L_blk·α_blk.
		mean = make([]float64, n)
		copy(mean, p.alpha[off:off+n])
		bi.Dtrmv(gblas.Lower, gblas.NoTrans, gblas.NonUnit, n, p.lw[off*k+off:], k, mean, 1)
		// S = L_blk·B⁻¹·L_blkᵀ = (L_blk·L_B⁻ᵀ)(L_blk·L_B⁻ᵀ)ᵀ.
		t = make([]float64, n*n)
		for i := 0; i < n; i++ {
			copy(t[i*n:i*n+i+1], p.lw[(off+i)*k+off:(off+i)*k+off+i+1])
		}
		bi.Dtrsm(gblas.Right, gblas.Lower, gblas.Trans, gblas.NonUnit, n, n, 1, lb, n, t, n)
		return mean, t
	}
	mu, tu = block(0, md.m, p.lbu)
	if md.m2 > 0 {
		mv, tv = block(md.m, md.m2, p.lbv)
	}
	return mu, tu, mv, tv, nil
}
