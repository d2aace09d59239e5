package likelihood

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/solvegp/solvegp/gp/transform"
)

// DefaultStudentTQuadraturePoints is the default size of the Student-t
// Gauss–Hermite rule. The log-density is heavy-tailed but smooth; 30 points
// resolve its expectation to ~1e-8 when the latent standard deviation is
// not much wider than the scale σ.
const DefaultStudentTQuadraturePoints = 30

// StudentT is the robust regression likelihood y = f + σ·ε, ε ~ t_ν:
//
//	log p(y | f) = log Γ((ν+1)/2) − log Γ(ν/2) − ½ log(νπ) − log σ
//	               − (ν+1)/2 · log(1 + (y − f)²/(νσ²)).
//
// Its heavy tails let a few gross outliers pull the posterior far less than
// a Gaussian's. Both the scale σ = softplus(u_σ) and the degrees of freedom
// ν = floor + softplus(u_ν) are learnable (the floor, default 0, is set by
// the DegreesOfFreedomFloor option); the unconstrained parameters are
// (u_σ, u_ν) in that order. As ν → ∞ it tends to the Gaussian with noise
// variance σ².
//
// The expected log-likelihood and the log predictive density are computed
// by Gauss–Hermite quadrature (no closed form exists). The predictive
// variance σ²ν/(ν − 2) + v is finite only for ν > 2; for ν ≤ 2 PredictY
// writes +Inf as the variance, which gp.Predictor.PredictY reports as an
// error (the mean μ exists for ν > 1 and is written as μ whatever ν, being
// the median and centre of symmetry). A DegreesOfFreedomFloor of 2 rules
// this out.
//
// The zero value has no quadrature rule: make one with NewStudentT.
// Validate returns an error for it.
type StudentT struct {
	rule   ghRule
	uS, uN float64
	sigma  float64
	nu     float64
	floor  float64
}

// NewStudentT returns a Student-t likelihood with scale sigma and degrees
// of freedom nu, both positive and finite, nu above the floor. It accepts
// the QuadraturePoints option (default DefaultStudentTQuadraturePoints)
// and DegreesOfFreedomFloor.
func NewStudentT(sigma, nu float64, opts ...Option) (*StudentT, error) {
	c, err := newConfig("StudentT", optPoints|optDoFFloor, opts)
	if err != nil {
		return nil, err
	}
	if c.set&optPoints == 0 {
		c.points = DefaultStudentTQuadraturePoints
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"scale", sigma}, {"degrees of freedom", nu}} {
		if !(p.v > 0) || math.IsInf(p.v, 1) {
			return nil, fmt.Errorf("likelihood: Student-t %s %g, must be positive and finite", p.name, p.v)
		}
	}
	if !(nu > c.dof) {
		return nil, fmt.Errorf("likelihood: Student-t degrees of freedom %g, must be above the floor %g", nu, c.dof)
	}
	s := &StudentT{rule: newGHRule(c.points), floor: c.dof}
	if err := s.SetParams([]float64{transform.InvSoftplus(sigma), transform.InvSoftplus(nu - c.dof)}); err != nil {
		return nil, err
	}
	return s, nil
}

// Scale returns σ.
func (s *StudentT) Scale() float64 { return s.sigma }

// DegreesOfFreedom returns ν.
func (s *StudentT) DegreesOfFreedom() float64 { return s.nu }

// DegreesOfFreedomFloor returns the lower bound of ν.
func (s *StudentT) DegreesOfFreedomFloor() float64 { return s.floor }

// QuadraturePoints returns the number of Gauss–Hermite points in use.
func (s *StudentT) QuadraturePoints() int { return len(s.rule.t) }

// Clone returns a *StudentT with the same parameters that shares no
// mutable state with s (see gp.Cloner).
func (s *StudentT) Clone() any {
	c := *s
	return &c
}

// NumLatent returns 1.
func (s *StudentT) NumLatent() int { return 1 }

// NumParams returns 2: u_σ and u_ν.
func (s *StudentT) NumParams() int { return 2 }

// Params writes (u_σ, u_ν) into dst; it panics if len(dst) != 2.
func (s *StudentT) Params(dst []float64) {
	if len(dst) != 2 {
		panic(fmt.Sprintf("likelihood: Params destination has length %d, want 2", len(dst)))
	}
	dst[0], dst[1] = s.uS, s.uN
}

// SetParams sets (u_σ, u_ν) from src. It returns an error for a wrong
// length, a non-finite value or one that gives σ or ν of zero, leaving the
// likelihood unchanged.
func (s *StudentT) SetParams(src []float64) error {
	if len(src) != 2 {
		return fmt.Errorf("likelihood: %d parameters, want 2", len(src))
	}
	for _, u := range src {
		if math.IsNaN(u) || math.IsInf(u, 0) {
			return fmt.Errorf("likelihood: parameter is %g", u)
		}
	}
	sigma, nu := transform.Softplus(src[0]), s.floor+transform.Softplus(src[1])
	if !(sigma > 0) || !(nu > 0) {
		return fmt.Errorf("likelihood: parameters %g, %g give a zero scale or degrees of freedom", src[0], src[1])
	}
	s.uS, s.uN, s.sigma, s.nu = src[0], src[1], sigma, nu
	return nil
}

// Validate returns an error if any label is NaN or infinite, and for the
// zero StudentT (see the type).
func (s *StudentT) Validate(y []float64) error {
	if len(s.rule.t) == 0 {
		return errZeroValue("StudentT", "NewStudentT")
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("likelihood: label %d is %g", i, v)
		}
	}
	return nil
}

// logConst returns log Γ((ν+1)/2) − log Γ(ν/2) − ½ log(νπ) − log σ.
func (s *StudentT) logConst() float64 {
	a, _ := math.Lgamma(0.5 * (s.nu + 1))
	b, _ := math.Lgamma(0.5 * s.nu)
	return a - b - 0.5*math.Log(s.nu*math.Pi) - math.Log(s.sigma)
}

// logLik returns log p(y | f) given the residual r = y − f.
func (s *StudentT) logLik(c, r float64) float64 {
	return c - 0.5*(s.nu+1)*math.Log1p(r*r/(s.nu*s.sigma*s.sigma))
}

// stGrads accumulates the per-node sums of ExpectedLogLik.
type stGrads struct{ gm, gv, gs, gn float64 }

// ExpectedLogLik returns Σ_n Σ_i w_i log p(y_n | μ_n + √(2v_n) t_i) and the
// exact gradients of that quadrature: with r = y − f and D = νσ² + r²,
//
//	∂/∂f = (ν+1) r / D,  dμ = Σ w_i ∂/∂f,  dv = Σ w_i t_i ∂/∂f / √(2v),
//	∂/∂σ = −1/σ + (ν+1) r² / (σD),
//	∂/∂ν = ½ψ((ν+1)/2) − ½ψ(ν/2) − 1/(2ν) − ½ log(1 + r²/(νσ²)) + (ν+1) r² / (2νD),
//
// the last two chained through softplus into dparams. A negative v is
// taken as 0; when √(2v) < 1e-5 dv is its v → 0 limit ½ ∂²/∂f² log p at μ,
// (ν+1)(r² − νσ²)/(2D²). rng is unused.
func (s *StudentT) ExpectedLogLik(y, mu, variance []float64, dmu, dvar, dparams []float64, _ *rand.Rand) float64 {
	n := checkLens(y, mu, variance, 1)
	checkGradLens(dmu, dvar, n)
	checkParamLen(dparams, 2)
	c := s.logConst()
	nu, sig := s.nu, s.sigma
	ns2 := nu * sig * sig
	t, w := s.rule.t, s.rule.w
	var sumS, sumN float64
	nValid := 0
	sum := 0.0
	for i := range y {
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			sum = math.Inf(-1)
			if dmu != nil {
				dmu[i], dvar[i] = 0, 0
			}
			continue
		}
		nValid++
		a := math.Sqrt(2 * math.Max(variance[i], 0))
		var e float64
		var g stGrads
		for q := range t {
			r := y[i] - (mu[i] + a*t[q])
			r2 := r * r
			l1p := math.Log1p(r2 / ns2)
			e += w[q] * (c - 0.5*(nu+1)*l1p)
			d := ns2 + r2
			df := (nu + 1) * r / d
			g.gm += w[q] * df
			g.gv += w[q] * t[q] * df
			g.gs += w[q] * (nu + 1) * r2 / (sig * d)
			g.gn += w[q] * (-0.5*l1p + (nu+1)*r2/(2*nu*d))
		}
		sum += e
		sumS += g.gs
		sumN += g.gn
		if dmu != nil {
			dmu[i] = g.gm
			if a >= minQuadScale {
				dvar[i] = g.gv / a
			} else {
				r := y[i] - mu[i]
				d := ns2 + r*r
				dvar[i] = 0.5 * (nu + 1) * (r*r - ns2) / (d * d)
			}
		}
	}
	if dparams != nil && nValid > 0 {
		m := float64(nValid)
		ds := -m/sig + sumS
		dn := m*(0.5*mathext.Digamma(0.5*(nu+1))-0.5*mathext.Digamma(0.5*nu)-0.5/nu) + sumN
		dparams[0] += ds * transform.SoftplusDeriv(s.uS)
		dparams[1] += dn * transform.SoftplusDeriv(s.uN)
	}
	return sum
}

// LogPredictive writes log ∫ p(y_n | f) N(f; μ_n, v_n) df by Gauss–Hermite
// quadrature, summed as a log-sum-exp, a negative v taken as 0. The rule
// is accurate while √v is not many times σ (the integrand is then a narrow
// peak the nodes straddle); raise QuadraturePoints for such posteriors.
// rng is unused.
func (s *StudentT) LogPredictive(dst, y, mu, variance []float64, _ *rand.Rand) {
	checkLens(y, mu, variance, 1)
	if len(dst) != len(y) {
		panic(fmt.Sprintf("likelihood: LogPredictive destination has length %d, want %d", len(dst), len(y)))
	}
	c := s.logConst()
	for i := range y {
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			dst[i] = math.Inf(-1)
			continue
		}
		a := math.Sqrt(2 * math.Max(variance[i], 0))
		mx, acc := math.Inf(-1), 0.0
		for q, tq := range s.rule.t {
			term := s.rule.logW[q] + s.logLik(c, y[i]-(mu[i]+a*tq))
			mx, acc = logSumExpAdd(mx, acc, term)
		}
		dst[i] = mx + math.Log(acc)
	}
}

// logSumExpAdd adds exp(term) to the streaming sum exp(mx)·acc, keeping mx
// the largest term seen.
func logSumExpAdd(mx, acc, term float64) (float64, float64) {
	if math.IsInf(term, -1) {
		return mx, acc // adds nothing (and −Inf − −Inf would be NaN)
	}
	if term > mx {
		return term, acc*math.Exp(mx-term) + 1
	}
	return mx, acc + math.Exp(term-mx)
}

// PredictY writes the predictive mean μ and variance σ²ν/(ν − 2) + v
// (+Inf for ν ≤ 2, where the t distribution has no variance), a negative v
// taken as 0. variance may be nil. rng is unused.
func (s *StudentT) PredictY(mean, variance, mu, fvar []float64, _ *rand.Rand) {
	checkPredictLens(mean, variance, mu, fvar, 1, 1)
	copy(mean, mu)
	if variance == nil {
		return
	}
	noise := math.Inf(1)
	if s.nu > 2 {
		noise = s.sigma * s.sigma * s.nu / (s.nu - 2)
	}
	for i, v := range fvar {
		variance[i] = math.Max(v, 0) + noise
	}
}

// PredictiveQuantile returns the level-p quantile of the predictive
// distribution ∫ p(y | f) N(f; mu, v) df, p in (0, 1), by bisection on its
// CDF Σ_i w_i T_ν((y − μ − √(2v) t_i)/σ) (the Gauss–Hermite rule of the
// likelihood). A negative v is taken as 0.
func (s *StudentT) PredictiveQuantile(p, mu, v float64) (float64, error) {
	if err := checkQuantileArgs(p, mu, v); err != nil {
		return 0, err
	}
	a := math.Sqrt(2 * math.Max(v, 0))
	d := distuv.StudentsT{Mu: 0, Sigma: s.sigma, Nu: s.nu}
	cdf := func(y float64) float64 {
		c := 0.0
		for q, tq := range s.rule.t {
			c += s.rule.w[q] * d.CDF(y-(mu+a*tq))
		}
		return c
	}
	// Each mixture component's quantile bounds the mixture's: the
	// quantile lies between those of the outermost nodes.
	tmax := s.rule.t[len(s.rule.t)-1]
	lo := mu - a*tmax + d.Quantile(p)
	hi := mu + a*tmax + d.Quantile(p)
	return bisectQuantile(cdf, p, lo, hi), nil
}

// checkQuantileArgs returns an error unless p is in (0, 1) and mu and v are
// finite.
func checkQuantileArgs(p, mu, v float64) error {
	if !(p > 0 && p < 1) {
		return fmt.Errorf("likelihood: quantile level %g, must be in (0, 1)", p)
	}
	if math.IsNaN(mu) || math.IsInf(mu, 0) || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("likelihood: latent mean %g and variance %g must be finite", mu, v)
	}
	return nil
}

// bisectQuantile returns y in [lo, hi] with cdf(y) = p, cdf being
// non-decreasing with cdf(lo) ≤ p ≤ cdf(hi), to the resolution of float64.
func bisectQuantile(cdf func(float64) float64, p, lo, hi float64) float64 {
	for range 200 {
		mid := 0.5 * (lo + hi)
		if mid <= lo || mid >= hi {
			break
		}
		if cdf(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 0.5 * (lo + hi)
}
