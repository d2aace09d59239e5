package kernel

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/internal/nilcheck"
)

// Active restricts a kernel to a subset of the input columns (GPflow's
// active_dims): k(x, z) = base(x[cols], z[cols]) for inputs with Dim
// columns, where base has len(cols) dimensions. Sums and products of
// Active kernels give kernels on different columns, such as an RBF on
// columns 0–2 plus a periodic kernel on column 3.
//
// Gradients with respect to the inputs are the base kernel's, scattered
// back to the chosen columns; the other columns get 0. The parameters are
// the base kernel's, in its order.
type Active struct {
	base Kernel
	dim  int
	cols []int
}

// NewActive returns base applied to columns cols (0-based, distinct, each
// in [0, dim)) of inputs with dim columns; base.Dim() must equal
// len(cols). The base kernel is shared, not copied.
func NewActive(base Kernel, dim int, cols []int) (*Active, error) {
	if nilcheck.IsNil(base) {
		return nil, fmt.Errorf("kernel: active-dimension kernel of a nil kernel")
	}
	if err := checkDim(dim); err != nil {
		return nil, err
	}
	if len(cols) != base.Dim() {
		return nil, fmt.Errorf("kernel: %d active columns for a kernel of dimension %d", len(cols), base.Dim())
	}
	seen := make(map[int]bool, len(cols))
	for _, c := range cols {
		if c < 0 || c >= dim {
			return nil, fmt.Errorf("kernel: active column %d outside [0, %d)", c, dim)
		}
		if seen[c] {
			return nil, fmt.Errorf("kernel: active column %d repeated", c)
		}
		seen[c] = true
	}
	return &Active{base: base, dim: dim, cols: slices.Clone(cols)}, nil
}

// Dim returns the number of input columns.
func (a *Active) Dim() int { return a.dim }

// Base returns the kernel applied to the active columns (shared).
func (a *Active) Base() Kernel { return a.base }

// Columns returns a copy of the active columns.
func (a *Active) Columns() []int { return slices.Clone(a.cols) }

// Parts returns the base kernel as a one-element slice, so that the checks
// of NewSum and NewProduct for a kernel held twice see through Active.
func (a *Active) Parts() []Kernel { return []Kernel{a.base} }

// NumParams returns the base kernel's number of parameters.
func (a *Active) NumParams() int { return a.base.NumParams() }

// Params copies the base kernel's parameters into dst.
func (a *Active) Params(dst []float64) { a.base.Params(dst) }

// SetParams sets the base kernel's parameters.
func (a *Active) SetParams(src []float64) error { return a.base.SetParams(src) }

// SetWorkers passes n to the base kernel if it has a SetWorkers method.
func (a *Active) SetWorkers(n int) {
	if w, ok := a.base.(interface{ SetWorkers(int) }); ok {
		w.SetWorkers(n)
	}
}

// Clone returns an *Active on a copy of the base kernel made by its Clone
// method, or nil if the base kernel cannot be copied (see gp.Cloner).
func (a *Active) Clone() any {
	cl, ok := a.base.(interface{ Clone() any })
	if !ok {
		return nil
	}
	b, ok := cl.Clone().(Kernel)
	if !ok || !nilcheck.IsCopy(b, a.base) {
		return nil
	}
	return &Active{base: b, dim: a.dim, cols: slices.Clone(a.cols)}
}

// pick returns the active columns of x as a new matrix.
func (a *Active) pick(x mat.Matrix) *mat.Dense {
	n := checkInput("x", x, a.dim)
	out := mat.NewDense(n, len(a.cols), nil)
	for i := 0; i < n; i++ {
		row := out.RawRowView(i)
		for j, c := range a.cols {
			row[j] = x.At(i, c)
		}
	}
	return out
}

// picks returns the active columns of x and z, the same matrix when x and
// z are one set of points (so that the base kernel sees them as such).
func (a *Active) picks(x, z mat.Matrix) (xs, zs *mat.Dense) {
	xs = a.pick(x)
	if samePoints(x, z) {
		return xs, xs
	}
	return xs, a.pick(z)
}

// Matrix sets dst to base(x[cols], z[cols]).
func (a *Active) Matrix(dst *mat.Dense, x, z mat.Matrix) {
	checkInput("z", z, a.dim)
	xs, zs := a.picks(x, z)
	a.base.Matrix(dst, xs, zs)
}

// Diag sets dst to diag base(x[cols], x[cols]).
func (a *Active) Diag(dst []float64, x mat.Matrix) { a.base.Diag(dst, a.pick(x)) }

// scatter adds the columns of src into the active columns of dst.
func (a *Active) scatter(dst, src *mat.Dense) {
	if dst == nil || src == nil {
		return
	}
	r, _ := src.Dims()
	for i := 0; i < r; i++ {
		row, drow := src.RawRowView(i), dst.RawRowView(i)
		for j, c := range a.cols {
			drow[c] += row[j]
		}
	}
}

// grads returns zeroed scratch gradients for the active columns of dx and
// dz (nil where those are nil; one matrix when dz is dx).
func (a *Active) grads(dx, dz *mat.Dense) (tx, tz *mat.Dense) {
	if dx != nil {
		r, _ := dx.Dims()
		tx = mat.NewDense(r, len(a.cols), nil)
	}
	switch {
	case dz != nil && dz == dx:
		tz = tx
	case dz != nil:
		r, _ := dz.Dims()
		tz = mat.NewDense(r, len(a.cols), nil)
	}
	return tx, tz
}

// MatrixGrad back-propagates through base(x[cols], z[cols]).
func (a *Active) MatrixGrad(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, dparams []float64) {
	n := checkInput("x", x, a.dim)
	m := checkInput("z", z, a.dim)
	if dx != nil {
		checkShape("dx", dx, n, a.dim)
	}
	if dz != nil {
		checkShape("dz", dz, m, a.dim)
	}
	xs, zs := a.picks(x, z)
	tx, tz := a.grads(dx, dz)
	a.base.MatrixGrad(dK, K, xs, zs, tx, tz, dparams)
	a.scatter(dx, tx)
	if tz != tx {
		a.scatter(dz, tz)
	}
}

// DiagGrad back-propagates through diag base(x[cols], x[cols]).
func (a *Active) DiagGrad(dDiag []float64, x mat.Matrix, dx *mat.Dense, dparams []float64) {
	n := checkInput("x", x, a.dim)
	if dx != nil {
		checkShape("dx", dx, n, a.dim)
	}
	tx, _ := a.grads(dx, nil)
	a.base.DiagGrad(dDiag, a.pick(x), tx, dparams)
	a.scatter(dx, tx)
}
