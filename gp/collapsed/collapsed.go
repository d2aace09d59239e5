// Package collapsed implements the collapsed (full-batch) variational
// bounds for sparse GP regression with Gaussian noise: Titsias' SGPR bound
// (eq. 4 of the SOLVE-GP paper) and the collapsed SOLVE-GP bound (eq. 10)
// with q(v⊥) at its closed-form optimum (Appendix C), with exact gradients
// with respect to the kernel hyperparameters, the noise variance and the
// inducing inputs Z and O, L-BFGS training and prediction.
//
// # The bounds in one form
//
// Let W = [Z; O] stack the M inducing inputs and the M₂ orthogonal inducing
// inputs (M₂ = 0 for SGPR), K_ww = L·Lᵀ, Ã = L⁻¹K_wf, G = Ã·Ãᵀ,
// B = I + G/σ² and e = Ã·y. Write B_u and B_v for the diagonal blocks of B
// belonging to Z and O. Because the lower block of L⁻¹ whitens the
// orthogonal part, Ã's lower block is L_c⁻¹·C_vf with C_vv = L_c·L_cᵀ, and
// the Appendix C optimum q*(v⊥) = N(m*, S*) turns eq. (10) into
//
//	F = −N/2·log 2π − ½·log|B_u| − ½·log|B_v| − N/2·log σ² − yᵀy/(2σ²)
//	    + eᵀB⁻¹e/(2σ⁴) − tr K_ff/(2σ²) + tr G/(2σ²).
//
// For M₂ = 0 this is exactly Titsias' bound; for M₂ > 0 the data-fit term
// is that of SGPR with inducing set Z ∪ O while the log-determinant is that
// of the block-diagonal B_u ⊕ B_v, so SGPR(Z) ≤ F ≤ SGPR(Z ∪ O). (The
// tests check F against a dense evaluation of eq. (10) at the paper's m*
// and S*.) The cost is O(N·(M+M₂)² + (M+M₂)³) time and, with the data
// processed in row chunks, O((M+M₂)² + (M+M₂)·chunk) memory.
//
// Predictions use the optimal q(u) and q*(v⊥): the mean is that of SGPR
// with inducing set Z ∪ O and the variance is
// k** − ‖a‖² + a_uᵀB_u⁻¹a_u + a_vᵀB_v⁻¹a_v with a = L⁻¹k_w*.
//
// OptimalQ returns these optimal q(u), q*(v⊥) in package gp's unwhitened
// parameterization; the uncollapsed SVGP / SOLVE-GP bound of package gp
// equals the collapsed bound there and is below it at any other q (tested).
// GPModel builds from them an independent gp.Model — SVGP, or SOLVE-GP
// when there are orthogonal inducing inputs, unwhitened — with copies of
// the kernel, the noise, Z and O and q at that optimum, so that a
// collapsed fit can be saved with package modelfile, used for prediction
// through gp.Predictor, or trained further with mini-batches by package
// train.
//
// Options.Bound = Tighter selects the bound of Titsias (ICML 2025) and
// Bui, Ashman and Turner (TMLR 2025): q(f⊥|v⊥) (q(f|u) for SGPR) with the
// residual covariance C = K_ff − Q_ff rescaled to C^½·Λ·C^½, Λ diagonal and
// optimized in closed form, which replaces −tr K_ff/(2σ²) + tr G/(2σ²) =
// −Σ dₙ/(2σ²) by −½·Σ log(1 + dₙ/σ²), dₙ = k(xₙ,xₙ) − ‖ãₙ‖². It is at
// least the Standard bound, at most the log marginal likelihood, and has
// the same optimal q(u) and q*(v⊥) (tighter.go derives it).
//
// Options.Bound = BlockDiagonal is the bound of Bui and Titsias (2025)
// with a block-diagonal Λ over a partition of the data into blocks of
// Options.BlockSize points (BlockOrder): the trace term becomes
// −½·Σ_b log|I + C_b/σ²| with C_b = K_bb − Q_bb the diagonal blocks of C.
// It lies between Tighter (block size 1) and the log marginal likelihood,
// and again leaves q(u), q*(v⊥) and the predictions unchanged
// (blockdiag.go derives it).
//
// Options.Tight selects instead the tighter bound of Appendix A,
// log N(y | 0, Q_ff + σ²I) − ½·tr[(Q_ff + σ²I)⁻¹(K_ff − Q_ff)], which
// adds T = tr(B⁻¹(Ã·K_ff·Ãᵀ − G²))/(2σ⁴) ≥ 0 to Titsias' bound at
// O(N²·M) cost, for medium N (SGPR only).
package collapsed

import (
	"errors"
	"fmt"
	"math"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/transform"
	"github.com/solvegp/solvegp/internal/nilcheck"
)

// Options configure a Model. The zero value gives the defaults.
type Options struct {
	// FixInducing keeps Z and O out of the parameter vector (they are not
	// optimized).
	FixInducing bool
	// Jitter is the policy for factorizing K_ww; nil means
	// chol.DefaultJitter(). BoundGrad's gradient includes the jitter's
	// dependence on the mean diagonal of K_ww, so it is the exact gradient
	// of the jittered bound.
	Jitter *chol.JitterPolicy
	// Threads bounds the goroutines of the linear algebra (0 means
	// GOMAXPROCS).
	Threads int
	// Tight selects the tighter bound of Appendix A of the paper,
	// log N(y | 0, Q_ff + σ²I) − ½·tr[(Q_ff + σ²I)⁻¹(K_ff − Q_ff)], instead
	// of Titsias' bound. It needs O(N²·M) time and O(N·M + ChunkSize²)
	// memory (K_ff is formed block by block), so it suits medium N only,
	// and it is available for SGPR models (no O) only.
	Tight bool
	// Bound selects the collapsed bound: Standard (the zero value) or
	// Tighter, which replaces the trace term −Σ dₙ/(2σ²) by
	// −½·Σ log(1 + dₙ/σ²) at O(N·(M+M₂)²) extra gradient cost. It applies
	// to SGPR and collapsed SOLVE-GP alike and does not go with Tight.
	// BlockDiagonal replaces it by −½·Σ_b log|I + C_b/σ²| over blocks of
	// BlockSize points.
	Bound BoundKind
	// BlockSize is the number of points per block of the BlockDiagonal
	// bound (at least 1; the last block holds the remainder). It must be 0
	// for the other bounds. The extra cost per evaluation is
	// O(N·BlockSize·(d + M + M₂ + BlockSize)) time and, when the data fit
	// in one chunk, O(N·BlockSize) memory.
	BlockSize int
	// ChunkSize is the number of data rows processed at a time (0 means
	// 4096). Smaller chunks use less memory; when the data fit in one
	// chunk the gradient reuses the forward pass's N×(M+M₂) matrices
	// instead of recomputing them.
	ChunkSize int
	// Mean is the prior mean function m(x) (package gp/mean; nil means
	// zero). The bound is then the zero-mean bound with y replaced by the
	// residual y − m(X), the predictions add m(x*), and the mean's
	// parameters are the last entries of the flat parameter vector. The
	// model owns it from then on.
	Mean gp.MeanFunction
}

// Model is a collapsed sparse GP regression model: SGPR when it has no
// orthogonal inducing inputs, collapsed SOLVE-GP otherwise.
//
// Its flat parameter vector is, in order: the kernel's unconstrained
// parameters, the Gaussian likelihood's (the noise variance, as
// floor + softplus(u)), then, unless Options.FixInducing, the rows of Z and
// then of O, and last the mean function's (Options.Mean). A Model is not
// safe for concurrent use.
type Model struct {
	kern  kernel.Kernel
	lik   *likelihood.Gaussian
	w     *mat.Dense // (M+M₂)×d: Z rows then O rows
	m, m2 int
	fix   bool
	tight bool
	bound BoundKind
	// blockSize is the BlockDiagonal bound's block size (0 otherwise).
	blockSize int
	jitter    chol.JitterPolicy
	threads   int
	chunk     int
	mean      gp.MeanFunction // nil: zero mean
}

// New returns a collapsed model with kernel k, Gaussian noise lik, M
// inducing inputs z (M×d) and M₂ orthogonal inducing inputs o (M₂×d, or
// nil for SGPR). z and o are copied; k and lik are used (and updated by
// SetParams) in place. k may be any gp.Kernel (kernel.Kernel has the same
// method set); GPModel copies it by its Clone method (gp.Cloner).
func New(k kernel.Kernel, lik *likelihood.Gaussian, z, o *mat.Dense, opts Options) (*Model, error) {
	if nilcheck.IsNil(k) || lik == nil || z == nil {
		return nil, errors.New("collapsed: New: nil kernel, likelihood or Z")
	}
	if np := k.NumParams(); np < 0 {
		return nil, fmt.Errorf("collapsed: New: the kernel has %d parameters", np)
	}
	m, d := z.Dims()
	if d != k.Dim() {
		return nil, fmt.Errorf("collapsed: New: Z has %d columns, the kernel dimension is %d", d, k.Dim())
	}
	m2 := 0
	if o != nil {
		var d2 int
		m2, d2 = o.Dims()
		if d2 != d {
			return nil, fmt.Errorf("collapsed: New: O has %d columns, Z has %d", d2, d)
		}
	}
	if opts.Threads < 0 || opts.ChunkSize < 0 {
		return nil, fmt.Errorf("collapsed: New: negative Threads or ChunkSize")
	}
	w := mat.NewDense(m+m2, d, nil)
	w.Slice(0, m, 0, d).(*mat.Dense).Copy(z)
	if m2 > 0 {
		w.Slice(m, m+m2, 0, d).(*mat.Dense).Copy(o)
	}
	if err := checkFinite("inducing inputs", w); err != nil {
		return nil, err
	}
	jit := chol.DefaultJitter()
	if opts.Jitter != nil {
		jit = *opts.Jitter
		if err := jit.Validate(); err != nil {
			return nil, err
		}
	}
	chunk := opts.ChunkSize
	if chunk == 0 {
		chunk = 4096
	}
	if opts.Tight && m2 > 0 {
		return nil, errors.New("collapsed: New: the tighter bound (Options.Tight) is defined for SGPR only (o must be nil)")
	}
	if opts.Bound != Standard && opts.Bound != Tighter && opts.Bound != BlockDiagonal {
		return nil, fmt.Errorf("collapsed: New: unknown Options.Bound %v", opts.Bound)
	}
	if opts.Tight && opts.Bound != Standard {
		return nil, fmt.Errorf("collapsed: New: Options.Tight and Options.Bound = %v are different bounds; choose one", opts.Bound)
	}
	if err := checkBlockSize(opts.Bound, opts.BlockSize); err != nil {
		return nil, err
	}
	if err := checkMean(opts.Mean, d); err != nil {
		return nil, err
	}
	return &Model{kern: k, lik: lik, w: w, m: m, m2: m2, fix: opts.FixInducing, tight: opts.Tight, bound: opts.Bound,
		blockSize: opts.BlockSize, jitter: jit, threads: opts.Threads, chunk: chunk, mean: opts.Mean}, nil
}

// checkBlockSize validates Options.BlockSize for the bound b.
func checkBlockSize(b BoundKind, size int) error {
	if b == BlockDiagonal && size < 1 {
		return fmt.Errorf("collapsed: New: Options.BlockSize is %d; the blockdiag bound needs at least 1", size)
	}
	if b != BlockDiagonal && size != 0 {
		return fmt.Errorf("collapsed: New: Options.BlockSize %d is set but the bound is %v (it applies to blockdiag only)", size, b)
	}
	return nil
}

// BoundKind returns the collapsed bound the model evaluates.
func (md *Model) BoundKind() BoundKind { return md.bound }

// BlockSize returns the block size of the BlockDiagonal bound (0 for the
// other bounds).
func (md *Model) BlockSize() int { return md.blockSize }

// checkMean validates a mean function for d-dimensional inputs (nil is
// the zero mean).
func checkMean(m gp.MeanFunction, d int) error {
	if nilcheck.IsNil(m) {
		return nil
	}
	if m.Dim() != d {
		return fmt.Errorf("collapsed: New: the mean function has dimension %d, the kernel %d", m.Dim(), d)
	}
	if q := gp.MeanOutputs(m); q != 1 {
		return fmt.Errorf("collapsed: New: the mean function has %d outputs; the collapsed bound has one latent function", q)
	}
	if m.NumParams() < 0 {
		return fmt.Errorf("collapsed: New: the mean function has %d parameters", m.NumParams())
	}
	p := make([]float64, m.NumParams())
	m.Params(p)
	for i, v := range p {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("collapsed: New: mean parameter %d is %v", i, v)
		}
	}
	if _, err := cloneMean(m); err != nil {
		return fmt.Errorf("collapsed: New: %w", err)
	}
	return nil
}

// cloneMean returns a copy of m made by its Clone method.
func cloneMean(m gp.MeanFunction) (gp.MeanFunction, error) {
	c, ok := m.Clone().(gp.MeanFunction)
	if !ok || nilcheck.IsNil(c) || !nilcheck.IsCopy(c, m) {
		return nil, fmt.Errorf("the mean function %T has no Clone method that returns a copy", m)
	}
	return c, nil
}

// Mean returns the model's mean function (nil for the zero mean); its
// parameters are owned by the model.
func (md *Model) Mean() gp.MeanFunction { return md.mean }

// numMean returns the number of mean parameters.
func (md *Model) numMean() int {
	if md.mean == nil {
		return 0
	}
	return md.mean.NumParams()
}

// residual returns y − m(X), or y itself without a mean function. x and y
// must have passed checkData.
func (md *Model) residual(x *mat.Dense, y []float64) []float64 {
	if md.mean == nil {
		return y
	}
	r := make([]float64, len(y))
	md.mean.Eval(x, r)
	for i, v := range y {
		r[i] = v - r[i]
	}
	return r
}

func checkFinite(what string, a mat.Matrix) error {
	r, c := a.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if v := a.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("collapsed: %s: element (%d, %d) is %v", what, i, j, v)
			}
		}
	}
	return nil
}

// Z returns a copy of the inducing inputs.
func (md *Model) Z() *mat.Dense {
	_, d := md.w.Dims()
	return mat.DenseCopyOf(md.w.Slice(0, md.m, 0, d))
}

// O returns a copy of the orthogonal inducing inputs (nil for SGPR).
func (md *Model) O() *mat.Dense {
	if md.m2 == 0 {
		return nil
	}
	_, d := md.w.Dims()
	return mat.DenseCopyOf(md.w.Slice(md.m, md.m+md.m2, 0, d))
}

// Kernel returns the model's kernel.
func (md *Model) Kernel() kernel.Kernel { return md.kern }

// Likelihood returns the model's Gaussian likelihood.
func (md *Model) Likelihood() *likelihood.Gaussian { return md.lik }

// NumParams returns the length of the flat parameter vector.
func (md *Model) NumParams() int {
	n := md.kern.NumParams() + md.lik.NumParams()
	if !md.fix {
		n += len(md.w.RawMatrix().Data)
	}
	return n + md.numMean()
}

// Params copies the flat parameters into dst (length NumParams; it panics
// on any other length).
func (md *Model) Params(dst []float64) {
	if len(dst) != md.NumParams() {
		panic(fmt.Sprintf("collapsed: Params: destination length %d, want %d", len(dst), md.NumParams()))
	}
	nk := md.kern.NumParams()
	md.kern.Params(dst[:nk])
	md.lik.Params(dst[nk : nk+1])
	if !md.fix {
		copy(dst[nk+1:], md.w.RawMatrix().Data)
	}
	if md.mean != nil {
		md.mean.Params(dst[len(dst)-md.numMean():])
	}
}

// SetParams sets the flat parameters. It returns an error, leaving the
// model unchanged, for a wrong length or a non-finite value.
func (md *Model) SetParams(src []float64) error {
	if len(src) != md.NumParams() {
		return fmt.Errorf("collapsed: SetParams: %d values, want %d", len(src), md.NumParams())
	}
	for i, v := range src {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("collapsed: SetParams: parameter %d is %v", i, v)
		}
	}
	nk := md.kern.NumParams()
	old := make([]float64, nk)
	md.kern.Params(old)
	if err := md.kern.SetParams(src[:nk]); err != nil {
		return err
	}
	var oldLik [1]float64
	md.lik.Params(oldLik[:])
	if err := md.lik.SetParams(src[nk : nk+1]); err != nil {
		md.kern.SetParams(old)
		return err
	}
	nm := md.numMean()
	if md.mean != nil {
		if err := md.mean.SetParams(src[len(src)-nm:]); err != nil {
			md.kern.SetParams(old)
			md.lik.SetParams(oldLik[:])
			return fmt.Errorf("collapsed: SetParams: mean function: %w", err)
		}
	}
	if !md.fix {
		copy(md.w.RawMatrix().Data, src[nk+1:len(src)-nm])
	}
	return nil
}

// Bound returns the collapsed bound F on the data x (N×d), y.
func (md *Model) Bound(x *mat.Dense, y []float64) (float64, error) {
	return md.eval(x, y, nil)
}

// BoundGrad returns the collapsed bound and writes its gradient with
// respect to the flat parameters into grad (length NumParams,
// overwritten).
func (md *Model) BoundGrad(x *mat.Dense, y []float64, grad []float64) (float64, error) {
	if len(grad) != md.NumParams() {
		return 0, fmt.Errorf("collapsed: BoundGrad: gradient length %d, want %d", len(grad), md.NumParams())
	}
	return md.eval(x, y, grad)
}

func (md *Model) checkData(x *mat.Dense, y []float64) (n int, err error) {
	if x == nil {
		return 0, errors.New("collapsed: nil data")
	}
	n, d := x.Dims()
	if d != md.kern.Dim() {
		return 0, fmt.Errorf("collapsed: x has %d columns, the kernel dimension is %d", d, md.kern.Dim())
	}
	if len(y) != n {
		return 0, fmt.Errorf("collapsed: x has %d rows but y has %d values", n, len(y))
	}
	if err := checkFinite("x", x); err != nil {
		return 0, err
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("collapsed: y[%d] is %v", i, v)
		}
	}
	return n, nil
}

// factorKww computes K_ww and its factor.
func (md *Model) factorKww() (*mat.Dense, *chol.Cholesky, error) {
	k := md.m + md.m2
	kww := mat.NewDense(k, k, nil)
	md.kern.Matrix(kww, md.w, md.w)
	var lw chol.Cholesky
	if _, err := lw.Factor(k, kww.RawMatrix().Data, k, md.jitter, md.threads); err != nil {
		return nil, nil, fmt.Errorf("collapsed: factorizing K_ww (%d×%d): %w", k, k, err)
	}
	return kww, &lw, nil
}

// state holds the forward pass of the bound.
type state struct {
	n, chunk int
	single   bool // all rows in one chunk: kwf and at hold K_wf and Ã
	kww      *mat.Dense
	lw       *chol.Cholesky
	kwf, at  *mat.Dense
	diag     []float64
	g        []float64 // G = ÃÃᵀ, full symmetric
	e, beta  []float64 // e = Ãy, β = B⁻¹e
	lb       *chol.Cholesky
	lbu, lbv *chol.Cholesky // factors of B_u and B_v (lbu = lb, lbv = nil for SGPR)
	s        float64        // σ²
	trKff    float64
	yy, eb   float64 // yᵀy, eᵀβ
	trG      float64
	f        float64 // the bound

	// Appendix A bound (Options.Tight): V = (K_ff − ÃᵀÃ)·Ãᵀ (N×K,
	// row-major), B⁻¹, R = Ã·V and the extra term T = tr(B⁻¹R)/(2σ⁴).
	v    []float64
	binv []float64
	r    []float64
	t    float64

	// Tighter bound: wₙ = 1/(σ² + dₙ) for every row, Σ log(1 + dₙ/σ²)
	// and Σ dₙwₙ.
	w       []float64
	logTerm float64 // also Σ_b log|I + C_b/σ²| for BlockDiagonal
	dw      float64

	// BlockDiagonal bound: the factors of σ²I + C_b, block by block, when
	// the data form a single chunk (otherwise the backward pass
	// recomputes them).
	blk []*chol.Cholesky
}

// forward evaluates the bound. With qOnly it computes only what the
// optimal q(u) and q*(v⊥) need: the Appendix A term and the BlockDiagonal
// term are left out of st.f (x need not be in block order then).
func (md *Model) forward(x *mat.Dense, y []float64, qOnly bool) (*state, error) {
	n, err := md.checkData(x, y)
	if err != nil {
		return nil, err
	}
	_, d := x.Dims()
	k := md.m + md.m2
	st := &state{n: n, s: md.lik.NoiseVariance()}
	s := st.s
	bi := blas.Implementation{Threads: md.threads}

	st.kww, st.lw, err = md.factorKww()
	if err != nil {
		return nil, err
	}

	// Forward pass over row chunks: G = ÃÃᵀ (lower), e = Ãy, Σ k(x,x).
	chunk := min(md.chunk, n)
	blockTerm := md.bound == BlockDiagonal && !qOnly
	if blockTerm {
		chunk = min(blockChunk(md.chunk, md.blockSize), n)
	}
	tight := md.tight && !qOnly
	if tight {
		chunk = n // the tight term needs all of Ã at once
	}
	st.chunk = chunk
	g := make([]float64, k*k)
	e := make([]float64, k)
	st.kwf = mat.NewDense(k, chunk, nil) // K_wf for a chunk
	st.at = mat.NewDense(k, chunk, nil)  // Ã for a chunk
	st.diag = make([]float64, chunk)
	st.single = chunk == n
	if md.bound == Tighter {
		st.w = make([]float64, n)
	}
	for n0 := 0; n0 < n; n0 += chunk {
		nc := min(chunk, n-n0)
		xc := x.Slice(n0, n0+nc, 0, d).(*mat.Dense)
		ac, err := md.whiten(st, xc, nc)
		if err != nil {
			return nil, err
		}
		acr := ac.RawMatrix()
		bi.Dsyrk(gblas.Lower, gblas.NoTrans, k, nc, 1, acr.Data, acr.Stride, 1, g, k)
		bi.Dgemv(gblas.NoTrans, k, nc, 1, acr.Data, acr.Stride, y[n0:n0+nc], 1, 1, e, 1)
		md.kern.Diag(st.diag[:nc], xc)
		if md.bound == Tighter {
			if err := st.tighterChunk(n0, nc, k, acr.Data, acr.Stride, st.diag); err != nil {
				return nil, err
			}
		}
		if blockTerm {
			if err := md.blockForwardChunk(st, xc, acr, nc); err != nil {
				return nil, err
			}
		}
		for i := 0; i < nc; i++ {
			st.trKff += st.diag[i]
			st.yy += y[n0+i] * y[n0+i]
		}
	}
	for i := 0; i < k; i++ {
		for j := 0; j < i; j++ {
			g[j*k+i] = g[i*k+j]
		}
		st.trG += g[i*k+i]
	}
	st.g, st.e = g, e

	// B = I + G/σ², β = B⁻¹e, and the diagonal blocks B_u, B_v.
	bw := make([]float64, k*k)
	for i := range bw {
		bw[i] = g[i] / s
	}
	for i := 0; i < k; i++ {
		bw[i*k+i]++
	}
	st.lb = new(chol.Cholesky)
	if _, err := st.lb.Factor(k, bw, k, chol.NoJitter(), md.threads); err != nil {
		return nil, fmt.Errorf("collapsed: factorizing I + G/σ²: %w", err)
	}
	st.beta = append([]float64(nil), e...)
	if err := st.lb.Solve(1, st.beta, 1); err != nil {
		return nil, err
	}
	for i := range e {
		st.eb += e[i] * st.beta[i]
	}
	logDetB := st.lb.LogDet()
	st.lbu = st.lb
	if md.m2 > 0 {
		st.lbu, st.lbv = new(chol.Cholesky), new(chol.Cholesky)
		if _, err := st.lbu.Factor(md.m, bw, k, chol.NoJitter(), md.threads); err != nil {
			return nil, fmt.Errorf("collapsed: factorizing B_u: %w", err)
		}
		if _, err := st.lbv.Factor(md.m2, bw[md.m*k+md.m:], k, chol.NoJitter(), md.threads); err != nil {
			return nil, fmt.Errorf("collapsed: factorizing B_v: %w", err)
		}
		logDetB = st.lbu.LogDet() + st.lbv.LogDet()
	}
	nf := float64(n)
	st.f = -0.5*nf*math.Log(2*math.Pi) - 0.5*logDetB - 0.5*nf*math.Log(s) - st.yy/(2*s) + st.eb/(2*s*s)
	switch md.bound {
	case Standard:
		st.f += -st.trKff/(2*s) + st.trG/(2*s)
	case Tighter, BlockDiagonal:
		st.f -= 0.5 * st.logTerm
	}
	if tight {
		if err := md.tightForward(st, x); err != nil {
			return nil, err
		}
		st.f += st.t
	}
	if math.IsNaN(st.f) || math.IsInf(st.f, 0) {
		return nil, fmt.Errorf("collapsed: bound is %v", st.f)
	}
	return st, nil
}

// whiten computes K_wf for the rows xc into st.kwf and Ã = L⁻¹K_wf into
// st.at (both k×nc views), returning the Ã view.
func (md *Model) whiten(st *state, xc *mat.Dense, nc int) (*mat.Dense, error) {
	k := md.m + md.m2
	kc := st.kwf.Slice(0, k, 0, nc).(*mat.Dense)
	ac := st.at.Slice(0, k, 0, nc).(*mat.Dense)
	md.kern.Matrix(kc, md.w, xc)
	ac.Copy(kc)
	acr := ac.RawMatrix()
	if err := st.lw.SolveL(nc, acr.Data, acr.Stride); err != nil {
		return nil, err
	}
	return ac, nil
}

// eval computes the bound and, if grad is not nil, its gradient.
func (md *Model) eval(x *mat.Dense, y []float64, grad []float64) (float64, error) {
	if _, err := md.checkData(x, y); err != nil {
		return math.NaN(), err
	}
	y = md.residual(x, y)
	if md.bound == BlockDiagonal {
		order, err := BlockOrder(x, md.blockSize)
		if err != nil {
			return math.NaN(), err
		}
		x, y = permuteRows(x, y, order)
	}
	st, err := md.forward(x, y, false)
	if err != nil {
		return math.NaN(), err
	}
	if grad == nil {
		return st.f, nil
	}
	return st.f, md.backward(st, x, y, grad)
}

// noiseAdjoint returns Ḡ, the adjoint of G = Σ Ã·Ãᵀ, and the derivative
// of the bound with respect to the noise variance σ² through its direct
// terms (and, for the tight bound, through Ḡ's extra terms).
func (md *Model) noiseAdjoint(st *state) (gbar []float64, ds float64, err error) {
	n := st.n
	k := md.m + md.m2
	s, beta, g := st.s, st.beta, st.g
	// binv = blockdiag(B_u⁻¹, B_v⁻¹) (B⁻¹ for SGPR).
	binv := make([]float64, k*k)
	if err := st.lbu.Inverse(binv, k); err != nil {
		return nil, 0, err
	}
	if md.m2 > 0 {
		if err := st.lbv.Inverse(binv[md.m*k+md.m:], k); err != nil {
			return nil, 0, err
		}
	}
	// Ḡ = (−ββᵀ/(2σ⁴) − ½·binv)/σ² + I/(2σ²), and the direct σ² terms.
	gbar = make([]float64, k*k)
	var inner float64 // ⟨binv, G⟩
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			gbar[i*k+j] = (-beta[i]*beta[j]/(2*s*s) - 0.5*binv[i*k+j]) / s
			inner += binv[i*k+j] * g[i*k+j]
		}
		if md.bound == Standard {
			gbar[i*k+i] += 1 / (2 * s) // from tr G/(2σ²); Tighter's term enters per row
		}
	}
	var bgb float64 // βᵀGβ
	for i := 0; i < k; i++ {
		var t float64
		for j := 0; j < k; j++ {
			t += g[i*k+j] * beta[j]
		}
		bgb += beta[i] * t
	}
	nf := float64(n)
	ds = -nf/(2*s) + st.yy/(2*s*s) - st.eb/(s*s*s) + (bgb/(2*s*s)+0.5*inner)/(s*s)
	switch md.bound {
	case Standard:
		ds += st.trKff/(2*s*s) - st.trG/(2*s*s)
	case Tighter:
		ds += st.dw / (2 * s)
	} // BlockDiagonal's direct term is added block by block in backward
	if md.tight {
		ds += md.tightGbar(st, gbar)
	}
	return gbar, ds, nil
}

// backward writes the gradient of the bound into grad; y is the residual
// y − m(X) when the model has a mean function.
func (md *Model) backward(st *state, x *mat.Dense, y []float64, grad []float64) error {
	n := st.n
	_, d := x.Dims()
	k := md.m + md.m2
	s, beta, g := st.s, st.beta, st.g
	bi := blas.Implementation{Threads: md.threads}
	gbar, ds, err := md.noiseAdjoint(st)
	if err != nil {
		return err
	}

	nk := md.kern.NumParams()
	clear(grad)
	dtheta := grad[:nk]
	dw := mat.NewDense(k, d, nil)

	// The adjoint of Ã is Ā = 2·Ḡ·Ã + ē·yᵀ with ē = β/σ⁴ (plus B⁻¹·Vᵀ/σ⁴
	// for the tight bound). It is never formed: with Ã = L⁻¹K_wf,
	//
	//	K̄_wf = L⁻ᵀĀ = X·Ã + u·yᵀ (+ Z·Vᵀ),   X = 2L⁻ᵀḠ, u = L⁻ᵀē, Z = L⁻ᵀB⁻¹/σ⁴,
	//	L̄ = −tril(K̄_wf·Ãᵀ) = −tril(L⁻ᵀ·(2Ḡ·G + ē·eᵀ (+ B⁻¹·Rᵀ/σ⁴))),
	//
	// using Σ_chunks Ã·Ãᵀ = G, Ã·y = e and Ã·V = R. The N-dependent work
	// of the backward pass is then one GEMM per chunk.
	xm := make([]float64, k*k)
	for i := range xm {
		xm[i] = 2 * gbar[i]
	}
	u := make([]float64, k)
	for i := range u {
		u[i] = beta[i] / (s * s)
	}
	h := make([]float64, k*k)
	bi.Dgemm(gblas.NoTrans, gblas.NoTrans, k, k, k, 1, xm, k, g, k, 0, h, k)
	bi.Dger(k, k, 1, u, 1, st.e, 1, h, k)
	var zm []float64
	if md.tight {
		bi.Dgemm(gblas.NoTrans, gblas.Trans, k, k, k, 1/(s*s), st.binv, k, st.r, k, 1, h, k)
		zm = make([]float64, k*k)
		for i := range zm {
			zm[i] = st.binv[i] / (s * s)
		}
		if err := st.lw.SolveLT(k, zm, k); err != nil {
			return err
		}
	}
	for _, m := range [][]float64{xm, h} {
		if err := st.lw.SolveLT(k, m, k); err != nil {
			return err
		}
	}
	if err := st.lw.SolveLT(1, u, 1); err != nil {
		return err
	}
	lbar := make([]float64, k*k)
	for i := 0; i < k; i++ {
		for j := 0; j <= i; j++ {
			lbar[i*k+j] = -h[i*k+j]
		}
	}

	ra := &rowAdjoints{xm: xm, u: u, zm: zm, dw: dw, dtheta: dtheta}
	if md.mean != nil {
		ra.gm = make([]float64, n)
	}
	if md.bound == Tighter || md.bound == BlockDiagonal {
		ra.gw = make([]float64, k*k)
	}
	if err := md.backwardRows(st, x, y, ra); err != nil {
		return err
	}
	ds += ra.ds
	gm := ra.gm
	if md.tight {
		md.tightKffGrad(st, x, dtheta)
	}
	if ra.gw != nil {
		if err := md.tighterLbar(st, ra.gw, lbar); err != nil {
			return err
		}
	}
	kbar := lbar // in place: the adjoint may overwrite L̄
	if err := st.lw.Adjoint(lbar, k, kbar, k); err != nil {
		return err
	}
	// The jitter of K_ww scales with its mean diagonal.
	kwwd := st.kww.RawMatrix()
	chol.AddJitterAdjoint(k, st.lw.Jitter(), chol.MeanDiag(k, kwwd.Data, kwwd.Stride), kbar, k, kbar, k)
	md.kern.MatrixGrad(mat.NewDense(k, k, kbar), st.kww, md.w, md.w, dw, dw, dtheta)
	var lu [1]float64
	md.lik.Params(lu[:])
	grad[nk] = ds * transform.SoftplusDeriv(lu[0])
	if !md.fix {
		copy(grad[nk+1:], dw.RawMatrix().Data)
	}
	if md.mean != nil {
		md.mean.Grad(x, gm, grad[len(grad)-md.numMean():], nil)
	}
	for i, v := range grad {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("collapsed: gradient entry %d is %v", i, v)
		}
	}
	return nil
}

// rowAdjoints carries the backward pass's operands into and its sums out
// of backwardRows: X = 2L⁻ᵀḠ, u = L⁻ᵀē and (tight bound) Z = L⁻ᵀB⁻¹/σ⁴
// in; the gradients with respect to W and θ, the mean's residual adjoint
// gm (nil without a mean function), the Gram adjoint gw of the Tighter
// (G_w) or BlockDiagonal (G_P) bound (nil for the others) and the direct
// σ² derivative ds of the BlockDiagonal term accumulated.
type rowAdjoints struct {
	xm, u, zm  []float64
	dw         *mat.Dense
	dtheta, gm []float64
	gw         []float64
	ds         float64
}

// backwardRows runs the N-dependent part of the backward pass, chunk by
// chunk: K̄_wf = X·Ã + u·yᵀ (+ the tight and Tighter / BlockDiagonal
// terms) into the kernel gradient, and the K_ff diagonal (or block)
// adjoints.
func (md *Model) backwardRows(st *state, x *mat.Dense, y []float64, ra *rowAdjoints) error {
	n, chunk := st.n, st.chunk
	_, d := x.Dims()
	k := md.m + md.m2
	s, beta := st.s, st.beta
	bi := blas.Implementation{Threads: md.threads}
	// The bound depends on the residual r through −rᵀr/(2σ²) + eᵀβ/(2σ⁴)
	// with e = Ã·r, so ∂F/∂r = −r/σ² + Ãᵀβ/σ⁴ and ∂F/∂m(X) = −∂F/∂r.
	kbarwf := mat.NewDense(k, chunk, nil)
	var wbuf []float64 // Tighter, BlockDiagonal: scratch
	if ra.gw != nil {
		wbuf = make([]float64, k*chunk)
	}
	for n0 := 0; n0 < n; n0 += chunk {
		nc := min(chunk, n-n0)
		xc := x.Slice(n0, n0+nc, 0, d).(*mat.Dense)
		kc := st.kwf.Slice(0, k, 0, nc).(*mat.Dense)
		ac := st.at.Slice(0, k, 0, nc).(*mat.Dense)
		if !st.single {
			var err error
			if ac, err = md.whiten(st, xc, nc); err != nil {
				return err
			}
		}
		acr := ac.RawMatrix()
		if ra.gm != nil {
			gc := ra.gm[n0 : n0+nc]
			bi.Dgemv(gblas.Trans, k, nc, -1/(s*s), acr.Data, acr.Stride, beta, 1, 0, gc, 1)
			for i := range gc {
				gc[i] += y[n0+i] / s
			}
		}
		bc := kbarwf.Slice(0, k, 0, nc).(*mat.Dense)
		bcr := bc.RawMatrix()
		bi.Dgemm(gblas.NoTrans, gblas.NoTrans, k, nc, k, 1, ra.xm, k, acr.Data, acr.Stride, 0, bcr.Data, bcr.Stride)
		bi.Dger(k, nc, 1, ra.u, 1, y[n0:n0+nc], 1, bcr.Data, bcr.Stride)
		if md.tight {
			bi.Dgemm(gblas.NoTrans, gblas.Trans, k, nc, k, 1, ra.zm, k, st.v[n0*k:], k, 1, bcr.Data, bcr.Stride)
		}
		switch md.bound {
		case Tighter:
			if err := md.tighterBackChunk(st, n0, nc, acr, bcr, ra.gw, wbuf); err != nil {
				return err
			}
		case BlockDiagonal:
			dsb, err := md.blockBackChunk(st, n0, xc, acr, bcr, ra.gw, wbuf, ra.dtheta)
			if err != nil {
				return err
			}
			ra.ds += dsb
		}
		md.kern.MatrixGrad(bc, kc, md.w, xc, ra.dw, nil, ra.dtheta)
		if md.bound == BlockDiagonal {
			continue // K_ff enters through the blocks K_bb only
		}
		for i := 0; i < nc; i++ {
			if md.bound == Tighter {
				st.diag[i] = -0.5 * st.w[n0+i]
			} else {
				st.diag[i] = -1 / (2 * s)
			}
		}
		md.kern.DiagGrad(st.diag[:nc], xc, nil, ra.dtheta)
	}
	return nil
}
