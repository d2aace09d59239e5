package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/internal/floats"
	"github.com/solvegp/solvegp/internal/nilcheck"
)

// Source supplies the training rows to FitSource one epoch at a time, so
// that the data set never has to be held in memory. Each epoch visits
// every one of the Len rows exactly once, in an order the Source chooses
// (package gp/data's Stream shuffles shards and a bounded buffer of rows
// from a seed). FitSource calls Open at the start of every epoch, then
// Read until it has drawn Len rows.
type Source interface {
	// Len returns the number of rows of one epoch.
	Len() int
	// Dim returns the number of input columns.
	Dim() int
	// Open starts epoch (0-based), discarding any epoch in progress. The
	// order of an epoch's rows must depend only on the epoch number (and
	// the Source's own configuration, such as a seed), so that a resumed
	// run draws the same mini-batches.
	Open(epoch int) error
	// Read copies up to len(y) rows of the epoch into x (row-major,
	// len(y)·Dim values) and their targets into y, and returns how many it
	// copied; it returns 0 and io.EOF once the epoch's rows are used up.
	Read(x, y []float64) (int, error)
}

// FitSource is Fit on a Source: the same optimizer, back-off, validation,
// callbacks and checkpoints (Config.Resume skips the rows of the resumed
// epoch's earlier mini-batches by reading them), but the mini-batches are
// the consecutive rows of each epoch of src instead of a permutation of an
// in-memory matrix, and Config.Seed plays no part in their order (the
// Source has its own seed). The objective is scaled to src.Len() rows.
//
// The data cannot be checked before training: each mini-batch is checked
// when it is drawn (finite inputs and targets, and DataValidator on the
// batch), and a bad one, a failed Read, or an epoch with fewer or more rows
// than Len ends the run with an error (Reason Failed) that says so; the
// model then holds the last parameters whose objective was finite.
func FitSource(ctx context.Context, m Model, src Source, cfg Config) (Result, error) {
	if nilcheck.IsNil(src) {
		return Result{Objective: math.NaN(), RateScale: 1, BestEpoch: -1, BestScore: math.NaN()}, errors.New("train: FitSource: nil source")
	}
	f := &fitter{ctx: ctx, m: m, src: src, cfg: cfg,
		res: Result{Objective: math.NaN(), RateScale: 1, BestEpoch: -1, BestScore: math.NaN()}}
	if err := f.check(); err != nil {
		return f.res, err
	}
	f.defaults()
	if err := f.setup(); err != nil {
		return f.res, err
	}
	return f.run()
}

// checkSource takes the source's shape in place of the data checks of Fit.
func (f *fitter) checkSource() error {
	if f.w != 1 {
		return fmt.Errorf("train: FitSource: a model of %d outputs needs several targets per row, which a Source does not read", f.w)
	}
	f.n, f.d = f.src.Len(), f.src.Dim()
	if f.n <= 0 || f.d <= 0 {
		return fmt.Errorf("train: FitSource: source has %d rows of %d columns", f.n, f.d)
	}
	return nil
}

// openEpoch starts the source's epoch and skips the rows of the
// mini-batches a resumed epoch already drew.
func (f *fitter) openEpoch(epoch, skipRows int) error {
	if err := f.src.Open(epoch); err != nil {
		return fmt.Errorf("train: FitSource: epoch %d: %w", epoch, err)
	}
	f.drawn = 0
	for skipRows > 0 {
		b := min(skipRows, f.batch)
		if err := f.readBatch(epoch, b); err != nil {
			return err
		}
		skipRows -= b
	}
	return nil
}

// readBatch reads the next b rows of the epoch into xb and yb and checks
// them.
func (f *fitter) readBatch(epoch, b int) error {
	xs, ys := f.xb.RawMatrix().Data[:b*f.d], f.yb[:b]
	for got := 0; got < b; {
		k, err := f.src.Read(xs[got*f.d:], ys[got:])
		got += k
		if err == io.EOF || err == nil && k == 0 {
			if got < b {
				return fmt.Errorf("train: FitSource: epoch %d ended after %d rows, the source's Len is %d", epoch, f.drawn+got, f.n)
			}
			break
		}
		if err != nil {
			return fmt.Errorf("train: FitSource: epoch %d, row %d: %w", epoch, f.drawn+got, err)
		}
	}
	if i := floats.FirstNonFinite(xs); i >= 0 {
		return fmt.Errorf("train: FitSource: epoch %d: input row %d of the epoch holds %v", epoch, f.drawn+i/f.d, xs[i])
	}
	if i := floats.FirstNonFinite(ys); i >= 0 {
		return fmt.Errorf("train: FitSource: epoch %d: target of row %d of the epoch is %v", epoch, f.drawn+i, ys[i])
	}
	if v, ok := f.m.(DataValidator); ok {
		if err := v.ValidateData(f.xb.Slice(0, b, 0, f.d).(*mat.Dense), ys); err != nil {
			return fmt.Errorf("train: FitSource: epoch %d, rows %d to %d: %w", epoch, f.drawn, f.drawn+b-1, err)
		}
	}
	f.drawn += b
	return nil
}

// closeEpoch checks that the source has no rows beyond Len left in the
// epoch just drawn.
func (f *fitter) closeEpoch(epoch int) error {
	if f.drawn < f.n {
		return nil // the step limit ended the epoch early
	}
	var x = make([]float64, f.d)
	var y [1]float64
	k, err := f.src.Read(x, y[:])
	if k > 0 {
		return fmt.Errorf("train: FitSource: epoch %d has more rows than the source's Len %d", epoch, f.n)
	}
	if err != nil && err != io.EOF {
		return fmt.Errorf("train: FitSource: epoch %d, row %d: %w", epoch, f.drawn, err)
	}
	return nil
}

// badBatch ends the run on a mini-batch that could not be drawn. The
// parameters of the last step were never evaluated and the batch buffer
// holds the bad rows, so the model goes back to the last parameters whose
// objective was finite (unless a validated best is kept).
func (f *fitter) badBatch(err error) *ending {
	f.lastB = 0
	if f.haveGood {
		copy(f.params, f.good)
	}
	return f.end(Failed, err)
}
