package gp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/internal/nilcheck"
)

// DefaultPredictBatch is the number of test points a Predictor processes at
// a time unless told otherwise: memory is O(M² + batch·max(M, M₂)).
const DefaultPredictBatch = 2048

// Predictor is an immutable snapshot of a trained model's approximate
// posterior, precomputed for prediction (Appendix D.2). Its methods are
// safe for concurrent use: each call works in its own buffers.
//
// The snapshot owns copies of everything it uses: the inducing inputs, the
// factors and variational parameters derived from them, and copies of the
// model's kernel and likelihood made by their Clone methods (see Cloner).
// Nothing done to the model afterwards (SetParams, Objective, Forward,
// training, SetThreads) changes its predictions, and the model may be
// trained while the Predictor predicts. Only a kernel or likelihood that
// does not implement Cloner is shared with the model: its parameters must
// then not change while predictions run, and while they differ from those
// at the snapshot the Predictor's methods return ErrStale.
type Predictor struct {
	kind     Kind
	kern     Kernel
	lik      Likelihood
	mean     MeanFunction // the model's mean function (a copy), or nil
	d, m, m2 int
	nl       int
	nout     int
	multi    bool
	threads  int
	batch    int
	z, o     *mat.Dense

	l0u, l0v []float64 // factors (row-major, lower)
	jitU     float64
	jitV     float64
	p, a     [][]float64 // P_l = L0u⁻¹L_l (or L_l), a_l = L0u⁻¹m_l (or m_l)
	amat     []float64   // A = L0u⁻¹·K_uv (SOLVE-GP)
	pv, av   [][]float64 // same for v⊥
	va, wv   [][]float64 // ODVGP: a_l and w_l = L0u⁻¹·K_uv·a_l

	// seed seeds the random numbers of a sampled likelihood (softmax):
	// every PredictY and LogPredictive call draws from a generator of its
	// own seeded with it, so that a call's Monte Carlo estimates do not
	// depend on the calls before it or running beside it.
	seed uint64

	// sharedKern and sharedLik are set when kern or lik is the model's
	// own (it has no Clone method that makes a copy), nil when the
	// Predictor owns a copy.
	sharedKern, sharedLik *sharedParams
}

// Predictor returns a snapshot of the current approximate posterior for
// prediction, independent of the model from then on (see Predictor for
// the one exception: a kernel or likelihood without a Clone method). batch
// bounds the number of test points processed at once (≤ 0:
// DefaultPredictBatch). Besides the snapshot's O(M³ + M₂³) factorizations,
// it copies the kernel and the likelihood once.
func (mod *Model) Predictor(batch int) (*Predictor, error) {
	p, err := mod.snapshot(nil)
	if err != nil {
		return nil, err
	}
	if k, ok := cloneOf(mod.kern); ok {
		p.kern = k
	} else {
		p.sharedKern = newSharedParams(mod.kern)
	}
	if l, ok := cloneOf(mod.lik); ok {
		p.lik = l
	} else {
		p.sharedLik = newSharedParams(mod.lik)
	}
	if batch <= 0 {
		batch = DefaultPredictBatch
	}
	p.batch = batch
	if mod.mean != nil {
		mf, ok := cloneOf(mod.mean)
		if !ok {
			return nil, fmt.Errorf("%w: mean function %T has no Clone method that returns a copy", ErrValue, mod.mean)
		}
		p.mean = mf
	}
	return p, nil
}

// snapshot builds a Predictor from the current parameters, recording its
// cubic operations in ops when non-nil. The Predictor copies the inducing
// inputs and variational parameters but refers to the model's kernel and
// likelihood, which Predictor replaces by copies.
func (mod *Model) snapshot(ops *[]Op) (*Predictor, error) {
	M, M2, L, d := mod.m, mod.m2, mod.nl, mod.d
	lg := la{bi: blas.Implementation{Threads: mod.cfg.threads}, threads: mod.cfg.threads, pass: Predict, ops: ops}
	p := &Predictor{kind: mod.kind, kern: mod.kern, lik: mod.lik, d: d, m: M, m2: M2, nl: L, nout: mod.nout, multi: mod.multi,
		threads: mod.cfg.threads, batch: DefaultPredictBatch, z: mat.DenseCopyOf(mod.z),
		seed: mod.cfg.seed + 1}
	if mod.o != nil {
		p.o = mat.DenseCopyOf(mod.o)
	}
	kuu := mat.NewDense(M, M, nil)
	kernUU(mod.kern, kuu, p.z, p.z)
	var cu chol.Cholesky
	jit, err := lg.chol("L0u = chol(Kuu)", &cu, M, kuu.RawMatrix().Data, mod.cfg.kuuJitter)
	if err != nil {
		return nil, fmt.Errorf("gp: factorizing K_uu: %w", err)
	}
	p.jitU = jit
	p.l0u = append([]float64(nil), cu.RawL()...)
	block := func(n int, l0 []float64, muOff, luOff []int) (ps, as [][]float64) {
		ps = make([][]float64, L)
		as = make([][]float64, L)
		for l := 0; l < L; l++ {
			ps[l] = make([]float64, n*n)
			unpackTri(mod.cfg.threads, ps[l], n, mod.theta[luOff[l]:])
			as[l] = append([]float64(nil), mod.theta[muOff[l]:muOff[l]+n]...)
			if !mod.whiten {
				lg.trsmLowerL("P = L0\\L", n, l0, ps[l])
				lg.trsv(false, n, l0, as[l])
			}
		}
		return ps, as
	}
	p.p, p.a = block(M, p.l0u, mod.layout.MU, mod.layout.LU)
	switch mod.kind {
	case SOLVEGP:
		kuv := mat.NewDense(M, M2, nil)
		kernUU(mod.kern, kuv, p.z, p.o)
		p.amat = kuv.RawMatrix().Data
		lg.trsmL("A = L0u\\Kuv", false, M, M2, p.l0u, M, p.amat, M2)
		kvv := mat.NewDense(M2, M2, nil)
		kernUU(mod.kern, kvv, p.o, p.o)
		cvv := mat.DenseCopyOf(kvv).RawMatrix().Data
		lg.syrkT("Cvv = Kvv − AᵀA", M2, M, -1, p.amat, M2, 1, cvv, M2)
		var cv chol.Cholesky
		jit, err := lg.chol("L0v = chol(Cvv)", &cv, M2, cvv, relativeJitter(mod.cfg.cvvJitter, M2, kvv.RawMatrix().Data, cvv))
		if err != nil {
			return nil, fmt.Errorf("gp: factorizing C_vv: %w", err)
		}
		p.jitV = jit
		p.l0v = append([]float64(nil), cv.RawL()...)
		p.pv, p.av = block(M2, p.l0v, mod.layout.MV, mod.layout.LV)
	case ODVGP:
		kuv := mat.NewDense(M, M2, nil)
		kernUU(mod.kern, kuv, p.z, p.o)
		p.va = make([][]float64, L)
		p.wv = make([][]float64, L)
		for l := 0; l < L; l++ {
			p.va[l] = append([]float64(nil), mod.theta[mod.layout.MV[l]:mod.layout.MV[l]+M2]...)
			p.wv[l] = make([]float64, M)
			lg.gemv(false, M, M2, 1, kuv.RawMatrix().Data, p.va[l], 1, 0, p.wv[l], 1)
			lg.trsv(false, M, p.l0u, p.wv[l])
		}
	}
	return p, nil
}

// Jitter returns the diagonal jitters used to factorize K_uu and C_vv in
// the snapshot.
func (p *Predictor) Jitter() (uu, vv float64) { return p.jitU, p.jitV }

// NumLatent returns the number C of latent functions.
func (p *Predictor) NumLatent() int { return p.nl }

// NumOutputs returns the number of targets per point (see
// Model.NumOutputs).
func (p *Predictor) NumOutputs() int { return p.nout }

// checkX checks the shape and values of the test inputs x, and that a
// kernel or likelihood shared with the model has not changed.
func (p *Predictor) checkX(x mat.Matrix) (int, error) {
	if p.sharedKern.changed() || p.sharedLik.changed() {
		return 0, ErrStale
	}
	if nilcheck.IsNil(x) {
		return 0, fmt.Errorf("%w: nil inputs", ErrShape)
	}
	n, d := x.Dims()
	if n < 1 || d != p.d {
		return 0, fmt.Errorf("%w: inputs are %d×%d, want n×%d", ErrShape, n, d, p.d)
	}
	return n, checkFiniteMatrix("x", x)
}

// predBuf holds the per-call buffers of prediction.
type predBuf struct {
	kuf, b, f, kvf, dm, kff, bsq, dsq, mx []float64
}

// marginals computes the latent marginals at the nb rows of xb into mu and
// vr (point-major, length nb·C).
func (p *Predictor) marginals(buf *predBuf, xb mat.Matrix, nb int, mu, vr []float64) {
	M, M2, L := p.m, p.m2, p.nl
	lg := la{bi: blas.Implementation{Threads: p.threads}, threads: p.threads}
	buf.kuf = grow(buf.kuf, M*nb)
	buf.b = grow(buf.b, M*nb)
	buf.f = grow(buf.f, max(M, M2)*nb)
	buf.kff = grow(buf.kff, nb)
	buf.bsq = growZero(buf.bsq, nb)
	kuf := mat.NewDense(M, nb, buf.kuf)
	p.kern.Matrix(kuf, p.z, xb)
	p.kern.Diag(buf.kff, xb)
	copy(buf.b, buf.kuf)
	lg.trsmL("B", false, M, nb, p.l0u, M, buf.b, nb)
	colSumSq(lg.threads, buf.bsq, 1, 1, M, nb, buf.b)
	clear(mu)
	for l := 0; l < L; l++ {
		lg.gemv(true, M, nb, 1, buf.b, p.a[l], 1, 0, mu[l:], L)
		f := buf.f[:M*nb]
		copy(f, buf.b)
		lg.trmmL("F", true, M, nb, p.p[l], M, f, nb)
		for n := 0; n < nb; n++ {
			vr[n*L+l] = buf.kff[n] - buf.bsq[n]
		}
		colSumSq(lg.threads, vr[l:], L, 1, M, nb, f)
	}
	switch p.kind {
	case SOLVEGP:
		buf.dm = grow(buf.dm, M2*nb)
		buf.kvf = grow(buf.kvf, M2*nb)
		buf.dsq = growZero(buf.dsq, nb)
		p.kern.Matrix(mat.NewDense(M2, nb, buf.kvf), p.o, xb)
		copy(buf.dm, buf.kvf)
		lg.gemm("Cvf", true, false, M2, nb, M, -1, p.amat, M2, buf.b, nb, 1, buf.dm, nb)
		lg.trsmL("D", false, M2, nb, p.l0v, M2, buf.dm, nb)
		colSumSq(lg.threads, buf.dsq, 1, 1, M2, nb, buf.dm)
		for l := 0; l < L; l++ {
			lg.gemv(true, M2, nb, 1, buf.dm, p.av[l], 1, 1, mu[l:], L)
			h := buf.f[:M2*nb]
			copy(h, buf.dm)
			lg.trmmL("H", true, M2, nb, p.pv[l], M2, h, nb)
			for n := 0; n < nb; n++ {
				vr[n*L+l] -= buf.dsq[n]
			}
			colSumSq(lg.threads, vr[l:], L, 1, M2, nb, h)
		}
	case ODVGP:
		buf.kvf = grow(buf.kvf, M2*nb)
		p.kern.Matrix(mat.NewDense(M2, nb, buf.kvf), p.o, xb)
		for l := 0; l < L; l++ {
			lg.gemv(true, M2, nb, 1, buf.kvf, p.va[l], 1, 1, mu[l:], L)
			lg.gemv(true, M, nb, -1, buf.b, p.wv[l], 1, 1, mu[l:], L)
		}
	}
	if p.mean != nil {
		buf.mx = grow(buf.mx, nb*L)
		addMean(p.mean, xb, L, mu, buf.mx)
	}
}

// forBatches calls fn for consecutive row blocks of x.
func (p *Predictor) forBatches(x mat.Matrix, n int, fn func(xb mat.Matrix, i0, nb int)) {
	for i0 := 0; i0 < n; i0 += p.batch {
		nb := min(p.batch, n-i0)
		var xb mat.Matrix
		if xs, ok := x.(interface {
			Slice(i, k, j, l int) mat.Matrix
		}); ok {
			xb = xs.Slice(i0, i0+nb, 0, p.d)
		} else {
			xb = mat.DenseCopyOf(x).Slice(i0, i0+nb, 0, p.d)
		}
		fn(xb, i0, nb)
	}
}

// PredictF returns the marginal means and variances of the latent
// functions at the rows of x (eqs. D.2–D.3 at test points), as n×C
// matrices.
func (p *Predictor) PredictF(x mat.Matrix) (mean, variance *mat.Dense, err error) {
	n, err := p.checkX(x)
	if err != nil {
		return nil, nil, err
	}
	L := p.nl
	mu := make([]float64, n*L)
	vr := make([]float64, n*L)
	var buf predBuf
	p.forBatches(x, n, func(xb mat.Matrix, i0, nb int) {
		p.marginals(&buf, xb, nb, mu[i0*L:(i0+nb)*L], vr[i0*L:(i0+nb)*L])
	})
	if err := finitePredictions("latent", L, mu, vr); err != nil {
		return nil, nil, err
	}
	return mat.NewDense(n, L, mu), mat.NewDense(n, L, vr), nil
}

// finitePredictions returns a *PointError (wrapping ErrValue) naming the first
// test point whose prediction in one of vs (point-major, L values per
// point) is NaN or infinite, which extreme inputs or hyperparameters can
// cause; predictions are never returned silently corrupt.
func finitePredictions(what string, L int, vs ...[]float64) error {
	for _, v := range vs {
		for i, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return &PointError{Point: i / L, What: what + " prediction", Value: x, Hint: "extreme inputs or hyperparameters"}
			}
		}
	}
	return nil
}

// newRand returns the generator of one call's Monte Carlo estimates.
func (p *Predictor) newRand() *rand.Rand { return rand.New(rand.NewPCG(p.seed, 7)) }

// PredictY returns the predictive mean and variance of the observations at
// the rows of x, as computed by the likelihood's PredictY: n×C matrices
// (for C-class likelihoods the class probabilities are in mean), or n×P
// for a MultiOutput likelihood of P outputs.
//
// For a likelihood that samples (softmax), the values are Monte Carlo
// estimates from random numbers that each call draws afresh from the
// model's seed (gp.WithSeed): the same x gives the same estimates on every
// call, but a point's estimate depends on its row in x (its random numbers
// are those of that row), within the estimate's Monte Carlo error. The same
// holds for LogPredictive, whose random numbers also depend on the
// Predictor's batch size.
func (p *Predictor) PredictY(x mat.Matrix) (mean, variance *mat.Dense, err error) {
	fm, fv, err := p.PredictF(x)
	if err != nil {
		return nil, nil, err
	}
	n, L := fm.Dims()
	if p.multi {
		L = p.nout
	}
	ym := make([]float64, n*L)
	yv := make([]float64, n*L)
	p.lik.PredictY(ym, yv, fm.RawMatrix().Data, fv.RawMatrix().Data, p.newRand())
	if err := finitePredictions("observation", L, ym, yv); err != nil {
		return nil, nil, err
	}
	return mat.NewDense(n, L, ym), mat.NewDense(n, L, yv), nil
}

// LogPredictive returns log ∫ p(y_n | f) q(f(x_n)) df for every test point.
// For a MultiOutput likelihood y holds NumOutputs values per point (NaN for
// a missing one) and the likelihood's LogPredictive says what the density
// of a point's observed outputs is.
func (p *Predictor) LogPredictive(x mat.Matrix, y []float64) ([]float64, error) {
	n, err := p.checkX(x)
	if err != nil {
		return nil, err
	}
	if err := checkTargets(y, n, p.nout, p.multi); err != nil {
		return nil, err
	}
	if err := validateLabels(p.lik, y); err != nil {
		return nil, err
	}
	L := p.nl
	out := make([]float64, n)
	var buf predBuf
	var mu, vr []float64
	rng := p.newRand()
	p.forBatches(x, n, func(xb mat.Matrix, i0, nb int) {
		mu = grow(mu, nb*L)
		vr = grow(vr, nb*L)
		p.marginals(&buf, xb, nb, mu, vr)
		p.lik.LogPredictive(out[i0:i0+nb], y[i0*p.nout:(i0+nb)*p.nout], mu, vr, rng)
	})
	if err := finitePredictions("log predictive", 1, out); err != nil {
		return nil, err
	}
	return out, nil
}

// MeanLogPredictive returns the average test log predictive density
// (1/n)·Σ_n log p(y_n | x_n, data).
func (p *Predictor) MeanLogPredictive(x mat.Matrix, y []float64) (float64, error) {
	lp, err := p.LogPredictive(x, y)
	if err != nil {
		return 0, err
	}
	var s float64
	for _, v := range lp {
		s += v
	}
	return s / float64(len(lp)), nil
}

// JointCov returns the full n×n predictive covariance Σ* of latent
// function l at the rows of x (Appendix D.2):
//
//	Σ* = K_{*u}K_uu⁻¹S_uK_uu⁻¹K_{u*} + C_{**} − C_{*v}C_vv⁻¹(C_vv − S_v)C_vv⁻¹C_{v*}.
func (p *Predictor) JointCov(x mat.Matrix, l int) (*mat.SymDense, error) {
	n, err := p.checkX(x)
	if err != nil {
		return nil, err
	}
	if l < 0 || l >= p.nl {
		return nil, fmt.Errorf("%w: latent %d of %d", ErrShape, l, p.nl)
	}
	if _, ok := p.kern.(InterDomainKernel); ok {
		return nil, fmt.Errorf("gp: JointCov needs data-data covariances, which an InterDomainKernel does not provide")
	}
	M, M2 := p.m, p.m2
	lg := la{bi: blas.Implementation{Threads: p.threads}, threads: p.threads}
	xd := mat.DenseCopyOf(x)
	kss := mat.NewDense(n, n, nil)
	p.kern.Matrix(kss, xd, xd)
	s := kss.RawMatrix().Data
	b := mat.NewDense(M, n, nil)
	p.kern.Matrix(b, p.z, xd)
	bd := b.RawMatrix().Data
	lg.trsmL("B", false, M, n, p.l0u, M, bd, n)
	lg.syrkT("−BᵀB", n, M, -1, bd, n, 1, s, n)
	f := append([]float64(nil), bd...)
	lg.trmmL("F", true, M, n, p.p[l], M, f, n)
	lg.syrkT("+FᵀF", n, M, 1, f, n, 1, s, n)
	if p.kind == SOLVEGP {
		dm := mat.NewDense(M2, n, nil)
		p.kern.Matrix(dm, p.o, xd)
		dd := dm.RawMatrix().Data
		lg.gemm("Cvf", true, false, M2, n, M, -1, p.amat, M2, bd, n, 1, dd, n)
		lg.trsmL("D", false, M2, n, p.l0v, M2, dd, n)
		lg.syrkT("−DᵀD", n, M2, -1, dd, n, 1, s, n)
		h := append([]float64(nil), dd...)
		lg.trmmL("H", true, M2, n, p.pv[l], M2, h, n)
		lg.syrkT("+HᵀH", n, M2, 1, h, n, 1, s, n)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			s[i*n+j] = s[j*n+i]
		}
	}
	if err := finitePredictions("joint covariance", n, s); err != nil {
		return nil, err
	}
	return mat.NewSymDense(n, s), nil
}

// PredictF is a convenience for Predictor(0) followed by PredictF; it
// rebuilds the posterior snapshot (O(M³ + M₂³)) on every call.
func (mod *Model) PredictF(x mat.Matrix) (mean, variance *mat.Dense, err error) {
	p, err := mod.Predictor(0)
	if err != nil {
		return nil, nil, err
	}
	return p.PredictF(x)
}
