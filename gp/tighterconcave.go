package gp

import "math"

// Settings of the per-point scale solve of concaveTighter.
const (
	// alphaTol is the width of the bracket on αₙ at which the solve stops.
	alphaTol = 1e-13
	// alphaMaxIter caps the evaluations of the solve after the first; the
	// solve usually converges in far fewer (see concaveTighter).
	alphaMaxIter = 60
	// alphaDone marks a point whose scale is final; aside is otherwise −1
	// or +1 for the end of the bracket the last iterate replaced, or 0.
	alphaDone = 9
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
// The stationarity condition φₙ'(α) = 0 is h(α) = α·(1 − 2dₙ·G'ₙ(sₙ+αdₙ))
// − 1 = 0. For a concave log-density G' ≤ 0, so h(0) = −1 and h(1) ≥ 0
// bracket a root, which the solve finds by regula falsi with the Illinois
// modification on that bracket; every iterate stays in the bracket, and the
// limit, where h goes from negative to positive, is a local maximum of φₙ
// (any αₙ in (0, 1] gives a valid bound; the optimum makes it tight). The
// first step is the closed-form Gaussian solution αₙ = 1/(1 + dₙcₙ) with
// the curvature cₙ = −2G'ₙ at αₙ = 1, exact when G is linear in v.
//
// Cost: each iteration is one ExpectedLogLik call on the batch (without
// parameter gradients) for the points not yet converged; the first is at
// αₙ = 1 (the standard bound's variances), and a last call with gradients
// evaluates the bound at the solution. For the Bernoulli likelihood with
// 20 quadrature points and residuals up to a few units the solve takes
// about 5 to 8 iterations (TestConcaveTighterIterations), so a step pays
// about 7 to 10 quadrature evaluations per point where StandardBound pays 1.
// StandardBound does not run any of this.
func (mod *Model) concaveTighter(y, dmu, dvar, dres, dlik []float64) (ell, tight float64) {
	ws := &mod.ws
	n := ws.n
	ws.alpha = grow(ws.alpha, n)
	mod.solveAlpha(y)
	ws.vt = grow(ws.vt, n)
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
	ws.hlo = grow(ws.hlo, n)
	ws.hhi = grow(ws.hhi, n)
	if cap(ws.aside) < n {
		ws.aside = make([]int8, n)
	}
	ws.aside = ws.aside[:n]
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
			ws.aside[i] = alphaDone
			continue
		}
		ws.alo[i], ws.hlo[i] = 0, -1
		ws.ahi[i], ws.hhi[i] = 1, h1
		ws.aside[i] = 0
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
			if ws.aside[i] == alphaDone {
				continue
			}
			if illinoisStep(ws, i) {
				active++
			} else {
				ws.aside[i] = alphaDone
			}
		}
	}
}

// illinoisStep updates point i's bracket with h at ws.alpha[i] (from the
// curvature in ws.agv[i]) and sets the next iterate; it reports whether the
// point needs another evaluation.
func illinoisStep(ws *workspace, i int) bool {
	a := ws.alpha[i]
	h := a*(1-2*ws.res[i]*ws.agv[i]) - 1
	if math.Abs(h) <= alphaTol || math.IsNaN(h) {
		return false
	}
	if h < 0 {
		ws.alo[i], ws.hlo[i] = a, h
		if ws.aside[i] == -1 {
			ws.hhi[i] /= 2 // the upper end was kept twice: Illinois
		}
		ws.aside[i] = -1
	} else {
		ws.ahi[i], ws.hhi[i] = a, h
		if ws.aside[i] == 1 {
			ws.hlo[i] /= 2
		}
		ws.aside[i] = 1
	}
	lo, hi := ws.alo[i], ws.ahi[i]
	if hi-lo <= alphaTol*hi {
		ws.alpha[i] = hi
		return false
	}
	next := (lo*ws.hhi[i] - hi*ws.hlo[i]) / (ws.hhi[i] - ws.hlo[i])
	if !(next > lo && next < hi) {
		next = 0.5 * (lo + hi)
	}
	if next == a {
		return false
	}
	ws.alpha[i] = next
	return true
}
