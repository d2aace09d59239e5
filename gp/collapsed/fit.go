package collapsed

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
	// Bound is the best bound found (the model is left at its parameters)
	// and Initial the bound at the starting parameters.
	Bound, Initial float64
	// Iterations, Evaluations and Failed count L-BFGS iterations, bound
	// evaluations, and evaluations that failed (for example a kernel
	// matrix that could not be factorized), which the line search treats
	// as a step too far.
	Iterations, Evaluations, Failed int
	// Reason is why L-BFGS stopped (see train.LBFGSResult).
	Reason  string
	Elapsed time.Duration
}

// Fit maximizes the collapsed bound on x, y over the model's flat
// parameters with L-BFGS (train.MaximizeLBFGS; opts.GradTol defaults to
// 1e-6 and opts.FuncTol to 1e-10 relative) and leaves the model at the
// best parameters found. It returns an error if the bound cannot be
// evaluated at the starting parameters, or when ctx is canceled (the model
// then holds the best parameters found so far).
//
// gonum's optimize package was the first choice, but it imports
// gonum/stat/distmv and through it golang.org/x/tools, which is not among
// this module's dependencies; train.MaximizeLBFGS is a small in-module
// L-BFGS with a line search that tolerates failed evaluations.
func (md *Model) Fit(ctx context.Context, x *mat.Dense, y []float64, opts train.LBFGSOptions) (FitResult, error) {
	start := time.Now()
	x0 := make([]float64, md.NumParams())
	md.Params(x0)
	evals := 0
	initial := math.NaN()
	f := func(p, grad []float64) (float64, error) {
		evals++
		if err := md.SetParams(p); err != nil {
			return 0, err
		}
		v, err := md.BoundGrad(x, y, grad)
		if evals == 1 {
			initial = v // the first evaluation is at x0
		}
		return v, err
	}
	r, err := train.MaximizeLBFGS(ctx, f, x0, opts)
	res := FitResult{Bound: r.F, Initial: initial, Iterations: r.Iterations, Evaluations: r.Evaluations, Failed: r.Failed, Reason: r.Reason}
	if serr := md.SetParams(r.X); serr != nil && err == nil {
		err = serr
	}
	res.Elapsed = time.Since(start)
	if err != nil {
		return res, fmt.Errorf("collapsed: Fit: %w", err)
	}
	return res, nil
}
