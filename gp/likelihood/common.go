package likelihood

import (
	"fmt"
	"sync/atomic"

	"github.com/solvegp/solvegp/internal/parallel"
)

// errZeroValue is the error Validate returns for the zero value of a
// likelihood type that needs its constructor.
func errZeroValue(typ, ctor string) error {
	return fmt.Errorf("likelihood: the zero value of %s is not usable; make one with %s", typ, ctor)
}

// checkLens panics unless y has n entries and mu and variance have n*l.
// It returns n.
func checkLens(y, mu, variance []float64, l int) int {
	n := len(y)
	if len(mu) != n*l || len(variance) != n*l {
		panic(fmt.Sprintf("likelihood: %d labels with %d latent functions need mu and variance of length %d, have %d and %d",
			n, l, n*l, len(mu), len(variance)))
	}
	return n
}

// checkGradLens panics unless dmu and dvar are both nil or both of length
// want.
func checkGradLens(dmu, dvar []float64, want int) {
	if (dmu == nil) != (dvar == nil) {
		panic("likelihood: dmu and dvar must both be nil or both be non-nil")
	}
	if dmu != nil && (len(dmu) != want || len(dvar) != want) {
		panic(fmt.Sprintf("likelihood: dmu and dvar have lengths %d and %d, want %d", len(dmu), len(dvar), want))
	}
}

// checkParamLen panics unless dparams is nil or has length want.
func checkParamLen(dparams []float64, want int) {
	if dparams != nil && len(dparams) != want {
		panic(fmt.Sprintf("likelihood: dparams has length %d, want %d", len(dparams), want))
	}
}

// pointChunk is the number of data points per unit of parallel work.
const pointChunk = 64

// parallelMinWork is the estimated work (in elementary function
// evaluations) below which a likelihood runs on the calling goroutine.
const parallelMinWork = 1 << 14

// chunkSum calls fn(scratch, i0, i1) for consecutive ranges [i0, i1) of
// [0, n) of pointChunk points, on up to workers goroutines (≤ 0: GOMAXPROCS) of the
// parallel worker pool, each with its own scratch from newScratch, and
// returns the sum of fn's results added in chunk order. The chunking and the order of the additions do not
// depend on the number of goroutines, so results are bit-for-bit
// reproducible. work estimates the total cost; small calls run inline.
func chunkSum[S any](n, work, workers int, newScratch func() S, fn func(s S, i0, i1 int) float64) float64 {
	nc := (n + pointChunk - 1) / pointChunk
	workers = parallel.Workers(workers, nc)
	if work < parallelMinWork || workers <= 1 {
		s := newScratch()
		total := 0.0
		for c := 0; c < nc; c++ {
			total += fn(s, c*pointChunk, min((c+1)*pointChunk, n))
		}
		return total
	}
	task := &chunkSumTask[S]{n: n, nc: nc, newScratch: newScratch, fn: fn, part: make([]float64, nc)}
	parallel.For(workers, workers, task)
	total := 0.0
	for _, v := range task.part {
		total += v
	}
	return total
}

// chunkSumTask is the parallel section of chunkSum: each of its iterations
// takes chunks from a shared counter with a scratch of its own, created
// once it has a chunk to work on.
type chunkSumTask[S any] struct {
	n, nc      int
	next       atomic.Int64
	newScratch func() S
	fn         func(s S, i0, i1 int) float64
	part       []float64
}

// Run works through chunks until none is left.
func (t *chunkSumTask[S]) Run(int) {
	var s S
	first := true
	for {
		c := int(t.next.Add(1) - 1)
		if c >= t.nc {
			return
		}
		if first {
			s, first = t.newScratch(), false
		}
		t.part[c] = t.fn(s, c*pointChunk, min((c+1)*pointChunk, t.n))
	}
}

// workerBound is embedded in the likelihoods that spread a call over
// goroutines; it holds their SetWorkers bound.
type workerBound struct{ workers int }

// SetWorkers bounds the goroutines one call of the likelihood uses to n
// (n ≤ 0, the default: GOMAXPROCS). Results do not depend on it. A gp.Model
// built with gp.WithThreads sets it to its own budget.
func (w *workerBound) SetWorkers(n int) { w.workers = n }

// LabelError is the error Validate returns for a target the likelihood
// cannot take (a Bernoulli label other than 0 or 1, a negative or
// fractional Poisson count, a class label outside [0, C)). It gives the
// target's index in the slice passed to Validate, so that a caller that
// read the targets from a file can name the line.
type LabelError struct {
	Index int     // 0-based index of the target
	Value float64 // the target
	Rule  string  // what the likelihood requires, e.g. "Bernoulli labels must be 0 or 1"
}

// Error names the target and the rule it breaks.
func (e *LabelError) Error() string {
	return fmt.Sprintf("likelihood: label %d is %g: %s", e.Index, e.Value, e.Rule)
}
