package mean

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/internal/nilcheck"
)

// Func is a single-output mean function: the methods of gp.MeanFunction,
// which Zero, Constant and Linear have. PerLatent combines several.
type Func interface {
	Dim() int
	NumParams() int
	Params(dst []float64)
	SetParams(src []float64) error
	Eval(x mat.Matrix, dst []float64)
	Grad(x mat.Matrix, g, dparams []float64, dx *mat.Dense)
	Clone() any
}

// PerLatent is a prior mean with its own component m_l for each latent
// function l = 0..L−1 of a model: f_l ~ GP(m_l, k). A multi-class
// likelihood (softmax, robust-max) needs it, since a mean shared by every
// class function cancels out of the class probabilities; a constant per
// class learns the classes' prior log-odds, which few inducing points
// cannot carry for unbalanced classes.
//
// Its parameters are those of m_0, then m_1, and so on. Eval and Grad
// work on L values per input row, point-major: Eval writes m_l(x_n) at
// dst[n·L+l], and Grad reads the weight of m_l(x_n) at g[n·L+l]. Outputs
// returns L, which tells package gp to use that layout. Eval may be
// called from several goroutines at once (as a gp.Predictor does) when
// the components' Eval may.
type PerLatent struct {
	comps []Func
}

// NewPerLatent returns the per-latent mean with the given components (at
// least one, all on the same input dimension, none itself a PerLatent).
// It keeps clones of them: later changes to the arguments do not reach it.
func NewPerLatent(comps ...Func) (*PerLatent, error) {
	if len(comps) < 1 {
		return nil, fmt.Errorf("%w: a per-latent mean needs at least one component", ErrParams)
	}
	p := &PerLatent{comps: make([]Func, len(comps))}
	for l, c := range comps {
		if nilcheck.IsNil(c) {
			return nil, fmt.Errorf("%w: component %d is nil", ErrParams, l)
		}
		if _, nested := c.(*PerLatent); nested {
			return nil, fmt.Errorf("%w: component %d is itself a per-latent mean", ErrParams, l)
		}
		if c.Dim() != comps[0].Dim() {
			return nil, fmt.Errorf("%w: component %d on %d inputs, component 0 on %d", ErrParams, l, c.Dim(), comps[0].Dim())
		}
		cl, ok := c.Clone().(Func)
		if !ok || nilcheck.IsNil(cl) || !nilcheck.IsCopy(cl, c) {
			return nil, fmt.Errorf("%w: component %d (%T) has no Clone method that returns a copy", ErrParams, l, c)
		}
		params := make([]float64, cl.NumParams())
		cl.Params(params)
		if err := checkParams(params, len(params)); err != nil {
			return nil, fmt.Errorf("component %d: %w", l, err)
		}
		p.comps[l] = cl
	}
	return p, nil
}

// NewConstantPerLatent returns the per-latent mean whose component l is
// the constant c[l], on d-dimensional inputs: L = len(c) latent functions.
func NewConstantPerLatent(d int, c []float64) (*PerLatent, error) {
	comps := make([]Func, len(c))
	for l, v := range c {
		m, err := NewConstant(d, v)
		if err != nil {
			return nil, fmt.Errorf("component %d: %w", l, err)
		}
		comps[l] = m
	}
	return NewPerLatent(comps...)
}

// NewLinearPerLatent returns the per-latent mean whose component l is the
// linear mean w[l]ᵀx + b[l]: L = len(w) = len(b) latent functions, each
// w[l] of the same length d ≥ 1.
func NewLinearPerLatent(w [][]float64, b []float64) (*PerLatent, error) {
	if len(w) != len(b) {
		return nil, fmt.Errorf("%w: %d weight vectors and %d biases", ErrParams, len(w), len(b))
	}
	comps := make([]Func, len(w))
	for l := range w {
		m, err := NewLinear(w[l], b[l])
		if err != nil {
			return nil, fmt.Errorf("component %d: %w", l, err)
		}
		comps[l] = m
	}
	return NewPerLatent(comps...)
}

// Outputs returns L, the number of components.
func (p *PerLatent) Outputs() int { return len(p.comps) }

// Component returns component l (0 ≤ l < Outputs). It is p's own: set
// its parameters through p.SetParams.
func (p *PerLatent) Component(l int) Func { return p.comps[l] }

// Dim returns the input dimension.
func (p *PerLatent) Dim() int { return p.comps[0].Dim() }

// NumParams returns the components' parameter counts summed.
func (p *PerLatent) NumParams() int {
	n := 0
	for _, c := range p.comps {
		n += c.NumParams()
	}
	return n
}

// Params copies the components' parameters into dst, component 0 first.
func (p *PerLatent) Params(dst []float64) {
	off := 0
	for _, c := range p.comps {
		np := c.NumParams()
		c.Params(dst[off : off+np])
		off += np
	}
}

// SetParams sets the components' parameters from src (in the order of
// Params). A wrong length or a non-finite value is an error and changes
// nothing.
func (p *PerLatent) SetParams(src []float64) error {
	if err := checkParams(src, p.NumParams()); err != nil {
		return err
	}
	off := 0
	for l, c := range p.comps {
		np := c.NumParams()
		if err := c.SetParams(src[off : off+np]); err != nil {
			return fmt.Errorf("component %d: %w", l, err)
		}
		off += np
	}
	return nil
}

// Eval writes m_l(x_n) at dst[n·L+l] for every row x_n of x and every
// component l; dst needs rows·L values.
func (p *PerLatent) Eval(x mat.Matrix, dst []float64) {
	n, _ := x.Dims()
	L := len(p.comps)
	buf := make([]float64, n)
	for l, c := range p.comps {
		c.Eval(x, buf)
		for i, v := range buf {
			dst[i*L+l] = v
		}
	}
}

// Grad adds, for every component l, Σ_n g[n·L+l]·∂m_l(x_n)/∂θ_l into
// component l's part of dparams and, if dx is non-nil, g[n·L+l]·∂m_l(x_n)/∂x_n
// into row n of dx.
func (p *PerLatent) Grad(x mat.Matrix, g, dparams []float64, dx *mat.Dense) {
	n, _ := x.Dims()
	L := len(p.comps)
	buf := make([]float64, n)
	off := 0
	for l, c := range p.comps {
		for i := range buf {
			buf[i] = g[i*L+l]
		}
		np := c.NumParams()
		c.Grad(x, buf, dparams[off:off+np], dx)
		off += np
	}
}

// Clone returns a copy that shares no memory with p.
func (p *PerLatent) Clone() any {
	c := &PerLatent{comps: make([]Func, len(p.comps))}
	for l, m := range p.comps {
		c.comps[l] = m.Clone().(Func)
	}
	return c
}
