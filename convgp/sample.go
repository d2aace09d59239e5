package convgp

import (
	"math/rand/v2"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/internal/parallel"
)

// sampleChunk is the number of patch responses per unit of the parallel
// sampling of a hidden feature map: each chunk draws its standard normals
// from its own PCG stream, seeded by the evaluation's seed and the chunk
// index, so the draws do not depend on how many goroutines take part.
const sampleChunk = 1 << 12

// sampler holds the per-chunk random streams of one hidden layer; they are
// reseeded at every evaluation and reused, so sampling allocates nothing
// in steady state.
type sampler struct {
	pcg []rand.PCG
	rng []*rand.Rand
}

// streams returns n streams, the i-th seeded with (seed, i).
func (s *sampler) streams(n int, seed uint64) []*rand.Rand {
	if len(s.pcg) < n {
		s.pcg = make([]rand.PCG, n)
		s.rng = make([]*rand.Rand, n)
		for i := range s.rng {
			s.rng[i] = rand.New(&s.pcg[i])
		}
	}
	for i := 0; i < n; i++ {
		s.pcg[i].Seed(seed, uint64(i))
	}
	return s.rng[:n]
}

// sampleTask draws eps and sets f = μ + √v·eps (forward), or sets dmu and
// dvar to the gradients of the marginals given df (backward), chunk by
// chunk.
type sampleTask struct {
	backward       bool
	rng            []*rand.Rand
	f, mu, vr, eps []float64
	df, dmu, dvar  []float64
}

// Run handles chunk c.
func (t *sampleTask) Run(c int) {
	lo, hi := c*sampleChunk, min((c+1)*sampleChunk, len(t.eps))
	if t.backward {
		clear(t.dmu[lo:hi])
		clear(t.dvar[lo:hi])
		gp.SampleMarginalsGrad(t.dmu[lo:hi], t.dvar[lo:hi], t.df[lo:hi], t.vr[lo:hi], t.eps[lo:hi])
		return
	}
	r := t.rng[c]
	eps := t.eps[lo:hi]
	for j := range eps {
		eps[j] = r.NormFloat64()
	}
	gp.SampleMarginals(t.f[lo:hi], t.mu[lo:hi], t.vr[lo:hi], eps)
}

// sampleWorkers returns the goroutines a sampling pass of n values uses
// under the budget threads (≤ 0: GOMAXPROCS).
func sampleWorkers(threads, n int) int {
	return parallel.Workers(threads, (n+sampleChunk-1)/sampleChunk)
}

// sample draws one sample of the layer's feature map: eps ~ N(0, I) from
// streams seeded by seed, and f = μ + √v·eps, on up to threads goroutines.
func (l *hiddenLayer) sample(seed uint64, threads int) {
	n := len(l.eps)
	nc := (n + sampleChunk - 1) / sampleChunk
	t := &sampleTask{rng: l.smp.streams(nc, seed), f: l.f, mu: l.mu, vr: l.vr, eps: l.eps}
	parallel.For(nc, sampleWorkers(threads, n), t)
}

// sampleGrad sets l.dmu and l.dvr to the gradients of the sampled feature
// map's marginals given df, the gradient on the sample.
func (l *hiddenLayer) sampleGrad(df []float64, threads int) {
	n := len(l.eps)
	nc := (n + sampleChunk - 1) / sampleChunk
	t := &sampleTask{backward: true, vr: l.vr, eps: l.eps, df: df[:n], dmu: l.dmu, dvar: l.dvr}
	parallel.For(nc, sampleWorkers(threads, n), t)
}
