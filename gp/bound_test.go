package gp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
)

// tightCase is a model of the tighter-bound tests: its kind, whether it is
// whitened, its column sample (ODVGP) and its column chunk (chunks.go; 0
// chooses, > 0 forces).
type tightCase struct {
	kind          Kind
	whiten        bool
	sample, chunk int
}

func (c tightCase) String() string {
	return fmt.Sprintf("%v/whiten=%v/sample=%d/chunk=%d", c.kind, c.whiten, c.sample, c.chunk)
}

func tightCases() []tightCase {
	var cs []tightCase
	for _, k := range []Kind{SVGP, ODVGP, SOLVEGP} {
		for _, w := range []bool{false, true} {
			cs = append(cs, tightCase{kind: k, whiten: w})
		}
	}
	return append(cs, tightCase{kind: ODVGP, whiten: true, sample: 2},
		tightCase{kind: SOLVEGP, chunk: 4}, tightCase{kind: SVGP, whiten: true, chunk: 4})
}

// buildTight makes a model of case c with the given bound, a Gaussian
// likelihood of noise variance s2 and random, non-prior q.
func buildTight(t testing.TB, c tightCase, b BoundKind, s2 float64, seed uint64, d, m, m2 int) *Model {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	k := newRefRBF(d, 1.3, 0.9, 1.2, 1.1)
	z := randDense(rng, m, d, -2, 2)
	o := randDense(rng, m2, d, -2, 2)
	opts := []Option{WithWhitening(c.whiten), WithKuuJitter(chol.NoJitter()), WithCvvJitter(chol.NoJitter()), WithBound(b)}
	if c.sample > 0 {
		opts = append(opts, WithColumnSample(c.sample))
	}
	mod, err := newOfKind(c.kind, k, &refGauss{logVar: math.Log(s2)}, z, o, opts...)
	if err != nil {
		t.Fatal(err)
	}
	mod.cfg.colChunk = c.chunk
	perturbQ(mod, rng, 0.3)
	return mod
}

func tightData(seed uint64, n, d int) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 9))
	x := randDense(rng, n, d, -2.5, 2.5)
	y := make([]float64, n)
	for i := range y {
		y[i] = math.Sin(2*x.At(i, 0)) + 0.2*rng.NormFloat64()
	}
	return x, y
}

// TestTighterGradient checks every entry of the tighter bound's gradient
// (kernel, noise, Z, O, q(u), q(v⊥)) against central finite differences,
// for a mini-batch (nTotal > n) and the full batch.
func TestTighterGradient(t *testing.T) {
	for _, c := range tightCases() {
		for _, nTotal := range []int{8, 30} {
			t.Run(fmt.Sprintf("%v/nTotal=%d", c, nTotal), func(t *testing.T) {
				mod := buildTight(t, c, TighterBound, 0.2, 1, 2, 4, 3)
				x, y := tightData(2, 8, 2)
				idx := make([]int, mod.NumParams())
				for i := range idx {
					idx[i] = i
				}
				checkGrad(t, mod, x, y, nTotal, idx, 2e-6)
			})
		}
	}
}

// residualDense returns k(xₙ,xₙ) − [K_fw·K_ww⁻¹·K_wf]ₙₙ formed densely.
func residualDense(k Kernel, w, x *mat.Dense) []float64 {
	kwf := kmat(k, w, x)
	q := mul(kwf.T(), inv(kmat(k, w, w)), kwf)
	n, _ := x.Dims()
	d := make([]float64, n)
	kd := make([]float64, n)
	k.Diag(kd, x)
	for i := range d {
		d[i] = kd[i] - q.At(i, i)
	}
	return d
}

// TestTighterMinusStandard checks that, at the same parameters, the
// tighter bound exceeds the standard one by exactly
// (N/B)·Σₙ [dₙ/(2σ²) − ½·log(1 + dₙ/σ²)], with dₙ formed densely as the
// residual after Z (SVGP, ODVGP) or after Z and O (SOLVE-GP).
func TestTighterMinusStandard(t *testing.T) {
	const s2 = 0.05
	for _, c := range tightCases() {
		t.Run(c.String(), func(t *testing.T) {
			x, y := tightData(3, 12, 2)
			var f [2]float64
			var mod *Model
			for i, b := range []BoundKind{StandardBound, TighterBound} {
				mod = buildTight(t, c, b, s2, 4, 2, 4, 3)
				mod.resetRNG()
				v, err := mod.Objective(x, y, 50, nil)
				if err != nil {
					t.Fatal(err)
				}
				f[i] = v
			}
			w := mod.z
			if c.kind == SOLVEGP {
				w = stack(mod.z, mod.o)
			}
			var gap float64
			for _, d := range residualDense(mod.kern, w, x) {
				gap += d/(2*s2) - 0.5*math.Log1p(d/s2)
			}
			gap *= 50.0 / 12
			if got := f[1] - f[0]; math.Abs(got-gap) > 1e-9*math.Max(1, math.Abs(f[0])) || !(gap > 0) {
				t.Errorf("tighter − standard = %.12g, want %.12g (> 0)", got, gap)
			}
			tm := mod.LastTerms()
			if want := tm.Scale*(tm.ExpLogLik+tm.Tighter) - tm.KLU - tm.KLV; math.Abs(tm.Bound-want) > 1e-12*math.Abs(want) || tm.Tighter >= 0 {
				t.Errorf("terms %+v do not add up to the bound", tm)
			}
		})
	}
}

// TestTighterUnbiased checks that the mini-batch estimate is unbiased: the
// mean of the estimates over the batches of a partition of the data equals
// the full-batch bound.
func TestTighterUnbiased(t *testing.T) {
	for _, c := range tightCases() {
		if c.sample > 0 {
			continue // the column sample adds its own noise to the KL term
		}
		t.Run(c.String(), func(t *testing.T) {
			mod := buildTight(t, c, TighterBound, 0.1, 5, 2, 4, 3)
			const n, b = 24, 6
			x, y := tightData(6, n, 2)
			full, err := mod.Objective(x, y, n, nil)
			if err != nil {
				t.Fatal(err)
			}
			var mean float64
			for lo := 0; lo < n; lo += b {
				v, err := mod.Objective(x.Slice(lo, lo+b, 0, 2).(*mat.Dense), y[lo:lo+b], n, nil)
				if err != nil {
					t.Fatal(err)
				}
				mean += v / (n / b)
			}
			if math.Abs(mean-full) > 1e-10*math.Abs(full) {
				t.Errorf("mean over the batches %.12g, full batch %.12g", mean, full)
			}
		})
	}
}

// setMeans sets the variational means of the orthogonal block to zero and,
// for SOLVE-GP, q(v⊥) to its prior (L_v = I whitened, chol(C_vv) not).
func setOrthPrior(t *testing.T, mod *Model) {
	t.Helper()
	th := make([]float64, mod.NumParams())
	mod.Params(th)
	lay := mod.layout
	clear(th[lay.MV[0] : lay.MV[0]+mod.m2])
	if mod.kind == SOLVEGP {
		var l []float64
		if mod.whiten {
			l = make([]float64, mod.m2*mod.m2)
			for i := 0; i < mod.m2; i++ {
				l[i*mod.m2+i] = 1
			}
		} else {
			s, err := mod.snapshot(nil)
			if err != nil {
				t.Fatal(err)
			}
			l = s.l0v
		}
		packTri(th[lay.LV[0]:], mod.m2, l)
	}
	if err := mod.SetParams(th); err != nil {
		t.Fatal(err)
	}
}

// TestTighterOrthogonalReduces checks the orthogonal models against SVGP
// with the same Z and q(u) when their orthogonal block is at its prior:
// ODVGP's tighter bound then equals SVGP's; SOLVE-GP's equals it when O is
// far from the data (C_vf ≈ 0), and otherwise falls short of it by
// Σₙ [cₙ/(2σ²) + ½log(1 + dₙ/σ²) − ½log(1 + (cₙ + dₙ)/σ²)] ≥ 0, cₙ the
// part of the residual after Z that O explains and dₙ the rest: q(v⊥) = p(v⊥)
// does not shrink cₙ, only the conditional's scale shrinks dₙ.
func TestTighterOrthogonalReduces(t *testing.T) {
	const s2 = 0.1
	x, y := tightData(8, 10, 2)
	for _, whiten := range []bool{false, true} {
		sv := buildTight(t, tightCase{kind: SVGP, whiten: whiten}, TighterBound, s2, 9, 2, 4, 3)
		want, err := sv.Objective(x, y, 40, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []Kind{ODVGP, SOLVEGP} {
			for _, far := range []bool{false, true} {
				mod := buildTight(t, tightCase{kind: kind, whiten: whiten}, TighterBound, s2, 9, 2, 4, 3)
				th := make([]float64, mod.NumParams())
				mod.Params(th)
				// The same q(u) as the SVGP model (its parameters sit after O).
				svth := make([]float64, sv.NumParams())
				sv.Params(svth)
				copy(th[mod.layout.MU[0]:mod.layout.LU[0]+4*5/2], svth[sv.layout.MU[0]:])
				if far {
					for i := 0; i < mod.m2*mod.dz; i++ {
						th[mod.layout.O+i] = 40 + float64(i)
					}
				}
				if err := mod.SetParams(th); err != nil {
					t.Fatal(err)
				}
				setOrthPrior(t, mod)
				got, err := mod.Objective(x, y, 40, nil)
				if err != nil {
					t.Fatal(err)
				}
				exp := want
				if kind == SOLVEGP && !far {
					dz := residualDense(mod.kern, mod.z, x)
					dw := residualDense(mod.kern, stack(mod.z, mod.o), x)
					var gap float64
					for i := range dz {
						c, d := dz[i]-dw[i], dw[i]
						gap += c/(2*s2) + 0.5*math.Log1p(d/s2) - 0.5*math.Log1p((c+d)/s2)
					}
					exp -= 40.0 / 10 * gap
					if !(gap > 1e-6) {
						t.Errorf("whiten=%v: SOLVE-GP's shortfall %g not positive", whiten, gap)
					}
				}
				if math.Abs(got-exp) > 1e-9*math.Abs(exp) {
					t.Errorf("whiten=%v %v far=%v: bound %.12g, want %.12g (SVGP %.12g)", whiten, kind, far, got, exp, want)
				}
			}
		}
	}
}

// TestTighterSameMarginals checks that the bound changes neither Forward
// nor predictions.
func TestTighterSameMarginals(t *testing.T) {
	x, _ := tightData(10, 7, 2)
	for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
		var mus, vrs [2][]float64
		for i, b := range []BoundKind{StandardBound, TighterBound} {
			mod := buildTight(t, tightCase{kind: kind}, b, 0.1, 11, 2, 4, 3)
			mus[i], vrs[i] = make([]float64, 7), make([]float64, 7)
			if _, _, err := mod.Forward(x, mus[i], vrs[i]); err != nil {
				t.Fatal(err)
			}
			if mod.Bound() != b {
				t.Errorf("Bound() = %v, want %v", mod.Bound(), b)
			}
		}
		for n := range mus[0] {
			if mus[0][n] != mus[1][n] || vrs[0][n] != vrs[1][n] {
				t.Errorf("%v: marginals differ at %d", kind, n)
			}
		}
	}
}

func TestBoundOptions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	z := randDense(rng, 3, 2, -1, 1)
	k := newRefRBF(2, 1, 1, 1)
	if _, err := NewSVGP(k, refPoisson{}, z, WithBound(TighterBound)); !errors.Is(err, ErrValue) {
		t.Errorf("tighter bound with a Poisson likelihood: error %v, want ErrValue", err)
	}
	if _, err := NewSVGP(k, &refGauss{}, z, WithBound(BoundKind(5))); !errors.Is(err, ErrValue) {
		t.Errorf("bound 5: error %v, want ErrValue", err)
	}
	for _, b := range []BoundKind{StandardBound, TighterBound} {
		got, err := ParseBound(b.String())
		if err != nil || got != b {
			t.Errorf("ParseBound(%q) = %v, %v", b.String(), got, err)
		}
	}
	if _, err := ParseBound("loose"); !errors.Is(err, ErrValue) {
		t.Errorf("ParseBound(loose): error %v, want ErrValue", err)
	}
	if s := BoundKind(5).String(); s != "BoundKind(5)" {
		t.Errorf("String() = %q", s)
	}
}
