package likelihood

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/solvegp/solvegp/gp/transform"
)

// MaxOutputs is the largest number of outputs MultiGaussian accepts.
const MaxOutputs = 1 << 16

// MultiGaussian is a Gaussian likelihood for P real outputs per point,
// observed through L latent functions g_1..g_L of one gp.Model (which share
// its kernel and inducing inputs and have their own q(u) and q(v⊥)):
//
//	y_p = f_p + ε_p,   f_p(x) = Σ_l W_pl·g_l(x),   ε_p ~ N(0, σ_p²),
//
// with one learnable noise variance σ_p² = floor + softplus(u_p) per
// output. Two forms:
//
//   - independent outputs (NewIndependentGaussian): L = P and W = I, fixed.
//     The P latent functions are independent GPs with a shared kernel —
//     GPflow's SharedIndependent: one set of kernel hyperparameters for all
//     outputs, each output its own q(u), q(v⊥) and noise.
//   - a linear model of coregionalization (NewLMC): L latent functions and
//     a learned P×L mixing matrix W, so that outputs borrow strength from
//     each other.
//
// Targets are stored point-major, P per point (element n·P+p is output p of
// point n); a NaN marks a missing value, which contributes nothing to the
// bound. Since q(g_l(x_n)) are independent Gaussians N(μ_l, σ_l²), f_p has
// the marginal N(Σ_l W_pl·μ_l, Σ_l W_pl²·σ_l²), and the expected
// log-likelihood is a sum of closed-form Gaussian terms per observed value.
//
// Parameters (unconstrained): the P noise parameters u_p, then for NewLMC
// the entries of W row by row (unconstrained as they are).
type MultiGaussian struct {
	floor float64
	p, l  int
	mix   bool      // W is learned (NewLMC); else W = I
	u     []float64 // unconstrained noise parameters
	noise []float64 // σ_p²
	w     []float64 // P×L row-major (mix only)
}

// NewIndependentGaussian returns a MultiGaussian of P = len(noise)
// independent outputs with initial noise variances noise (each finite and
// above the floor). It accepts the NoiseFloor option.
func NewIndependentGaussian(noise []float64, opts ...Option) (*MultiGaussian, error) {
	return newMultiGaussian(len(noise), len(noise), nil, noise, opts)
}

// NewLMC returns a MultiGaussian linear model of coregionalization with P =
// len(noise) outputs, L latent functions and the initial P×L mixing matrix
// w (row-major, P·L finite values), and initial noise variances noise. It
// accepts the NoiseFloor option.
func NewLMC(l int, w, noise []float64, opts ...Option) (*MultiGaussian, error) {
	if w == nil {
		return nil, fmt.Errorf("likelihood: NewLMC needs a mixing matrix")
	}
	return newMultiGaussian(len(noise), l, w, noise, opts)
}

func newMultiGaussian(p, l int, w, noise []float64, opts []Option) (*MultiGaussian, error) {
	c, err := newConfig("MultiGaussian", optFloor, opts)
	if err != nil {
		return nil, err
	}
	if p < 1 || p > MaxOutputs || l < 1 || l > MaxOutputs {
		return nil, fmt.Errorf("likelihood: %d outputs and %d latent functions, want 1 to %d each", p, l, MaxOutputs)
	}
	g := &MultiGaussian{floor: c.floor, p: p, l: l, mix: w != nil, u: make([]float64, p), noise: make([]float64, p)}
	src := make([]float64, p, p+len(w))
	for i, v := range noise {
		if !(v > g.floor) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("likelihood: noise variance %g of output %d, must be finite and above the floor %g", v, i, g.floor)
		}
		src[i] = transform.InvSoftplus(v - g.floor)
	}
	if g.mix {
		if len(w) != p*l {
			return nil, fmt.Errorf("likelihood: mixing matrix has %d values, want %d×%d", len(w), p, l)
		}
		g.w = make([]float64, p*l)
		src = append(src, w...)
	}
	if err := g.SetParams(src); err != nil {
		return nil, err
	}
	return g, nil
}

// NumOutputs returns P, the number of observed outputs per point.
func (g *MultiGaussian) NumOutputs() int { return g.p }

// NumLatent returns L, the number of latent functions per point.
func (g *MultiGaussian) NumLatent() int { return g.l }

// IsLMC reports whether W is learned (NewLMC) rather than the identity.
func (g *MultiGaussian) IsLMC() bool { return g.mix }

// NoiseFloor returns the lower bound of each σ_p².
func (g *MultiGaussian) NoiseFloor() float64 { return g.floor }

// NoiseVariances returns a copy of σ_1², ..., σ_P².
func (g *MultiGaussian) NoiseVariances() []float64 { return append([]float64(nil), g.noise...) }

// Mixing returns a copy of W (P×L, row-major); the identity for
// independent outputs.
func (g *MultiGaussian) Mixing() []float64 {
	if g.mix {
		return append([]float64(nil), g.w...)
	}
	w := make([]float64, g.p*g.l)
	for i := 0; i < g.p; i++ {
		w[i*g.l+i] = 1
	}
	return w
}

// Clone returns a copy that shares no state with g (see gp.Cloner).
func (g *MultiGaussian) Clone() any {
	c := *g
	c.u = append([]float64(nil), g.u...)
	c.noise = append([]float64(nil), g.noise...)
	c.w = append([]float64(nil), g.w...)
	if !g.mix {
		c.w = nil
	}
	return &c
}

// NumParams returns P, plus P·L for an LMC.
func (g *MultiGaussian) NumParams() int {
	if g.mix {
		return g.p + g.p*g.l
	}
	return g.p
}

// Params writes the noise parameters and then W (LMC) into dst; it panics
// if len(dst) != NumParams().
func (g *MultiGaussian) Params(dst []float64) {
	if len(dst) != g.NumParams() {
		panic(fmt.Sprintf("likelihood: Params destination has length %d, want %d", len(dst), g.NumParams()))
	}
	copy(dst, g.u)
	copy(dst[g.p:], g.w)
}

// SetParams sets the parameters from src. It returns an error for a wrong
// length or a non-finite value, leaving the likelihood unchanged.
func (g *MultiGaussian) SetParams(src []float64) error {
	if len(src) != g.NumParams() {
		return fmt.Errorf("likelihood: %d parameters, want %d", len(src), g.NumParams())
	}
	for i, v := range src {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("likelihood: parameter %d is %g", i, v)
		}
	}
	for _, u := range src[:g.p] {
		if !(g.floor+transform.Softplus(u) > 0) {
			return fmt.Errorf("likelihood: parameter %g gives a zero noise variance (no floor)", u)
		}
	}
	for i, u := range src[:g.p] {
		g.u[i], g.noise[i] = u, g.floor+transform.Softplus(u)
	}
	copy(g.w, src[g.p:])
	return nil
}

// Validate returns an error for an infinite target (NaN marks a missing
// one), a number of targets that is not a multiple of P, and the zero
// MultiGaussian.
func (g *MultiGaussian) Validate(y []float64) error {
	if g.p == 0 {
		return errZeroValue("MultiGaussian", "NewIndependentGaussian or NewLMC")
	}
	if len(y)%g.p != 0 {
		return fmt.Errorf("likelihood: %d targets is not a multiple of %d outputs", len(y), g.p)
	}
	for i, v := range y {
		if math.IsInf(v, 0) {
			return fmt.Errorf("likelihood: target %d (point %d, output %d) is %g", i, i/g.p, i%g.p, v)
		}
	}
	return nil
}

// weight returns W_pl.
func (g *MultiGaussian) weight(p, l int) float64 {
	if g.mix {
		return g.w[p*g.l+l]
	}
	if p == l {
		return 1
	}
	return 0
}

// OutputMarginals writes the marginal means Σ_l W_pl·μ_l and variances
// Σ_l W_pl²·max(σ_l², 0) of the outputs' latent functions f_p into fmean
// and fvar (n·P values each, point-major) from the marginals of the latent
// functions g_l in mu and variance (n·L values each). fvar may be nil.
func (g *MultiGaussian) OutputMarginals(fmean, fvar, mu, variance []float64) {
	n := len(mu) / g.l
	if len(mu) != n*g.l || len(variance) != len(mu) || len(fmean) != n*g.p || (fvar != nil && len(fvar) != n*g.p) {
		panic(fmt.Sprintf("likelihood: OutputMarginals lengths %d, %d for %d latent and %d outputs", len(mu), len(fmean), g.l, g.p))
	}
	for i := 0; i < n; i++ {
		m, v := mu[i*g.l:(i+1)*g.l], variance[i*g.l:(i+1)*g.l]
		for p := 0; p < g.p; p++ {
			var s, sv float64
			if g.mix {
				w := g.w[p*g.l : (p+1)*g.l]
				for l, wl := range w {
					s += wl * m[l]
					sv += wl * wl * math.Max(v[l], 0)
				}
			} else {
				s, sv = m[p], math.Max(v[p], 0)
			}
			fmean[i*g.p+p] = s
			if fvar != nil {
				fvar[i*g.p+p] = sv
			}
		}
	}
}

// checkMultiLens panics unless y has n·P values and mu and variance n·L.
// It returns n.
func (g *MultiGaussian) checkMultiLens(y, mu, variance []float64) int {
	n := len(y) / g.p
	if len(y) != n*g.p || len(mu) != n*g.l || len(variance) != n*g.l {
		panic(fmt.Sprintf("likelihood: %d targets of %d outputs need mu and variance of length %d (%d latent), have %d and %d",
			len(y), g.p, n*g.l, g.l, len(mu), len(variance)))
	}
	return n
}

// ExpectedLogLik returns Σ_n Σ_p E[log N(y_np; f_p(x_n), σ_p²)] over the
// observed (non-NaN) targets, in closed form,
//
//	−½ log(2πσ_p²) − ((y_np − m_np)² + s_np) / (2σ_p²),
//
// with m_np = Σ_l W_pl·μ_nl and s_np = Σ_l W_pl²·v_nl. Its gradients are
// ∂/∂μ_nl = Σ_p W_pl·r_np/σ_p², ∂/∂v_nl = −Σ_p W_pl²/(2σ_p²),
// ∂/∂W_pl = Σ_n (r_np·μ_nl − W_pl·v_nl)/σ_p² (r = y − m) and, for σ_p²,
// Σ_n [−1/(2σ_p²) + ((y − m)² + s)/(2σ_p⁴)], chained through softplus. rng
// is unused.
func (g *MultiGaussian) ExpectedLogLik(y, mu, variance []float64, dmu, dvar, dparams []float64, _ *rand.Rand) float64 {
	n := g.checkMultiLens(y, mu, variance)
	checkGradLens(dmu, dvar, n*g.l)
	checkParamLen(dparams, g.NumParams())
	P, L := g.p, g.l
	if dmu != nil {
		clear(dmu)
		clear(dvar)
	}
	var sum float64
	for p := 0; p < P; p++ {
		s2 := g.noise[p]
		inv := 1 / s2
		c := -0.5 * math.Log(2*math.Pi*s2)
		var sq float64
		nValid := 0
		for i := 0; i < n; i++ {
			yv := y[i*P+p]
			if math.IsNaN(yv) {
				continue
			}
			nValid++
			m, v := mu[i*L:(i+1)*L], variance[i*L:(i+1)*L]
			var mean, s float64
			for l := 0; l < L; l++ {
				w := g.weight(p, l)
				mean += w * m[l]
				s += w * w * v[l]
			}
			r := yv - mean
			e := r*r + s
			sq += e
			sum += c - 0.5*e*inv
			if dmu != nil {
				for l := 0; l < L; l++ {
					w := g.weight(p, l)
					dmu[i*L+l] += w * r * inv
					dvar[i*L+l] -= 0.5 * w * w * inv
				}
			}
			if dparams != nil && g.mix {
				dw := dparams[P+p*L : P+(p+1)*L]
				for l := 0; l < L; l++ {
					dw[l] += (r*m[l] - g.w[p*L+l]*v[l]) * inv
				}
			}
		}
		if dparams != nil {
			dn := -0.5*float64(nValid)*inv + 0.5*sq*inv*inv
			dparams[p] += dn * transform.SoftplusDeriv(g.u[p])
		}
	}
	return sum
}

// LogPredictive writes, for each point n, the sum over its observed
// outputs of the marginal log predictive densities log N(y_np; m_np,
// s_np + σ_p²) into dst (one value per point; 0 for a point with no
// observed output). For independent outputs this is the joint density of
// the observed outputs; for an LMC, whose outputs are correlated a
// posteriori, it is the product of their marginals. rng is unused.
func (g *MultiGaussian) LogPredictive(dst, y, mu, variance []float64, _ *rand.Rand) {
	n := g.checkMultiLens(y, mu, variance)
	if len(dst) != n {
		panic(fmt.Sprintf("likelihood: LogPredictive destination has length %d, want %d", len(dst), n))
	}
	fm := make([]float64, g.p)
	fv := make([]float64, g.p)
	for i := 0; i < n; i++ {
		g.OutputMarginals(fm, fv, mu[i*g.l:(i+1)*g.l], variance[i*g.l:(i+1)*g.l])
		var s float64
		for p, yv := range y[i*g.p : (i+1)*g.p] {
			if math.IsNaN(yv) {
				continue
			}
			v := fv[p] + g.noise[p]
			r := yv - fm[p]
			s += -0.5*math.Log(2*math.Pi*v) - 0.5*r*r/v
		}
		dst[i] = s
	}
}

// PredictY writes the predictive mean m_np and variance s_np + σ_p² of
// every output (n·P values each, point-major) from the latent marginals
// mu and fvar (n·L values each). variance may be nil. rng is unused.
func (g *MultiGaussian) PredictY(mean, variance, mu, fvar []float64, _ *rand.Rand) {
	checkPredictLens(mean, variance, mu, fvar, g.l, g.p)
	g.OutputMarginals(mean, variance, mu, fvar)
	for i := range variance {
		variance[i] += g.noise[i%g.p]
	}
}
