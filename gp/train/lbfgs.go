package train

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// LBFGSOptions control MaximizeLBFGS. The zero value gives the defaults.
type LBFGSOptions struct {
	// Memory is the number of correction pairs kept (0 means 10). The
	// pairs are allocated as they are collected, at most one per
	// iteration, so a Memory beyond the iterations run costs nothing
	// (math.MaxInt keeps every pair).
	Memory int
	// MaxIter bounds the iterations (0 means 1000; math.MaxInt means no
	// limit).
	MaxIter int
	// MaxEvals bounds the objective evaluations (0 means 20·MaxIter,
	// or math.MaxInt if that product overflows).
	MaxEvals int
	// GradTol stops when the largest gradient entry is below it in
	// absolute value (0 means 1e-6).
	GradTol float64
	// FuncTol stops when an iteration improves the objective by less than
	// FuncTol·max(1, |f|) (0 means 1e-10).
	FuncTol float64
	// Logf, if not nil, receives one line per iteration.
	Logf func(format string, args ...any)
	// OnIteration, if not nil, is called after every iteration with the
	// number of iterations done and the objective at the new point (the
	// best so far: no iteration decreases it), for progress reports.
	OnIteration func(iteration int, f float64)
}

// LBFGSResult summarizes MaximizeLBFGS.
type LBFGSResult struct {
	// X holds the best point found and F its objective value.
	X []float64
	F float64
	// Iterations and Evaluations count iterations and objective calls;
	// Failed counts calls that returned an error or a non-finite value or
	// gradient, which the line search treats as "too far".
	Iterations, Evaluations, Failed int
	// Reason is why the run stopped: "gradient", "function" (an
	// iteration, or the best step the line search could still take,
	// improves f by less than FuncTol·max(1, |f|)), "iterations",
	// "evaluations" or "linesearch" (no acceptable step could be found;
	// X is still the best point).
	Reason string
}

// testHookLBFGSPairs, if set, sees the correction pairs after every update.
var testHookLBFGSPairs func(s, y [][]float64, rho []float64)

// MaximizeLBFGS maximizes f from x0 with the limited-memory BFGS method
// (Nocedal & Wright, Algorithm 7.4, two-loop recursion with the scaling
// γ = sᵀy/yᵀy) and a bracketing line search for the weak Wolfe conditions
// (c1 = 1e-4, c2 = 0.9). f returns the objective and writes its gradient
// into grad. An evaluation that returns an error or a non-finite value or
// gradient is treated as a point beyond the acceptable step, so the line
// search shrinks the step; this lets f fail in regions where it is not
// defined (for example where a kernel matrix cannot be factorized).
//
// MaximizeLBFGS returns an error if f fails at x0, for bad options, or
// when ctx is canceled; in the last case the result still holds the best
// point found.
func MaximizeLBFGS(ctx context.Context, f func(x, grad []float64) (float64, error), x0 []float64, opts LBFGSOptions) (LBFGSResult, error) {
	n := len(x0)
	lb := &lbfgs{ctx: ctx, f: f, res: LBFGSResult{X: append([]float64(nil), x0...), F: math.NaN()}}
	if ctx == nil {
		return lb.res, errors.New("train: MaximizeLBFGS: nil Context (use context.Background())")
	}
	if f == nil {
		return lb.res, errors.New("train: MaximizeLBFGS: nil objective")
	}
	if n == 0 {
		return lb.res, errors.New("train: MaximizeLBFGS: empty starting point")
	}
	if err := lb.options(opts); err != nil {
		return lb.res, err
	}
	x := append([]float64(nil), x0...)
	g := make([]float64, n)
	phi, ok := lb.eval(x, g)
	if !ok {
		return lb.res, fmt.Errorf("train: MaximizeLBFGS: at the starting point: %w", lb.why)
	}
	lb.res.F = -phi
	lb.d, lb.xt, lb.gt = make([]float64, n), make([]float64, n), make([]float64, n)
	for {
		if err := ctx.Err(); err != nil {
			return lb.res, err
		}
		if normInf(g) < lb.gtol {
			lb.res.Reason = "gradient"
			return lb.res, nil
		}
		if lb.res.Iterations >= lb.maxIter {
			lb.res.Reason = "iterations"
			return lb.res, nil
		}
		gd, k := lb.direction(g)
		t := 1.0
		if k == 0 {
			t = math.Min(1, 1/math.Sqrt(-gd)) // first step of length at most 1
		}
		t, phiNew, reason := lb.lineSearch(x, phi, gd, t)
		if reason == canceled {
			return lb.res, ctx.Err()
		}
		if reason != "" {
			lb.res.Reason = reason
			return lb.res, nil
		}
		lb.updatePairs(x, g)
		copy(x, lb.xt)
		copy(g, lb.gt)
		improvement := phi - phiNew
		phi = phiNew
		lb.res.Iterations++
		copy(lb.res.X, x)
		lb.res.F = -phi
		if opts.Logf != nil {
			opts.Logf("train: L-BFGS iteration %d: f = %.10g, |grad|∞ = %.3g, step %.3g", lb.res.Iterations, lb.res.F, normInf(g), t)
		}
		if opts.OnIteration != nil {
			opts.OnIteration(lb.res.Iterations, lb.res.F)
		}
		if improvement <= lb.ftol*math.Max(1, math.Abs(phi)) {
			lb.res.Reason = "function"
			return lb.res, nil
		}
	}
}

// lbfgs is one run of MaximizeLBFGS. It minimizes φ = −f with gradient
// g = −∇f.
type lbfgs struct {
	ctx context.Context
	f   func(x, grad []float64) (float64, error)
	res LBFGSResult
	// why says what went wrong at the last failed evaluation.
	why error

	mem, maxIter, maxEvals int
	gtol, ftol             float64

	// The correction pairs grow with the iterations up to mem (see
	// LBFGSOptions.Memory); alpha holds one coefficient per pair.
	s, y       [][]float64
	rho, alpha []float64
	// spareS and spareY hold the candidate for the next pair: fresh
	// storage, or the oldest pair's once it has been dropped. A candidate
	// that fails the curvature test is never stored over a kept pair.
	spareS, spareY []float64
	// d is the search direction, xt and gt the trial point and its
	// gradient.
	d, xt, gt []float64
}

// options checks opts and fills in the defaults.
func (lb *lbfgs) options(opts LBFGSOptions) error {
	if opts.Memory < 0 || opts.MaxIter < 0 || opts.MaxEvals < 0 || !(opts.GradTol >= 0) || !(opts.FuncTol >= 0) {
		return fmt.Errorf("train: MaximizeLBFGS: bad options: Memory %d, MaxIter %d, MaxEvals %d, GradTol %g, FuncTol %g (want non-negative numbers)",
			opts.Memory, opts.MaxIter, opts.MaxEvals, opts.GradTol, opts.FuncTol)
	}
	lb.mem = opts.Memory
	if lb.mem == 0 {
		lb.mem = 10
	}
	lb.maxIter = opts.MaxIter
	if lb.maxIter == 0 {
		lb.maxIter = 1000
	}
	lb.maxEvals = opts.MaxEvals
	if lb.maxEvals == 0 {
		lb.maxEvals = math.MaxInt // 20·maxIter, saturated
		if lb.maxIter <= math.MaxInt/20 {
			lb.maxEvals = 20 * lb.maxIter
		}
	}
	lb.gtol = opts.GradTol
	if lb.gtol == 0 {
		lb.gtol = 1e-6
	}
	lb.ftol = opts.FuncTol
	if lb.ftol == 0 {
		lb.ftol = 1e-10
	}
	return nil
}

// eval returns φ(x) and writes g = −∇f(x); ok is false (and why set) for a
// failed or non-finite evaluation.
func (lb *lbfgs) eval(x, g []float64) (float64, bool) {
	lb.res.Evaluations++
	v, err := lb.f(x, g)
	switch {
	case err != nil:
		lb.why = err
	case math.IsNaN(v) || math.IsInf(v, 0):
		lb.why = fmt.Errorf("objective is %v", v)
	}
	ok := err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
	for i := range g {
		g[i] = -g[i]
		if ok && (math.IsNaN(g[i]) || math.IsInf(g[i], 0)) {
			ok = false
			lb.why = fmt.Errorf("gradient entry %d is %v", i, -g[i])
		}
	}
	if !ok {
		lb.res.Failed++
	}
	return -v, ok
}

// direction writes the search direction d = −H·g by the two-loop
// recursion (steepest descent, dropping the pairs, if that is not a
// descent direction) and returns gᵀd and the number of pairs used.
func (lb *lbfgs) direction(g []float64) (gd float64, k int) {
	d, s, y, rho, alpha := lb.d, lb.s, lb.y, lb.rho, lb.alpha
	for i := range d {
		d[i] = -g[i]
	}
	k = len(s)
	for i := k - 1; i >= 0; i-- {
		alpha[i] = rho[i] * dot(s[i], d)
		axpyTo(d, -alpha[i], y[i])
	}
	if k > 0 {
		gamma := dot(s[k-1], y[k-1]) / dot(y[k-1], y[k-1])
		for i := range d {
			d[i] *= gamma
		}
	}
	for i := 0; i < k; i++ {
		b := rho[i] * dot(y[i], d)
		axpyTo(d, alpha[i]-b, s[i])
	}
	gd = dot(g, d)
	if !(gd < 0) { // not a descent direction: restart from steepest descent
		lb.s, lb.y, lb.rho = s[:0], y[:0], rho[:0]
		for i := range d {
			d[i] = -g[i]
		}
		gd = dot(g, d)
		k = 0
	}
	return gd, k
}

// canceled is the reason lineSearch gives when the run's context is done
// before an evaluation: each may take minutes (an exact GP at large N), so
// the search does not finish first.
const canceled = "canceled"

// lineSearch is a bracketing line search for the weak Wolfe conditions
// from x along d, starting at step t. It leaves the accepted point and its
// gradient in xt and gt and returns the step and φ there, or the reason
// the run ends ("evaluations", "linesearch" or canceled).
func (lb *lbfgs) lineSearch(x []float64, phi, gd, t float64) (float64, float64, string) {
	const c1, c2 = 1e-4, 0.9
	d, xt, gt := lb.d, lb.xt, lb.gt
	lo, hi := 0.0, math.Inf(1)
	bestT, bestPhi := 0.0, phi
	for ls := 0; ls < 40; ls++ {
		if lb.ctx.Err() != nil {
			return t, 0, canceled
		}
		if lb.res.Evaluations >= lb.maxEvals {
			break
		}
		for i := range xt {
			xt[i] = x[i] + t*d[i]
		}
		pt, okt := lb.eval(xt, gt)
		switch {
		case !okt || pt > phi+c1*t*gd:
			hi = t
		case dot(gt, d) < c2*gd:
			if pt < bestPhi {
				bestT, bestPhi = t, pt
			}
			lo = t
		default:
			return t, pt, ""
		}
		if math.IsInf(hi, 1) {
			t *= 2
		} else {
			t = 0.5 * (lo + hi)
		}
		if bestT == 0 && -t*gd <= lb.ftol*math.Max(1, math.Abs(phi)) {
			// The first-order gain of any shorter step is below the
			// function tolerance: near the optimum, rounding in f (a log
			// determinant of order 10⁴, say) defeats the sufficient-
			// decrease test, and halving on would only spend evaluations.
			return t, 0, "function"
		}
	}
	if bestT == 0 {
		if lb.res.Evaluations >= lb.maxEvals {
			return t, 0, "evaluations"
		}
		return t, 0, "linesearch"
	}
	// Accept the best sufficient-decrease point without curvature;
	// recompute its gradient.
	if lb.ctx.Err() != nil {
		return t, 0, canceled
	}
	t = bestT
	for i := range xt {
		xt[i] = x[i] + t*d[i]
	}
	phiNew, okt := lb.eval(xt, gt)
	if !okt {
		return t, 0, "linesearch"
	}
	return t, phiNew, ""
}

// updatePairs adds the correction pair of the step from x (gradient g) to
// xt (gradient gt) if it passes the curvature test, dropping the oldest
// pair beyond mem.
func (lb *lbfgs) updatePairs(x, g []float64) {
	n, mem := len(x), lb.mem
	if lb.spareS == nil {
		lb.spareS, lb.spareY = make([]float64, n), make([]float64, n)
	}
	sn, yn := lb.spareS, lb.spareY
	for i := range sn {
		sn[i] = lb.xt[i] - x[i]
		yn[i] = lb.gt[i] - g[i]
	}
	sy := dot(sn, yn)
	if sy > 1e-12*math.Sqrt(dot(sn, sn)*dot(yn, yn)) {
		lb.spareS, lb.spareY = nil, nil
		if len(lb.s) == mem { // drop the oldest pair and recycle its storage
			lb.spareS, lb.spareY = lb.s[0], lb.y[0]
			copy(lb.s, lb.s[1:])
			copy(lb.y, lb.y[1:])
			copy(lb.rho, lb.rho[1:])
			lb.s, lb.y, lb.rho = lb.s[:mem-1], lb.y[:mem-1], lb.rho[:mem-1]
		}
		lb.s = append(lb.s, sn)
		lb.y = append(lb.y, yn)
		lb.rho = append(lb.rho, 1/sy)
		if len(lb.alpha) < len(lb.s) {
			lb.alpha = append(lb.alpha, 0)
		}
	}
	if testHookLBFGSPairs != nil {
		testHookLBFGSPairs(lb.s, lb.y, lb.rho)
	}
}

func normInf(v []float64) float64 {
	var m float64
	for _, a := range v {
		m = math.Max(m, math.Abs(a))
	}
	return m
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func axpyTo(dst []float64, a float64, x []float64) {
	for i, v := range x {
		dst[i] += a * v
	}
}
