package gp

import "math"

// Settings of the per-point scale solve of concaveTighter.
const (
	// alphaTol is the width of the bracket on log αₙ, and the size of the
	// residual log(1 + h), at which the solve stops.
	alphaTol = 1e-13
	// alphaMaxIter caps the evaluations of the solve after the first; the
	// solve usually converges in far fewer (see concaveTighter).
	alphaMaxIter = 60
)

// alphaPenalty returns ½·(α − 1 − log α), the KL divergence that a scale α
// of a point's residual variance costs in TighterBound.
func alphaPenalty(a float64) float64 { return 0.5 * (a - 1 - math.Log(a)) }

// concaveTighter evaluates the TighterBound terms of a ConcaveLikelihood
// after splitResidual: for each point the scale αₙ ∈ (0, 1] that
// maximizes
//
//	φₙ(α) = Gₙ(sₙ + α·dₙ) − ½·(α − 1 − log α),  Gₙ(v) = E_{N(mₙ, v)}[log p(yₙ | fₙ)],
//
// in ws.alpha, and returns Σₙ Gₙ(sₙ + αₙdₙ) and −Σₙ ½(αₙ − 1 − log αₙ).
// If dmu is non-nil it writes ∂/∂mₙ and ∂/∂sₙ of the sum into dmu and dvar,
// αₙ·∂G/∂v into dres (the gradient with respect to dₙ) and adds the
// likelihood-parameter gradient into dlik: by the envelope theorem these
// are the partial derivatives at the optimal αₙ, which does not move the
// bound to first order (φₙ'(αₙ) = 0, or αₙ = 1 on the boundary).
//
// The stationarity condition φₙ'(α) = 0 is h(α) = α·(1 + dₙcₙ(α)) − 1 = 0,
// cₙ(α) = −2G'ₙ(sₙ+αdₙ). For a concave log-density cₙ ≥ 0, so h(0) = −1
// and h(1) ≥ 0 bracket a root, which the solve finds on t = log α with
// ρ(t) = log(1 + h) = t + log(1 + dₙcₙ), close to linear in t, by secant
// steps safeguarded by that bracket (secantStep). Every iterate stays in
// the bracket, and the limit, where h goes from negative to positive, is a
// local maximum of φₙ (any αₙ in (0, 1] gives a valid bound; the optimum
// makes it tight). The first step is the closed-form Gaussian solution
// αₙ = 1/(1 + dₙcₙ(1)), exact when cₙ does not depend on α, so a Gaussian
// sent through this path converges after one step.
//
// Cost: each iteration is one ExpectedLogLik call on the whole batch
// (without parameter gradients) while any point is unsolved; the first is at
// αₙ = 1 (the standard bound's variances), and a last call with gradients
// evaluates the bound at the solution. For the Bernoulli likelihood with
// 20 quadrature points the solve takes 4 to 6 calls with prior variances
// from 0.1 to 20 (TestConcaveTighterIterations), so a step pays about 7
// quadratures per point where StandardBound pays 1; the Poisson likelihood
// (closed form) takes 5 to 9. After alphaMaxIter calls the solve stops
// where it is: the bound is still valid, but its gradient then omits the
// small term of the unconverged αₙ. StandardBound runs none of this.
func (mod *Model) concaveTighter(y, dmu, dvar, dres, dlik []float64) (ell, tight float64) {
	ws := &mod.ws
	n := ws.n
	ws.alpha = grow(ws.alpha, n)
	mod.solveAlpha(y) // also sizes ws.vt
	for i := 0; i < n; i++ {
		a := ws.alpha[i]
		ws.vt[i] = ws.sv[i] + a*ws.res[i]
		tight -= alphaPenalty(a)
	}
	ell = mod.lik.ExpectedLogLik(y, ws.mu, ws.vt, dmu, dvar, dlik, mod.rng)
	if dmu != nil {
		// A residual rounded to ≤ 0 keeps αₙ = 1, the standard term.
		for i := 0; i < n; i++ {
			dres[i] = ws.alpha[i] * dvar[i]
		}
	}
	return ell, tight
}

// solveAlpha fills ws.alpha with the maximizers αₙ of concaveTighter's
// φₙ (see there), counting its ExpectedLogLik calls in ws.alphaIter.
func (mod *Model) solveAlpha(y []float64) {
	ws := &mod.ws
	n := ws.n
	ws.alo = grow(ws.alo, n)
	ws.ahi = grow(ws.ahi, n)
	ws.tprev = grow(ws.tprev, n)
	ws.rprev = grow(ws.rprev, n)
	if cap(ws.adone) < n {
		ws.adone = make([]bool, n)
	}
	ws.adone = ws.adone[:n]
	ws.vt = grow(ws.vt, n)
	ws.agm = grow(ws.agm, n)
	ws.agv = grow(ws.agv, n)
	// First evaluation: at α = 1 for every point.
	for i := 0; i < n; i++ {
		ws.alpha[i] = 1
		ws.vt[i] = ws.sv[i] + ws.res[i]
	}
	mod.lik.ExpectedLogLik(y, ws.mu, ws.vt, ws.agm, ws.agv, nil, mod.rng)
	ws.alphaIter = 1
	active := 0
	for i := 0; i < n; i++ {
		d := ws.res[i]
		h1 := -2 * d * ws.agv[i] // h(1)
		if !(d > 0) || !(h1 > 0) || math.IsInf(h1, 0) {
			// No residual, a flat likelihood (α = 1 is optimal on the
			// boundary), or a non-finite curvature: keep α = 1.
			ws.adone[i] = true
			continue
		}
		ws.alo[i], ws.ahi[i] = math.Inf(-1), 0
		ws.tprev[i], ws.rprev[i] = 0, math.Log1p(h1) // the iterate α = 1 and its ρ
		ws.adone[i] = false
		ws.alpha[i] = 1 / (1 + h1)
		active++
	}
	for it := 0; active > 0 && it < alphaMaxIter; it++ {
		for i := 0; i < n; i++ {
			ws.vt[i] = ws.sv[i] + ws.alpha[i]*ws.res[i]
		}
		mod.lik.ExpectedLogLik(y, ws.mu, ws.vt, ws.agm, ws.agv, nil, mod.rng)
		ws.alphaIter++
		active = 0
		for i := 0; i < n; i++ {
			if ws.adone[i] {
				continue
			}
			if secantStep(ws, i) {
				active++
			} else {
				ws.adone[i] = true
			}
		}
	}
}

// secantStep updates point i's bracket with ρ = log(1 + h) = log α +
// log(1 + dₙcₙ) at ws.alpha[i] (cₙ from the curvature in ws.agv[i]) and
// sets the next iterate; it reports whether the point needs another
// evaluation. It works on t = log α, where ρ has the sign of h and is
// close to linear (exactly t + const for the Gaussian): the next t is the
// secant step through the last two iterates, Newton's step with unit slope
// t − ρ when the secant slope is not positive, and the bracket's midpoint
// when the step leaves the bracket [alo, ahi] (alo = −∞ until an iterate
// with ρ < 0 gives it).
func secantStep(ws *workspace, i int) bool {
	t := math.Log(ws.alpha[i])
	r := t + math.Log1p(-2*ws.res[i]*ws.agv[i])
	if math.Abs(r) <= alphaTol || math.IsNaN(r) {
		return false
	}
	if r < 0 {
		ws.alo[i] = t
	} else {
		ws.ahi[i] = t
	}
	lo, hi := ws.alo[i], ws.ahi[i]
	if hi-lo <= alphaTol {
		ws.alpha[i] = math.Exp(hi)
		return false
	}
	next := t - r
	if slope := (r - ws.rprev[i]) / (t - ws.tprev[i]); slope > 0 && !math.IsInf(slope, 0) {
		next = t - r/slope
	}
	if !(next > lo && next < hi) {
		next = 0.5 * (lo + hi)
		if math.IsInf(lo, -1) {
			next = t - r
		}
	}
	ws.tprev[i], ws.rprev[i] = t, r // the previous iterate, for the next secant
	if next == t {
		return false
	}
	ws.alpha[i] = math.Exp(next)
	return true
}
