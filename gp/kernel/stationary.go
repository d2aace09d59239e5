package kernel

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	sblas "github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/gp/transform"
	"github.com/solvegp/solvegp/internal/vecmath"
)

// MinLengthscale is the smallest lengthscale a kernel accepts. Below it the
// scaled inputs x/ℓ of ordinary data could overflow the squared-distance
// computation; no useful model needs lengthscales anywhere near it.
const MinLengthscale = 1e-100

// MaxDim is the largest input dimension a kernel accepts (2²⁴, about 16.8
// million). A kernel keeps a few values per dimension, and one input row
// of that many values is already 128 MiB; larger dimensions are refused
// rather than attempted.
const MaxDim = 1 << 24

// Family selects the radial profile of a Stationary kernel.
type Family int

const (
	// RBF is the squared exponential k = σ² exp(−r²/2).
	RBF Family = iota
	// Matern12 is the exponential kernel k = σ² exp(−r).
	Matern12
	// Matern32 is k = σ² (1 + √3 r) exp(−√3 r).
	Matern32
	// Matern52 is k = σ² (1 + √5 r + 5r²/3) exp(−√5 r).
	Matern52
)

// String returns the name of the family.
func (f Family) String() string {
	switch f {
	case RBF:
		return "RBF"
	case Matern12:
		return "Matern12"
	case Matern32:
		return "Matern32"
	case Matern52:
		return "Matern52"
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// Stationary is a stationary kernel k(x, z) = σ² g(r) of the scaled
// distance r = ‖(x − z) / ℓ‖, where ℓ is either one lengthscale shared by
// all dimensions or a vector of per-dimension (ARD) lengthscales, and g is
// the profile of the kernel's Family.
//
// Parameter order (all unconstrained, value = softplus(u)):
//
//	[u_ℓ]       then u_σ²   for a shared lengthscale (NumParams = 2)
//	[u_ℓ1..u_ℓd] then u_σ²  for ARD lengthscales     (NumParams = d + 1)
//
// Accuracy: kernel values carry the rounding of the distance identity,
// an absolute error in r² of about ε·spread²/ℓ² for data spread "spread"
// around its median (the inputs are centred first), which is invisible at
// ordinary scales; pairs whose r² that error would swamp are recomputed
// as sums of squared differences of the scaled inputs (see refineNear),
// whose relative error ~ε·‖x/ℓ‖/r comes only from the rounding of x/ℓ —
// the accuracy that differences of covariances of near-coincident points,
// such as C_vv's, need. The gradients with respect to inputs and ARD
// lengthscales come from matrix products whose terms cancel; their
// absolute error is about ε·Σ|dK|·σ²·spread²/ℓ³, so they lose accuracy
// (and can overflow) only for lengthscales many orders of magnitude below
// the data spread. The shared-lengthscale and variance gradients are
// accumulated elementwise and do not cancel.
//
// The Matérn 1/2 profile is not differentiable at r = 0; its gradients use
// the symmetric choice 0 there (for coincident points), which is also the
// limit of the lengthscale and variance gradients.
type Stationary struct {
	family Family
	dim    int
	ard    bool

	u        []float64 // unconstrained parameters
	ls       []float64 // lengthscales, len 1 or dim
	inv      []float64 // 1/ℓ per dimension, len dim
	variance float64
	workers  int // goroutines per call (≤ 0: GOMAXPROCS); see SetWorkers
}

// Option configures a Stationary kernel at construction.
type Option func(*options) error

type options struct {
	ard bool
	ls  []float64
}

// ARD gives the kernel one lengthscale per input dimension, each
// initialised to the lengthscale passed to the constructor.
func ARD() Option {
	return func(o *options) error {
		o.ard = true
		return nil
	}
}

// Lengthscales gives the kernel one lengthscale per input dimension with
// the given initial values (len(ls) must equal the kernel dimension). It
// implies ARD and overrides the constructor's scalar lengthscale, which
// must still be valid.
func Lengthscales(ls []float64) Option {
	return func(o *options) error {
		o.ard = true
		o.ls = append([]float64(nil), ls...)
		return nil
	}
}

// NewRBF returns a squared exponential kernel k = σ² exp(−r²/2) on R^dim.
func NewRBF(dim int, lengthscale, variance float64, opts ...Option) (*Stationary, error) {
	return NewStationary(RBF, dim, lengthscale, variance, opts...)
}

// NewMatern12 returns a Matérn 1/2 (exponential) kernel on R^dim.
func NewMatern12(dim int, lengthscale, variance float64, opts ...Option) (*Stationary, error) {
	return NewStationary(Matern12, dim, lengthscale, variance, opts...)
}

// NewMatern32 returns a Matérn 3/2 kernel on R^dim.
func NewMatern32(dim int, lengthscale, variance float64, opts ...Option) (*Stationary, error) {
	return NewStationary(Matern32, dim, lengthscale, variance, opts...)
}

// NewMatern52 returns a Matérn 5/2 kernel on R^dim.
func NewMatern52(dim int, lengthscale, variance float64, opts ...Option) (*Stationary, error) {
	return NewStationary(Matern52, dim, lengthscale, variance, opts...)
}

// NewStationary returns a kernel of the given family on R^dim with the
// given initial lengthscale and variance. The dimension must be positive
// and at most MaxDim, the lengthscale finite and at least MinLengthscale,
// and the variance finite and positive.
func NewStationary(f Family, dim int, lengthscale, variance float64, opts ...Option) (*Stationary, error) {
	if f < RBF || f > Matern52 {
		return nil, fmt.Errorf("kernel: unknown family %v", f)
	}
	if dim < 1 || dim > MaxDim {
		return nil, fmt.Errorf("kernel: dimension %d, must be in [1, %d]", dim, MaxDim)
	}
	var o options
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("kernel: nil option")
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if err := checkLengthscale(lengthscale); err != nil {
		return nil, err
	}
	if !(variance > 0) || math.IsInf(variance, 1) {
		return nil, fmt.Errorf("kernel: variance %g, must be positive and finite", variance)
	}
	nls := 1
	if o.ard {
		nls = dim
	}
	k := &Stationary{
		family: f,
		dim:    dim,
		ard:    o.ard,
		u:      make([]float64, nls+1),
		ls:     make([]float64, nls),
		inv:    make([]float64, dim),
	}
	for i := range nls {
		l := lengthscale
		if o.ls != nil {
			if len(o.ls) != dim {
				return nil, fmt.Errorf("kernel: %d lengthscales for dimension %d", len(o.ls), dim)
			}
			l = o.ls[i]
			if err := checkLengthscale(l); err != nil {
				return nil, err
			}
		}
		k.u[i] = transform.InvSoftplus(l)
	}
	k.u[nls] = transform.InvSoftplus(variance)
	if err := k.SetParams(k.u); err != nil {
		return nil, err
	}
	return k, nil
}

func checkLengthscale(l float64) error {
	if !(l >= MinLengthscale) || math.IsInf(l, 1) {
		return fmt.Errorf("kernel: lengthscale %g, must be finite and at least %g", l, MinLengthscale)
	}
	return nil
}

// Family returns the kernel's family.
func (k *Stationary) Family() Family { return k.family }

// Dim returns the input dimension.
func (k *Stationary) Dim() int { return k.dim }

// SetWorkers bounds the goroutines that one call of Matrix or MatrixGrad
// uses to n (n ≤ 0, the default: GOMAXPROCS). Results do not depend on it.
// A gp.Model built with gp.WithThreads sets it to its own budget.
func (k *Stationary) SetWorkers(n int) { k.workers = n }

// Clone returns a *Stationary with the same family, dimension, parameters
// and goroutine budget that shares no state with k (see gp.Cloner).
func (k *Stationary) Clone() any {
	c := *k
	c.u = slices.Clone(k.u)
	c.ls = slices.Clone(k.ls)
	c.inv = slices.Clone(k.inv)
	return &c
}

// IsARD reports whether the kernel has one lengthscale per dimension.
func (k *Stationary) IsARD() bool { return k.ard }

// Lengthscales returns a copy of the current lengthscales (one value, or
// one per dimension for ARD kernels).
func (k *Stationary) Lengthscales() []float64 { return append([]float64(nil), k.ls...) }

// Variance returns the current variance σ² = k(x, x).
func (k *Stationary) Variance() float64 { return k.variance }

// NumParams returns 2 for a shared lengthscale and Dim()+1 for ARD.
func (k *Stationary) NumParams() int { return len(k.u) }

// Params copies the unconstrained parameters into dst (see the type
// documentation for their order). It panics if len(dst) != NumParams().
func (k *Stationary) Params(dst []float64) {
	if len(dst) != len(k.u) {
		panic(fmt.Sprintf("kernel: Params destination has length %d, want %d", len(dst), len(k.u)))
	}
	copy(dst, k.u)
}

// SetParams sets the unconstrained parameters. It returns an error, and
// leaves the kernel unchanged, if src has the wrong length, holds NaN or
// Inf, or maps to a lengthscale below MinLengthscale or a variance that
// underflows to zero.
func (k *Stationary) SetParams(src []float64) error {
	if len(src) != len(k.u) {
		return fmt.Errorf("kernel: %d parameters, want %d", len(src), len(k.u))
	}
	nls := len(k.ls)
	for i, v := range src {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("kernel: parameter %d is %g", i, v)
		}
		p := transform.Softplus(v)
		if i < nls {
			// Allow for the rounding of softplus(InvSoftplus(MinLengthscale)).
			if !(p >= MinLengthscale*(1-1e-9)) || math.IsInf(p, 1) {
				return fmt.Errorf("kernel: parameter %d = %g gives lengthscale %g, below %g", i, v, p, MinLengthscale)
			}
		} else if !(p > 0) {
			return fmt.Errorf("kernel: parameter %d = %g gives a zero variance", i, v)
		}
	}
	copy(k.u, src)
	for i := range k.ls {
		k.ls[i] = transform.Softplus(src[i])
	}
	for i := range k.inv {
		if k.ard {
			k.inv[i] = 1 / k.ls[i]
		} else {
			k.inv[i] = 1 / k.ls[0]
		}
	}
	k.variance = transform.Softplus(src[nls])
	return nil
}

// Diag sets dst[i] = k(x_i, x_i) = σ².
func (k *Stationary) Diag(dst []float64, x mat.Matrix) {
	n := checkInput("x", x, k.dim)
	if len(dst) != n {
		panic(fmt.Sprintf("kernel: Diag destination has length %d, want %d", len(dst), n))
	}
	for i := range dst {
		dst[i] = k.variance
	}
}

// DiagGrad adds the gradient of Σ dDiag_i k(x_i, x_i) into dparams. The
// diagonal of a stationary kernel does not depend on x, so dx is unchanged.
func (k *Stationary) DiagGrad(dDiag []float64, x mat.Matrix, dx *mat.Dense, dparams []float64) {
	n := checkInput("x", x, k.dim)
	if len(dDiag) != n {
		panic(fmt.Sprintf("kernel: DiagGrad adjoint has length %d, want %d", len(dDiag), n))
	}
	if dx != nil {
		checkShape("dx", dx, n, k.dim)
	}
	if dparams == nil {
		return
	}
	k.checkDparams(dparams)
	s := 0.0
	for _, v := range dDiag {
		s += v
	}
	nv := len(k.u) - 1
	dparams[nv] += s * transform.SoftplusDeriv(k.u[nv])
}

func (k *Stationary) checkDparams(dparams []float64) {
	if len(dparams) != len(k.u) {
		panic(fmt.Sprintf("kernel: dparams has length %d, want %d", len(dparams), len(k.u)))
	}
}

// prepInputs writes the scaled, centred inputs x̃ (n×d) and, unless same,
// z̃ (m×d) with their squared row norms. It returns z̃ (x̃ itself when same).
func (k *Stationary) prepInputs(x, z mat.Matrix, same bool, xs, zs, shift, nx, nz []float64) []float64 {
	d := k.dim
	centre(shift, x, z, same)
	scaledCopy(xs, x, k.inv, shift)
	rowSqNorms(nx, xs, d)
	if same {
		return xs
	}
	scaledCopy(zs, z, k.inv, shift)
	rowSqNorms(nz, zs, d)
	return zs
}

// sqDistRows writes the clamped squared distances between rows [i0, i1)
// of x̃ (dr.xs) and rows [j0, m) of z̃ (dr.zs) into s (row stride lds; row
// i of the matrix is row i − i0 of s, column j is column j), with one
// single-threaded matrix product.
func (dr *distRows) sqDistRows(s []float64, lds, i0, i1, j0, m int) {
	xs, zs, nx, nz, d := dr.xs, dr.zs, dr.nx, dr.nz, dr.d
	if i1 <= i0 || m <= j0 {
		return
	}
	single := sblas.Implementation{Threads: 1}
	single.Dgemm(blas.NoTrans, blas.Trans, i1-i0, m-j0, d, -2, xs[i0*d:], d, zs[j0*d:], d, 0, s[j0:], lds)
	nzs := nz[j0:m]
	infZ := false
	for _, v := range nzs {
		if math.IsInf(v, 0) {
			infZ = true
			break
		}
	}
	for i := i0; i < i1; i++ {
		row := s[(i-i0)*lds+j0 : (i-i0)*lds+m]
		row = row[:len(nzs)]
		ni := nx[i]
		if !infZ && !math.IsInf(ni, 0) {
			// The common case: ‖x‖² + ‖z‖² − 2xᵀz, clamped at 0 (NaN
			// stays NaN, as with the comparison below).
			for j, v := range row {
				v += ni + nzs[j]
				if v < 0 {
					v = 0
				}
				row[j] = v
			}
			continue
		}
		xi := xs[i*d : i*d+d]
		for j, v := range row {
			nj := nzs[j]
			if math.IsInf(ni, 0) || math.IsInf(nj, 0) {
				// A squared norm overflowed, so the expansion would give
				// Inf − Inf. Sum the differences directly: +Inf for
				// distinct points, 0 for identical ones.
				row[j] = directSqDist(xi, zs[(j0+j)*d:(j0+j)*d+d])
				continue
			}
			v += ni + nj
			if v < 0 {
				v = 0
			}
			row[j] = v
		}
	}
}

// distOperands writes the augmented rows xd_i = [x̃_i, ‖x̃_i‖², 1] (n×(d+2))
// and zd_j = [−2·z̃_j, 1, ‖z̃_j‖²] (m×(d+2)), whose products are the squared
// distances ‖x̃_i‖² + ‖z̃_j‖² − 2·x̃_iᵀz̃_j (when x and z are the same, zs and
// nz are xs and nx, and zd is still needed: its rows differ from xd's). It
// reports whether every squared norm is finite, without which the
// expansion would give Inf − Inf and sqDistRows must be used instead.
func distOperands(xd, zd, xs, zs, nx, nz []float64, d int) bool {
	d2 := d + 2
	fill := func(dst, src, nrm []float64, scale float64, cross bool) bool {
		ok := true
		for i, v := range nrm {
			row := dst[i*d2 : i*d2+d2]
			for c, u := range src[i*d : i*d+d] {
				row[c] = scale * u
			}
			if cross {
				row[d], row[d+1] = 1, v
			} else {
				row[d], row[d+1] = v, 1
			}
			ok = ok && !math.IsInf(v, 0)
		}
		return ok
	}
	okx := fill(xd, xs, nx, 1, false)
	okz := fill(zd, zs, nz, -2, true)
	return okx && okz
}

// sqDistProduct writes ‖x̃_i‖² + ‖z̃_j‖² − 2·x̃_iᵀz̃_j for rows [i0, i1) and
// columns [j0, m) into s (row stride lds, laid out as in sqDistRows) with
// one single-threaded product of the rows of distOperands: the norms ride
// in the product instead of a separate pass. The results are not clamped
// at 0 (vecmath.RadialProfile and vecmath.RadialWeights clamp).
//
// Every entry is the fused multiply-add chain over the d + 2 columns in
// order from zero — the GEMM micro-kernels' contract (package internal/gemm) for
// blocks that reach them, and a direct loop for blocks too small to —
// which is also how rowSqNorms forms the norms. So coincident points get
// (−2‖x̃‖² + ‖x̃‖²) + ‖x̃‖² = 0 exactly, however large the norms
// (TestDistProductCoincident).
func (dr *distRows) sqDistProduct(s []float64, lds, i0, i1, j0, m int) {
	xd, zd, d := dr.xd, dr.zd, dr.d
	if i1 <= i0 || m <= j0 {
		return
	}
	d2 := d + 2
	if i1-i0 < sqDistDirectRows || (i1-i0)*(m-j0) < sqDistDirectElems {
		for i := i0; i < i1; i++ {
			xr := xd[i*d2 : i*d2+d2]
			row := s[(i-i0)*lds : (i-i0)*lds+m]
			for j := j0; j < m; j++ {
				zr := zd[j*d2 : j*d2+d2]
				acc := 0.0
				for c, v := range xr {
					acc = math.FMA(v, zr[c], acc)
				}
				row[j] = acc
			}
		}
		return
	}
	single := sblas.Implementation{Threads: 1}
	single.Dgemm(blas.NoTrans, blas.Trans, i1-i0, m-j0, d2, 1, xd[i0*d2:], d2, zd[j0*d2:], d2, 0, s[j0:], lds)
}

// Blocks with fewer rows or elements than these are computed by
// sqDistProduct's direct loop: package blas hands very thin or tiny
// products to gonum's loops, whose summation order differs from the
// micro-kernels'.
const (
	sqDistDirectRows  = 8
	sqDistDirectElems = 4096
)

// distRows writes rows of the squared distances of a kernel matrix: by
// sqDistProduct when every squared norm is finite (fast), by sqDistRows
// otherwise.
type distRows struct {
	xs, zs, nx, nz []float64 // scaled inputs and their squared norms
	xd, zd         []float64 // distOperands
	d              int
	fast           bool
	near           *nearKeys // the columns sorted by squared norm (prepareNear)
}

// prepare forms the augmented operands in xd and zd ((n+m)·(d+2) values
// between them), chooses the method and sorts the columns for
// refineNear; release must follow once the rows are done.
func (dr *distRows) prepare(xd, zd []float64) {
	n, m := len(dr.nx), len(dr.nz)
	dr.xd, dr.zd = xd[:n*(dr.d+2)], zd[:m*(dr.d+2)]
	dr.fast = distOperands(dr.xd, dr.zd, dr.xs, dr.zs, dr.nx, dr.nz, dr.d)
	dr.prepareNear()
}

// rows writes the distances of rows [i0, i1) and columns [j0, m) into s
// (row stride lds, row i at row i − i0 of s), clamped at 0 only on the
// sqDistRows path.
func (dr *distRows) rows(s []float64, lds, i0, i1, j0, m int) {
	if dr.fast {
		dr.sqDistProduct(s, lds, i0, i1, j0, m)
	} else {
		dr.sqDistRows(s, lds, i0, i1, j0, m)
	}
	dr.refineNear(s, lds, i0, i1, j0, m)
}

// nearRefine is τ/(d+2) for refineNear's threshold τ·(‖x̃‖² + ‖z̃‖²).
// The expansion's absolute error is at most about 2(d+2)·ε·(‖x̃‖² + ‖z̃‖²)
// (ε = 2⁻⁵³), so every distance left as the product gave it keeps a
// relative error below about 2⁻²⁰, while for ordinary data only pairs
// closer than about 10⁻⁴ lengthscales are recomputed.
const nearRefine = 0x1p-30

// nearKeys holds refineNear's sorted column keys: the bits of each
// column's squared norm (non-negative, so ordered as integers) with the
// low bits replaced by the column index.
type nearKeys struct {
	keys []uint64
	mask uint64 // the index bits
}

var nearKeysPool = sync.Pool{New: func() any { return new(nearKeys) }}

// prepareNear sorts the columns by squared norm for refineNear (m log m
// integer comparisons, about 1% of a kernel matrix's work at m = 1024).
// release gives the sorted keys back.
func (dr *distRows) prepareNear() {
	nk := nearKeysPool.Get().(*nearKeys)
	nk.mask = 1<<bits.Len(uint(len(dr.nz))) - 1
	nk.keys = nk.keys[:0]
	for j, v := range dr.nz {
		nk.keys = append(nk.keys, math.Float64bits(v)&^nk.mask|uint64(j))
	}
	slices.Sort(nk.keys)
	dr.near = nk
}

// release returns the scratch prepareNear took.
func (dr *distRows) release() {
	if dr.near != nil {
		nearKeysPool.Put(dr.near)
		dr.near = nil
	}
}

// refineNear recomputes, as Σ_k (x̃_ik − z̃_jk)², the squared distances
// among rows [i0, i1) and columns [j0, m) of s (laid out as in
// sqDistRows) that the expansion ‖x̃‖² + ‖z̃‖² − 2x̃ᵀz̃ cannot resolve:
// those below τ·(‖x̃_i‖² + ‖z̃_j‖²), τ = nearRefine·(d+2). The expansion's
// rounding is absolute, so for near-coincident pairs it would swamp the
// distance itself — and with it the small entries of differences of
// covariances such as C_vv = K_vv − K_vu K_uu⁻¹ K_uv, whose accuracy
// depends on k(o, z) for o close to z. Exact differences give such pairs
// full relative accuracy.
//
// Only columns whose norm is within a relative 2√τ′ of the row's can
// qualify (τ′ = τ plus the expansion's error: ‖x̃ − z̃‖ ≥ |‖x̃‖ − ‖z̃‖|), so
// each row looks up that window in the columns sorted by norm instead of
// scanning its m entries; for ordinary data it holds a column or two.
// Rows or columns whose squared norm overflowed are left alone
// (sqDistRows already summed their differences directly).
func (dr *distRows) refineNear(s []float64, lds, i0, i1, j0, m int) {
	d := dr.d
	tau := nearRefine * float64(d+2)
	w := 2 * math.Sqrt(tau+4*float64(d+2)*0x1p-53)
	lo, hi := (1-w)/(1+w), (1+w)/(1-w)
	lo, hi = lo*lo, hi*hi
	keys, mask := dr.near.keys, dr.near.mask
	for i := i0; i < i1; i++ {
		ni := dr.nx[i]
		if !(ni > 0) || math.IsInf(ni, 0) {
			// A row at the origin has no cancellation to lose.
			continue
		}
		row := s[(i-i0)*lds : (i-i0)*lds+m]
		xi := dr.xs[i*d : i*d+d]
		// The keys' norms, truncated to the index bits, from ni·lo up to
		// ni·hi: a superset of the window.
		a, b := math.Float64bits(ni*lo)&^mask, math.Float64bits(ni*hi)
		k, _ := slices.BinarySearch(keys, a)
		for ; k < len(keys) && keys[k]&^mask <= b; k++ {
			j := int(keys[k] & mask)
			if j < j0 || !(row[j] < tau*(ni+dr.nz[j])) {
				continue
			}
			row[j] = directSqDist(xi, dr.zs[j*d:j*d+d])
		}
	}
}

// directSqDist returns Σ_k (a_k − b_k)², summed term by term.
func directSqDist(a, b []float64) float64 {
	s := 0.0
	for k, v := range a {
		t := v - b[k]
		s += t * t
	}
	return s
}

// radial returns the family's profile as vecmath names it.
func (f Family) radial() vecmath.Radial {
	switch f {
	case Matern12:
		return vecmath.RadialMatern12
	case Matern32:
		return vecmath.RadialMatern32
	case Matern52:
		return vecmath.RadialMatern52
	}
	return vecmath.RadialRBF
}

// profile overwrites each squared distance in row with σ² g(r), by
// vecmath.RadialProfile: square root, exponential and Matérn polynomial fused
// in SIMD registers where the CPU has them, the same bits everywhere. The
// Matérn polynomial is skipped where the exponential underflows, so that
// huge distances give 0, never NaN.
func (k *Stationary) profile(row []float64) {
	vecmath.RadialProfile(row, row, k.family.radial(), k.variance)
}

// Matrix sets dst to k(x_i, z_j). An empty dst is resized to rows(x)×rows(z).
//
// Rows are processed in chunks on up to GOMAXPROCS goroutines; each chunk's
// distances come from one matrix product and are turned into kernel values
// while still in cache. When x and z are the same *mat.Dense only the upper
// triangle is evaluated (with exactly zero diagonal distances) and then
// mirrored, so the result is exactly symmetric.
func (k *Stationary) Matrix(dst *mat.Dense, x, z mat.Matrix) {
	n := checkInput("x", x, k.dim)
	m := checkInput("z", z, k.dim)
	prepareDst(dst, n, m)
	same := sameDense(x, z)
	d := k.dim
	p, buf := getBuf(n*d + m*d + (n+m)*(d+2) + n + m + d)
	defer putBuf(p)
	xs, buf := buf[:n*d], buf[n*d:]
	zs, buf := buf[:m*d], buf[m*d:]
	xd, buf := buf[:n*(d+2)], buf[n*(d+2):]
	zd, buf := buf[:m*(d+2)], buf[m*(d+2):]
	nx, buf := buf[:n], buf[n:]
	nz, buf := buf[:m], buf[m:]
	shift := buf[:d]
	zs = k.prepInputs(x, z, same, xs, zs, shift, nx, nz)
	if same {
		nz = nx
	}
	raw := dst.RawMatrix()
	ld := raw.Stride
	work := n * m
	if same {
		work /= 2
	}
	mt := matrixTasks.Get().(*matrixTask)
	*mt = matrixTask{k: k, data: raw.Data, ld: ld, dr: distRows{xs: xs, zs: zs, nx: nx, nz: nz, d: d}, m: m, same: same}
	mt.dr.prepare(xd, zd)
	forChunks(n, work, k.workers, mt)
	mt.dr.release()
	*mt = matrixTask{}
	matrixTasks.Put(mt)
	if same {
		mirrorUpper(raw.Data, n, ld, k.workers)
	}
}

// matrixTask is the loop body of Matrix over row chunks.
type matrixTask struct {
	k    *Stationary
	data []float64 // the kernel matrix, stride ld
	ld   int
	dr   distRows // by value: a pointer to a local would escape, one allocation a call
	m    int
	same bool
}

var matrixTasks = sync.Pool{New: func() any { return new(matrixTask) }}

// chunk evaluates rows [i0, i1) of the kernel matrix.
func (mt *matrixTask) chunk(_, i0, i1 int) {
	data, ld, m := mt.data, mt.ld, mt.m
	if !mt.same {
		mt.dr.rows(data[i0*ld:], ld, i0, i1, 0, m)
		for i := i0; i < i1; i++ {
			mt.k.profile(data[i*ld : i*ld+m])
		}
		return
	}
	// Upper triangle of rows [i0, i1): the diagonal block from column
	// i0 (its strictly lower part is overwritten by mirrorUpper) and
	// everything to its right.
	mt.dr.rows(data[i0*ld:], ld, i0, i1, i0, m)
	for i := i0; i < i1; i++ {
		data[i*ld+i] = 0
		mt.k.profile(data[i*ld+i : i*ld+m])
	}
}

// weights overwrites the squared distances s in a row by
// W = dK ⊙ ∂K/∂(r²), computed from K itself so that no exponential is
// re-evaluated, and returns the row's contributions Σ dK·K and Σ W·r²
// (vecmath.RadialWeights, fused SIMD kernels where the CPU has them). Pairs
// whose covariance underflowed to 0 have W = 0 and contribute nothing,
// even where their squared distance overflowed to +Inf.
func (k *Stationary) weights(s, dk, kk []float64, iv float64) (sumKdK, sumWs float64) {
	return vecmath.RadialWeights(s, s, dk, kk, k.family.radial(), iv)
}

// MatrixGrad adds the gradients of Σ_ij dK_ij k(x_i, z_j) with respect to
// x, z and the unconstrained parameters into dx, dz and dparams (each may
// be nil). K must be exactly the matrix Matrix computed for the same x and
// z — in particular without jitter added to its diagonal — because the
// radial weights and the variance gradient are computed from it rather
// than by re-evaluating exponentials.
//
// With W = dK ⊙ ∂K/∂(r²), rW its row sums and cW its column sums, and
// inputs scaled column-wise by 1/ℓ (x̃ = x/ℓ, z̃ = z/ℓ):
//
//	dx = 2 (diag(rW) x̃ − W z̃) / ℓ
//	dz = 2 (diag(cW) z̃ − Wᵀ x̃) / ℓ
//	dℓ_k = −(2/ℓ_k) Σ_ij W_ij (x̃_ik − z̃_jk)²
//	     = −(2/ℓ_k) [Σ_i rW_i x̃_ik² + Σ_j cW_j z̃_jk² − 2 Σ_i x̃_ik (W z̃)_ik]
//
// W is formed chunk by chunk (distance product plus an elementwise pass,
// in parallel), and all O(n·m·d) work is in two matrix products W [z̃ 1]
// and Wᵀ [x̃ 1], whose extra column of ones yields rW and cW; each chunk
// multiplies its rows of W while they are still in cache, in a scratch of
// its own (W is never stored whole), and the chunks' partial Wᵀ [x̃ 1] are
// summed in chunk order. For a shared
// lengthscale dℓ = −(2/ℓ) Σ_ij W_ij r²_ij is accumulated elementwise
// without cancellation. When x and z are the same *mat.Dense and dx == dz,
// the two products are summed so that both contributions land in dx.
// Per-chunk partial sums are added in chunk order, so results do not
// depend on scheduling.
func (k *Stationary) MatrixGrad(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, dparams []float64) {
	d := k.dim
	n := checkInput("x", x, d)
	m := checkInput("z", z, d)
	checkShape("dK", dK, n, m)
	checkShape("K", K, n, m)
	if dx != nil {
		checkShape("dx", dx, n, d)
	}
	if dz != nil {
		checkShape("dz", dz, m, d)
	}
	if dparams != nil {
		k.checkDparams(dparams)
	}
	if dx == nil && dz == nil && dparams == nil {
		return
	}
	same := sameDense(x, z)
	merged := same && dx != nil && dx == dz
	ardGrad := k.ard && dparams != nil
	needP := dx != nil || ardGrad                        // W [z̃ 1]
	needR := (dz != nil && !merged) || ardGrad || merged // Wᵀ [x̃ 1]
	d1 := d + 1
	nc := numChunks(n)

	nrm := 0 // per-chunk partial products Wᵀ[x̃ 1], reduced in chunk order
	if needR {
		nrm = nc * m * d1
	}
	p, buf := getBuf(n*d + m*d + 2*n*d1 + 2*m*d1 + nrm + (n+m)*(d+2) + n + m + 2*d + 2*nc)
	defer putBuf(p)
	xd, buf := buf[:n*(d+2)], buf[n*(d+2):]
	zd, buf := buf[:m*(d+2)], buf[m*(d+2):]
	xs, buf := buf[:n*d], buf[n*d:]
	zsBuf, buf := buf[:m*d], buf[m*d:]
	xa, buf := buf[:n*d1], buf[n*d1:]
	zaBuf, buf := buf[:m*d1], buf[m*d1:]
	pm, buf := buf[:n*d1], buf[n*d1:]
	rm, buf := buf[:m*d1], buf[m*d1:]
	rmPart, buf := buf[:nrm], buf[nrm:]
	nx, buf := buf[:n], buf[n:]
	nz, buf := buf[:m], buf[m:]
	shift, buf := buf[:d], buf[d:]
	q, buf := buf[:d], buf[d:]
	part := buf[:2*nc]

	zs := k.prepInputs(x, z, same, xs, zsBuf, shift, nx, nz)
	if same {
		nz = nx
	}
	dkr, kr := dK.RawMatrix(), K.RawMatrix()
	// The weights are formed from K/sc and every gradient is scaled by sc
	// at the end, so that a variance near the float64 maximum cannot
	// overflow the intermediate matrix products when the gradients
	// themselves are representable (sc ≥ 1 keeps 1/sc finite).
	sc := math.Max(k.variance, 1)
	augment := func(dst, src []float64, rows int) {
		for i := 0; i < rows; i++ {
			copy(dst[i*d1:i*d1+d], src[i*d:i*d+d])
			dst[i*d1+d] = 1
		}
	}
	augment(xa, xs, n)
	za := xa
	if !same {
		za = zaBuf
		augment(za, zs, m)
	}
	gt := weightTasks.Get().(*weightTask)
	*gt = weightTask{k: k, dr: distRows{xs: xs, zs: zs, nx: nx, nz: nz, d: d}, m: m, same: same,
		dk: dkr.Data, ldk: dkr.Stride, kk: kr.Data, ldkk: kr.Stride, iv: 1 / sc, part: part,
		d1: d1, xa: xa, za: za, needP: needP, needR: needR, pm: pm, rmPart: rmPart}
	gt.dr.prepare(xd, zd)
	forChunks(n, n*m, k.workers, gt)
	gt.dr.release()
	*gt = weightTask{}
	weightTasks.Put(gt)
	var sumKdK, sumWs float64
	for c := 0; c < nc; c++ {
		sumKdK += part[2*c]
		sumWs += part[2*c+1]
	}
	if needR {
		copy(rm, rmPart[:m*d1])
		for c := 1; c < nc; c++ {
			for i, v := range rmPart[c*m*d1 : (c+1)*m*d1] {
				rm[i] += v
			}
		}
	}
	if merged {
		// Both arguments are x: pm ← (W + Wᵀ) [x̃ 1].
		for i, v := range rm {
			pm[i] += v
		}
	}
	g := gradSums{n: n, m: m, d1: d1, xs: xs, zs: zs, pm: pm, rm: rm, q: q, merged: merged, sc: sc,
		sumKdK: sumKdK, sumWs: sumWs}
	k.inputGrads(&g, dx, dz)
	if dparams != nil {
		k.paramGrads(&g, dparams)
	}
}

// gradSums is what the weight pass of Stationary.MatrixGrad leaves for
// the gradients.
type gradSums struct {
	// n and m are the rows of x and z; d1 is the dimension plus one.
	n, m, d1 int
	// xs and zs are the shifted inputs (n×d and m×d).
	xs, zs []float64
	// pm is W [z̃ 1] (n×d1; (W + Wᵀ) [x̃ 1] if merged) and rm is
	// Wᵀ [x̃ 1] (m×d1). q is scratch of d values.
	pm, rm, q []float64
	// merged means x and z are the same matrix and so are dx and dz.
	merged bool
	// sc is the scale every gradient is multiplied by at the end.
	sc float64
	// sumKdK and sumWs are the weight pass's sums for the gradients with
	// respect to the variance and a shared lengthscale.
	sumKdK, sumWs float64
}

// inputGrads adds the gradients with respect to x and z into dx and dz
// (either may be nil; dz is not used when g.merged).
func (k *Stationary) inputGrads(g *gradSums, dx, dz *mat.Dense) {
	d, d1, n, m, pm, rm, xs, zs, sc := k.dim, g.d1, g.n, g.m, g.pm, g.rm, g.xs, g.zs, g.sc
	if dx != nil {
		raw := dx.RawMatrix()
		for i := 0; i < n; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+d]
			rw := pm[i*d1+d]
			for c := range row {
				row[c] += 2 * sc * ((rw*xs[i*d+c] - pm[i*d1+c]) * k.inv[c])
			}
		}
	}
	if dz != nil && !g.merged {
		raw := dz.RawMatrix()
		for j := 0; j < m; j++ {
			row := raw.Data[j*raw.Stride : j*raw.Stride+d]
			cw := rm[j*d1+d]
			for c := range row {
				row[c] += 2 * sc * ((cw*zs[j*d+c] - rm[j*d1+c]) * k.inv[c])
			}
		}
	}
}

// paramGrads adds the gradients with respect to the lengthscales and the
// variance into dparams.
func (k *Stationary) paramGrads(g *gradSums, dparams []float64) {
	d, d1, n, m, pm, rm, xs, zs, sc, q := k.dim, g.d1, g.n, g.m, g.pm, g.rm, g.xs, g.zs, g.sc, g.q
	merged, sumKdK, sumWs := g.merged, g.sumKdK, g.sumWs
	nls := len(k.ls)
	if k.ard {
		for c := range q {
			q[c] = 0
		}
		if merged {
			// Σ_ij W_ij (x̃_i − x̃_j)² = Σ_i rWs_i x̃_i² − Σ_i x̃_i (Ws x̃)_i,
			// Ws = W + Wᵀ.
			for i := 0; i < n; i++ {
				r := pm[i*d1+d]
				for c := 0; c < d; c++ {
					xv := xs[i*d+c]
					q[c] += sqTerm(r, xv) - xv*pm[i*d1+c]
				}
			}
		} else {
			for i := 0; i < n; i++ {
				r := pm[i*d1+d]
				for c := 0; c < d; c++ {
					xv := xs[i*d+c]
					q[c] += sqTerm(r, xv) - 2*xv*pm[i*d1+c]
				}
			}
			for j := 0; j < m; j++ {
				cw := rm[j*d1+d]
				for c := 0; c < d; c++ {
					q[c] += sqTerm(cw, zs[j*d+c])
				}
			}
		}
		for c := 0; c < d; c++ {
			dparams[c] += -2 * sc * (k.inv[c] * q[c]) * transform.SoftplusDeriv(k.u[c])
		}
	} else {
		dparams[0] += -2 * sc * (k.inv[0] * sumWs) * transform.SoftplusDeriv(k.u[0])
	}
	dparams[nls] += sumKdK * (sc / k.variance) * transform.SoftplusDeriv(k.u[nls])
}

// sqTerm returns w·v², and 0 when w = 0 even if v² overflows: a point
// whose weights all vanished (its covariances underflowed) contributes
// nothing to the lengthscale gradient.
func sqTerm(w, v float64) float64 {
	if w == 0 {
		return 0
	}
	return w * v * v
}

// weightTask is the loop body of MatrixGrad over row chunks.
type weightTask struct {
	k    *Stationary
	dr   distRows // by value: a pointer to a local would escape, one allocation a call
	m    int
	same bool
	dk   []float64 // dK, stride ldk
	ldk  int
	kk   []float64 // K, stride ldkk
	ldkk int
	iv   float64 // 1/sc
	part []float64
	// The products of the chunk's rows of W, formed while they are in
	// cache: rows [i0, i1) of pm = W·[z̃ 1] (needP) and the chunk's partial
	// Wᵀ[x̃ 1] over those rows in rmPart[c·m·d1:] (needR).
	d1           int
	xa, za       []float64 // [x̃ 1] and [z̃ 1], d1 columns
	needP, needR bool
	pm, rmPart   []float64
}

var weightTasks = sync.Pool{New: func() any { return new(weightTask) }}

// chunk forms rows [i0, i1) of W, stores the chunk's sums Σ dK·K and
// Σ W·r² in part[2c] and part[2c+1], and multiplies the rows into pm and
// rmPart.
func (gt *weightTask) chunk(c, i0, i1 int) {
	m := gt.m
	h, w := getBuf((i1 - i0) * m) // the chunk's rows of W
	defer putBuf(h)
	gt.dr.rows(w, m, i0, i1, 0, m)
	var a, b float64
	for i := i0; i < i1; i++ {
		row := w[(i-i0)*m : (i-i0)*m+m]
		if gt.same {
			row[i] = 0
		}
		ai, bi := gt.k.weights(row, gt.dk[i*gt.ldk:i*gt.ldk+m], gt.kk[i*gt.ldkk:i*gt.ldkk+m], gt.iv)
		a += ai
		b += bi
	}
	gt.part[2*c], gt.part[2*c+1] = a, b
	single := sblas.Implementation{Threads: 1}
	d1 := gt.d1
	if gt.needP {
		single.Dgemm(blas.NoTrans, blas.NoTrans, i1-i0, d1, m, 1, w, m, gt.za, d1, 0, gt.pm[i0*d1:], d1)
	}
	if gt.needR {
		single.Dgemm(blas.Trans, blas.NoTrans, m, d1, i1-i0, 1, w, m, gt.xa[i0*d1:], d1, 0, gt.rmPart[c*m*d1:], d1)
	}
}
