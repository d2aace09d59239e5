package likelihood

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkExpectedLogLik times the expected log-likelihood with all
// gradients for one minibatch of N = 1024 points (the step benchmarks' batch size).
func BenchmarkExpectedLogLik(b *testing.B) {
	const n = 1024
	g, _ := NewGaussian(0.1)
	be, _ := NewBernoulli()
	po, _ := NewPoisson()
	rm, _ := NewRobustMax(10)
	sm, _ := NewSoftmax(10)
	for _, c := range []struct {
		name string
		l    lik
	}{{"Gaussian", g}, {"Bernoulli", be}, {"Poisson", po}, {"RobustMax/C=10", rm}, {"Softmax/C=10/S=100", sm}} {
		L := c.l.NumLatent()
		rng := rand.New(rand.NewPCG(1, 2))
		y, mu, v := make([]float64, n), make([]float64, n*L), make([]float64, n*L)
		for i := range y {
			switch c.name {
			case "Gaussian":
				y[i] = rng.NormFloat64()
			case "Bernoulli":
				y[i] = float64(rng.IntN(2))
			case "Poisson":
				y[i] = float64(rng.IntN(10))
			default:
				y[i] = float64(rng.IntN(L))
			}
		}
		for i := range mu {
			mu[i] = rng.NormFloat64()
			v[i] = 0.1 + rng.Float64()
		}
		dmu, dvar := make([]float64, n*L), make([]float64, n*L)
		dp := make([]float64, c.l.NumParams())
		b.Run(fmt.Sprintf("%s/N=%d", c.name, n), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := processCPUTime()
			for i := 0; i < b.N; i++ {
				c.l.ExpectedLogLik(y, mu, v, dmu, dvar, dp, rng)
			}
			b.ReportMetric(float64(processCPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
