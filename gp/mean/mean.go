// Package mean provides prior mean functions m(x) for the GP models of
// package gp: zero, constant and linear. A model built with
// gp.WithMean(m) has latent functions f ~ GP(m, k): m(x) is added to the
// marginal means of every latent function, in the bound and in
// prediction, and m's parameters are learned with the others (they are
// the last entries of the model's flat parameter vector).
//
// Every mean function here implements gp.MeanFunction without importing
// package gp. Parameters are unconstrained (no transform): the constant
// is c, the linear mean's are the weights w_1..w_d followed by the bias b.
package mean

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ErrParams is wrapped by the errors of constructors and SetParams about
// wrong dimensions or non-finite values.
var ErrParams = errors.New("mean: bad parameters")

// Zero is the mean function m(x) = 0, with no parameters. A model with a
// Zero mean computes exactly what a model without a mean does.
type Zero struct{ d int }

// NewZero returns the zero mean on d-dimensional inputs (d ≥ 1).
func NewZero(d int) (*Zero, error) {
	if d < 1 {
		return nil, fmt.Errorf("%w: input dimension %d", ErrParams, d)
	}
	return &Zero{d: d}, nil
}

// Dim returns the input dimension.
func (z *Zero) Dim() int { return z.d }

// NumParams returns 0.
func (z *Zero) NumParams() int { return 0 }

// Params copies nothing.
func (z *Zero) Params(dst []float64) {}

// SetParams accepts only an empty vector.
func (z *Zero) SetParams(src []float64) error { return checkParams(src, 0) }

// Eval writes 0 for every row of x into dst.
func (z *Zero) Eval(x mat.Matrix, dst []float64) {
	n, _ := x.Dims()
	clear(dst[:n])
}

// Grad adds nothing: the zero mean has no parameters and no slope.
func (z *Zero) Grad(x mat.Matrix, g, dparams []float64, dx *mat.Dense) {}

// Clone returns a copy.
func (z *Zero) Clone() any { c := *z; return &c }

// Constant is the mean function m(x) = c.
type Constant struct {
	d int
	c float64
}

// NewConstant returns the constant mean c on d-dimensional inputs.
func NewConstant(d int, c float64) (*Constant, error) {
	if d < 1 {
		return nil, fmt.Errorf("%w: input dimension %d", ErrParams, d)
	}
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return nil, fmt.Errorf("%w: constant %g", ErrParams, c)
	}
	return &Constant{d: d, c: c}, nil
}

// Dim returns the input dimension.
func (m *Constant) Dim() int { return m.d }

// NumParams returns 1.
func (m *Constant) NumParams() int { return 1 }

// Params copies c into dst[0].
func (m *Constant) Params(dst []float64) { dst[0] = m.c }

// SetParams sets c = src[0].
func (m *Constant) SetParams(src []float64) error {
	if err := checkParams(src, 1); err != nil {
		return err
	}
	m.c = src[0]
	return nil
}

// Value returns c.
func (m *Constant) Value() float64 { return m.c }

// Eval writes c for every row of x into dst.
func (m *Constant) Eval(x mat.Matrix, dst []float64) {
	n, _ := x.Dims()
	for i := range dst[:n] {
		dst[i] = m.c
	}
}

// Grad adds Σ_n g[n] (the derivative with respect to c) into dparams[0];
// the constant has no slope in x.
func (m *Constant) Grad(x mat.Matrix, g, dparams []float64, dx *mat.Dense) {
	n, _ := x.Dims()
	var s float64
	for _, v := range g[:n] {
		s += v
	}
	dparams[0] += s
}

// Clone returns a copy.
func (m *Constant) Clone() any { c := *m; return &c }

// Linear is the mean function m(x) = wᵀx + b, whose parameters are
// w_1..w_d followed by b. It lets a model follow a linear trend away from
// the data, where a zero-mean GP reverts to zero.
type Linear struct {
	w []float64
	b float64
}

// NewLinear returns the linear mean with weights w (len d ≥ 1, copied) and
// bias b.
func NewLinear(w []float64, b float64) (*Linear, error) {
	if len(w) < 1 {
		return nil, fmt.Errorf("%w: no weights", ErrParams)
	}
	m := &Linear{w: make([]float64, len(w))}
	p := append(append([]float64(nil), w...), b)
	if err := m.SetParams(p); err != nil {
		return nil, err
	}
	return m, nil
}

// Dim returns the input dimension d.
func (m *Linear) Dim() int { return len(m.w) }

// NumParams returns d + 1.
func (m *Linear) NumParams() int { return len(m.w) + 1 }

// Params copies w and then b into dst.
func (m *Linear) Params(dst []float64) {
	copy(dst, m.w)
	dst[len(m.w)] = m.b
}

// SetParams sets w = src[:d] and b = src[d].
func (m *Linear) SetParams(src []float64) error {
	if err := checkParams(src, len(m.w)+1); err != nil {
		return err
	}
	copy(m.w, src)
	m.b = src[len(m.w)]
	return nil
}

// Weights returns a copy of w.
func (m *Linear) Weights() []float64 { return append([]float64(nil), m.w...) }

// Bias returns b.
func (m *Linear) Bias() float64 { return m.b }

// Eval writes wᵀx_n + b for every row x_n of x into dst.
func (m *Linear) Eval(x mat.Matrix, dst []float64) {
	n, _ := x.Dims()
	for i := 0; i < n; i++ {
		s := m.b
		for j, w := range m.w {
			s += w * x.At(i, j)
		}
		dst[i] = s
	}
}

// Grad adds Σ_n g[n]·x_n into the weights' part of dparams and Σ_n g[n]
// into the bias's, and, if dx is non-nil, g[n]·w into row n of dx.
func (m *Linear) Grad(x mat.Matrix, g, dparams []float64, dx *mat.Dense) {
	n, _ := x.Dims()
	d := len(m.w)
	for i := 0; i < n; i++ {
		gi := g[i]
		for j := 0; j < d; j++ {
			dparams[j] += gi * x.At(i, j)
		}
		dparams[d] += gi
		if dx != nil {
			for j, w := range m.w {
				dx.Set(i, j, dx.At(i, j)+gi*w)
			}
		}
	}
}

// Clone returns a copy that shares no memory with m.
func (m *Linear) Clone() any {
	return &Linear{w: append([]float64(nil), m.w...), b: m.b}
}

func checkParams(src []float64, n int) error {
	if len(src) != n {
		return fmt.Errorf("%w: %d parameters, want %d", ErrParams, len(src), n)
	}
	for i, v := range src {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: parameter %d is %g", ErrParams, i, v)
		}
	}
	return nil
}
