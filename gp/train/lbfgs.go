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
	// Reason is why the run stopped: "gradient", "function",
	// "iterations", "evaluations" or "linesearch" (no acceptable step
	// could be found; X is still the best point).
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
	res := LBFGSResult{X: append([]float64(nil), x0...), F: math.NaN()}
	if ctx == nil {
		return res, errors.New("train: MaximizeLBFGS: nil Context (use context.Background())")
	}
	if f == nil {
		return res, errors.New("train: MaximizeLBFGS: nil objective")
	}
	if n == 0 {
		return res, errors.New("train: MaximizeLBFGS: empty starting point")
	}
	if opts.Memory < 0 || opts.MaxIter < 0 || opts.MaxEvals < 0 || !(opts.GradTol >= 0) || !(opts.FuncTol >= 0) {
		return res, fmt.Errorf("train: MaximizeLBFGS: bad options: Memory %d, MaxIter %d, MaxEvals %d, GradTol %g, FuncTol %g (want non-negative numbers)",
			opts.Memory, opts.MaxIter, opts.MaxEvals, opts.GradTol, opts.FuncTol)
	}
	mem := opts.Memory
	if mem == 0 {
		mem = 10
	}
	maxIter := opts.MaxIter
	if maxIter == 0 {
		maxIter = 1000
	}
	maxEvals := opts.MaxEvals
	if maxEvals == 0 {
		maxEvals = math.MaxInt // 20·maxIter, saturated
		if maxIter <= math.MaxInt/20 {
			maxEvals = 20 * maxIter
		}
	}
	gtol := opts.GradTol
	if gtol == 0 {
		gtol = 1e-6
	}
	ftol := opts.FuncTol
	if ftol == 0 {
		ftol = 1e-10
	}

	// Internally minimize φ = −f with gradient g = −∇f. why says what
	// went wrong at the last failed evaluation.
	var why error
	eval := func(x, g []float64) (float64, bool) {
		res.Evaluations++
		v, err := f(x, g)
		switch {
		case err != nil:
			why = err
		case math.IsNaN(v) || math.IsInf(v, 0):
			why = fmt.Errorf("objective is %v", v)
		}
		ok := err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
		for i := range g {
			g[i] = -g[i]
			if ok && (math.IsNaN(g[i]) || math.IsInf(g[i], 0)) {
				ok = false
				why = fmt.Errorf("gradient entry %d is %v", i, -g[i])
			}
		}
		if !ok {
			res.Failed++
		}
		return -v, ok
	}

	x := append([]float64(nil), x0...)
	g := make([]float64, n)
	phi, ok := eval(x, g)
	if !ok {
		return res, fmt.Errorf("train: MaximizeLBFGS: at the starting point: %w", why)
	}
	res.F = -phi

	// The correction pairs grow with the iterations up to mem (see
	// LBFGSOptions.Memory); alpha holds one coefficient per pair.
	var s, y [][]float64
	var rho, alpha []float64
	// spareS and spareY hold the candidate for the next pair: fresh
	// storage, or the oldest pair's once it has been dropped. A candidate
	// that fails the curvature test is never stored over a kept pair.
	var spareS, spareY []float64
	d := make([]float64, n)
	xt := make([]float64, n)
	gt := make([]float64, n)

	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if normInf(g) < gtol {
			res.Reason = "gradient"
			return res, nil
		}
		if res.Iterations >= maxIter {
			res.Reason = "iterations"
			return res, nil
		}
		// Two-loop recursion: d = −H·g.
		for i := range d {
			d[i] = -g[i]
		}
		k := len(s)
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
		gd := dot(g, d)
		if !(gd < 0) { // not a descent direction: restart from steepest descent
			s, y, rho = s[:0], y[:0], rho[:0]
			for i := range d {
				d[i] = -g[i]
			}
			gd = dot(g, d)
			k = 0
		}
		t := 1.0
		if k == 0 {
			t = math.Min(1, 1/math.Sqrt(-gd)) // first step of length at most 1
		}

		// Bracketing line search for the weak Wolfe conditions.
		const c1, c2 = 1e-4, 0.9
		lo, hi := 0.0, math.Inf(1)
		bestT, bestPhi := 0.0, phi
		accepted := false
		var phiNew float64
		for ls := 0; ls < 40; ls++ {
			if res.Evaluations >= maxEvals {
				break
			}
			for i := range xt {
				xt[i] = x[i] + t*d[i]
			}
			pt, okt := eval(xt, gt)
			switch {
			case !okt || pt > phi+c1*t*gd:
				hi = t
			case dot(gt, d) < c2*gd:
				if pt < bestPhi {
					bestT, bestPhi = t, pt
				}
				lo = t
			default:
				accepted, phiNew = true, pt
			}
			if accepted {
				break
			}
			if math.IsInf(hi, 1) {
				t *= 2
			} else {
				t = 0.5 * (lo + hi)
			}
		}
		if !accepted {
			if bestT == 0 {
				if res.Evaluations >= maxEvals {
					res.Reason = "evaluations"
				} else {
					res.Reason = "linesearch"
				}
				return res, nil
			}
			// Accept the best sufficient-decrease point without curvature;
			// recompute its gradient.
			t = bestT
			for i := range xt {
				xt[i] = x[i] + t*d[i]
			}
			var okt bool
			if phiNew, okt = eval(xt, gt); !okt {
				res.Reason = "linesearch"
				return res, nil
			}
		}
		// Update the correction pairs.
		if spareS == nil {
			spareS, spareY = make([]float64, n), make([]float64, n)
		}
		sn, yn := spareS, spareY
		for i := range sn {
			sn[i] = xt[i] - x[i]
			yn[i] = gt[i] - g[i]
		}
		sy := dot(sn, yn)
		if sy > 1e-12*math.Sqrt(dot(sn, sn)*dot(yn, yn)) {
			spareS, spareY = nil, nil
			if len(s) == mem { // drop the oldest pair and recycle its storage
				spareS, spareY = s[0], y[0]
				copy(s, s[1:])
				copy(y, y[1:])
				copy(rho, rho[1:])
				s, y, rho = s[:mem-1], y[:mem-1], rho[:mem-1]
			}
			s = append(s, sn)
			y = append(y, yn)
			rho = append(rho, 1/sy)
			if len(alpha) < len(s) {
				alpha = append(alpha, 0)
			}
		}
		if testHookLBFGSPairs != nil {
			testHookLBFGSPairs(s, y, rho)
		}
		copy(x, xt)
		copy(g, gt)
		improvement := phi - phiNew
		phi = phiNew
		res.Iterations++
		copy(res.X, x)
		res.F = -phi
		if opts.Logf != nil {
			opts.Logf("train: L-BFGS iteration %d: f = %.10g, |grad|∞ = %.3g, step %.3g", res.Iterations, res.F, normInf(g), t)
		}
		if opts.OnIteration != nil {
			opts.OnIteration(res.Iterations, res.F)
		}
		if improvement <= ftol*math.Max(1, math.Abs(phi)) {
			res.Reason = "function"
			return res, nil
		}
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
