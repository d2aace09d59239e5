package collapsed

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/kernel"
)

// residualDiag returns dₙ = k(xₙ,xₙ) − [K_fw·K_ww⁻¹·K_wf]ₙₙ densely.
func residualDiag(k kernel.Kernel, w, x *mat.Dense) []float64 {
	kwf := kmat(k, w, x)
	q := mul(kwf.T(), mul(inv(kmat(k, w, w)), kwf))
	kff := kmat(k, x, x)
	n, _ := x.Dims()
	d := make([]float64, n)
	for i := range d {
		d[i] = kff.At(i, i) - q.At(i, i)
	}
	return d
}

// tighterGap is Σ [dₙ/(2σ²) − ½·log(1 + dₙ/σ²)], Tighter minus Standard.
func tighterGap(d []float64, s float64) float64 {
	var g float64
	for _, v := range d {
		g += v/(2*s) - 0.5*math.Log1p(v/s)
	}
	return g
}

func stackRows(a, b *mat.Dense) *mat.Dense {
	var w mat.Dense
	w.Stack(a, b)
	return &w
}

func bounds(t *testing.T, k kernel.Kernel, s float64, z, o, x *mat.Dense, y []float64, chunk int) (std, tighter float64) {
	t.Helper()
	for _, b := range []BoundKind{Standard, Tighter} {
		md, err := New(k, newNoise(t, s), z, o, Options{Bound: b, ChunkSize: chunk})
		if err != nil {
			t.Fatal(err)
		}
		f, err := md.Bound(x, y)
		if err != nil {
			t.Fatal(err)
		}
		if b == Standard {
			std = f
		} else {
			tighter = f
		}
	}
	return std, tighter
}

// TestTighterSGPRMatchesDense checks the Tighter SGPR bound against
// log N(y | 0, Q_ff + σ²I) − ½·Σ log(1 + dₙ/σ²) formed densely, the order
// Standard ≤ Tighter ≤ exact, and equality with the exact log marginal
// likelihood when Z = X.
func TestTighterSGPRMatchesDense(t *testing.T) {
	x, y := toyData(35, 31)
	rng := rand.New(rand.NewPCG(31, 31))
	z := randMat(rng, 6, 2, 1)
	k := newKernel(t, 0.7, 1.4)
	for _, s := range []float64{0.01, 0.1, 1} {
		kuf := kmat(k, z, x)
		q := mul(kuf.T(), mul(inv(kmat(k, z, z)), kuf))
		var logs float64
		for _, d := range residualDiag(k, z, x) {
			logs += math.Log1p(d / s)
		}
		want := logNormal(y, make([]float64, len(y)), addDiag(q, s)) - 0.5*logs
		exact := logNormal(y, make([]float64, len(y)), addDiag(kmat(k, x, x), s))
		for _, chunk := range []int{0, 8} {
			std, got := bounds(t, k, s, z, nil, x, y, chunk)
			if math.Abs(got-want) > 1e-9*math.Abs(want) {
				t.Errorf("noise %g chunk %d: Tighter %v, dense %v", s, chunk, got, want)
			}
			if !(std < got && got < exact) {
				t.Errorf("noise %g: want Standard %v < Tighter %v < exact %v", s, std, got, exact)
			}
		}
		std, got := bounds(t, k, s, x, nil, x, y, 0)
		if math.Abs(got-exact) > 1e-7*math.Abs(exact) || math.Abs(std-exact) > 1e-7*math.Abs(exact) {
			t.Errorf("noise %g, Z = X: Tighter %v, Standard %v, exact %v", s, got, std, exact)
		}
	}
}

// TestTighterSolveGP checks the collapsed SOLVE-GP Tighter bound: it is
// the Standard bound plus Σ [dₙ/(2σ²) − ½·log(1 + dₙ/σ²)] with dₙ the
// residual after Z and O together, it lies between Standard and the exact
// log marginal likelihood, and with O far from the data (so that O
// contributes nothing) it equals the Tighter SGPR bound on Z.
func TestTighterSolveGP(t *testing.T) {
	x, y := toyData(36, 32)
	rng := rand.New(rand.NewPCG(32, 32))
	z := randMat(rng, 4, 2, 1)
	o := randMat(rng, 5, 2, 1)
	k := newKernel(t, 0.8, 1.2)
	for _, s := range []float64{0.02, 0.3} {
		exact := logNormal(y, make([]float64, len(y)), addDiag(kmat(k, x, x), s))
		for _, chunk := range []int{0, 9} {
			std, got := bounds(t, k, s, z, o, x, y, chunk)
			want := std + tighterGap(residualDiag(k, stackRows(z, o), x), s)
			if math.Abs(got-want) > 1e-9*math.Abs(want) {
				t.Errorf("noise %g chunk %d: Tighter %v, Standard + gap %v", s, chunk, got, want)
			}
			if !(std < got && got < exact) {
				t.Errorf("noise %g: want Standard %v < Tighter %v < exact %v", s, std, got, exact)
			}
		}
		far := mat.NewDense(3, 2, []float64{60, 60, 70, -60, -80, 65})
		_, solve := bounds(t, k, s, z, far, x, y, 0)
		_, sgpr := bounds(t, k, s, z, nil, x, y, 0)
		if math.Abs(solve-sgpr) > 1e-10*math.Abs(sgpr) {
			t.Errorf("noise %g: SOLVE-GP with a far O %v, SGPR on Z %v", s, solve, sgpr)
		}
	}
}

// TestTighterGradients checks every gradient entry (kernel, noise, Z, O)
// of the Tighter bound against central finite differences.
func TestTighterGradients(t *testing.T) {
	x, y := toyData(30, 33)
	rng := rand.New(rand.NewPCG(33, 33))
	z := randMat(rng, 4, 2, 1)
	o := randMat(rng, 3, 2, 1)
	for _, c := range []struct {
		name  string
		o     *mat.Dense
		chunk int
		s     float64
	}{{"SGPR", nil, 0, 0.05}, {"SGPR chunked", nil, 8, 0.05}, {"SGPR small noise", nil, 0, 0.003},
		{"SOLVE-GP", o, 0, 0.05}, {"SOLVE-GP chunked", o, 7, 0.2}} {
		t.Run(c.name, func(t *testing.T) {
			md, err := New(newKernel(t, 0.9, 1.2), newNoise(t, c.s), z, c.o, Options{Bound: Tighter, ChunkSize: c.chunk})
			if err != nil {
				t.Fatal(err)
			}
			checkGrad(t, md, x, y)
		})
	}
	k, _ := kernel.NewMatern32(2, 1.1, 0.8)
	md, err := New(k, newNoise(t, 0.2), z, o, Options{Bound: Tighter, FixInducing: true})
	if err != nil {
		t.Fatal(err)
	}
	checkGrad(t, md, x, y)
}

// TestTighterOptions checks ParseBound, String and the rejected options.
func TestTighterOptions(t *testing.T) {
	for _, b := range []BoundKind{Standard, Tighter} {
		if got, err := ParseBound(b.String()); err != nil || got != b {
			t.Errorf("ParseBound(%q) = %v, %v", b.String(), got, err)
		}
	}
	if _, err := ParseBound("tight"); err == nil {
		t.Error("ParseBound accepted \"tight\"")
	}
	k := newKernel(t, 1, 1)
	z := mat.NewDense(2, 2, []float64{0, 0, 1, 1})
	if _, err := New(k, newNoise(t, 0.1), z, nil, Options{Bound: Tighter, Tight: true}); err == nil {
		t.Error("Tight with Tighter accepted")
	}
	if _, err := New(k, newNoise(t, 0.1), z, nil, Options{Bound: BoundKind(7)}); err == nil {
		t.Error("unknown bound accepted")
	}
}
