package likelihood

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestParallelDeterminism checks that the chunked parallel evaluation gives
// bit-identical values and gradients whatever the number of goroutines.
func TestParallelDeterminism(t *testing.T) {
	const n, C = 700, 4
	b, _ := NewBernoulli()
	r, _ := NewRobustMax(C)
	s, _ := NewSoftmax(C, Samples(20))
	rng := rand.New(rand.NewPCG(3, 3))
	for _, l := range []lik{b, r, s} {
		L := l.NumLatent()
		y, mu, v := make([]float64, n), make([]float64, n*L), make([]float64, n*L)
		for i := range y {
			y[i] = float64(rng.IntN(2))
		}
		for i := range mu {
			mu[i], v[i] = rng.NormFloat64(), rng.Float64()
		}
		run := func(procs int) (float64, []float64, []float64, []float64) {
			old := runtime.GOMAXPROCS(procs)
			defer runtime.GOMAXPROCS(old)
			dmu, dvar := make([]float64, n*L), make([]float64, n*L)
			e := l.ExpectedLogLik(y, mu, v, dmu, dvar, nil, rand.New(rand.NewPCG(9, 9)))
			lp := make([]float64, n)
			l.LogPredictive(lp, y, mu, v, rand.New(rand.NewPCG(9, 9)))
			return e, dmu, dvar, lp
		}
		e1, m1, v1, p1 := run(1)
		e2, m2, v2, p2 := run(4)
		if e1 != e2 {
			t.Errorf("%T: value %v with 1 goroutine, %v with 4", l, e1, e2)
		}
		for i := range m1 {
			if m1[i] != m2[i] || v1[i] != v2[i] {
				t.Fatalf("%T: gradient %d differs between 1 and 4 goroutines", l, i)
			}
		}
		for i := range p1 {
			if p1[i] != p2[i] {
				t.Fatalf("%T: log predictive %d differs between 1 and 4 goroutines", l, i)
			}
		}
	}
}

// TestChunkSumWorkers checks that chunkSum keeps to its workers bound and
// that SetWorkers reaches the likelihoods' calls: with one worker no two
// chunks run at the same time.
func TestChunkSumWorkers(t *testing.T) {
	old := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(old)
	peak := func(workers int) int32 {
		var active, peak atomic.Int32
		chunkSum(64*pointChunk, 1<<30, workers, func() struct{} { return struct{}{} }, func(_ struct{}, _, _ int) float64 {
			a := active.Add(1)
			for {
				p := peak.Load()
				if a <= p || peak.CompareAndSwap(p, a) {
					break
				}
			}
			time.Sleep(200 * time.Microsecond)
			active.Add(-1)
			return 1
		})
		return peak.Load()
	}
	if p := peak(1); p != 1 {
		t.Errorf("workers 1: %d chunks at once", p)
	}
	if p := peak(2); p > 2 {
		t.Errorf("workers 2: %d chunks at once", p)
	}
	b, _ := NewBernoulli()
	r, _ := NewRobustMax(3)
	s, _ := NewSoftmax(3)
	for _, w := range []interface{ SetWorkers(int) }{b, r, s} {
		w.SetWorkers(1)
	}
	if b.workers != 1 || r.workers != 1 || s.workers != 1 {
		t.Errorf("SetWorkers(1) gave bounds %d, %d, %d", b.workers, r.workers, s.workers)
	}
}
