package convgp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/solvegp/solvegp/gp"
)

// TestSampleThreads checks the chunked sampling of a hidden feature map:
// the draws and the sample are the same bit for bit on 1 and 3 goroutines,
// change with the seed, and the sample is μ + √v·eps; the gradient pass
// matches gp.SampleMarginalsGrad on cleared buffers, also when the layer's
// buffers are reused.
func TestSampleThreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	n := 3*sampleChunk + 17
	layer := func() *hiddenLayer {
		l := &hiddenLayer{mu: make([]float64, n), vr: make([]float64, n), eps: make([]float64, n), f: make([]float64, n),
			dmu: make([]float64, n), dvr: make([]float64, n)}
		r := rand.New(rand.NewPCG(43, 44))
		for i := range l.mu {
			l.mu[i], l.vr[i] = r.NormFloat64(), r.Float64()
		}
		return l
	}
	a, b := layer(), layer()
	a.sample(7, 1)
	b.sample(7, 3)
	for i := range a.eps {
		if math.Float64bits(a.eps[i]) != math.Float64bits(b.eps[i]) || math.Float64bits(a.f[i]) != math.Float64bits(b.f[i]) {
			t.Fatalf("value %d: eps %v, f %v on one goroutine; %v, %v on three", i, a.eps[i], a.f[i], b.eps[i], b.f[i])
		}
		if want := a.mu[i] + math.Sqrt(a.vr[i])*a.eps[i]; math.Abs(a.f[i]-want) > 1e-15*(1+math.Abs(want)) {
			t.Fatalf("value %d: f = %v, want %v", i, a.f[i], want)
		}
	}
	b.sample(8, 3)
	same := 0
	for i := range a.eps {
		if a.eps[i] == b.eps[i] {
			same++
		}
	}
	if same > 0 {
		t.Errorf("seeds 7 and 8 share %d draws", same)
	}
	df := make([]float64, n)
	for i := range df {
		df[i] = rng.NormFloat64()
	}
	wantMu, wantVar := make([]float64, n), make([]float64, n)
	gp.SampleMarginalsGrad(wantMu, wantVar, df, a.vr, a.eps)
	for pass := 0; pass < 2; pass++ {
		a.sampleGrad(df, 2)
		for i := range wantMu {
			if math.Float64bits(a.dmu[i]) != math.Float64bits(wantMu[i]) || math.Float64bits(a.dvr[i]) != math.Float64bits(wantVar[i]) {
				t.Fatalf("pass %d, value %d: gradients %v, %v, want %v, %v", pass, i, a.dmu[i], a.dvr[i], wantMu[i], wantVar[i])
			}
		}
	}
}
