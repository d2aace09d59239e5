package convgp

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/transform"
	"github.com/solvegp/solvegp/internal/parallel"
	"github.com/solvegp/solvegp/internal/vecmath"
	"github.com/solvegp/solvegp/patches"
)

// Kernel is an inter-domain kernel for the models of package gp, which
// gp.Predictor snapshots by copying it.
var (
	_ gp.InterDomainKernel = (*Kernel)(nil)
	_ gp.Cloner            = (*Kernel)(nil)
)

// ErrConfig is wrapped by the errors New and SetParams return for invalid
// configurations and parameter values.
var ErrConfig = errors.New("convgp: invalid configuration")

// Config describes a convolutional kernel.
type Config struct {
	// Patches is the image and patch geometry (image size, layout, patch
	// size, stride, dilation, padding, column order). Its Workers field is
	// ignored: the kernel parallelizes over images itself (see Workers).
	Patches patches.Config

	// Variance and Lengthscale are the RBF patch kernel's
	// k_g(a, b) = Variance · exp(−‖a − b‖² / (2 Lengthscale²)); Variance
	// > 0 and Lengthscale ≥ kernel.MinLengthscale, the floor of package
	// gp/kernel (below about 1e-154, Lengthscale² underflows to zero and
	// the kernel's diagonal becomes 0/0).
	Variance, Lengthscale float64

	// TICK multiplies the patch kernel by a Matérn-3/2 kernel with unit
	// variance and lengthscale LocLengthscale (≥ kernel.MinLengthscale, in
	// output-grid units) on patch locations; inducing points then carry a
	// location.
	TICK           bool
	LocLengthscale float64

	// Weights are the initial patch weights, one per patch location; nil
	// means 1/NumPatches each, so that f is the average patch response
	// (as GPflow's convolutional kernels define it) and its prior variance
	// does not grow with the number of patches. FixedWeights keeps them out
	// of the learnable parameters.
	Weights      []float64
	FixedWeights bool

	// Workers bounds the goroutines one call uses (it splits a batch by
	// images). 0 means runtime.GOMAXPROCS(0).
	Workers int

	// CacheBytes, when positive, lets Matrix keep its patch-kernel
	// exponentials for the MatrixGrad that follows it in a training step
	// (one entry per set of inducing points, each of at most CacheBytes),
	// so that MatrixGrad computes no exponential. An entry holds
	// rows(z)·rows(x)·NumPatches float64 values (295 MB for 1000 inducing
	// patches against 64 Fashion-MNIST images with 5×5 patches); a batch
	// needing more is not kept, and MatrixGrad recomputes its exponentials
	// (same results). 0 or negative: no cache, the default, because the
	// round trip of an entry through memory costs more than recomputing it
	// on current cores: Matrix then MatrixGrad at that size took 250 ms
	// without and 420 ms with the cache on a Zen 5 (BenchmarkMatrixStep);
	// on an Emerald Rapids VM the cache saved 7%.
	CacheBytes int
}

// MaxTICKPatches is the most patches per image a TICK kernel accepts: its
// location tables among the patches hold 2·P² values (1 GiB at this limit;
// 28×28 images with 5×5 patches have 576, and the P² terms of an image's
// variance make much larger P impractical anyway).
const MaxTICKPatches = 1 << 13

// Kernel is a convolutional (or TICK) kernel between inducing patches and
// images; see the package documentation for the covariances it defines.
//
// The unconstrained parameter vector is, in order: softplus⁻¹(Variance),
// softplus⁻¹(Lengthscale), softplus⁻¹(LocLengthscale) (TICK only), then the
// NumPatches patch weights times NumPatches (unless FixedWeights): the
// default weights 1/P are parameters 1, so that an optimizer step of a given
// size changes every weight by the same fraction of its initial value
// whatever the number of patches.
//
// Like gp.Kernel, Matrix, Diag, MatrixGrad, DiagGrad, InducingMatrix and
// InducingMatrixGrad panic when the shapes of their arguments disagree, as
// gonum's mat package does. Read-only methods may be called concurrently;
// SetParams may not be called concurrently with them.
type Kernel struct {
	geom    *patches.Geometry
	tick    bool
	learnW  bool
	workers int
	cache   int // Config.CacheBytes (≤ 0: off)

	uVar, uLen, uLoc float64 // unconstrained
	variance, ell    float64
	locEll           float64
	w                []float64

	locs   []float64 // P×2 data-patch locations
	ones   []float64 // P ones: the location kernel's rows without TICK
	klocPP []float64 // P×P location kernel among data patches (TICK)
	dlocPP []float64 // its derivative with respect to LocLengthscale

	scratches scratchList // the workers' scratch spaces
	bufs      floatPool   // the large per-call buffers

	// gen counts parameter changes (the caches of Diag and Matrix are
	// valid for one gen); dmu guards both caches.
	gen    uint64
	dmu    sync.Mutex
	dstate diagState
	mstate matState
}

// New returns a convolutional kernel for cfg.
func New(cfg Config) (*Kernel, error) {
	pc := cfg.Patches
	pc.Workers = 1
	g, err := patches.New(pc)
	if err != nil {
		return nil, fmt.Errorf("convgp: %w", err)
	}
	if !(cfg.Variance > 0) || math.IsInf(cfg.Variance, 0) {
		return nil, fmt.Errorf("%w: variance %v", ErrConfig, cfg.Variance)
	}
	if !(cfg.Lengthscale >= kernel.MinLengthscale) || math.IsInf(cfg.Lengthscale, 0) {
		return nil, fmt.Errorf("%w: lengthscale %v, must be finite and at least %g", ErrConfig, cfg.Lengthscale, kernel.MinLengthscale)
	}
	if cfg.TICK && (!(cfg.LocLengthscale >= kernel.MinLengthscale) || math.IsInf(cfg.LocLengthscale, 0)) {
		return nil, fmt.Errorf("%w: location lengthscale %v, must be finite and at least %g", ErrConfig, cfg.LocLengthscale, kernel.MinLengthscale)
	}
	if cfg.Workers < 0 {
		return nil, fmt.Errorf("%w: workers %d", ErrConfig, cfg.Workers)
	}
	P := g.NumPatches()
	if cfg.TICK && P > MaxTICKPatches {
		return nil, fmt.Errorf("%w: %d patches; a TICK kernel's location tables hold 2·P² values, so at most %d patches", ErrConfig, P, MaxTICKPatches)
	}
	k := &Kernel{geom: g, tick: cfg.TICK, learnW: !cfg.FixedWeights, workers: cfg.Workers, cache: cfg.CacheBytes}
	k.w = make([]float64, P)
	if cfg.Weights == nil {
		for i := range k.w {
			k.w[i] = 1 / float64(P)
		}
	} else {
		if len(cfg.Weights) != P {
			return nil, fmt.Errorf("%w: %d weights for %d patches", ErrConfig, len(cfg.Weights), P)
		}
		for _, v := range cfg.Weights {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: weight %v", ErrConfig, v)
			}
		}
		copy(k.w, cfg.Weights)
	}
	k.locs = g.Locations()
	k.ones = make([]float64, P)
	for i := range k.ones {
		k.ones[i] = 1
	}
	if cfg.TICK {
		k.klocPP = make([]float64, P*P)
		k.dlocPP = make([]float64, P*P)
	}
	k.setScalars(transform.InvSoftplus(cfg.Variance), transform.InvSoftplus(cfg.Lengthscale),
		transform.InvSoftplus(cfg.LocLengthscale))
	return k, nil
}

func (k *Kernel) setScalars(uVar, uLen, uLoc float64) {
	k.gen++
	k.uVar, k.uLen = uVar, uLen
	k.variance, k.ell = transform.Softplus(uVar), transform.Softplus(uLen)
	if k.tick {
		k.uLoc = uLoc
		k.locEll = transform.Softplus(uLoc)
		k.fillLocTables()
	}
}

// fillLocTables sets k.klocPP and k.dlocPP, the Matérn-3/2 location kernel
// among the data patches and its derivative with respect to LocLengthscale.
// Patch locations are the points of the OutHeight × OutWidth grid, so an
// entry depends only on the row and column distances |Δr|, |Δc|: the
// OutHeight·OutWidth distinct values are computed once and the P×P tables
// filled from them (P² exponentials per parameter update took about a
// twentieth of a single-layer training step).
func (k *Kernel) fillLocTables() {
	H, W := k.geom.OutHeight(), k.geom.OutWidth()
	kt, dt := make([]float64, H*W), make([]float64, H*W)
	for i := 0; i < H; i++ {
		for j := 0; j < W; j++ {
			dr, dc := float64(i), float64(j)
			sq := math.Sqrt(3*(dr*dr+dc*dc)) / k.locEll
			e := math.Exp(-sq)
			kt[i*W+j] = (1 + sq) * e
			dt[i*W+j] = sq * sq * e / k.locEll
		}
	}
	P := k.geom.NumPatches()
	for p := 0; p < P; p++ {
		rp, cp := p/W, p%W
		krow, drow := k.klocPP[p*P:p*P+P], k.dlocPP[p*P:p*P+P]
		for q := range krow {
			i, j := rp-q/W, cp-q%W
			t := max(i, -i)*W + max(j, -j)
			krow[q], drow[q] = kt[t], dt[t]
		}
	}
}

// inducingExps sets ex[j] = exp(c·r2_j) (by vecmath.Exp) for row i of the
// inducing Gram matrix with inner products g, row norm an and column norms
// bn: r2_j = an + bn[j] − 2g[j], clamped at 0 and 0 on the diagonal when the
// two sets are the same. If r2 is not nil it also keeps r2_j there.
func inducingExps(ex, r2, g []float64, an float64, bn []float64, c float64, same bool, i int) {
	for j, gv := range g {
		d := an + bn[j] - 2*gv
		if d < 0 || (same && i == j) {
			d = 0
		}
		if r2 != nil {
			r2[j] = d
		}
		ex[j] = c * d
	}
	vecmath.Exp(ex, ex)
}

// locRow sets, for the inducing location (r, c) against the locations bl
// (pairs), sq[j] = √3·‖(r, c) − bl_j‖/LocLengthscale and el[j] = e^{−sq[j]}
// (by vecmath.Exp): the Matérn-3/2 location kernel is (1 + sq)·el.
func (k *Kernel) locRow(sq, el []float64, r, c float64, bl []float64) {
	for j := range sq {
		dr, dc := r-bl[2*j], c-bl[2*j+1]
		sq[j] = math.Sqrt(3*(dr*dr+dc*dc)) / k.locEll
		el[j] = -sq[j]
	}
	vecmath.Exp(el, el)
}

// Geometry returns the patch geometry.
func (k *Kernel) Geometry() *patches.Geometry { return k.geom }

// TICK reports whether the kernel has a location factor.
func (k *Kernel) TICK() bool { return k.tick }

// Dim returns the number of values of one image (Height·Width·Channels).
func (k *Kernel) Dim() int { return k.geom.ImageLen() }

// SetWorkers bounds the goroutines one call uses to n, as Config's
// Workers does (n ≤ 0: GOMAXPROCS). A gp.Model built with gp.WithThreads
// sets it to its own budget.
func (k *Kernel) SetWorkers(n int) { k.workers = max(n, 0) }

// Clone returns a *Kernel with the same configuration, parameters and
// goroutine budget that shares no mutable state with k (see gp.Cloner): it
// copies the weights and, with TICK, the location tables (2·P² values), and
// shares only the immutable patch geometry and patch locations. Its caches
// start empty, and stay so unless MatrixGrad or DiagGrad is called on it.
func (k *Kernel) Clone() any {
	c := &Kernel{
		geom: k.geom, tick: k.tick, learnW: k.learnW, workers: k.workers, cache: k.cache,
		uVar: k.uVar, uLen: k.uLen, uLoc: k.uLoc,
		variance: k.variance, ell: k.ell, locEll: k.locEll,
		w:      slices.Clone(k.w),
		locs:   k.locs,
		ones:   k.ones,
		klocPP: slices.Clone(k.klocPP),
		dlocPP: slices.Clone(k.dlocPP),
		gen:    k.gen,
	}
	return c
}

// InducingDim returns the number of columns of an inducing point: PatchLen,
// plus 2 (location row and column) for a TICK kernel.
func (k *Kernel) InducingDim() int {
	if k.tick {
		return k.geom.PatchLen() + 2
	}
	return k.geom.PatchLen()
}

// NumParams returns the number of unconstrained parameters.
func (k *Kernel) NumParams() int {
	n := 2
	if k.tick {
		n++
	}
	if k.learnW {
		n += len(k.w)
	}
	return n
}

func (k *Kernel) wOff() int {
	if k.tick {
		return 3
	}
	return 2
}

// Params copies the unconstrained parameters into dst (len NumParams).
func (k *Kernel) Params(dst []float64) {
	if len(dst) != k.NumParams() {
		panic("convgp: Params: wrong length")
	}
	dst[0], dst[1] = k.uVar, k.uLen
	if k.tick {
		dst[2] = k.uLoc
	}
	if k.learnW {
		P := float64(len(k.w))
		for i, v := range k.w {
			dst[k.wOff()+i] = v * P
		}
	}
}

// SetParams sets the parameters from unconstrained values. It returns an
// error wrapping ErrConfig, and leaves the kernel unchanged, if src has the
// wrong length, holds NaN or Inf, or maps to a variance that underflows to
// zero or a lengthscale (patch or location) below kernel.MinLengthscale.
func (k *Kernel) SetParams(src []float64) error {
	if len(src) != k.NumParams() {
		return fmt.Errorf("%w: %d parameters, want %d", ErrConfig, len(src), k.NumParams())
	}
	for _, v := range src {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: parameter %v", ErrConfig, v)
		}
	}
	if transform.Softplus(src[0]) <= 0 {
		return fmt.Errorf("%w: a scale parameter underflows to zero", ErrConfig)
	}
	for i := 1; i < k.wOff(); i++ {
		// As gp/kernel does, allow for the rounding of
		// softplus(InvSoftplus(MinLengthscale)).
		if l := transform.Softplus(src[i]); !(l >= kernel.MinLengthscale*(1-1e-9)) {
			return fmt.Errorf("%w: parameter %d = %g gives lengthscale %g, below %g", ErrConfig, i, src[i], l, kernel.MinLengthscale)
		}
	}
	uLoc := 0.0
	if k.tick {
		uLoc = src[2]
	}
	k.setScalars(src[0], src[1], uLoc)
	if k.learnW {
		P := float64(len(k.w))
		for i, v := range src[k.wOff():] {
			k.w[i] = v / P
		}
	}
	return nil
}

// Weights returns a copy of the patch weights.
func (k *Kernel) Weights() []float64 { return append([]float64(nil), k.w...) }

// Hyper returns the patch variance and lengthscale and the location
// lengthscale (0 unless TICK).
func (k *Kernel) Hyper() (variance, lengthscale, locLengthscale float64) {
	return k.variance, k.ell, k.locEll
}

// ---------------------------------------------------------------------------
// helpers

// rawOf returns the row-major data of m with stride = cols, copying only
// when m is not such a *mat.Dense.
func rawOf(m mat.Matrix) (data []float64, r, c int) {
	r, c = m.Dims()
	if d, ok := m.(*mat.Dense); ok {
		raw := d.RawMatrix()
		if raw.Stride == c || r <= 1 {
			return raw.Data[:r*c], r, c
		}
	}
	data = make([]float64, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			data[i*c+j] = m.At(i, j)
		}
	}
	return data, r, c
}

// gradRows returns a row-major view of dst (r×c) for accumulation and a
// function that writes it back if a copy was needed.
func gradRows(dst *mat.Dense, r, c int) ([]float64, func()) {
	if dst == nil {
		return nil, func() {}
	}
	dr, dc := dst.Dims()
	if dr != r || dc != c {
		panic(mat.ErrShape)
	}
	raw := dst.RawMatrix()
	if raw.Stride == c || r <= 1 {
		return raw.Data[:r*c], func() {}
	}
	buf := make([]float64, r*c)
	return buf, func() {
		for i := 0; i < r; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+c]
			for j := range row {
				row[j] += buf[i*c+j]
			}
		}
	}
}

func (k *Kernel) nworkers(n int) int { return parallel.Workers(k.workers, n) }

// parallel runs f(worker, lo, hi) over contiguous ranges of [0, n).
func (k *Kernel) parallel(n int, f func(w, lo, hi int)) int {
	nw := k.nworkers(n)
	if nw == 1 {
		f(0, 0, n)
		return 1
	}
	parallel.Ranges(n, nw, f)
	return nw
}

var serial = blas.Implementation{Threads: 1}

func gemm(tA, tB bool, m, n, kk int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	ta, tb := gblas.NoTrans, gblas.NoTrans
	if tA {
		ta = gblas.Trans
	}
	if tB {
		tb = gblas.Trans
	}
	serial.Dgemm(ta, tb, m, n, kk, alpha, a, lda, b, ldb, beta, c, ldc)
}

func sqNorms(dst, a []float64, d int) {
	for i := range dst {
		row := a[i*d : i*d+d]
		s := 0.0
		for _, v := range row {
			s += v * v
		}
		dst[i] = s
	}
}

// splitInducing separates the patch part (M×d, contiguous copy) and the
// location part (M×2) of inducing points z (M × InducingDim). The caller
// hands both to putSplit when done.
func (k *Kernel) splitInducing(z mat.Matrix) (zp, zl []float64, m int) {
	data, r, c := rawOf(z)
	if c != k.InducingDim() {
		panic(mat.ErrShape)
	}
	d := k.geom.PatchLen()
	if !k.tick {
		return data, nil, r
	}
	zp = k.bufs.get(r * d)
	zl = k.bufs.get(r * 2)
	for i := 0; i < r; i++ {
		copy(zp[i*d:i*d+d], data[i*c:i*c+d])
		zl[2*i], zl[2*i+1] = data[i*c+d], data[i*c+d+1]
	}
	return zp, zl, r
}

// putSplit returns the copies splitInducing made (with TICK) to the pool;
// without TICK zp is the caller's matrix and nothing is returned.
func (k *Kernel) putSplit(zp, zl []float64) {
	if k.tick {
		k.bufs.put(zp)
		k.bufs.put(zl)
	}
}

// locKernel fills dst (m×P) with k_l(zl_i, l_p) = (1 + s) e^{−s},
// s = √3‖zl_i − l_p‖/LocLengthscale, times the patch weight w_p if weighted,
// and, if ex is not nil, ex (m×P) with the exponentials e^{−s}, which
// MatrixGrad needs for the location gradients. The exponentials of a row
// are taken together by vecmath.Exp, and the rows are split among the
// kernel's workers (each row is computed alike whatever the split).
func (k *Kernel) locKernel(dst, ex, zl []float64, m int, weighted bool) {
	P := k.geom.NumPatches()
	k.parallel(m, func(_, lo, hi int) {
		sq := make([]float64, P)
		var e []float64
		if ex == nil {
			e = make([]float64, P)
		}
		for i := lo; i < hi; i++ {
			if ex != nil {
				e = ex[i*P : i*P+P]
			}
			k.locRow(sq, e, zl[2*i], zl[2*i+1], k.locs)
			row := dst[i*P : i*P+P]
			for p, v := range sq {
				row[p] = (1 + v) * e[p]
			}
			if weighted {
				for p, v := range row {
					row[p] = k.w[p] * v
				}
			}
		}
	})
}

// scratch holds one worker's per-image buffers.
type scratch struct {
	xp, xn, g []float64
	dxp, dxpT []float64 // P×d and its transpose

	// image variances (see imageSums)
	gb, gs, wx []float64
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// patchesOf cuts image n of x (row-major images) into s.xp (P×d) and its
// squared row norms into s.xn.
func (k *Kernel) patchesOf(s *scratch, x []float64, n int) {
	L, P, d := k.geom.ImageLen(), k.geom.NumPatches(), k.geom.PatchLen()
	s.xp = grow(s.xp, P*d)
	s.xn = grow(s.xn, P)
	if err := k.geom.Im2Col(s.xp, x[n*L:n*L+L], 1); err != nil {
		panic(err)
	}
	sqNorms(s.xn, s.xp, d)
}

func addTo(dst, src []float64) {
	for i, v := range src {
		dst[i] += v
	}
}
