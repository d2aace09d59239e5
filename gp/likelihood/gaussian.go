package likelihood

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/solvegp/solvegp/gp/transform"
)

// DefaultNoiseFloor is the default lower bound of the Gaussian noise
// variance.
const DefaultNoiseFloor = 1e-6

// Gaussian is the likelihood y = f + ε, ε ~ N(0, σ²), with a learnable
// noise variance σ² = floor + softplus(u). Its single unconstrained
// parameter is u; the floor keeps σ² away from zero however far an
// optimizer pushes u.
//
// The zero value has a noise variance of 0, which gives NaN bounds: make
// one with NewGaussian. Validate, which the gp models call on their data,
// returns an error for it.
type Gaussian struct {
	floor float64
	u     float64
	noise float64
}

// NewGaussian returns a Gaussian likelihood with initial noise variance
// noise, which must be finite and greater than the floor. It accepts the
// NoiseFloor option.
func NewGaussian(noise float64, opts ...Option) (*Gaussian, error) {
	c, err := newConfig("Gaussian", optFloor, opts)
	if err != nil {
		return nil, err
	}
	g := &Gaussian{floor: c.floor}
	if !(noise > g.floor) || math.IsInf(noise, 1) {
		return nil, fmt.Errorf("likelihood: noise variance %g, must be finite and above the floor %g", noise, g.floor)
	}
	if err := g.SetParams([]float64{transform.InvSoftplus(noise - g.floor)}); err != nil {
		return nil, err
	}
	return g, nil
}

// NoiseVariance returns σ².
func (g *Gaussian) NoiseVariance() float64 { return g.noise }

// NoiseFloor returns the lower bound of σ².
func (g *Gaussian) NoiseFloor() float64 { return g.floor }

// Clone returns a *Gaussian with the same noise variance and floor that
// shares no state with g (see gp.Cloner).
func (g *Gaussian) Clone() any {
	c := *g
	return &c
}

// NumLatent returns 1.
func (g *Gaussian) NumLatent() int { return 1 }

// NumParams returns 1: the unconstrained noise parameter u.
func (g *Gaussian) NumParams() int { return 1 }

// Params writes u into dst[0]; it panics if len(dst) != 1.
func (g *Gaussian) Params(dst []float64) {
	if len(dst) != 1 {
		panic(fmt.Sprintf("likelihood: Params destination has length %d, want 1", len(dst)))
	}
	dst[0] = g.u
}

// SetParams sets u from src[0]. It returns an error for a wrong length or a
// non-finite value, leaving the likelihood unchanged.
func (g *Gaussian) SetParams(src []float64) error {
	if len(src) != 1 {
		return fmt.Errorf("likelihood: %d parameters, want 1", len(src))
	}
	u := src[0]
	if math.IsNaN(u) || math.IsInf(u, 0) {
		return fmt.Errorf("likelihood: parameter is %g", u)
	}
	noise := g.floor + transform.Softplus(u)
	if !(noise > 0) {
		return fmt.Errorf("likelihood: parameter %g gives a zero noise variance (no floor)", u)
	}
	g.u, g.noise = u, noise
	return nil
}

// Validate returns an error if any label is NaN or infinite, and for the
// zero Gaussian (see the type).
func (g *Gaussian) Validate(y []float64) error {
	if !(g.noise > 0) {
		return errZeroValue("Gaussian", "NewGaussian")
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("likelihood: label %d is %g", i, v)
		}
	}
	return nil
}

// ExpectedLogLik returns Σ_n E[log N(y_n; f_n, σ²)] in closed form,
//
//	−½ log(2πσ²) − ((y − μ)² + v) / (2σ²),
//
// with gradients dμ = (y − μ)/σ², dv = −1/(2σ²) and, for σ²,
// Σ [−1/(2σ²) + ((y − μ)² + v)/(2σ⁴)], chained through softplus. rng is
// unused.
func (g *Gaussian) ExpectedLogLik(y, mu, variance []float64, dmu, dvar, dparams []float64, _ *rand.Rand) float64 {
	n := checkLens(y, mu, variance, 1)
	checkGradLens(dmu, dvar, n)
	checkParamLen(dparams, 1)
	s2 := g.noise
	inv := 1 / s2
	c := -0.5 * math.Log(2*math.Pi*s2)
	var sum, sq float64
	nValid := 0
	for i := range y {
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			// Outside the support: probability zero, no gradient.
			sum = math.Inf(-1)
			if dmu != nil {
				dmu[i], dvar[i] = 0, 0
			}
			continue
		}
		nValid++
		r := y[i] - mu[i]
		e := r*r + variance[i]
		sq += e
		sum += c - 0.5*e*inv
		if dmu != nil {
			dmu[i] = r * inv
			dvar[i] = -0.5 * inv
		}
	}
	if dparams != nil {
		dn := -0.5*float64(nValid)*inv + 0.5*sq*inv*inv
		dparams[0] += dn * transform.SoftplusDeriv(g.u)
	}
	return sum
}

// TighterTerm returns −½·Σₙ log(1 + dₙ/σ²), the term of gp.TighterBound:
// the maximum over λₙ > 0 of −λₙdₙ/(2σ²) − ½(λₙ − 1 − log λₙ), the
// Gaussian likelihood's expectation of a residual variance scaled by λₙ
// less the conditional's KL divergence, reached at λₙ = σ²/(σ² + dₙ). Its
// gradients are ∂/∂dₙ = −1/(2(σ² + dₙ)) and ∂/∂σ² = ½·Σ dₙ/(σ²(σ² + dₙ)),
// chained through softplus. A residual dₙ ≤ −σ² gives NaN. It implements
// gp.TighterLikelihood.
func (g *Gaussian) TighterTerm(d, dd, dparams []float64) float64 {
	if dd != nil && len(dd) != len(d) {
		panic(fmt.Sprintf("likelihood: TighterTerm gradient has length %d, want %d", len(dd), len(d)))
	}
	checkParamLen(dparams, 1)
	s2 := g.noise
	var sum, ds float64
	for i, v := range d {
		if !(s2+v > 0) {
			return math.NaN()
		}
		w := 1 / (s2 + v)
		sum -= 0.5 * math.Log1p(v/s2)
		ds += 0.5 * v * w / s2
		if dd != nil {
			dd[i] = -0.5 * w
		}
	}
	if dparams != nil {
		dparams[0] += ds * transform.SoftplusDeriv(g.u)
	}
	return sum
}

// LogPredictive writes log N(y_n; μ_n, v_n + σ²), a negative v_n taken as
// 0. rng is unused.
func (g *Gaussian) LogPredictive(dst, y, mu, variance []float64, _ *rand.Rand) {
	checkLens(y, mu, variance, 1)
	if len(dst) != len(y) {
		panic(fmt.Sprintf("likelihood: LogPredictive destination has length %d, want %d", len(dst), len(y)))
	}
	for i := range y {
		s := math.Max(variance[i], 0) + g.noise
		r := y[i] - mu[i]
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			dst[i] = math.Inf(-1)
			continue
		}
		dst[i] = -0.5*math.Log(2*math.Pi*s) - 0.5*r*r/s
	}
}

// PredictY writes the predictive mean μ and variance v + σ² of y, a
// negative v taken as 0. variance may be nil. rng is unused.
func (g *Gaussian) PredictY(mean, variance, mu, fvar []float64, _ *rand.Rand) {
	checkPredictLens(mean, variance, mu, fvar, 1, 1)
	copy(mean, mu)
	if variance != nil {
		for i, v := range fvar {
			variance[i] = math.Max(v, 0) + g.noise
		}
	}
}

// checkPredictLens panics unless mu and fvar have equal length, a multiple
// of l, and mean (and variance, if non-nil) hold out values per point.
func checkPredictLens(mean, variance, mu, fvar []float64, l, out int) {
	if len(mu) != len(fvar) || len(mu)%l != 0 {
		panic(fmt.Sprintf("likelihood: mu and fvar have lengths %d and %d, need equal multiples of %d", len(mu), len(fvar), l))
	}
	want := len(mu) / l * out
	if len(mean) != want || (variance != nil && len(variance) != want) {
		panic(fmt.Sprintf("likelihood: PredictY destinations need length %d", want))
	}
}

// ConcaveLogLik reports true: log N(y | f, σ²) is concave in f (see
// gp.ConcaveLikelihood; TighterBound uses the closed form TighterTerm).
func (g *Gaussian) ConcaveLogLik() bool { return true }
