package gp

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/internal/floats"
	"github.com/solvegp/solvegp/internal/nilcheck"
)

// MeanFunction is a prior mean m(x) of the latent functions (package
// gp/mean has zero, constant and linear ones). With WithMean the model's
// latent functions are f_l ~ GP(m, k): m(x) is added to the marginal mean
// of every latent function, in the bound (and so in Forward) and in
// prediction, and m's parameters are the last entries of the flat
// parameter vector (Layout.Mean), learned with the others.
//
// Eval writes m(x_n) for each row x_n of x into dst (len ≥ rows). Grad adds
// Σ_n g[n]·∂m(x_n)/∂θ into dparams (len NumParams) and, if dx is non-nil,
// g[n]·∂m(x_n)/∂x_n into row n of dx; it must be the exact gradient of
// Eval. Clone (see Cloner) must return a copy of the same type: a Predictor
// evaluates its own copy.
//
// A mean function may instead give each latent function its own mean, by
// an Outputs method (see MeanOutputs) returning the model's number of
// latent functions L: Eval then writes m_l(x_n) at dst[n·L+l] (len ≥
// rows·L) and Grad reads the weight of m_l(x_n) at g[n·L+l]. mean.PerLatent
// is such a mean; multi-class likelihoods need one, since a mean shared by
// every class function cancels out of the class probabilities.
type MeanFunction interface {
	Dim() int
	NumParams() int
	Params(dst []float64)
	SetParams(src []float64) error
	Eval(x mat.Matrix, dst []float64)
	Grad(x mat.Matrix, g, dparams []float64, dx *mat.Dense)
	Cloner
}

// WithMean gives the model the prior mean function m (default: none, the
// zero mean). The model owns m from then on: set its parameters through
// Model.SetParams. m's input dimension must be the kernel's.
func WithMean(m MeanFunction) Option {
	return func(c *config) error {
		if nilcheck.IsNil(m) {
			return fmt.Errorf("%w: nil mean function", ErrValue)
		}
		c.mean = m
		return nil
	}
}

// MeanOutputs returns the number of means m gives per input: the result
// of its Outputs method if it has one, else 1 (one mean shared by every
// latent function).
func MeanOutputs(m MeanFunction) int {
	if o, ok := m.(interface{ Outputs() int }); ok {
		return o.Outputs()
	}
	return 1
}

// checkMean validates the mean function of a model on d-dimensional
// inputs with nl latent functions: its dimension, number of outputs (1 or
// nl), parameter count, parameters and Clone.
func checkMean(m MeanFunction, d, nl int) error {
	if m == nil {
		return nil
	}
	if m.Dim() != d {
		return fmt.Errorf("%w: mean function on %d inputs, kernel on %d", ErrShape, m.Dim(), d)
	}
	if q := MeanOutputs(m); q != 1 && q != nl {
		return fmt.Errorf("%w: mean function has %d outputs, the likelihood %d latent functions (want 1 or %d)", ErrShape, q, nl, nl)
	}
	np := m.NumParams()
	if np < 0 || np > maxValues {
		return fmt.Errorf("%w: mean function has %d parameters", ErrShape, np)
	}
	p := make([]float64, np)
	m.Params(p)
	if !floats.AllFinite(p) {
		return fmt.Errorf("%w: mean function parameters are not finite", ErrValue)
	}
	if _, ok := cloneOf(m); !ok {
		return fmt.Errorf("%w: mean function %T has no Clone method that returns a copy", ErrValue, m)
	}
	return nil
}

// Mean returns the model's mean function (nil if it has none); its
// parameters are owned by the model.
func (mod *Model) Mean() MeanFunction { return mod.mean }

// numMeanParams returns the number of mean parameters (0 without a mean).
func numMeanParams(m MeanFunction) int {
	if m == nil {
		return 0
	}
	return m.NumParams()
}

// addMean adds m(x_n) (or, for a mean with L outputs, m_l(x_n)) to the L
// marginal means of each row n of x (point-major mu), using buf (len ≥
// rows of x times m's outputs) for m's values.
func addMean(m MeanFunction, x mat.Matrix, L int, mu, buf []float64) {
	if m == nil {
		return
	}
	n, _ := x.Dims()
	if MeanOutputs(m) != 1 {
		m.Eval(x, buf[:n*L])
		for i, v := range buf[:n*L] {
			mu[i] += v
		}
		return
	}
	m.Eval(x, buf[:n])
	for i := 0; i < n; i++ {
		for l := 0; l < L; l++ {
			mu[i*L+l] += buf[i]
		}
	}
}

// meanBackward adds the gradient of an objective with marginal-mean
// gradients dmu (point-major, L per point) with respect to the mean's
// parameters into grad[off:] and, if dx is non-nil, to the inputs into dx.
func (mod *Model) meanBackward(x *mat.Dense, dmu []float64, grad []float64, dx *mat.Dense) {
	if mod.mean == nil {
		return
	}
	n, _ := x.Dims()
	L := mod.nl
	off := mod.layout.Mean
	if MeanOutputs(mod.mean) != 1 {
		mod.mean.Grad(x, dmu[:n*L], grad[off:off+mod.mean.NumParams()], dx)
		return
	}
	g := grow(mod.ws.mx, n)
	mod.ws.mx = g
	for i := 0; i < n; i++ {
		var s float64
		for l := 0; l < L; l++ {
			s += dmu[i*L+l]
		}
		g[i] = s
	}
	mod.mean.Grad(x, g, grad[off:off+mod.mean.NumParams()], dx)
}
