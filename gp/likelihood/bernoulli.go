package likelihood

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Bernoulli is the binary classification likelihood p(y = 1 | f) = Φ(f)
// (probit link) for labels y ∈ {0, 1}. It has no parameters.
//
// The expected log-likelihood E[log Φ((2y−1) f)] is computed by
// Gauss–Hermite quadrature with a configurable number of points; the log
// predictive density and predictive probabilities are closed form,
// p(y = 1) = Φ(μ/√(1 + v)).
//
// The zero value has no quadrature rule, and an expected log-likelihood
// of 0 whatever the data: make one with NewBernoulli. Validate, which the
// gp models call on their data, returns an error for it.
type Bernoulli struct {
	rule ghRule
	workerBound
}

// NewBernoulli returns a probit Bernoulli likelihood. It accepts the
// QuadraturePoints option (default DefaultQuadraturePoints).
func NewBernoulli(opts ...Option) (*Bernoulli, error) {
	c, err := newConfig("Bernoulli", optPoints, opts)
	if err != nil {
		return nil, err
	}
	return &Bernoulli{rule: newGHRule(c.points)}, nil
}

// QuadraturePoints returns the number of Gauss–Hermite points in use.
func (b *Bernoulli) QuadraturePoints() int { return len(b.rule.t) }

// Clone returns a *Bernoulli with the same settings that shares no mutable
// state with b (see gp.Cloner): its quadrature rule, never written after
// construction, is shared.
func (b *Bernoulli) Clone() any {
	c := *b
	return &c
}

// NumLatent returns 1.
func (b *Bernoulli) NumLatent() int { return 1 }

// NumParams returns 0.
func (b *Bernoulli) NumParams() int { return 0 }

// Params does nothing; dst must be empty.
func (b *Bernoulli) Params(dst []float64) {
	if len(dst) != 0 {
		panic("likelihood: Bernoulli has no parameters")
	}
}

// SetParams returns an error unless src is empty.
func (b *Bernoulli) SetParams(src []float64) error {
	if len(src) != 0 {
		return fmt.Errorf("likelihood: %d parameters, Bernoulli has none", len(src))
	}
	return nil
}

// Validate returns a *LabelError for the first label that is not 0 or 1,
// and an error for the zero Bernoulli (see the type).
func (b *Bernoulli) Validate(y []float64) error {
	if len(b.rule.t) == 0 {
		return errZeroValue("Bernoulli", "NewBernoulli")
	}
	for i, v := range y {
		if v != 0 && v != 1 {
			return &LabelError{Index: i, Value: v, Rule: "Bernoulli labels must be 0 or 1"}
		}
	}
	return nil
}

// sign maps a label to ±1, or 0 if it is not a valid label.
func bernoulliSign(y float64) float64 {
	switch y {
	case 1:
		return 1
	case 0:
		return -1
	}
	return 0
}

// ExpectedLogLik returns Σ_n Σ_i w_i log Φ(s_n f_ni), f_ni = μ_n + √(2v_n) t_i,
// s_n = 2y_n − 1, and the exact gradients of that quadrature:
//
//	dμ = Σ_i w_i s λ(s f_i),  dv = Σ_i w_i t_i s λ(s f_i) / √(2v),
//
// where λ = φ/Φ. A negative v (marginal variances can be rounded slightly
// below zero) is taken as 0. When √(2v) < 1e-5, where that quotient
// would be lost to cancellation, dv is its v → 0 limit ½ d²/dμ² log Φ(sμ)
// instead, which it matches to O(v). rng is unused.
func (b *Bernoulli) ExpectedLogLik(y, mu, variance []float64, dmu, dvar, dparams []float64, _ *rand.Rand) float64 {
	n := checkLens(y, mu, variance, 1)
	checkGradLens(dmu, dvar, n)
	checkParamLen(dparams, 0)
	t, w := b.rule.t, b.rule.w
	return chunkSum(n, n*len(t), b.workers, func() struct{} { return struct{}{} }, func(_ struct{}, i0, i1 int) float64 {
		sum := 0.0
		for i := i0; i < i1; i++ {
			s := bernoulliSign(y[i])
			if s == 0 {
				sum = math.Inf(-1)
				if dmu != nil {
					dmu[i], dvar[i] = 0, 0
				}
				continue
			}
			m, v := mu[i], math.Max(variance[i], 0)
			a := math.Sqrt(2 * v)
			var e, gm, gv float64
			for q := range t {
				f := s * (m + a*t[q])
				if dmu == nil {
					e += w[q] * logNormCDF(f)
					continue
				}
				lp, l := logNormCDFMills(f)
				e += w[q] * lp
				l *= s
				gm += w[q] * l
				gv += w[q] * t[q] * l
			}
			sum += e
			if dmu != nil {
				dmu[i] = gm
				if a >= minQuadScale {
					dvar[i] = gv / a
				} else {
					// d²/dμ² log Φ(sμ) = −λ(λ + sμ).
					l := invMills(s * m)
					dvar[i] = -0.5 * l * (l + s*m)
				}
			}
		}
		return sum
	})
}

// LogPredictive writes log Φ(s μ/√(1 + v)), a negative v taken as 0. rng
// is unused.
func (b *Bernoulli) LogPredictive(dst, y, mu, variance []float64, _ *rand.Rand) {
	checkLens(y, mu, variance, 1)
	if len(dst) != len(y) {
		panic(fmt.Sprintf("likelihood: LogPredictive destination has length %d, want %d", len(dst), len(y)))
	}
	for i := range y {
		s := bernoulliSign(y[i])
		if s == 0 {
			dst[i] = math.Inf(-1)
			continue
		}
		dst[i] = logNormCDF(s * mu[i] / math.Sqrt(1+math.Max(variance[i], 0)))
	}
}

// PredictY writes p = P(y = 1) = Φ(μ/√(1 + v)) into mean and p(1 − p)
// into variance (if non-nil), a negative v taken as 0. rng is unused.
func (b *Bernoulli) PredictY(mean, variance, mu, fvar []float64, _ *rand.Rand) {
	checkPredictLens(mean, variance, mu, fvar, 1, 1)
	for i := range mu {
		p := normCDF(mu[i] / math.Sqrt(1+math.Max(fvar[i], 0)))
		mean[i] = p
		if variance != nil {
			variance[i] = p * (1 - p)
		}
	}
}

// ConcaveLogLik reports true: log Φ((2y−1)f) is concave in f, so
// gp.TighterBound accepts the Bernoulli likelihood (see gp.ConcaveLikelihood).
func (b *Bernoulli) ConcaveLogLik() bool { return true }
