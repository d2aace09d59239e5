package exact

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/train"
)

// FitResult summarizes Model.Fit.
type FitResult struct {
	// LogMarginal is the best log marginal likelihood found (the model is
	// left at its parameters) and Initial the value at the starting
	// parameters.
	LogMarginal, Initial float64
	// Iterations, Evaluations and Failed count L-BFGS iterations,
	// evaluations of the log marginal likelihood and its gradient, and
	// evaluations that failed (for example a kernel matrix that could not
	// be factored), which the line search treats as a step too far.
	Iterations, Evaluations, Failed int
	// Reason is why L-BFGS stopped (see train.LBFGSResult).
	Reason string
	// Elapsed is the wall time of the fit and EvalTime the part of it spent
	// in the evaluations.
	Elapsed, EvalTime time.Duration
}

// Fit maximizes the log marginal likelihood of x, y over the model's flat
// parameters (minimizes its negative) with L-BFGS (train.MaximizeLBFGS; the
// defaults of train.LBFGSOptions apply) and leaves the model at the best
// parameters found. It returns an error if the log marginal likelihood
// cannot be evaluated at the starting parameters, or when ctx is canceled
// (the model then holds the best parameters found so far).
func (md *Model) Fit(ctx context.Context, x *mat.Dense, y []float64, opts train.LBFGSOptions) (FitResult, error) {
	start := time.Now()
	if _, err := md.checkData("Fit", x, y); err != nil {
		return FitResult{}, err
	}
	x0 := make([]float64, md.NumParams())
	md.Params(x0)
	evals := 0
	initial := math.NaN()
	var evalTime time.Duration
	f := func(p, grad []float64) (float64, error) {
		evals++
		if err := md.SetParams(p); err != nil {
			return 0, err
		}
		t0 := time.Now()
		v, err := md.LogMarginal(x, y, grad)
		evalTime += time.Since(t0)
		if evals == 1 {
			initial = v // the first evaluation is at x0
		}
		return v, err
	}
	r, err := train.MaximizeLBFGS(ctx, f, x0, opts)
	res := FitResult{
		LogMarginal: r.F, Initial: initial, Iterations: r.Iterations, Evaluations: r.Evaluations,
		Failed: r.Failed, Reason: r.Reason, EvalTime: evalTime,
	}
	if r.X != nil {
		if serr := md.SetParams(r.X); serr != nil && err == nil {
			err = serr
		}
	}
	res.Elapsed = time.Since(start)
	if err != nil {
		return res, fmt.Errorf("exact: Fit: %w", err)
	}
	return res, nil
}
