package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/modelfile"
	"github.com/solvegp/solvegp/gp/train"
)

// streamSample is the number of rows sampled for k-means: enough for the
// inducing points, bounded so that k-means stays cheap.
func streamSample(m int) int { return max(10000, 20*m) }

// errStreamCollapsed says why -collapsed does not go with -stream.
var errStreamCollapsed = errors.New("-collapsed cannot be used with -stream: every L-BFGS iteration of the collapsed bound needs " +
	"the gradient through all rows' covariances with Z and O, which streamed would be two passes over the files per " +
	"iteration (up to -iters of them); train with -stream alone, or fit -collapsed on a sample that fits in memory")

// streamData is a trainSet of files read shard by shard each epoch: the
// training side is a data.Stream, the validation side (with -valid) the
// rows data.HoldOut holds out of the same files, read in batches at each
// validation.
type streamData struct {
	src    *data.Stream
	sum    *data.Summary
	files  []data.Shard
	valid  []data.Shard // nil without -valid
	buffer int
	nv     int // validation rows seen by the last validation pass
}

func (s *streamData) nTrain() int    { return s.sum.Rows }
func (s *streamData) nValid() int    { return s.nv }
func (s *streamData) hasValid() bool { return s.valid != nil }

func (s *streamData) fit(ctx context.Context, m train.Model, cfg train.Config) (train.Result, error) {
	return train.FitSource(ctx, m, s.src, cfg)
}

func (s *streamData) trainBound(*modelfile.Bundle) (float64, bool, error) { return 0, false, nil }

// fingerprint hashes the training flags, the shuffle buffer and the
// streamed data as the summary pass saw them: the file names, the row
// count, the means and scales and the k-means sample, which depend on
// every value of every training row.
func (s *streamData) fingerprint(fs *flag.FlagSet) [32]byte {
	h := sha256.New()
	for _, f := range trainingFlags(fs) {
		fmt.Fprintf(h, "%q\n", f)
	}
	fmt.Fprintf(h, "stream=%d\n", s.buffer)
	for _, sh := range s.files {
		fmt.Fprintf(h, "%q\n", sh.Name())
	}
	var buf [8]byte
	put := func(vs ...float64) {
		for _, v := range vs {
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(v))
			h.Write(buf[:])
		}
	}
	sum := s.sum
	put(float64(sum.Rows), float64(sum.Dim), sum.Std.YMean, sum.Std.YScale)
	put(sum.Std.XMean...)
	put(sum.Std.XScale...)
	if sum.SampleX != nil {
		put(sum.SampleX.RawMatrix().Data...)
	}
	put(sum.SampleY...)
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// validMetrics scores b on the held-out rows in one pass over the files.
func (s *streamData) validMetrics(b *modelfile.Bundle) (metrics, bool, error) {
	if s.valid == nil {
		return metrics{}, false, nil
	}
	m, err := streamEvaluate(b, s.valid)
	if err == nil {
		s.nv = m.N
	}
	return m, true, err
}

// streamEvaluate computes evaluate's metrics of b on the rows of shards,
// read in batches of boundBatch rows: the mean log predictive density,
// RMSE and accuracy are combined from the batches' as sums over rows.
func streamEvaluate(b *modelfile.Bundle, shards []data.Shard) (metrics, error) {
	var tot metrics
	var ll, se, acc float64
	err := data.ReadShards(shards, boundBatch, func(x *mat.Dense, y []float64) error {
		m, err := evaluate(b, x, y, false)
		if err != nil {
			return err
		}
		n := float64(m.N)
		tot.N += m.N
		ll += n * m.LogLik
		if m.RMSE != nil {
			se += n * *m.RMSE * *m.RMSE
			tot.RMSE = ptr(0)
		}
		if m.Accuracy != nil {
			acc += n * *m.Accuracy
			tot.Accuracy = ptr(0)
		}
		tot.RMSEStd, tot.LogLikStd = m.RMSEStd, m.LogLikStd
		return nil
	})
	if err != nil {
		return tot, err
	}
	n := float64(tot.N)
	tot.LogLik = ll / n
	if tot.RMSE != nil {
		*tot.RMSE = math.Sqrt(se / n)
	}
	if tot.Accuracy != nil {
		*tot.Accuracy = acc / n
	}
	if s := b.Standardizer; tot.RMSEStd != nil && s != nil {
		tot.RMSEStd, tot.LogLikStd = ptr(*tot.RMSE/s.YScale), ptr(tot.LogLik-s.LogDensityOffset())
	}
	return tot, nil
}

// trainStream trains on data files read shard by shard each epoch
// (data.Stream): with -valid a fraction of the rows is held out
// (data.HoldOut), then one pass over the training rows gives their count,
// the standardization and a reservoir sample for k-means (the Stream
// trusts that count rather than reading the files again), and
// train.FitSource trains with the checkpoints, validation and curves of a
// run in memory.
func trainStream(ctx context.Context, f *trainFlags, opts data.Options, args []string, stdout, stderr io.Writer) int {
	if f.stream < 1 {
		fmt.Fprintf(stderr, "solvegp train: -stream %d: the shuffle buffer needs at least one row\n", f.stream)
		return exitUsage
	}
	spec := &f.spec
	d := &streamData{buffer: f.stream}
	shards, err := data.OpenShards(f.fs.Args(), opts)
	if err != nil {
		return fail(stderr, "train", err)
	}
	d.files = shards
	if f.validFrac > 0 {
		if shards, d.valid, err = data.HoldOut(shards, f.validFrac, spec.seed); err != nil {
			return fail(stderr, "train", err)
		}
	}
	sum, err := data.Summarize(shards, streamSample(spec.m+spec.m2), spec.seed)
	if err != nil {
		return fail(stderr, "train", err)
	}
	if sum.Rows < spec.m+spec.m2 {
		return fail(stderr, "train", fmt.Errorf("%d training rows, fewer than the %d inducing points asked for (-m %d, -m2 %d)", sum.Rows, spec.m+spec.m2, spec.m, spec.m2))
	}
	d.sum = sum
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
	if d.src, err = data.NewStream(shards, data.StreamOptions{Buffer: f.stream, Seed: spec.seed, Std: std, Rows: sum.Rows, Dim: sum.Dim}); err != nil {
		return fail(stderr, "train", err)
	}
	r := &trainRun{ctx: ctx, f: f, d: d, extra: map[string]string{"stream": "true"}, stderr: stderr, model: model,
		kind: model.Kind().String(), bundle: newBundle(model, std, sum.Names), lastSaved: -1}
	if err := r.loadCheckpoint(); err != nil {
		return fail(stderr, "train", err)
	}
	return r.fit(args, stdout)
}
