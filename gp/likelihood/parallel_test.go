package likelihood

import (
	"math/rand/v2"
	"runtime"
	"testing"
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
