package likelihood

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// RobustMax is the multi-class likelihood of Hernández-Lobato, Hernández-
// Lobato and Dupont (2011), as in GPflow's RobustMax: with C latent
// functions f and a fixed error rate ε,
//
//	p(y = c | f) = 1 − ε        if c = argmax f,
//	             = ε / (C − 1)  otherwise.
//
// Its expectation under independent Gaussian marginals needs only the
// probability that the labelled latent is the largest,
//
//	P_y = ∫ N(x; μ_y, v_y) Π_{c≠y} Φ((x − μ_c)/σ_c) dx,
//
// computed by one-dimensional Gauss–Hermite quadrature; then
// E[log p(y | f)] = log(1 − ε) P_y + log(ε/(C − 1)) (1 − P_y). It has no
// learnable parameters (ε is fixed at construction).
//
// A negative variance (marginal variances can be rounded slightly below
// zero) is taken as 0. A zero variance for a competing class makes its
// factor a step function, whose gradients are taken as zero; a zero or
// tiny variance for the labelled class (√(2v) below 1e-5, where the
// quadrature's variance gradient would be lost to cancellation) uses the
// exact v → 0 limit of that gradient, which is within O(v) of it.
type RobustMax struct {
	classes    int
	eps        float64
	logA, logB float64 // log(1 − ε), log(ε/(C − 1))
	rule       ghRule
	workerBound
}

// NewRobustMax returns a RobustMax likelihood over 2 to MaxClasses
// classes. It accepts the Epsilon (default DefaultEpsilon) and
// QuadraturePoints (default DefaultQuadraturePoints) options.
func NewRobustMax(classes int, opts ...Option) (*RobustMax, error) {
	if classes < 2 || classes > MaxClasses {
		return nil, fmt.Errorf("likelihood: RobustMax over %d classes, must be in [2, %d]", classes, MaxClasses)
	}
	c, err := newConfig("RobustMax", optEpsilon|optPoints, opts)
	if err != nil {
		return nil, err
	}
	return &RobustMax{
		classes: classes,
		eps:     c.eps,
		logA:    math.Log1p(-c.eps),
		logB:    math.Log(c.eps / float64(classes-1)),
		rule:    newGHRule(c.points),
	}, nil
}

// Epsilon returns the error rate ε.
func (r *RobustMax) Epsilon() float64 { return r.eps }

// QuadraturePoints returns the number of Gauss–Hermite points in use.
func (r *RobustMax) QuadraturePoints() int { return len(r.rule.t) }

// Clone returns a *RobustMax with the same settings that shares no mutable
// state with r (see gp.Cloner): its quadrature rule, never written after
// construction, is shared.
func (r *RobustMax) Clone() any {
	c := *r
	return &c
}

// NumLatent returns the number of classes C.
func (r *RobustMax) NumLatent() int { return r.classes }

// NumParams returns 0.
func (r *RobustMax) NumParams() int { return 0 }

// Params does nothing; dst must be empty.
func (r *RobustMax) Params(dst []float64) {
	if len(dst) != 0 {
		panic("likelihood: RobustMax has no parameters")
	}
}

// SetParams returns an error unless src is empty.
func (r *RobustMax) SetParams(src []float64) error {
	if len(src) != 0 {
		return fmt.Errorf("likelihood: %d parameters, RobustMax has none", len(src))
	}
	return nil
}

// classIndex returns the class of label y, or −1 if y is not an integer
// in [0, C).
func classIndex(y float64, classes int) int {
	if !(y >= 0 && y < float64(classes)) || y != math.Trunc(y) {
		return -1
	}
	return int(y)
}

func validateClasses(y []float64, classes int) error {
	for i, v := range y {
		if classIndex(v, classes) < 0 {
			return &LabelError{Index: i, Value: v, Rule: fmt.Sprintf("class labels must be integers in [0, %d)", classes)}
		}
	}
	return nil
}

// Validate returns a *LabelError for the first label that is not an
// integer in [0, C).
func (r *RobustMax) Validate(y []float64) error { return validateClasses(y, r.classes) }

// rmWork holds per-call scratch for argmaxProb.
type rmWork struct {
	sig, phi, dens, z, pre, suf []float64
}

func newRMWork(c int) *rmWork {
	buf := make([]float64, 6*c+2)
	return &rmWork{
		sig: buf[:c], phi: buf[c : 2*c], dens: buf[2*c : 3*c], z: buf[3*c : 4*c],
		pre: buf[4*c : 5*c+1], suf: buf[5*c+1 : 6*c+2],
	}
}

// factors fills, for x and every c ≠ y, Φ_c = Φ((x − μ_c)/σ_c), its
// derivative in x dens_c = φ(z_c)/σ_c and z_c, plus prefix and suffix
// products of Φ over c ≠ y (the factor of y counts as 1).
func (w *rmWork) factors(x float64, y int, mu []float64) {
	c := len(mu)
	for k := 0; k < c; k++ {
		switch {
		case k == y:
			w.phi[k], w.dens[k], w.z[k] = 1, 0, 0
		case w.sig[k] > 0:
			z := (x - mu[k]) / w.sig[k]
			w.phi[k], w.dens[k], w.z[k] = normCDF(z), normPDF(z)/w.sig[k], z
		default: // zero variance: a step at μ_k
			p := 0.0
			if x > mu[k] {
				p = 1
			} else if x == mu[k] {
				p = 0.5
			}
			w.phi[k], w.dens[k], w.z[k] = p, 0, 0
		}
	}
	w.pre[0] = 1
	for k := 0; k < c; k++ {
		w.pre[k+1] = w.pre[k] * w.phi[k]
	}
	w.suf[c] = 1
	for k := c - 1; k >= 0; k-- {
		w.suf[k] = w.suf[k+1] * w.phi[k]
	}
}

// argmaxProb returns P(argmax f = y) by quadrature. If dmu is non-nil it
// overwrites dmu and dvar (length C) with the exact gradients of the
// quadrature.
func (r *RobustMax) argmaxProb(y int, mu, v, dmu, dvar []float64, w *rmWork) float64 {
	c := len(mu)
	for k := 0; k < c; k++ {
		w.sig[k] = math.Sqrt(math.Max(v[k], 0))
	}
	for k := range dmu {
		dmu[k], dvar[k] = 0, 0
	}
	a := math.Sqrt(2 * math.Max(v[y], 0))
	t, wt := r.rule.t, r.rule.w
	p := 0.0
	for q := range t {
		x := mu[y] + a*t[q]
		w.factors(x, y, mu)
		p += wt[q] * w.pre[c]
		if dmu == nil {
			continue
		}
		dx := 0.0 // d/dx Π_{k≠y} Φ_k(x)
		for k := 0; k < c; k++ {
			if k == y || w.dens[k] == 0 {
				continue
			}
			g := w.pre[k] * w.suf[k+1] * w.dens[k] * wt[q]
			dx += g
			dmu[k] -= g
			dvar[k] -= g * w.z[k] / (2 * w.sig[k])
		}
		dmu[y] += dx
		if a >= minQuadScale {
			dvar[y] += dx * t[q] / a
		}
	}
	if dmu != nil && a < minQuadScale {
		// lim_{a→0} Σ_q w_q t_q Π'(μ_y + a t_q)/a = Π''(μ_y) Σ w t² = Π''(μ_y)/2.
		w.factors(mu[y], y, mu)
		dvar[y] = 0.5 * r.secondDeriv(y, mu, w)
	}
	return p
}

// secondDeriv returns d²/dx² Π_{k≠y} Φ_k(x) at x = μ_y (w.factors has
// been evaluated there), by the product rule (PΦ)″ = P″Φ + 2P′Φ′ + PΦ″
// accumulated over the factors: O(C), without divisions, so exact zeros
// of Φ_k are harmless. Used for a zero or tiny variance of the labelled
// class.
func (r *RobustMax) secondDeriv(y int, mu []float64, w *rmWork) float64 {
	p, d1, d2 := 1.0, 0.0, 0.0
	for k := range mu {
		if k == y {
			continue
		}
		f, f1, f2 := w.phi[k], w.dens[k], 0.0
		if f1 != 0 {
			// Φ_k'' = −z φ(z)/σ² = −z dens/σ.
			f2 = -w.z[k] * f1 / w.sig[k]
		}
		d2 = d2*f + 2*d1*f1 + p*f2
		d1 = d1*f + p*f1
		p *= f
	}
	return d2
}

// ExpectedLogLik returns Σ_n log(1 − ε) P_n + log(ε/(C − 1)) (1 − P_n),
// P_n = P(argmax f_n = y_n), with the exact gradients of the quadrature.
// rng is unused.
func (r *RobustMax) ExpectedLogLik(y, mu, variance []float64, dmu, dvar, dparams []float64, _ *rand.Rand) float64 {
	C := r.classes
	n := checkLens(y, mu, variance, C)
	checkGradLens(dmu, dvar, n*C)
	checkParamLen(dparams, 0)
	diff := r.logA - r.logB
	newWork := func() *rmWork { return newRMWork(C) }
	return chunkSum(n, n*C*len(r.rule.t), r.workers, newWork, func(w *rmWork, i0, i1 int) float64 {
		sum := 0.0
		for i := i0; i < i1; i++ {
			lo, hi := i*C, (i+1)*C
			cls := classIndex(y[i], C)
			if cls < 0 {
				sum = math.Inf(-1)
				if dmu != nil {
					for k := lo; k < hi; k++ {
						dmu[k], dvar[k] = 0, 0
					}
				}
				continue
			}
			var gm, gv []float64
			if dmu != nil {
				gm, gv = dmu[lo:hi], dvar[lo:hi]
			}
			p := r.argmaxProb(cls, mu[lo:hi], variance[lo:hi], gm, gv, w)
			sum += r.logB + diff*p
			for k := range gm {
				gm[k] *= diff
				gv[k] *= diff
			}
		}
		return sum
	})
}

// LogPredictive writes log[(1 − ε) P + ε/(C − 1) (1 − P)], P = P(argmax f = y).
// rng is unused.
func (r *RobustMax) LogPredictive(dst, y, mu, variance []float64, _ *rand.Rand) {
	C := r.classes
	n := checkLens(y, mu, variance, C)
	if len(dst) != n {
		panic(fmt.Sprintf("likelihood: LogPredictive destination has length %d, want %d", len(dst), n))
	}
	w := newRMWork(C)
	b := r.eps / float64(C-1)
	for i := 0; i < n; i++ {
		cls := classIndex(y[i], C)
		if cls < 0 {
			dst[i] = math.Inf(-1)
			continue
		}
		p := r.argmaxProb(cls, mu[i*C:(i+1)*C], variance[i*C:(i+1)*C], nil, nil, w)
		dst[i] = math.Log((1-r.eps)*p + b*(1-p))
	}
}

// PredictY writes the C class probabilities (1 − ε) P_c + ε/(C − 1)(1 − P_c)
// of every point into mean (point-major, length N·C) and, if variance is
// non-nil, their Bernoulli variances p(1 − p). rng is unused.
func (r *RobustMax) PredictY(mean, variance, mu, fvar []float64, _ *rand.Rand) {
	C := r.classes
	checkPredictLens(mean, variance, mu, fvar, C, C)
	b := r.eps / float64(C-1)
	n := len(mu) / C
	chunkSum(n, n*C*C*len(r.rule.t), r.workers, func() *rmWork { return newRMWork(C) }, func(w *rmWork, i0, i1 int) float64 {
		for i := i0; i < i1; i++ {
			for c := 0; c < C; c++ {
				p := r.argmaxProb(c, mu[i*C:(i+1)*C], fvar[i*C:(i+1)*C], nil, nil, w)
				pc := (1-r.eps)*p + b*(1-p)
				mean[i*C+c] = pc
				if variance != nil {
					variance[i*C+c] = pc * (1 - pc)
				}
			}
		}
		return 0
	})
}
