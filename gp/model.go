package gp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp/transform"
	"github.com/solvegp/solvegp/internal/floats"
	"github.com/solvegp/solvegp/internal/nilcheck"
	"github.com/solvegp/solvegp/internal/randstate"
)

// Kind selects the variational family of a Model.
type Kind int

const (
	// SVGP is the sparse variational GP of Hensman et al. (2013, 2015) with
	// M inducing points Z and q(u) = N(m_u, S_u).
	SVGP Kind = iota
	// ODVGP is the orthogonally decoupled variational GP (Salimbeni et al.
	// 2018): SOLVE-GP with S_v fixed to C_vv, so that the orthogonal points
	// O only carry mean information. Its variational mean is parameterized
	// by a = C_vv⁻¹·m_v, which avoids factorizing C_vv: the orthogonal
	// block costs O(N·M₂ + M·M₂ + M₂·S) per step (S sampled columns of K_vv,
	// see WithColumnSample) and no cubic operation in M₂.
	ODVGP
	// SOLVEGP is Sparse Orthogonal Variational inference (Shi, Titsias &
	// Mnih 2020): q(u)·q(v⊥) with v⊥ = f⊥(O), q(v⊥) = N(m_v, S_v).
	SOLVEGP
)

// String returns the name of the kind.
func (k Kind) String() string {
	switch k {
	case SVGP:
		return "SVGP"
	case ODVGP:
		return "ODVGP"
	case SOLVEGP:
		return "SOLVE-GP"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ErrShape is wrapped by errors about inconsistent dimensions.
var ErrShape = errors.New("gp: bad shape")

// ErrValue is wrapped by errors about NaN, Inf or out-of-range values.
var ErrValue = errors.New("gp: bad value")

// MaxLatent is the largest number of latent functions (lik.NumLatent())
// a Model accepts: 2²⁰, as likelihood.MaxClasses. The model keeps an M×M
// factor per latent function.
const MaxLatent = 1 << 20

// maxValues bounds the number of values in any one array a Model
// allocates: 2⁴⁰ (8 TiB of float64), or less where int has 32 bits. No real
// model comes near it, and sizes beyond it are refused before their
// products could overflow int.
const maxValues = min(1<<40, math.MaxInt/8)

// Option configures a Model at construction.
type Option func(*config) error

type config struct {
	whiten    bool
	kuuJitter chol.JitterPolicy
	cvvJitter chol.JitterPolicy
	threads   int
	seed      uint64
	colSample int
	mean      MeanFunction
	// colChunk sets the column chunks of the backward pass (chunks.go):
	// 0 chooses them by the block's size, a negative value turns them
	// off and a positive one forces that width (tests).
	colChunk int
	bound    BoundKind
}

// WithWhitening selects the whitened parameterization (Appendix E): q(u′)
// with u′ = L_uu⁻¹·u (and for SOLVE-GP q(v⊥′) with v⊥′ = L_vv⁻¹·v⊥) has
// mean m and covariance L·Lᵀ with an isotropic prior. The default is the
// unwhitened parameterization of Algorithm 1. For ODVGP whitening applies
// to q(u) only.
//
// Whitening is the better choice for first-order training (train.Fit's
// Adam): unwhitened, q's parameters are on the scales of K_uu and C_vv,
// which a per-coordinate step size does not account for, and C_vv is tiny
// where O lies near the span of Z, so a step of the learning rate in
// q(v⊥)'s factor can cost a KL term of (step)²/C_vv; whitened, the prior
// of every coordinate is N(0, 1).
func WithWhitening(on bool) Option {
	return func(c *config) error { c.whiten = on; return nil }
}

// WithKuuJitter sets the jitter policy used to factorize K_uu (default
// chol.DefaultJitter()).
func WithKuuJitter(p chol.JitterPolicy) Option {
	return func(c *config) error {
		if err := p.Validate(); err != nil {
			return err
		}
		c.kuuJitter = p
		return nil
	}
}

// WithCvvJitter sets the jitter policy used to factorize
// C_vv = K_vv − K_vu·K_uu⁻¹·K_uv, the weakest matrix of SOLVE-GP: it is
// near singular when an orthogonal point approaches an inducing point
// (default chol.DefaultJitter()). The policy's relative jitter is taken
// relative to mean(diag(K_vv)) — not to C_vv's own diagonal, which is mere
// rounding noise when an orthogonal point sits on an inducing point.
func WithCvvJitter(p chol.JitterPolicy) Option {
	return func(c *config) error {
		if err := p.Validate(); err != nil {
			return err
		}
		c.cvvJitter = p
		return nil
	}
}

// WorkerSetter is implemented by kernels and likelihoods that spread one
// evaluation over several goroutines (kernel.Stationary, kernel.Sum,
// kernel.Product, convgp.Kernel, and the Bernoulli, RobustMax and Softmax
// likelihoods). SetWorkers(n) bounds them to n goroutines; n ≤ 0 means
// GOMAXPROCS. A model built with WithThreads(t), t > 0, calls it on its
// kernel and likelihood, which it owns from then on.
type WorkerSetter interface {
	SetWorkers(n int)
}

// WithThreads bounds the goroutines of the model's evaluations (≤ 0:
// GOMAXPROCS): those of each linear-algebra call and elementwise pass, and,
// when t > 0, those of the kernel and the likelihood, on which the model
// calls SetWorkers(t) if they have that method (see WorkerSetter).
func WithThreads(t int) Option {
	return func(c *config) error { c.threads = t; return nil }
}

// WithSeed seeds the model's random stream, used by Monte Carlo
// likelihoods and by column sampling.
func WithSeed(seed uint64) Option {
	return func(c *config) error { c.seed = seed; return nil }
}

// WithColumnSample makes ODVGP estimate the quadratic term aᵀ·K_vv·a of
// its KL divergence from s columns of K_vv drawn uniformly without
// replacement at every evaluation (unbiased), as in the paper's large-M₂
// ODVGP (1024 of 8096 columns). s ≤ 0 or s ≥ M₂ uses all columns (exact).
// It is an error for other kinds.
func WithColumnSample(s int) Option {
	return func(c *config) error { c.colSample = s; return nil }
}

// Model is a sparse variational GP layer: SVGP, ODVGP or SOLVE-GP with C =
// lik.NumLatent() latent functions that share the kernel and the inducing
// inputs and have their own q(u) (and q(v⊥)).
//
// All parameters live in one flat vector of unconstrained values, laid out
// as described by Layout. Positive quantities (the diagonals of the
// variational Cholesky factors) are stored through softplus; kernel and
// likelihood parameters use their own documented transforms.
//
// A Model is not safe for concurrent use: evaluations reuse internal
// workspaces. Predictor returns an immutable snapshot that is.
type Model struct {
	kind     Kind
	whiten   bool
	kern     Kernel
	lik      Likelihood
	mean     MeanFunction // nil: zero mean
	d, m, m2 int
	dz       int // columns of Z and O (d unless the kernel is inter-domain)
	nl       int // number of latent functions
	nout     int // targets per point (P of a MultiOutput likelihood, else 1)
	multi    bool
	cfg      config
	layout   Layout
	theta    []float64
	z, o     *mat.Dense // views into theta
	rng      *rand.Rand
	src      *rand.PCG // rng's source, whose state RandomState returns

	ws   workspace
	last Terms
}

// Layout gives the offsets of the parameter groups in the flat vector.
//
// The order is: kernel parameters, likelihood parameters, Z (M×d row-major),
// O (M₂×d), then for each latent function l the mean m_u (M values) and the
// packed lower triangle of L_u (M(M+1)/2 values, row by row, diagonal
// entries stored as softplus⁻¹), then for each l the orthogonal block: m_v
// and packed L_v (SOLVE-GP) or a = C_vv⁻¹·m_v (ODVGP), and last the mean
// function's parameters (see WithMean; none without a mean).
type Layout struct {
	Kernel, Lik, Z, O int
	// Mean is the offset of the mean function's parameters (Total when
	// the model has no mean function).
	Mean int
	// MU[l], LU[l], MV[l], LV[l] are the offsets of the variational
	// parameters of latent l (LV is -1 for ODVGP and MV, LV for SVGP).
	MU, LU, MV, LV []int
	// Total is the length of the vector.
	Total int
}

// NewSVGP returns an SVGP model with inducing inputs z (M×d), q(u)
// initialized to the prior.
//
// The model takes the kernel's and the likelihood's current parameters as
// the start of its parameter vector and owns k and lik from then on, for
// every model constructor: set their parameters through Model.SetParams
// (the Layout tells where they are), not on k or lik, whose own SetParams
// would leave the model's parameter vector (Params, the gradient, training
// and package modelfile) out of step with the values its evaluations use.
//
// Like inputs of the wrong shape, a likelihood with more than MaxLatent
// latent functions and sizes whose arrays would hold more than 2⁴⁰ values
// (such as C·M² for C latent functions) are errors wrapping ErrShape, for
// every model constructor.
func NewSVGP(k Kernel, lik Likelihood, z mat.Matrix, opts ...Option) (*Model, error) {
	return newModel(SVGP, k, lik, z, nil, opts)
}

// NewSOLVEGP returns a SOLVE-GP model with inducing inputs z (M×d) and
// orthogonal inducing inputs o (M₂×d); q(u) and q(v⊥) are initialized to
// their priors.
func NewSOLVEGP(k Kernel, lik Likelihood, z, o mat.Matrix, opts ...Option) (*Model, error) {
	if nilcheck.IsNil(o) {
		return nil, fmt.Errorf("%w: SOLVE-GP needs orthogonal inducing inputs", ErrShape)
	}
	return newModel(SOLVEGP, k, lik, z, o, opts)
}

// NewODVGP returns an ODVGP model (SOLVE-GP with S_v = C_vv) with inducing
// inputs z and orthogonal (mean-only) inducing inputs o; the variational
// means start at zero.
func NewODVGP(k Kernel, lik Likelihood, z, o mat.Matrix, opts ...Option) (*Model, error) {
	if nilcheck.IsNil(o) {
		return nil, fmt.Errorf("%w: ODVGP needs orthogonal inducing inputs", ErrShape)
	}
	return newModel(ODVGP, k, lik, z, o, opts)
}

func checkFiniteMatrix(name string, a mat.Matrix) error {
	r, c := a.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v := a.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: %s[%d][%d] = %g", ErrValue, name, i, j, v)
			}
		}
	}
	return nil
}

func newModel(kind Kind, k Kernel, lik Likelihood, z, o mat.Matrix, opts []Option) (*Model, error) {
	if nilcheck.IsNil(k) || nilcheck.IsNil(lik) || nilcheck.IsNil(z) {
		return nil, fmt.Errorf("%w: nil kernel, likelihood or inducing inputs", ErrShape)
	}
	cfg := config{kuuJitter: chol.DefaultJitter(), cvvJitter: chol.DefaultJitter(), seed: 1}
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: option %d is nil", ErrValue, i)
		}
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	if cfg.colSample != 0 && kind != ODVGP {
		return nil, fmt.Errorf("%w: WithColumnSample applies to ODVGP only", ErrValue)
	}
	d, di := k.Dim(), inducingDim(k)
	m, dz := z.Dims()
	if m < 1 || dz != di {
		return nil, fmt.Errorf("%w: Z is %d×%d, kernel inducing dimension %d", ErrShape, m, dz, di)
	}
	m2 := 0
	if o != nil && kind != SVGP {
		var do int
		m2, do = o.Dims()
		if m2 < 1 || do != di {
			return nil, fmt.Errorf("%w: O is %d×%d, kernel inducing dimension %d", ErrShape, m2, do, di)
		}
	}
	nl := lik.NumLatent()
	if nl < 1 || nl > MaxLatent {
		return nil, fmt.Errorf("%w: likelihood has %d latent functions, want 1 to %d", ErrShape, nl, MaxLatent)
	}
	nout, multi := numOutputs(lik)
	if nout < 1 || nout > MaxLatent {
		return nil, fmt.Errorf("%w: likelihood has %d outputs, want 1 to %d", ErrShape, nout, MaxLatent)
	}
	nk, nlk := k.NumParams(), lik.NumParams()
	if nk < 0 || nlk < 0 {
		return nil, fmt.Errorf("%w: kernel has %d parameters and likelihood %d, want at least 0", ErrShape, nk, nlk)
	}
	if err := checkBound(cfg.bound, lik); err != nil {
		return nil, err
	}
	if err := checkMean(cfg.mean, d, nl); err != nil {
		return nil, err
	}
	if err := checkSizes(kind, nk+numMeanParams(cfg.mean), nlk, m, m2, di, nl, cfg.colSample); err != nil {
		return nil, err
	}
	if err := checkFiniteMatrix("Z", z); err != nil {
		return nil, err
	}
	if m2 > 0 {
		if err := checkFiniteMatrix("O", o); err != nil {
			return nil, err
		}
	}
	if cfg.threads > 0 {
		for _, c := range []any{k, lik} {
			if w, ok := c.(WorkerSetter); ok {
				w.SetWorkers(cfg.threads)
			}
		}
	}
	mod := &Model{kind: kind, whiten: cfg.whiten, kern: k, lik: lik, mean: cfg.mean, d: d, dz: di, m: m, m2: m2, nl: nl, nout: nout, multi: multi, cfg: cfg}
	if kind == ODVGP && cfg.colSample >= m2 {
		mod.cfg.colSample = 0
	}
	if mod.cfg.colSample < 0 {
		mod.cfg.colSample = 0
	}
	mod.src = rand.NewPCG(cfg.seed, cfg.seed^0x9e3779b97f4a7c15)
	mod.rng = rand.New(mod.src)
	// Layout.
	lay := Layout{Kernel: 0}
	off := k.NumParams()
	lay.Lik = off
	off += lik.NumParams()
	lay.Z = off
	off += m * di
	lay.O = off
	off += m2 * di
	tri := m * (m + 1) / 2
	lay.MU = make([]int, nl)
	lay.LU = make([]int, nl)
	lay.MV = make([]int, nl)
	lay.LV = make([]int, nl)
	for l := 0; l < nl; l++ {
		lay.MU[l] = off
		off += m
		lay.LU[l] = off
		off += tri
	}
	for l := 0; l < nl; l++ {
		lay.MV[l], lay.LV[l] = -1, -1
		switch kind {
		case SOLVEGP:
			lay.MV[l] = off
			off += m2
			lay.LV[l] = off
			off += m2 * (m2 + 1) / 2
		case ODVGP:
			lay.MV[l] = off
			off += m2
		}
	}
	lay.Mean = off
	off += numMeanParams(cfg.mean)
	lay.Total = off
	mod.layout = lay
	mod.theta = make([]float64, off)
	k.Params(mod.theta[lay.Kernel : lay.Kernel+k.NumParams()])
	lik.Params(mod.theta[lay.Lik : lay.Lik+lik.NumParams()])
	if cfg.mean != nil {
		cfg.mean.Params(mod.theta[lay.Mean:lay.Total])
	}
	for i := 0; i < m; i++ {
		for j := 0; j < di; j++ {
			mod.theta[lay.Z+i*di+j] = z.At(i, j)
		}
	}
	for i := 0; i < m2; i++ {
		for j := 0; j < di; j++ {
			mod.theta[lay.O+i*di+j] = o.At(i, j)
		}
	}
	if !floats.AllFinite(mod.theta[:lay.Z]) {
		return nil, fmt.Errorf("%w: kernel or likelihood parameters are not finite", ErrValue)
	}
	mod.z = mat.NewDense(m, di, mod.theta[lay.Z:lay.Z+m*di])
	if m2 > 0 {
		mod.o = mat.NewDense(m2, di, mod.theta[lay.O:lay.O+m2*di])
	}
	if err := mod.initPrior(); err != nil {
		return nil, err
	}
	return mod, nil
}

// checkSizes returns an error wrapping ErrShape if an array of the model
// would hold more than maxValues values: its parameter vector, the
// per-latent stacks of M×M (and for SOLVE-GP M₂×M₂) matrices, or the
// M×M₂ and M₂×M₂ (ODVGP: M₂×S for S sampled columns) matrices that its
// evaluations keep. Each product is checked before it is formed, so none
// overflows int.
func checkSizes(kind Kind, nk, nlik, m, m2, di, nl, colSample int) error {
	ok := true
	// mul returns a·b, or clears ok when that exceeds maxValues
	// (a, b ≥ 0).
	mul := func(a, b int) int {
		if b != 0 && a > maxValues/b {
			ok = false
			return 0
		}
		return a * b
	}
	// add returns a + b, or clears ok when that exceeds maxValues.
	add := func(a, b int) int {
		if a > maxValues-b {
			ok = false
			return 0
		}
		return a + b
	}
	perLatent := add(m, mul(m, m+1)/2) // m_u and L_u
	switch kind {
	case SOLVEGP:
		perLatent = add(perLatent, add(m2, mul(m2, m2+1)/2))
	case ODVGP:
		perLatent = add(perLatent, m2)
	}
	total := add(add(max(nk, 0), max(nlik, 0)), mul(add(m, m2), di))
	add(total, mul(nl, perLatent))
	mul(nl, mul(m, m))
	mul(m, m2)
	switch kind {
	case SOLVEGP:
		mul(nl, mul(m2, m2))
	case ODVGP:
		if colSample > 0 && colSample < m2 {
			mul(m2, colSample)
		} else {
			mul(m2, m2)
		}
	}
	if !ok {
		return fmt.Errorf("%w: %d inducing points, %d orthogonal ones, %d columns and %d latent functions need arrays of more than %d values",
			ErrShape, m, m2, di, nl, maxValues)
	}
	return nil
}

// initPrior sets every q(u) (and q(v⊥)) to its prior: zero means, and
// covariance factors I (whitened) or the Cholesky factors of K_uu and C_vv
// (unwhitened).
func (mod *Model) initPrior() error {
	lay := mod.layout
	for l := 0; l < mod.nl; l++ {
		clear(mod.theta[lay.MU[l] : lay.MU[l]+mod.m])
		if mod.kind != SVGP {
			clear(mod.theta[lay.MV[l] : lay.MV[l]+mod.m2])
		}
	}
	identity := func(off, n int) {
		one := transform.InvSoftplus(1)
		for i := 0; i < n; i++ {
			row := mod.theta[off+i*(i+1)/2 : off+i*(i+1)/2+i+1]
			clear(row)
			row[i] = one
		}
	}
	if mod.whiten {
		for l := 0; l < mod.nl; l++ {
			identity(lay.LU[l], mod.m)
			if mod.kind == SOLVEGP {
				identity(lay.LV[l], mod.m2)
			}
		}
		return nil
	}
	s, err := mod.snapshot(nil)
	if err != nil {
		return err
	}
	for l := 0; l < mod.nl; l++ {
		packTri(mod.theta[lay.LU[l]:], mod.m, s.l0u)
		if mod.kind == SOLVEGP {
			packTri(mod.theta[lay.LV[l]:], mod.m2, s.l0v)
		}
	}
	return nil
}

// packTri stores the lower triangle of the n×n matrix l into the packed
// unconstrained form (diagonal through softplus⁻¹).
func packTri(dst []float64, n int, l []float64) {
	for i := 0; i < n; i++ {
		row := dst[i*(i+1)/2 : i*(i+1)/2+i+1]
		copy(row, l[i*n:i*n+i+1])
		row[i] = transform.InvSoftplus(l[i*n+i])
	}
}

// Kind returns the model's variational family.
func (mod *Model) Kind() Kind { return mod.kind }

// Whitened reports whether the model uses the whitened parameterization.
func (mod *Model) Whitened() bool { return mod.whiten }

// Dims returns the input dimension d, the number of inducing points M,
// the number of orthogonal inducing points M₂ (0 for SVGP) and the number
// of latent functions C.
func (mod *Model) Dims() (d, m, m2, c int) { return mod.d, mod.m, mod.m2, mod.nl }

// NumOutputs returns the number of targets per point: P for a likelihood
// that implements MultiOutput, else 1.
func (mod *Model) NumOutputs() int { return mod.nout }

// Kernel returns the model's kernel (its parameters are owned by the model).
func (mod *Model) Kernel() Kernel { return mod.kern }

// Likelihood returns the model's likelihood.
func (mod *Model) Likelihood() Likelihood { return mod.lik }

// Layout returns the offsets of the parameter groups in the flat vector.
func (mod *Model) Layout() Layout {
	l := mod.layout
	l.MU = append([]int(nil), l.MU...)
	l.LU = append([]int(nil), l.LU...)
	l.MV = append([]int(nil), l.MV...)
	l.LV = append([]int(nil), l.LV...)
	return l
}

// NumParams returns the length of the flat parameter vector.
func (mod *Model) NumParams() int { return mod.layout.Total }

// Params copies the unconstrained parameters into dst (len NumParams). Like
// a slice index, it panics if dst is shorter: that is a programming error.
func (mod *Model) Params(dst []float64) {
	copy(dst[:mod.layout.Total], mod.theta)
}

// SetParams sets all parameters from the unconstrained vector src. It
// returns an error, leaving the model unchanged, if src has the wrong
// length or holds NaN or Inf, or if the kernel or likelihood rejects its
// part. Once it has set them, Backward needs a new Forward: the last one
// was for the old parameters.
func (mod *Model) SetParams(src []float64) error {
	lay := mod.layout
	if len(src) != lay.Total {
		return fmt.Errorf("%w: %d parameters, want %d", ErrShape, len(src), lay.Total)
	}
	if !floats.AllFinite(src) {
		return fmt.Errorf("%w: parameters hold NaN or Inf", ErrValue)
	}
	nk, nlk := mod.kern.NumParams(), mod.lik.NumParams()
	if err := mod.kern.SetParams(src[lay.Kernel : lay.Kernel+nk]); err != nil {
		return err
	}
	if err := mod.lik.SetParams(src[lay.Lik : lay.Lik+nlk]); err != nil {
		_ = mod.kern.SetParams(mod.theta[lay.Kernel : lay.Kernel+nk])
		return err
	}
	if mod.mean != nil {
		if err := mod.mean.SetParams(src[lay.Mean:lay.Total]); err != nil {
			_ = mod.kern.SetParams(mod.theta[lay.Kernel : lay.Kernel+nk])
			_ = mod.lik.SetParams(mod.theta[lay.Lik : lay.Lik+nlk])
			return fmt.Errorf("%w: mean function: %w", ErrValue, err)
		}
	}
	copy(mod.theta, src)
	// Backward reads the parameters (and the kernel's) as well as the
	// forward pass's intermediates; mixing them would give neither
	// gradient.
	mod.ws.valid = false
	return nil
}

// Z returns a copy of the inducing inputs.
func (mod *Model) Z() *mat.Dense { return mat.DenseCopyOf(mod.z) }

// O returns a copy of the orthogonal inducing inputs (nil for SVGP).
func (mod *Model) O() *mat.Dense {
	if mod.o == nil {
		return nil
	}
	return mat.DenseCopyOf(mod.o)
}

// SetThreads changes the goroutine budget of the model's evaluations as
// WithThreads(t) sets it at construction (t ≤ 0: GOMAXPROCS), and calls
// SetWorkers(t) on the kernel and the likelihood if they have it (see
// WorkerSetter). Results with another budget may differ in rounding.
// Predictors made before keep their budget; it must not be called during an
// evaluation.
func (mod *Model) SetThreads(t int) {
	mod.cfg.threads = t
	for _, c := range []any{mod.kern, mod.lik} {
		if w, ok := c.(WorkerSetter); ok {
			w.SetWorkers(t)
		}
	}
}

// RandomState returns the state of the model's random stream (see
// WithSeed), which Monte Carlo likelihoods and column sampling draw from.
// It implements train.RandomStater, so that train.Fit's checkpoints hold it
// and a resumed run draws the same numbers as one never stopped.
func (mod *Model) RandomState() []byte { return randstate.Save(mod.src) }

// SetRandomState restores a state returned by RandomState. A state that is
// not one is an error wrapping ErrValue, and leaves the stream as it was.
func (mod *Model) SetRandomState(state []byte) error {
	if err := randstate.Restore(mod.src, state); err != nil {
		return fmt.Errorf("%w: random state: %v", ErrValue, err)
	}
	return nil
}
