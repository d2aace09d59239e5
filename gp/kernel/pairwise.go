package kernel

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/transform"
)

// hyper holds the positive hyperparameters of a kernel in unconstrained
// form u, their values v = softplus(u) and the derivatives dv/du, which
// turn gradients with respect to the values into gradients with respect
// to the unconstrained parameters.
type hyper struct {
	u, v, chain []float64
	workers     int // goroutines per Matrix call (≤ 0: GOMAXPROCS)
}

// newHyper returns the hyperparameters with the given positive finite
// values (names are used in errors).
func newHyper(names []string, vals []float64) (hyper, error) {
	h := hyper{u: make([]float64, len(vals)), v: make([]float64, len(vals)), chain: make([]float64, len(vals))}
	for i, v := range vals {
		if !(v > 0) || math.IsInf(v, 1) {
			return hyper{}, fmt.Errorf("kernel: %s %g, must be positive and finite", names[i], v)
		}
		h.u[i] = transform.InvSoftplus(v)
	}
	if err := h.set(h.u, nil); err != nil {
		return hyper{}, err
	}
	return h, nil
}

// NumParams returns the number of unconstrained hyperparameters.
func (h *hyper) NumParams() int { return len(h.u) }

// Params copies the unconstrained hyperparameters into dst. It panics if
// len(dst) != NumParams().
func (h *hyper) Params(dst []float64) {
	if len(dst) != len(h.u) {
		panic(fmt.Sprintf("kernel: Params destination has length %d, want %d", len(dst), len(h.u)))
	}
	copy(dst, h.u)
}

// set takes the unconstrained parameters src if they are finite, their
// values positive and check (if not nil) accepts the values; otherwise it
// returns an error and changes nothing.
func (h *hyper) set(src []float64, check func(v []float64) error) error {
	if len(src) != len(h.u) {
		return fmt.Errorf("kernel: %d parameters, want %d", len(src), len(h.u))
	}
	v := make([]float64, len(src))
	for i, s := range src {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return fmt.Errorf("kernel: parameter %d is %g", i, s)
		}
		v[i] = transform.Softplus(s)
		if !(v[i] > 0) || math.IsInf(v[i], 1) {
			return fmt.Errorf("kernel: parameter %d gives value %g, must be positive and finite", i, v[i])
		}
	}
	if check != nil {
		if err := check(v); err != nil {
			return err
		}
	}
	copy(h.u, src)
	copy(h.v, v)
	for i, s := range src {
		h.chain[i] = transform.SoftplusDeriv(s)
	}
	return nil
}

func (h *hyper) clone() hyper {
	return hyper{u: slices.Clone(h.u), v: slices.Clone(h.v), chain: slices.Clone(h.chain), workers: h.workers}
}

// SetWorkers bounds the goroutines that one call of Matrix uses to n
// (n ≤ 0, the default: GOMAXPROCS). Results do not depend on it. A
// gp.Model built with gp.WithThreads sets it to its own budget.
func (h *hyper) SetWorkers(n int) { h.workers = n }

// checkDim returns an error unless dim is in [1, MaxDim].
func checkDim(dim int) error {
	if dim < 1 || dim > MaxDim {
		return fmt.Errorf("kernel: dimension %d, must be in [1, %d]", dim, MaxDim)
	}
	return nil
}

// pairKernel is a kernel evaluated one pair of points at a time, in
// O(n·m·d) scalar work (Matrix in parallel row chunks, the gradients on one
// goroutine): the periodic, rational quadratic, polynomial and constant
// kernels, whose formulas are simple enough that this is exact and
// straightforward, though slower than the Stationary kernels' distance
// products for large d.
type pairKernel interface {
	// value returns k(x, z) for rows x and z.
	value(x, z []float64) float64
	// grad adds g·∂k/∂x into dx and g·∂k/∂z into dz (either may be nil,
	// and they may be the same slice) and g·∂k/∂v_i into dv[i] for the
	// kernel's hyperparameter values v (dv may be nil).
	grad(x, z []float64, g float64, dx, dz, dv []float64)
}

// rowMajor returns the rows of m (r×d) as one contiguous slice: the
// backing array itself for a compact *mat.Dense, otherwise a copy.
func rowMajor(m mat.Matrix) []float64 {
	r, d := m.Dims()
	if rm, ok := m.(mat.RawMatrixer); ok {
		raw := rm.RawMatrix()
		if raw.Stride == d || r <= 1 {
			return raw.Data[:r*d]
		}
	}
	out := make([]float64, r*d)
	for i := 0; i < r; i++ {
		for c := 0; c < d; c++ {
			out[i*d+c] = m.At(i, c)
		}
	}
	return out
}

// pairMatrix sets dst to k(x_i, z_j), rows in parallel chunks.
func pairMatrix(k pairKernel, dim, workers int, dst *mat.Dense, x, z mat.Matrix) {
	n := checkInput("x", x, dim)
	m := checkInput("z", z, dim)
	prepareDst(dst, n, m)
	xs, zs := rowMajor(x), rowMajor(z)
	raw := dst.RawMatrix()
	forChunks(n, n*m, workers, pairTask(func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			xi := xs[i*dim : i*dim+dim]
			row := raw.Data[i*raw.Stride : i*raw.Stride+m]
			for j := range row {
				row[j] = k.value(xi, zs[j*dim:j*dim+dim])
			}
		}
	}))
}

// pairTask adapts a function of a row range to chunkBody.
type pairTask func(i0, i1 int)

func (f pairTask) chunk(_, i0, i1 int) { f(i0, i1) }

// pairDiag sets dst[i] = k(x_i, x_i).
func pairDiag(k pairKernel, dim int, dst []float64, x mat.Matrix) {
	n := checkInput("x", x, dim)
	if len(dst) != n {
		panic(fmt.Sprintf("kernel: Diag destination has length %d, want %d", len(dst), n))
	}
	xs := rowMajor(x)
	for i := range dst {
		xi := xs[i*dim : i*dim+dim]
		dst[i] = k.value(xi, xi)
	}
}

// pairGrad back-propagates adjoints through a pair kernel k on dim
// inputs, with h supplying the chain factors dv/du.
type pairGrad struct {
	k   pairKernel
	h   *hyper
	dim int
}

// matrix back-propagates dK through k(x, z) pair by pair; see
// gp.Kernel.MatrixGrad.
func (pg pairGrad) matrix(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, dparams []float64) {
	k, h, dim := pg.k, pg.h, pg.dim
	n := checkInput("x", x, dim)
	m := checkInput("z", z, dim)
	checkShape("dK", dK, n, m)
	checkShape("K", K, n, m)
	if dx != nil {
		checkShape("dx", dx, n, dim)
	}
	if dz != nil {
		checkShape("dz", dz, m, dim)
	}
	if dparams != nil && len(dparams) != len(h.u) {
		panic(fmt.Sprintf("kernel: dparams has length %d, want %d", len(dparams), len(h.u)))
	}
	if dx == nil && dz == nil && dparams == nil {
		return
	}
	xs, zs := rowMajor(x), rowMajor(z)
	var dv []float64
	if dparams != nil {
		dv = make([]float64, len(h.u))
	}
	dkr := dK.RawMatrix()
	for i := 0; i < n; i++ {
		var dxi []float64
		if dx != nil {
			dxi = dx.RawRowView(i)
		}
		for j, g := range dkr.Data[i*dkr.Stride : i*dkr.Stride+m] {
			if g == 0 {
				continue
			}
			var dzj []float64
			if dz != nil {
				dzj = dz.RawRowView(j)
			}
			k.grad(xs[i*dim:i*dim+dim], zs[j*dim:j*dim+dim], g, dxi, dzj, dv)
		}
	}
	for i, g := range dv {
		dparams[i] += g * h.chain[i]
	}
}

// diag back-propagates dDiag through k(x_i, x_i); both arguments depend
// on x_i, so both input gradients land in dx.
func (pg pairGrad) diag(dDiag []float64, x mat.Matrix, dx *mat.Dense, dparams []float64) {
	k, h, dim := pg.k, pg.h, pg.dim
	n := checkInput("x", x, dim)
	if len(dDiag) != n {
		panic(fmt.Sprintf("kernel: DiagGrad adjoint has length %d, want %d", len(dDiag), n))
	}
	if dx != nil {
		checkShape("dx", dx, n, dim)
	}
	if dparams != nil && len(dparams) != len(h.u) {
		panic(fmt.Sprintf("kernel: dparams has length %d, want %d", len(dparams), len(h.u)))
	}
	xs := rowMajor(x)
	var dv []float64
	if dparams != nil {
		dv = make([]float64, len(h.u))
	}
	for i, g := range dDiag {
		if g == 0 {
			continue
		}
		var dxi []float64
		if dx != nil {
			dxi = dx.RawRowView(i)
		}
		xi := xs[i*dim : i*dim+dim]
		k.grad(xi, xi, g, dxi, dxi, dv)
	}
	for i, g := range dv {
		dparams[i] += g * h.chain[i]
	}
}
