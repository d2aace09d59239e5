package collapsed

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/kernel"
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

// TestTightBoundHighSNR: with Z = X and a large signal-to-noise ratio,
// Q_ff ≈ K_ff and the Appendix A term T = tr(B⁻¹R)/(2σ⁴) is the trace of
// a nearly vanishing R. Formed as Ã·K_ff·Ãᵀ − G², R was all rounding,
// amplified by 1/σ⁴: the bound came out above the exact log marginal
// likelihood by nats (or T < 0, below Titsias' bound). It must stay
// between Titsias' bound and the exact value.
func TestTightBoundHighSNR(t *testing.T) {
	const n = 40
	rng := rand.New(rand.NewPCG(24, 24))
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range y {
		x.Set(i, 0, 6*rng.Float64()-3)
		y[i] = math.Sin(x.At(i, 0)) + 0.1*rng.NormFloat64()
	}
	for _, c := range []struct{ v, s float64 }{{1e4, 1e-4}, {1e6, 1e-2}, {1e4, 2e-6}} {
		k, err := kernel.NewRBF(1, 1, c.v)
		if err != nil {
			t.Fatal(err)
		}
		exact := logNormal(y, make([]float64, n), addDiag(kmat(k, x, x), c.s))
		var bounds [2]float64
		for i, tight := range []bool{false, true} {
			md, err := New(k, newNoise(t, c.s), x, nil, Options{Tight: tight})
			if err != nil {
				t.Fatal(err)
			}
			if bounds[i], err = md.Bound(x, y); err != nil {
				t.Fatal(err)
			}
		}
		titsias, tight := bounds[0], bounds[1]
		// The dense exact value is itself only accurate to about 1e-3.
		if tol := 1e-2; tight > exact+tol || tight < titsias-tol {
			t.Errorf("variance %g, noise %g: tight bound %.8g outside [Titsias %.8g, exact %.8g]", c.v, c.s, tight, titsias, exact)
		}
	}
}
