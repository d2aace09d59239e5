package likelihood

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/integrate/quad"
)

// DefaultQuadraturePoints is the default number of Gauss–Hermite points.
const DefaultQuadraturePoints = 20

// DefaultSamples is the default number of Monte Carlo samples per point.
const DefaultSamples = 100

// DefaultEpsilon is the default RobustMax error rate ε.
const DefaultEpsilon = 1e-3

// MaxClasses is the largest number of classes RobustMax and Softmax
// accept (2²⁰, about a million; gp.MaxLatent is the same bound on a
// model's latent functions). A model keeps an M×M factor per class, and
// each point's gradient has one entry per class; more classes are refused
// rather than attempted.
const MaxClasses = 1 << 20

// maxQuadraturePoints bounds the configurable quadrature rule.
const maxQuadraturePoints = 200

// Option configures a likelihood at construction. Each constructor
// documents which options it accepts and returns an error for others.
type Option func(*config) error

type optKind uint8

const (
	optFloor optKind = 1 << iota
	optPoints
	optSamples
	optEpsilon
	optDoFFloor
)

type config struct {
	set     optKind
	floor   float64
	points  int
	samples int
	eps     float64
	dof     float64
}

// NoiseFloor sets the lower bound of the Gaussian noise variance (default
// DefaultNoiseFloor). It must be non-negative and finite. Gaussian only.
func NoiseFloor(floor float64) Option {
	return func(c *config) error {
		if !(floor >= 0) || math.IsInf(floor, 1) {
			return fmt.Errorf("likelihood: noise floor %g, must be non-negative and finite", floor)
		}
		c.floor = floor
		c.set |= optFloor
		return nil
	}
}

// QuadraturePoints sets the number of Gauss–Hermite points, between 2 and
// 200 (default DefaultQuadraturePoints for Bernoulli and RobustMax,
// DefaultPoissonQuadraturePoints for Poisson, DefaultStudentTQuadraturePoints
// for StudentT, DefaultHeteroscedasticQuadraturePoints for Heteroscedastic).
// For Bernoulli, RobustMax, StudentT, and Poisson and Heteroscedastic (whose
// log predictive densities use quadrature).
func QuadraturePoints(n int) Option {
	return func(c *config) error {
		if n < 2 || n > maxQuadraturePoints {
			return fmt.Errorf("likelihood: %d quadrature points, must be in [2, %d]", n, maxQuadraturePoints)
		}
		c.points = n
		c.set |= optPoints
		return nil
	}
}

// Samples sets the number of Monte Carlo samples per data point (default
// DefaultSamples); it must be positive. Softmax only.
func Samples(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("likelihood: %d Monte Carlo samples, must be positive", n)
		}
		c.samples = n
		c.set |= optSamples
		return nil
	}
}

// DegreesOfFreedomFloor sets the lower bound of the Student-t degrees of
// freedom ν = floor + softplus(u_ν) (default 0). It must be non-negative and
// finite. A floor of 2 keeps the predictive variance σ²ν/(ν − 2) + v finite
// however far an optimizer pushes u_ν. StudentT only.
func DegreesOfFreedomFloor(floor float64) Option {
	return func(c *config) error {
		if !(floor >= 0) || math.IsInf(floor, 1) {
			return fmt.Errorf("likelihood: degrees-of-freedom floor %g, must be non-negative and finite", floor)
		}
		c.dof = floor
		c.set |= optDoFFloor
		return nil
	}
}

// Epsilon sets the RobustMax error rate ε in (0, 1) (default
// DefaultEpsilon). RobustMax only.
func Epsilon(eps float64) Option {
	return func(c *config) error {
		if !(eps > 0 && eps < 1) {
			return fmt.Errorf("likelihood: epsilon %g, must be in (0, 1)", eps)
		}
		c.eps = eps
		c.set |= optEpsilon
		return nil
	}
}

// newConfig applies opts to the defaults, rejecting options outside allowed.
func newConfig(what string, allowed optKind, opts []Option) (config, error) {
	c := config{floor: DefaultNoiseFloor, points: DefaultQuadraturePoints, samples: DefaultSamples, eps: DefaultEpsilon}
	for _, o := range opts {
		if o == nil {
			return c, errors.New("likelihood: nil option")
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	if c.set&^allowed != 0 {
		return c, fmt.Errorf("likelihood: option not applicable to %s", what)
	}
	return c, nil
}

// minQuadScale is the smallest node scale a = √(2v) at which Bernoulli and
// RobustMax take the variance gradient of their quadrature as the quotient
// Σ_i w_i t_i g'(μ + a t_i) / a. The numerator cancels to O(a), so its
// rounding error grows as 1/a (1e-10 relative at a = 1e-5, and without
// bound below), while the v → 0 limit that replaces it below minQuadScale
// is within O(v) = O(1e-10) of the quotient's exact value there.
const minQuadScale = 1e-5

// ghRule holds Gauss–Hermite nodes t_i and weights w_i/√π for expectations
// under a standard normal after the change of variable f = μ + √(2v) t:
// E[g(f)] ≈ Σ_i w_i g(μ + √(2v) t_i).
type ghRule struct {
	t, w []float64
	logW []float64
}

func newGHRule(n int) ghRule {
	r := ghRule{t: make([]float64, n), w: make([]float64, n), logW: make([]float64, n)}
	quad.Hermite{}.FixedLocations(r.t, r.w, math.Inf(-1), math.Inf(1))
	for i := range r.w {
		r.w[i] /= math.SqrtPi
		r.logW[i] = math.Log(r.w[i])
	}
	return r
}
