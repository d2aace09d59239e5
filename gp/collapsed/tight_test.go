package collapsed

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTightBound checks the Appendix A bound against a dense evaluation,
// that it is tighter than Titsias' bound, exact when Z = X, and that its
// gradients match finite differences (with K_ff blocks smaller than N).
func TestTightBound(t *testing.T) {
	x, y := toyData(33, 21)
	rng := rand.New(rand.NewPCG(22, 22))
	z := randMat(rng, 5, 2, 1)
	k := newKernel(t, 0.9, 1.1)
	s := 0.04
	kuu, kuf, kff := kmat(k, z, z), kmat(k, z, x), kmat(k, x, x)
	q := mul(kuf.T(), mul(inv(kuu), kuf))
	a := addDiag(q, s)
	want := logNormal(y, make([]float64, len(y)), a) - 0.5*trace(mul(inv(a), sub(kff, q)))
	sgpr := denseSGPR(k, s, z, x, y)
	for _, chunk := range []int{0, 10} {
		md, err := New(k, newNoise(t, s), z, nil, Options{Tight: true, ChunkSize: chunk})
		if err != nil {
			t.Fatal(err)
		}
		got, err := md.Bound(x, y)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("chunk %d: tight bound %v, dense %v", chunk, got, want)
		}
		if !(got > sgpr) {
			t.Errorf("tight bound %v not above SGPR %v", got, sgpr)
		}
		checkGrad(t, md, x, y)
	}
	md, _ := New(k, newNoise(t, s), x, nil, Options{Tight: true})
	got, _ := md.Bound(x, y)
	exact := logNormal(y, make([]float64, len(y)), addDiag(kff, s))
	if math.Abs(got-exact) > 1e-8*math.Abs(exact) {
		t.Errorf("tight bound with Z = X: %v, exact %v", got, exact)
	}
	if _, err := New(k, newNoise(t, s), z, z, Options{Tight: true}); err == nil {
		t.Error("tight bound with O accepted")
	}
}
