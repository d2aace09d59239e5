package gp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/internal/floats"
)

// refRBF is a loop-based ARD squared-exponential kernel used as an
// independent reference in this package's tests. Parameters: log variance,
// then log lengthscales.
type refRBF struct {
	d int
	p []float64
}

func newRefRBF(d int, variance float64, ls ...float64) *refRBF {
	k := &refRBF{d: d, p: make([]float64, d+1)}
	k.p[0] = math.Log(variance)
	for i := 0; i < d; i++ {
		l := 1.0
		if i < len(ls) {
			l = ls[i]
		}
		k.p[i+1] = math.Log(l)
	}
	return k
}

func (k *refRBF) Dim() int             { return k.d }
func (k *refRBF) NumParams() int       { return len(k.p) }
func (k *refRBF) Params(dst []float64) { copy(dst, k.p) }
func (k *refRBF) SetParams(src []float64) error {
	if len(src) != len(k.p) {
		return fmt.Errorf("bad length")
	}
	if !floats.AllFinite(src) {
		return fmt.Errorf("non-finite")
	}
	copy(k.p, src)
	return nil
}

func (k *refRBF) eval(x, z mat.Matrix, i, j int) float64 {
	var s float64
	for c := 0; c < k.d; c++ {
		l := math.Exp(k.p[c+1])
		t := (x.At(i, c) - z.At(j, c)) / l
		s += t * t
	}
	return math.Exp(k.p[0]) * math.Exp(-0.5*s)
}

func (k *refRBF) Matrix(dst *mat.Dense, x, z mat.Matrix) {
	r, _ := x.Dims()
	c, _ := z.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			dst.Set(i, j, k.eval(x, z, i, j))
		}
	}
}

func (k *refRBF) Diag(dst []float64, x mat.Matrix) {
	for i := range dst {
		dst[i] = math.Exp(k.p[0])
	}
}

func (k *refRBF) MatrixGrad(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, dparams []float64) {
	r, _ := x.Dims()
	c, _ := z.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			g := dK.At(i, j) * K.At(i, j)
			if dparams != nil {
				dparams[0] += g
			}
			for q := 0; q < k.d; q++ {
				l2 := math.Exp(2 * k.p[q+1])
				diff := x.At(i, q) - z.At(j, q)
				if dparams != nil {
					dparams[q+1] += g * diff * diff / l2
				}
				if dx != nil {
					dx.Set(i, q, dx.At(i, q)-g*diff/l2)
				}
				if dz != nil {
					dz.Set(j, q, dz.At(j, q)+g*diff/l2)
				}
			}
		}
	}
}

func (k *refRBF) DiagGrad(dDiag []float64, x mat.Matrix, dx *mat.Dense, dparams []float64) {
	if dparams == nil {
		return
	}
	for _, v := range dDiag {
		dparams[0] += v * math.Exp(k.p[0])
	}
}

// refGauss is a Gaussian likelihood with log-variance parameter.
type refGauss struct{ logVar float64 }

func (g *refGauss) NumLatent() int       { return 1 }
func (g *refGauss) NumParams() int       { return 1 }
func (g *refGauss) Params(dst []float64) { dst[0] = g.logVar }
func (g *refGauss) SetParams(src []float64) error {
	if len(src) != 1 || !floats.AllFinite(src) {
		return fmt.Errorf("bad")
	}
	g.logVar = src[0]
	return nil
}
func (g *refGauss) ExpectedLogLik(y, mu, v, dmu, dvar, dparams []float64, _ *rand.Rand) float64 {
	s2 := math.Exp(g.logVar)
	var sum float64
	for n := range y {
		r := y[n] - mu[n]
		sum += -0.5*math.Log(2*math.Pi*s2) - (r*r+v[n])/(2*s2)
		if dmu != nil {
			dmu[n] = r / s2
			dvar[n] = -1 / (2 * s2)
		}
		if dparams != nil {
			dparams[0] += -0.5 + (r*r+v[n])/(2*s2)
		}
	}
	return sum
}

// TighterTerm is −½·Σ log(1 + dₙ/σ²) with its gradients (σ² = exp(logVar)).
func (g *refGauss) TighterTerm(d, dd, dparams []float64) float64 {
	s2 := math.Exp(g.logVar)
	var sum float64
	for n, v := range d {
		sum -= 0.5 * math.Log1p(v/s2)
		if dd != nil {
			dd[n] = -0.5 / (s2 + v)
		}
		if dparams != nil {
			dparams[0] += 0.5 * v / (s2 + v)
		}
	}
	return sum
}
func (g *refGauss) LogPredictive(dst, y, mu, v []float64, _ *rand.Rand) {
	s2 := math.Exp(g.logVar)
	for n := range y {
		t := v[n] + s2
		r := y[n] - mu[n]
		dst[n] = -0.5*math.Log(2*math.Pi*t) - r*r/(2*t)
	}
}
func (g *refGauss) PredictY(mean, variance, mu, fvar []float64, _ *rand.Rand) {
	copy(mean, mu)
	for n := range fvar {
		variance[n] = fvar[n] + math.Exp(g.logVar)
	}
}

// refPoisson is a Poisson likelihood with exponential link.
type refPoisson struct{}

func (refPoisson) NumLatent() int                { return 1 }
func (refPoisson) NumParams() int                { return 0 }
func (refPoisson) Params([]float64)              {}
func (refPoisson) SetParams(src []float64) error { return nil }
func (refPoisson) ExpectedLogLik(y, mu, v, dmu, dvar, dparams []float64, _ *rand.Rand) float64 {
	var s float64
	for n := range y {
		e := math.Exp(mu[n] + v[n]/2)
		lg, _ := math.Lgamma(y[n] + 1)
		s += y[n]*mu[n] - e - lg
		if dmu != nil {
			dmu[n] = y[n] - e
			dvar[n] = -e / 2
		}
	}
	return s
}
func (refPoisson) LogPredictive(dst, y, mu, v []float64, _ *rand.Rand) {}
func (refPoisson) PredictY(mean, variance, mu, fvar []float64, _ *rand.Rand) {
	for n := range mu {
		mean[n] = math.Exp(mu[n] + fvar[n]/2)
	}
}

// refTwo has two latent functions: y ~ N(f0, σ²)·N(f1, 2σ²) (as a product
// of densities), a closed-form multi-latent test likelihood.
type refTwo struct{ logVar float64 }

func (g *refTwo) NumLatent() int       { return 2 }
func (g *refTwo) NumParams() int       { return 1 }
func (g *refTwo) Params(dst []float64) { dst[0] = g.logVar }
func (g *refTwo) SetParams(src []float64) error {
	g.logVar = src[0]
	return nil
}
func (g *refTwo) ExpectedLogLik(y, mu, v, dmu, dvar, dparams []float64, _ *rand.Rand) float64 {
	var sum float64
	for n := range y {
		for l := 0; l < 2; l++ {
			s2 := math.Exp(g.logVar) * float64(l+1)
			i := 2*n + l
			r := y[n] - mu[i]
			sum += -0.5*math.Log(2*math.Pi*s2) - (r*r+v[i])/(2*s2)
			if dmu != nil {
				dmu[i] = r / s2
				dvar[i] = -1 / (2 * s2)
			}
			if dparams != nil {
				dparams[0] += -0.5 + (r*r+v[i])/(2*s2)
			}
		}
	}
	return sum
}
func (g *refTwo) LogPredictive(dst, y, mu, v []float64, _ *rand.Rand) {}
func (g *refTwo) PredictY(mean, variance, mu, fvar []float64, _ *rand.Rand) {
	copy(mean, mu)
}

func randDense(rng *rand.Rand, r, c int, lo, hi float64) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, lo+(hi-lo)*rng.Float64())
		}
	}
	return m
}

// kmat returns k(x, z) as a new matrix.
func kmat(k Kernel, x, z mat.Matrix) *mat.Dense {
	r, _ := x.Dims()
	c, _ := z.Dims()
	m := mat.NewDense(r, c, nil)
	k.Matrix(m, x, z)
	return m
}

func stack(a, b mat.Matrix) *mat.Dense {
	var s mat.Dense
	s.Stack(a, b)
	return &s
}

func inv(a mat.Matrix) *mat.Dense {
	var m mat.Dense
	if err := m.Inverse(a); err != nil {
		panic(err)
	}
	return &m
}

func mul(ms ...mat.Matrix) *mat.Dense {
	var acc mat.Dense
	acc.CloneFrom(ms[0])
	for _, m := range ms[1:] {
		var t mat.Dense
		t.Mul(&acc, m)
		acc = t
	}
	return &acc
}

func cholLower(a mat.Matrix) *mat.Dense {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := 0.5 * (a.At(i, j) + a.At(j, i))
			s.SetSym(i, j, v)
		}
	}
	var c mat.Cholesky
	if !c.Factorize(s) {
		panic("not PD")
	}
	var l mat.TriDense
	c.LTo(&l)
	return mat.DenseCopyOf(&l)
}

// newOfKind builds a model of the given kind (o is ignored for SVGP).
func newOfKind(kind Kind, k Kernel, lik Likelihood, z, o mat.Matrix, opts ...Option) (*Model, error) {
	switch kind {
	case SVGP:
		return NewSVGP(k, lik, z, opts...)
	case ODVGP:
		return NewODVGP(k, lik, z, o, opts...)
	default:
		return NewSOLVEGP(k, lik, z, o, opts...)
	}
}
