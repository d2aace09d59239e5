package likelihood

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/solvegp/solvegp/gp/transform"
)

// Poisson is the count likelihood y ~ Poisson(exp(f)) for non-negative
// integer labels. It has no parameters.
//
// The expected log-likelihood is closed form,
//
//	E[log p(y | f)] = yμ − exp(μ + v/2) − log Γ(y + 1).
//
// The log predictive density log ∫ Poisson(y; e^f) N(f; μ, v) df has no
// closed form; it is computed by Gauss–Hermite quadrature centred on the
// mode of the integrand with its curvature as scale (a Laplace-adapted
// rule), which stays accurate when the posterior variance is large
// compared with the width of the likelihood.
//
// For counts above 1e4 both are computed as log Γ's Stirling series plus
// −y·(e^d − 1 − d), d = f − log y, in which no two large terms cancel: the
// direct form loses about y·log y·1e-16 (all its digits at y ≈ 1e15).
//
// The zero value has no quadrature rule for the log predictive density:
// make one with NewPoisson. Validate, which the gp models call on their
// data, returns an error for it.
type Poisson struct {
	rule ghRule
}

// DefaultPoissonQuadraturePoints is the default size of the Poisson log
// predictive rule. Small counts under wide posteriors make the integrand a
// smooth one-sided step that 20 points resolve only to ~1e-3; with 100 the
// error is below ~1e-6 for v ≤ 10. The rule is used only for prediction.
const DefaultPoissonQuadraturePoints = 100

// NewPoisson returns a Poisson likelihood. It accepts the QuadraturePoints
// option, used by LogPredictive (default DefaultPoissonQuadraturePoints).
func NewPoisson(opts ...Option) (*Poisson, error) {
	c, err := newConfig("Poisson", optPoints, opts)
	if err != nil {
		return nil, err
	}
	if c.set&optPoints == 0 {
		c.points = DefaultPoissonQuadraturePoints
	}
	return &Poisson{rule: newGHRule(c.points)}, nil
}

// QuadraturePoints returns the number of Gauss–Hermite points in use.
func (p *Poisson) QuadraturePoints() int { return len(p.rule.t) }

// Clone returns a *Poisson with the same settings that shares no mutable
// state with p (see gp.Cloner): its quadrature rule, never written after
// construction, is shared.
func (p *Poisson) Clone() any {
	c := *p
	return &c
}

// NumLatent returns 1.
func (p *Poisson) NumLatent() int { return 1 }

// NumParams returns 0.
func (p *Poisson) NumParams() int { return 0 }

// Params does nothing; dst must be empty.
func (p *Poisson) Params(dst []float64) {
	if len(dst) != 0 {
		panic("likelihood: Poisson has no parameters")
	}
}

// SetParams returns an error unless src is empty.
func (p *Poisson) SetParams(src []float64) error {
	if len(src) != 0 {
		return fmt.Errorf("likelihood: %d parameters, Poisson has none", len(src))
	}
	return nil
}

func validCount(y float64) bool {
	return y >= 0 && y == math.Trunc(y) && !math.IsInf(y, 1)
}

// largeCount is the count above which the log-likelihood is computed in
// the cancellation-free form of countLogLik rather than as
// y·f − e^f − log Γ(y + 1), whose terms are about y·log y while their sum
// is about −log(2πy)/2: at y = 1e15 that form keeps no correct digit.
const largeCount = 1e4

// countLogLik returns log Poisson(y; e^f) − stirlingRest(y) for
// y > largeCount, given d = f − log y: with e^f = y·e^d,
// y·f − e^f − log Γ(y + 1) = (y·log y − y − log Γ(y + 1)) − y·(e^d − 1 − d),
// the first part being stirlingRest(y).
func countLogLik(y, d float64) float64 { return -y * expm1mx(d) }

// stirlingRest returns y·log y − y − log Γ(y + 1) for y > largeCount from
// Stirling's series, −log(2πy)/2 − 1/(12y) + 1/(360y³) (the next term is
// below 1e-23 there).
func stirlingRest(y float64) float64 {
	return -0.5*math.Log(2*math.Pi*y) - 1/(12*y) + 1/(360*y*y*y)
}

// expm1mx returns e^d − 1 − d without cancellation: by its Taylor series
// for |d| < 1/2 (to below an ulp), and as expm1(d) − d beyond, where the
// two differ by more than a third of expm1(d).
func expm1mx(d float64) float64 {
	if math.Abs(d) >= 0.5 {
		return math.Expm1(d) - d
	}
	// d²/2! + d³/3! + … + d^19/19!, Horner from the highest term.
	s := 0.0
	for k := 19; k >= 2; k-- {
		s = (s + 1) * d / float64(k)
	}
	return s * d
}

// Validate returns a *LabelError for the first label that is not a
// non-negative integer, and an error for the zero Poisson (see the type).
func (p *Poisson) Validate(y []float64) error {
	if len(p.rule.t) == 0 {
		return errZeroValue("Poisson", "NewPoisson")
	}
	for i, v := range y {
		if !validCount(v) {
			return &LabelError{Index: i, Value: v, Rule: "Poisson targets must be non-negative integers"}
		}
	}
	return nil
}

// ExpectedLogLik returns Σ_n y_n μ_n − exp(μ_n + v_n/2) − log Γ(y_n + 1)
// with dμ = y − exp(μ + v/2) and dv = −exp(μ + v/2)/2. rng is unused.
func (p *Poisson) ExpectedLogLik(y, mu, variance []float64, dmu, dvar, dparams []float64, _ *rand.Rand) float64 {
	n := checkLens(y, mu, variance, 1)
	checkGradLens(dmu, dvar, n)
	checkParamLen(dparams, 0)
	sum := 0.0
	for i := range y {
		if !validCount(y[i]) {
			sum = math.Inf(-1)
			if dmu != nil {
				dmu[i], dvar[i] = 0, 0
			}
			continue
		}
		e := math.Exp(mu[i] + 0.5*variance[i])
		dm := y[i] - e
		if yi := y[i]; yi > largeCount {
			// yμ − e − log Γ(y + 1) with e = y·e^d, d = μ + v/2 − log y:
			// stirlingRest(y) − y·(e^d − 1 − d) − y·v/2, and
			// y − e = −y·(e^d − 1).
			d := mu[i] - math.Log(yi) + 0.5*variance[i]
			sum += stirlingRest(yi) + countLogLik(yi, d) - 0.5*yi*variance[i]
			dm = -yi * math.Expm1(d)
		} else {
			lg, _ := math.Lgamma(yi + 1)
			sum += yi*mu[i] - e - lg
		}
		if dmu != nil {
			dmu[i] = dm
			dvar[i] = -0.5 * e
		}
	}
	return sum
}

// logPredictive1 returns log ∫ Poisson(y; e^f) N(f; μ, v) df. A v ≤ 0
// (marginal variances can be rounded slightly below zero) is taken as 0.
func (p *Poisson) logPredictive1(y, mu, v float64) float64 {
	if math.IsNaN(v) {
		return math.NaN() // not a variance: no value to hide it behind
	}
	// g(f) = y f − e^f − log Γ(y + 1) = rest + gs(f), where for large
	// counts rest = stirlingRest(y) and gs(f) = countLogLik(y, f − log y),
	// with f − log y = d0 + (f − μ) formed without rounding f itself, and
	// otherwise rest = −log Γ(y + 1) and gs(f) = y f − e^f.
	large := y > largeCount
	var rest, d0 float64
	if large {
		rest, d0 = stirlingRest(y), mu-math.Log(y)
	} else {
		lg, _ := math.Lgamma(y + 1)
		rest = -lg
	}
	if v <= 0 {
		if large {
			return rest + countLogLik(y, d0)
		}
		return y*mu - math.Exp(mu) + rest
	}
	// The integral is taken in standard units u = (f − μ)/√v, so that no
	// term depends on the difference of two nearly equal values of f, nor
	// divides by v: with a tiny v, f − μ would be lost to rounding (and 1/v
	// would overflow for a subnormal v). The integrand is
	// φ(u) exp(g(μ + √v u)), g(f) = y f − e^f − log Γ(y + 1), and
	// h(u) = −u²/2 + g(μ + √v u) is strictly concave; find its mode by
	// Newton's method safeguarded by the bracket [lo, hi] on which
	// h'(u) = −u + √v (y − e^{μ + √v u}) changes sign.
	sd := math.Sqrt(v)
	hp := func(u float64) float64 {
		if large {
			return -u - sd*(y*math.Expm1(d0+sd*u)) // y − e^f = −y·(e^d − 1)
		}
		return -u + sd*(y-math.Exp(mu+sd*u))
	}
	// If h'(0) > 0 the mode lies in (0, hi]: h' < 0 both at hi = √v y and
	// at hi = (log y − μ)/√v (where e^f = y), so the smaller is taken (or
	// 0 if rounding makes it negative, h'(0) > 0 being then a rounding
	// error). Otherwise the mode lies in [lo, 0], where h'(lo) > 0 both for
	// lo = (min(−v, −μ) − 1)/√v (f = min(μ − v, 0) − 1, where
	// (μ − f)/v > 1 > e^f) and for lo = −√v e^μ − 1 (where
	// −u > √v e^μ > √v e^f); the larger is taken, the first being about
	// −1/√v for a tiny v, too far for bisection.
	lo, hi := 0.0, 0.0
	if hp(0) > 0 {
		hi = math.Max(math.Min(sd*y, (math.Log(y)-mu)/sd), 0)
	} else {
		lo = math.Max((math.Min(-v, -mu)-1)/sd, -sd*math.Exp(mu)-1)
		if math.IsInf(lo, -1) {
			// Both bounds overflow, so does μ: the mass of N(μ, v) lies
			// where e^f = +Inf.
			return math.Inf(-1)
		}
	}
	// A Newton step is replaced by bisection when it leaves the bracket or
	// is more than half the step before last (as in Numerical Recipes'
	// rtsafe): above the mode, where e^f dominates, Newton's steps shrink
	// f by only about 1 each, too slowly for large counts.
	u := 0.5 * (lo + hi)
	step, stepOld := hi-lo, hi-lo
	for range 200 {
		g := hp(u)
		if g > 0 {
			lo = u
		} else {
			hi = u
		}
		nstep := g / (1 + v*math.Exp(mu+sd*u))
		next := u + nstep
		if math.Abs(nstep) <= 1e-15*math.Max(1, math.Abs(u)) {
			// Newton has converged (g = 0 included): u is the mode; the
			// bracket, one end of which is now u, would only bisect
			// away from it.
			u = next
			break
		}
		if !(next > lo && next < hi) || math.Abs(2*nstep) > math.Abs(stepOld) {
			next = 0.5 * (lo + hi)
		}
		stepOld, step = step, next-u
		if math.Abs(step) <= 1e-15*math.Max(1, math.Abs(u)) {
			u = next
			break
		}
		u = next
	}
	// The rule's scale is s = 1/√(−h''(u)) = 1/√(1 + v e^f) at the mode,
	// log s = −softplus(log v + f)/2 (which overflows neither for large v
	// nor for large f). With u = u* + √2 s t:
	// ∫ φ(u) e^{g} du = √2 s/√(2π) ∫ e^{−t²} e^{h(u) + t²} dt
	// ≈ s Σ_i w_i e^{h(u_i) + t_i²} (w_i normalized by √π), summed as a
	// streaming log-sum-exp.
	logS := -0.5 * transform.Softplus(math.Log(v)+mu+sd*u)
	sc := math.Sqrt2 * math.Exp(logS)
	// For large counts d = f − log y at the nodes is taken from its value
	// at the mode, d* + √v·(u_i − u*): d* is small where the likelihood is
	// narrow, so its rounding is far below that of d0 + √v·u_i, whose
	// error of an ulp of d0 would be multiplied by y·d in g.
	dStar := d0 + sd*u
	mx, acc := math.Inf(-1), 0.0
	for i, ti := range p.rule.t {
		ui := u + sc*ti
		var gs float64
		if large {
			gs = countLogLik(y, dStar+sd*sc*ti)
		} else {
			x := mu + sd*ui
			gs = y*x - math.Exp(x)
		}
		term := p.rule.logW[i] - 0.5*ui*ui + gs + ti*ti
		if term > mx {
			acc = acc*math.Exp(mx-term) + 1
			mx = term
		} else {
			acc += math.Exp(term - mx)
		}
	}
	if math.IsInf(mx, -1) {
		// Every node's term is −Inf (u² overflows: N(μ, v) puts no mass
		// within float64 range of where the count is likely).
		return mx
	}
	return mx + math.Log(acc) + logS + rest
}

// LogPredictive writes log ∫ Poisson(y_n; e^f) N(f; μ_n, v_n) df by
// mode-centred Gauss–Hermite quadrature, a negative v taken as 0. rng is
// unused.
func (p *Poisson) LogPredictive(dst, y, mu, variance []float64, _ *rand.Rand) {
	checkLens(y, mu, variance, 1)
	if len(dst) != len(y) {
		panic(fmt.Sprintf("likelihood: LogPredictive destination has length %d, want %d", len(dst), len(y)))
	}
	for i := range y {
		if !validCount(y[i]) {
			dst[i] = math.Inf(-1)
			continue
		}
		dst[i] = p.logPredictive1(y[i], mu[i], variance[i])
	}
}

// PredictY writes the predictive mean exp(μ + v/2) and variance
// mean + (exp(v) − 1) exp(2μ + v) of the count (variance may be nil), a
// negative v taken as 0. rng is unused.
func (p *Poisson) PredictY(mean, variance, mu, fvar []float64, _ *rand.Rand) {
	checkPredictLens(mean, variance, mu, fvar, 1, 1)
	for i := range mu {
		v := math.Max(fvar[i], 0)
		m := math.Exp(mu[i] + 0.5*v)
		mean[i] = m
		if variance != nil {
			variance[i] = m + math.Expm1(v)*m*m
		}
	}
}

// ConcaveLogLik reports true: y·f − exp(f) is concave in f, so
// gp.TighterBound accepts the Poisson likelihood (see gp.ConcaveLikelihood).
func (p *Poisson) ConcaveLogLik() bool { return true }
