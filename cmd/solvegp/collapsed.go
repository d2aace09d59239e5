package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
	"github.com/solvegp/solvegp/gp/train"
)

// collapsedOnly are train's flags that only -collapsed uses, and
// notCollapsed those of mini-batch training that it does not.
var (
	collapsedOnly = []string{"iters"}
	notCollapsed  = []string{"epochs", "steps", "batch", "lr", "decay", "decay-every", "natural", "natural-fresh",
		"patience", "checkpoint", "checkpoint-every", "plot", "whiten"}
)

// checkCollapsedFlags reports a flag given on the command line that does
// not go with -collapsed (or, without it, one that needs it).
func checkCollapsedFlags(fs *flag.FlagSet, spec *modelSpec, on bool) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !on {
		for _, name := range collapsedOnly {
			if set[name] {
				return fmt.Errorf("-%s needs -collapsed", name)
			}
		}
		return nil
	}
	for _, name := range notCollapsed {
		if set[name] {
			why := "it is for mini-batch training"
			if name == "whiten" {
				why = "the saved model is in the unwhitened parameterization"
			}
			return fmt.Errorf("-%s does not go with -collapsed (%s)", name, why)
		}
	}
	switch {
	case spec.lik != "gaussian":
		return fmt.Errorf("-collapsed needs the Gaussian likelihood, not -likelihood %s", spec.lik)
	case spec.kind == "odvgp":
		return errors.New("-collapsed has no ODVGP bound: use -model svgp (Titsias' SGPR bound) or solvegp (the collapsed SOLVE-GP bound)")
	}
	return nil
}

// collapsedRun is what train -collapsed works with.
type collapsedRun struct {
	spec           *modelSpec
	lik            *likelihood.Gaussian
	xs             *mat.Dense // standardized training inputs and targets
	ys             []float64
	xTrain, xValid *mat.Dense // raw training and validation rows
	yTrain, yValid []float64
	std            *data.Standardizer
	names          []string // column names, or nil
	args           []string
	out            string
	iters          int
	bound          collapsed.BoundKind
	blockSize      int // B of -bound blockdiag:B
	asJSON, quiet  bool
}

// trainCollapsed fits the collapsed bound (SGPR for -model svgp, SOLVE-GP
// otherwise) by L-BFGS on the whole training set and saves the equivalent
// gp model at the optimal q.
func trainCollapsed(ctx context.Context, r *collapsedRun, stdout, stderr io.Writer) int {
	var md *collapsed.Model
	if err := interruptible(ctx, func() error {
		k, z, o, err := r.spec.prior(r.xs)
		if err != nil {
			return err
		}
		_, d := r.xs.Dims()
		mf, err := r.spec.newMean(d, 1)
		if err != nil {
			return err
		}
		md, err = collapsed.New(k, r.lik, z, o, collapsed.Options{Threads: r.spec.threads, Mean: mf, Bound: r.bound, BlockSize: r.blockSize})
		return err
	}); err != nil {
		if ctx.Err() != nil {
			return notSaved(stderr, r.out, "while placing the inducing points")
		}
		return fail(stderr, "train", err)
	}
	n := len(r.ys)
	var bar *progress
	if !r.quiet {
		bar = newLBFGSProgress(stderr, r.iters)
	}
	start := time.Now()
	res, fitErr := md.Fit(ctx, r.xs, r.ys, train.LBFGSOptions{
		MaxIter:     r.iters,
		OnIteration: func(it int, f float64) { bar.update(it, 0, f, time.Since(start)) },
	})
	if res.Iterations > 0 {
		bar.final(res.Iterations, 0, res.Bound, time.Since(start))
	}
	bar.done()
	interrupted := ctx.Err() != nil
	switch {
	case interrupted && res.Iterations == 0:
		return notSaved(stderr, r.out, "before the first L-BFGS iteration")
	case fitErr != nil && !interrupted:
		return fail(stderr, "train", fitErr)
	}
	model, err := md.GPModel(r.xs, r.ys)
	if err != nil {
		return fail(stderr, "train", err)
	}
	bundle := newBundle(model, r.std, r.names)
	bundle.CollapsedBound, bundle.CollapsedBlockSize = r.bound.String(), r.blockSize
	stop := res.Reason
	if interrupted {
		stop = train.Canceled.String()
	}
	sum := trainSummary{
		Model: r.out, Kind: model.Kind().String(), M: r.spec.m, M2: r.spec.m2,
		NTrain: n, NValid: len(r.yValid), Steps: res.Iterations, Stop: stop, Interrupted: interrupted,
		Optimizer: "lbfgs", Evaluations: res.Evaluations, FailedEvals: res.Failed, History: []epochRecord{},
	}
	if b, err := fullBound(bundle, r.xTrain, r.yTrain); err == nil {
		sum.Bound = &b
	}
	if r.xValid != nil {
		if m, err := evaluate(bundle, r.xValid, r.yValid, false); err == nil {
			sum.Valid = &m
		}
	}
	bundle.Meta.Info = trainInfo(r.args, stop, sum.Bound, map[string]string{
		"optimizer":             "L-BFGS on the " + r.bound.String() + " collapsed bound",
		"iterations":            strconv.Itoa(res.Iterations),
		"collapsed_bound_value": strconv.FormatFloat(res.Bound, 'g', -1, 64),
	})
	if err := modelfile.Save(r.out, bundle); err != nil {
		return fail(stderr, "train", err)
	}
	sum.Seconds = time.Since(start).Seconds()
	if err := writeTrainSummary(stdout, &sum, r.asJSON); err != nil {
		return fail(stderr, "train", err)
	}
	if interrupted {
		fmt.Fprintf(stderr, "solvegp train: interrupted after %d L-BFGS iterations; saved the model at the best bound so far to %s\n", res.Iterations, r.out)
		return exitInterrupted
	}
	return exitOK
}
