package likelihood

import (
	"math/rand/v2"
	"testing"

	"github.com/solvegp/solvegp/internal/floats"
)

// TestClone checks that a likelihood's Clone predicts the same values to
// the bit and is independent of the original: setting the original's
// parameters or goroutine budget leaves the copy unchanged.
func TestClone(t *testing.T) {
	g, _ := NewGaussian(0.3)
	b, _ := NewBernoulli()
	p, _ := NewPoisson()
	r, _ := NewRobustMax(3)
	s, _ := NewSoftmax(3, Samples(20))
	st, _ := NewStudentT(0.4, 3)
	h, _ := NewHeteroscedastic()
	for name, l := range map[string]lik{"gaussian": g, "bernoulli": b, "poisson": p, "robustmax": r, "softmax": s, "studentt": st, "heteroscedastic": h} {
		c, ok := l.(interface{ Clone() any }).Clone().(lik)
		if !ok || c == l {
			t.Fatalf("%s: Clone did not return another likelihood", name)
		}
		const n = 4
		L := l.NumLatent()
		mu, v, y := make([]float64, n*L), make([]float64, n*L), make([]float64, n)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range mu {
			mu[i], v[i] = rng.NormFloat64(), 0.1+rng.Float64()
		}
		for i := range y {
			y[i] = float64(i % 2)
		}
		outputs := func(l lik) []float64 {
			m, vr, lp := make([]float64, n*L), make([]float64, n*L), make([]float64, n)
			l.PredictY(m, vr, mu, v, rand.New(rand.NewPCG(3, 4)))
			l.LogPredictive(lp, y, mu, v, rand.New(rand.NewPCG(3, 4)))
			return append(append(m, vr...), lp...)
		}
		want := outputs(l)
		if got := outputs(c); !floats.EqualBits(got, want) {
			t.Errorf("%s: the copy predicts %v, the original %v", name, got, want)
		}
		old := make([]float64, l.NumParams())
		l.Params(old)
		th := make([]float64, len(old))
		for i := range th {
			th[i] = old[i] + 0.5
		}
		if err := l.SetParams(th); err != nil {
			t.Fatal(err)
		}
		if w, ok := l.(interface{ SetWorkers(int) }); ok {
			w.SetWorkers(1)
		}
		got := make([]float64, len(old))
		c.Params(got)
		if !floats.EqualBits(got, old) || !floats.EqualBits(outputs(c), want) {
			t.Errorf("%s: changing the original changed the copy", name)
		}
	}
}
