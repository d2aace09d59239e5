package gp

import "math"

// The tighter bound for a likelihood without a closed-form term (no
// TighterLikelihood). Each point's term is
//
//	Fₙ(λ) = E_{N(μₙ, sₙ + λ·dₙ)}[log p(yₙ | f)] − ½(λ − 1 − log λ),
//
// the expected log-likelihood under the relaxed conditional (its residual
// variance dₙ scaled by λ) less that conditional's KL divergence from the
// prior one. Any λ > 0 gives a lower bound; the bound takes, per point, a
// local maximum λₙ* found numerically: a root of
//
//	Fₙ′(λ) = dₙ·gₙ(sₙ + λ·dₙ) + ½(1/λ − 1),  gₙ(v) = ∂E/∂v,
//
// where Fₙ′ changes sign from + to −, by bracketing and the Illinois
// variant of regula falsi. For a
// log-concave likelihood gₙ ≤ 0, so λₙ* ∈ (0, 1]; for Poisson Fₙ is
// strictly concave and the root unique. For the Gaussian likelihood the
// root is σ²/(σ² + dₙ), the closed form of TighterTerm. Since λ = 1 is
// the standard bound's choice, λₙ* gives a higher term whenever Fₙ has a
// single maximum.
//
// Gradient: at a stationary λₙ* the derivative of Fₙ(λₙ*(θ)) with
// respect to any parameter is the partial one at fixed λ (the envelope
// theorem): ∂/∂μₙ and ∂/∂sₙ are the likelihood's dmu and dvar at variance
// sₙ + λₙ*dₙ, and ∂/∂dₙ = λₙ*·dvar. The search stops when Fₙ′ is below
// numTol times its term ½/λ, or the bracket below numTol relative width,
// so the neglected term is of that order.

// numTol is the relative tolerance of the search for λₙ*.
const numTol = 1e-13

// numMaxIter bounds the likelihood evaluations of the search.
const numMaxIter = 200

// lamMin and lamMax bound the search: a likelihood whose Fₙ′ keeps its
// sign beyond them (none of package likelihood's) gets the bound there.
const (
	lamMin = 1e-12
	lamMax = 1e12
)

// lamSearch is the search state of one point.
type lamSearch struct {
	lo, hi, hlo, hhi float64
	haveLo, haveHi   bool
	last             int // −1: the last step moved lo, +1: hi, 0: neither
	done             bool
}

// next returns the next λ to try after Fₙ′(cand) = h, or cand when done.
func (st *lamSearch) next(cand, h, gaussGuess float64, first bool) float64 {
	if math.Abs(h) <= numTol*0.5/cand {
		// Fₙ′ is zero to the rounding of its terms (½/λ and dₙ·gₙ).
		st.done = true
		return cand
	}
	if h > 0 {
		st.lo, st.hlo, st.haveLo = cand, h, true
		st.moved(-1)
	} else {
		st.hi, st.hhi, st.haveHi = cand, h, true
		st.moved(1)
	}
	switch {
	case !st.haveHi:
		if st.lo >= lamMax {
			st.done = true
			return st.lo
		}
		return st.lo * 4
	case !st.haveLo:
		if st.hi <= lamMin {
			st.done = true
			return st.hi
		}
		if first && gaussGuess < st.hi {
			return gaussGuess
		}
		return st.hi / 4
	}
	if st.hi-st.lo <= numTol*st.hi {
		st.done = true
		return (st.lo + st.hi) / 2
	}
	c := (st.lo*st.hhi - st.hi*st.hlo) / (st.hhi - st.hlo)
	if !(c > st.lo && c < st.hi) {
		c = (st.lo + st.hi) / 2
	}
	return c
}

// moved records that one end of the bracket moved (−1: lo, +1: hi) and,
// as the Illinois variant of regula falsi does, halves the value kept at
// the other end when the same end has moved twice in a row, so that the
// kept end moves too and the convergence stays superlinear.
func (st *lamSearch) moved(end int) {
	if st.last == end {
		if end < 0 {
			st.hhi /= 2
		} else {
			st.hlo /= 2
		}
	}
	st.last = end
}

// tighterNumeric evaluates the tighter bound's likelihood part for a
// likelihood without TighterLikelihood after splitResidual: it returns
// Σₙ E[log p(yₙ | f)] at the variances sₙ + λₙ*dₙ and −½·Σₙ(λₙ* − 1 − log λₙ*),
// and if dmu is non-nil writes dmu, dvar (with respect to sₙ) and dres and
// adds the likelihood parameters' gradient to dlik. It needs one latent
// function (checkBound).
func (mod *Model) tighterNumeric(y, dmu, dvar, dres, dlik []float64) (ell, tight float64) {
	ws := &mod.ws
	n := ws.n
	ws.lam = grow(ws.lam, n)
	ws.vlam = grow(ws.vlam, n)
	ws.gmu = grow(ws.gmu, n)
	ws.gvar = grow(ws.gvar, n)
	if cap(ws.lsearch) < n {
		ws.lsearch = make([]lamSearch, n)
	}
	search := ws.lsearch[:n]
	lam, v, d, s := ws.lam, ws.vlam, ws.res, ws.sv
	pending := 0
	for i := range search {
		search[i] = lamSearch{}
		lam[i] = 1
		if d[i] > 0 {
			pending++
		} else {
			// No residual variance (or a rounding below zero): λ does
			// not matter; the standard bound's λ = 1.
			search[i].done = true
		}
	}
	for it := 0; pending > 0 && it < numMaxIter; it++ {
		for i := range v {
			v[i] = s[i] + lam[i]*d[i]
		}
		mod.lik.ExpectedLogLik(y, ws.mu, v, ws.gmu, ws.gvar, nil, mod.rng)
		for i := range search {
			st := &search[i]
			if st.done {
				continue
			}
			g := ws.gvar[i]
			h := d[i]*g + 0.5*(1/lam[i]-1)
			guess := 1.0
			if g < 0 {
				guess = 1 / (1 - 2*d[i]*g)
			}
			lam[i] = st.next(lam[i], h, guess, it == 0)
			if st.done {
				pending--
			}
		}
	}
	for i := range v {
		v[i] = s[i] + lam[i]*d[i]
		tight -= 0.5 * (lam[i] - 1 - math.Log(lam[i]))
	}
	ell = mod.lik.ExpectedLogLik(y, ws.mu, v, dmu, dvar, dlik, mod.rng)
	for i := range dres {
		dres[i] = lam[i] * dvar[i]
	}
	return ell, tight
}
