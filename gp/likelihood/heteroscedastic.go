package likelihood

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DefaultHeteroscedasticQuadraturePoints is the default size of the
// Gauss–Hermite rule over the log noise variance that LogPredictive and
// PredictiveQuantile use.
const DefaultHeteroscedasticQuadraturePoints = 30

// Heteroscedastic is the Gaussian likelihood whose noise varies with the
// input: y = f₁ + ε, ε ~ N(0, exp(f₂)), with two latent functions sharing
// the kernel and inducing inputs of the model: f₁ (latent 0) the mean and
// f₂ (latent 1) the log noise variance. It has no parameters of its own.
//
// Under q(f₁) = N(μ₁, s₁) and q(f₂) = N(μ₂, s₂) the expected
// log-likelihood is closed form,
//
//	E[log p(y | f)] = −½ log 2π − ½μ₂ − ½((y − μ₁)² + s₁) exp(−μ₂ + s₂/2).
//
// PredictY writes two columns per point: column 0 the predictive mean μ₁
// and variance s₁ + exp(μ₂ + s₂/2) of y; column 1 the mean exp(μ₂ + s₂/2)
// and variance (exp(s₂) − 1) exp(2μ₂ + s₂) of the noise variance exp(f₂).
//
// The zero value has no quadrature rule: make one with
// NewHeteroscedastic. Validate returns an error for it.
type Heteroscedastic struct {
	rule ghRule
}

// NewHeteroscedastic returns a heteroscedastic Gaussian likelihood. It
// accepts the QuadraturePoints option, used by LogPredictive (default
// DefaultHeteroscedasticQuadraturePoints).
func NewHeteroscedastic(opts ...Option) (*Heteroscedastic, error) {
	c, err := newConfig("Heteroscedastic", optPoints, opts)
	if err != nil {
		return nil, err
	}
	if c.set&optPoints == 0 {
		c.points = DefaultHeteroscedasticQuadraturePoints
	}
	return &Heteroscedastic{rule: newGHRule(c.points)}, nil
}

// QuadraturePoints returns the number of Gauss–Hermite points in use.
func (h *Heteroscedastic) QuadraturePoints() int { return len(h.rule.t) }

// Clone returns a *Heteroscedastic that shares no mutable state with h
// (see gp.Cloner); its quadrature rule, never written, is shared.
func (h *Heteroscedastic) Clone() any {
	c := *h
	return &c
}

// NumLatent returns 2: the mean f₁ and the log noise variance f₂.
func (h *Heteroscedastic) NumLatent() int { return 2 }

// NumParams returns 0.
func (h *Heteroscedastic) NumParams() int { return 0 }

// Params does nothing; dst must be empty.
func (h *Heteroscedastic) Params(dst []float64) {
	if len(dst) != 0 {
		panic("likelihood: Heteroscedastic has no parameters")
	}
}

// SetParams returns an error unless src is empty.
func (h *Heteroscedastic) SetParams(src []float64) error {
	if len(src) != 0 {
		return fmt.Errorf("likelihood: %d parameters, Heteroscedastic has none", len(src))
	}
	return nil
}

// Validate returns an error if any label is NaN or infinite, and for the
// zero Heteroscedastic (see the type).
func (h *Heteroscedastic) Validate(y []float64) error {
	if len(h.rule.t) == 0 {
		return errZeroValue("Heteroscedastic", "NewHeteroscedastic")
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("likelihood: label %d is %g", i, v)
		}
	}
	return nil
}

// ExpectedLogLik returns the closed form of the type documentation summed
// over the points, with E = exp(−μ₂ + s₂/2) and Q = (y − μ₁)² + s₁ the
// exact gradients
//
//	dμ₁ = (y − μ₁)E,  ds₁ = −E/2,  dμ₂ = −½ + QE/2,  ds₂ = −QE/4.
//
// The variances are taken as they are (the expression is smooth in them).
// rng is unused.
func (h *Heteroscedastic) ExpectedLogLik(y, mu, variance []float64, dmu, dvar, dparams []float64, _ *rand.Rand) float64 {
	n := checkLens(y, mu, variance, 2)
	checkGradLens(dmu, dvar, 2*n)
	checkParamLen(dparams, 0)
	sum := 0.0
	for i := range y {
		j := 2 * i
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			sum = math.Inf(-1)
			if dmu != nil {
				dmu[j], dmu[j+1], dvar[j], dvar[j+1] = 0, 0, 0, 0
			}
			continue
		}
		r := y[i] - mu[j]
		q := r*r + variance[j]
		e := math.Exp(-mu[j+1] + 0.5*variance[j+1])
		qe := mulZero(q, e)
		sum += -logSqrt2Pi - 0.5*mu[j+1] - 0.5*qe
		if dmu != nil {
			dmu[j] = mulZero(r, e)
			dvar[j] = -0.5 * e
			dmu[j+1] = -0.5 + 0.5*qe
			dvar[j+1] = -0.25 * qe
		}
	}
	return sum
}

// mulZero returns a·b, taken as 0 when a is 0 even if b has overflowed to
// +Inf (a zero residual stays a zero term, never NaN, however small the
// noise variance).
func mulZero(a, b float64) float64 {
	if a == 0 {
		return 0
	}
	return a * b
}

// LogPredictive writes log ∫ N(y_n; μ₁, s₁ + exp(f₂)) N(f₂; μ₂, s₂) df₂
// (f₁ integrated out exactly, f₂ by Gauss–Hermite quadrature summed as a
// log-sum-exp), negative variances taken as 0. rng is unused.
func (h *Heteroscedastic) LogPredictive(dst, y, mu, variance []float64, _ *rand.Rand) {
	checkLens(y, mu, variance, 2)
	if len(dst) != len(y) {
		panic(fmt.Sprintf("likelihood: LogPredictive destination has length %d, want %d", len(dst), len(y)))
	}
	for i := range y {
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			dst[i] = math.Inf(-1)
			continue
		}
		j := 2 * i
		r := y[i] - mu[j]
		s1 := math.Max(variance[j], 0)
		a := math.Sqrt(2 * math.Max(variance[j+1], 0))
		mx, acc := math.Inf(-1), 0.0
		ls1 := math.Log(s1)
		for q, tq := range h.rule.t {
			// log s = log(s₁ + e^f₂) as a log-add-exp, so that a large f₂
			// does not overflow s.
			f2 := mu[j+1] + a*tq
			ls := f2
			switch {
			case s1 == 0:
				// ls = f₂ (and s₁·e^{−f₂} could be 0·Inf).
			case f2 >= ls1:
				ls = f2 + math.Log1p(s1*math.Exp(-f2))
			default:
				ls = ls1 + math.Log1p(math.Exp(f2-ls1))
			}
			term := h.rule.logW[q] - logSqrt2Pi - 0.5*ls - 0.5*mulZero(r*r, math.Exp(-ls))
			mx, acc = logSumExpAdd(mx, acc, term)
		}
		dst[i] = mx + math.Log(acc)
	}
}

// PredictY writes two values per point into mean and variance (see the
// type): the predictive mean μ₁ and variance s₁ + exp(μ₂ + s₂/2) of y, then
// the mean and variance of the noise variance exp(f₂). Negative variances
// are taken as 0; variance may be nil. rng is unused.
func (h *Heteroscedastic) PredictY(mean, variance, mu, fvar []float64, _ *rand.Rand) {
	checkPredictLens(mean, variance, mu, fvar, 2, 2)
	for i := 0; i < len(mu)/2; i++ {
		j := 2 * i
		s2 := math.Max(fvar[j+1], 0)
		en := math.Exp(mu[j+1] + 0.5*s2)
		mean[j], mean[j+1] = mu[j], en
		if variance != nil {
			variance[j] = math.Max(fvar[j], 0) + en
			variance[j+1] = math.Expm1(s2) * en * en
		}
	}
}

// PredictiveQuantile returns the level-p quantile of the predictive
// distribution of y given q(f₁) = N(mu1, v1) and q(f₂) = N(mu2, v2), p in
// (0, 1), by bisection on its CDF Σ_i w_i Φ((y − μ₁)/√(s₁ + exp(f₂ᵢ))).
// Negative variances are taken as 0.
func (h *Heteroscedastic) PredictiveQuantile(p, mu1, v1, mu2, v2 float64) (float64, error) {
	if err := checkQuantileArgs(p, mu1, v1); err != nil {
		return 0, err
	}
	if err := checkQuantileArgs(p, mu2, v2); err != nil {
		return 0, err
	}
	s1 := math.Max(v1, 0)
	a := math.Sqrt(2 * math.Max(v2, 0))
	sds := make([]float64, len(h.rule.t))
	maxSD := 0.0
	for q, tq := range h.rule.t {
		sds[q] = math.Sqrt(s1 + math.Exp(mu2+a*tq))
		maxSD = math.Max(maxSD, sds[q])
	}
	cdf := func(y float64) float64 {
		c := 0.0
		for q, sd := range sds {
			c += h.rule.w[q] * normCDF((y-mu1)/sd)
		}
		return c
	}
	// Every component's quantile, mu1 + sd·z_p, lies within
	// mu1 ± maxSD·|z_p|, and so does the mixture's.
	z := math.Abs(math.Sqrt2 * math.Erfinv(2*p-1))
	return bisectQuantile(cdf, p, mu1-maxSD*z, mu1+maxSD*z), nil
}
