package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/modelfile"
	"github.com/solvegp/solvegp/gp/train"
)

// streamRun holds the flags of a `solvegp train -stream` run.
type streamRun struct {
	fs               *flag.FlagSet
	spec             *modelSpec
	opts             data.Options
	buffer           int
	epochs, maxSteps int
	batch            int
	sched            train.Schedule
	natural          float64
	naturalFresh     bool
	out              string
	args             []string
	asJSON, quiet    bool
}

// streamSample is the number of rows sampled for k-means: enough for the
// inducing points, bounded so that k-means stays cheap.
func streamSample(m int) int { return max(10000, 20*m) }

// trainStream trains on data files read shard by shard each epoch
// (data.Stream): one pass for the row count, the standardization and a
// reservoir sample for k-means, then train.FitSource. Validation,
// checkpoints, -collapsed and -plot need the data in memory and are
// refused.
func trainStream(ctx context.Context, r *streamRun, stdout, stderr io.Writer) int {
	var bad []string
	r.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "valid", "patience", "checkpoint", "collapsed", "plot":
			bad = append(bad, "-"+f.Name)
		}
	})
	switch {
	case len(bad) > 0:
		return fail(stderr, "train", fmt.Errorf("%s cannot be used with -stream", strings.Join(bad, ", ")))
	case r.buffer < 1:
		return fail(stderr, "train", fmt.Errorf("-stream %d: the shuffle buffer needs at least one row", r.buffer))
	}
	spec := r.spec
	shards, err := data.OpenShards(r.fs.Args(), r.opts)
	if err != nil {
		return fail(stderr, "train", err)
	}
	sum, err := data.Summarize(shards, streamSample(spec.m+spec.m2), spec.seed)
	if err != nil {
		return fail(stderr, "train", err)
	}
	std := sum.Std
	if !spec.standardizesY() {
		std.YMean, std.YScale = 0, 1
	}
	spec.names = sum.Names
	lik, err := spec.likelihood(sum.SampleY)
	if err != nil {
		return fail(stderr, "train", err)
	}
	xs := mat.DenseCopyOf(sum.SampleX)
	if err := std.TransformX(xs); err != nil {
		return fail(stderr, "train", err)
	}
	model, err := spec.build(xs, lik)
	if err != nil {
		return fail(stderr, "train", err)
	}
	src, err := data.NewStream(shards, data.StreamOptions{Buffer: r.buffer, Seed: spec.seed, Std: std})
	if err != nil {
		return fail(stderr, "train", err)
	}
	bs := r.batch
	if bs == 0 || bs > sum.Rows {
		bs = sum.Rows
	}
	perEpoch := (sum.Rows + bs - 1) / bs
	total := r.epochs * perEpoch
	if r.maxSteps > 0 && (total == 0 || r.maxSteps < total) {
		total = r.maxSteps
	}
	var bar *progress
	if !r.quiet {
		bar = newProgress(stderr, total, max(r.epochs, (total+perEpoch-1)/perEpoch))
	}
	var running float64
	cfg := train.Config{Epochs: r.epochs, MaxSteps: r.maxSteps, BatchSize: r.batch, Schedule: r.sched, Seed: spec.seed,
		NaturalStep: r.natural, NaturalSharedGradient: r.natural > 0 && !r.naturalFresh,
		OnStep: func(s train.StepInfo) error {
			if s.Step == 1 {
				running = s.Objective
			}
			running = 0.95*running + 0.05*s.Objective
			bar.update(s.Step, s.Epoch, running, s.Elapsed)
			return nil
		},
		Logf: func(format string, args ...any) {
			bar.done()
			fmt.Fprintf(stderr, "solvegp train: "+format+"\n", args...)
		},
	}
	res, fitErr := train.FitSource(ctx, model, src, cfg)
	bar.done()
	interrupted := errors.Is(fitErr, context.Canceled) || errors.Is(fitErr, context.DeadlineExceeded)
	if res.Steps == 0 {
		if interrupted {
			return notSaved(stderr, r.out, "before the first training step")
		}
		if fitErr == nil {
			fitErr = errors.New("no training step succeeded")
		}
		return fail(stderr, "train", fmt.Errorf("%v; %s not written", fitErr, r.out))
	}
	bundle := newBundle(model, std, sum.Names)
	stop := stopReason(res.Reason, interrupted)
	bundle.Meta.Info = trainInfo(r.args, stop, nil, map[string]string{"steps": strconv.Itoa(res.Steps), "stream": "true"})
	if err := modelfile.Save(r.out, bundle); err != nil {
		return fail(stderr, "train", err)
	}
	s := trainSummary{Model: r.out, Kind: model.Kind().String(), M: spec.m, M2: spec.m2, NTrain: sum.Rows, Steps: res.Steps,
		Epochs: res.Epochs, Stop: stop, Interrupted: interrupted, Rejected: res.Rejected, Natural: r.natural,
		Seconds: res.Elapsed.Seconds()}
	if err := writeTrainSummary(stdout, &s, r.asJSON); err != nil {
		return fail(stderr, "train", err)
	}
	switch {
	case interrupted:
		fmt.Fprintf(stderr, "solvegp train: interrupted after %d steps; saved the last model to %s\n", res.Steps, r.out)
		return exitInterrupted
	case fitErr != nil:
		fmt.Fprintf(stderr, "solvegp train: %v\nsolvegp train: saved the last good parameters to %s\n", fitErr, r.out)
		return exitError
	}
	return exitOK
}
