package collapsed_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/transform"
)

// whitenQ maps q = N(mu, s) to the whitened coordinates of the prior
// covariance p = L·Lᵀ: N(L⁻¹·mu, L⁻¹·s·L⁻ᵀ).
func whitenQ(t *testing.T, p *mat.SymDense, mu []float64, s *mat.SymDense) ([]float64, *mat.SymDense) {
	t.Helper()
	var c mat.Cholesky
	if !c.Factorize(p) {
		t.Fatal("prior covariance not positive definite")
	}
	var l mat.TriDense
	c.LTo(&l)
	n := len(mu)
	var li mat.Dense
	if err := li.Inverse(&l); err != nil {
		t.Fatal(err)
	}
	var m mat.VecDense
	m.MulVec(&li, mat.NewVecDense(n, append([]float64(nil), mu...)))
	var tmp, w mat.Dense
	tmp.Mul(&li, s)
	w.Mul(&tmp, li.T())
	ws := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			ws.SetSym(i, j, 0.5*(w.At(i, j)+w.At(j, i)))
		}
	}
	return m.RawVector().Data, ws
}

// kSym returns k(a, a) as a SymDense.
func kSym(k gp.Kernel, a *mat.Dense) *mat.SymDense {
	n, _ := a.Dims()
	var km mat.Dense
	km.ReuseAs(n, n)
	k.Matrix(&km, a, a)
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			s.SetSym(i, j, km.At(i, j))
		}
	}
	return s
}

// cvvOf returns C_vv = K_vv − K_vu·K_uu⁻¹·K_uv.
func cvvOf(t *testing.T, k gp.Kernel, z, o *mat.Dense) *mat.SymDense {
	t.Helper()
	m, _ := z.Dims()
	m2, _ := o.Dims()
	kuv := mat.NewDense(m, m2, nil)
	k.Matrix(kuv, z, o)
	var kinv mat.Dense
	if err := kinv.Inverse(kSym(k, z)); err != nil {
		t.Fatal(err)
	}
	var tmp, q mat.Dense
	tmp.Mul(&kinv, kuv)
	q.Mul(kuv.T(), &tmp)
	c := kSym(k, o)
	for i := 0; i < m2; i++ {
		for j := 0; j <= i; j++ {
			c.SetSym(i, j, c.At(i, j)-0.5*(q.At(i, j)+q.At(j, i)))
		}
	}
	return c
}

// exactLML returns log N(y | 0, K_ff + σ²I) formed densely.
func exactLML(t *testing.T, k gp.Kernel, s2 float64, x *mat.Dense, y []float64) float64 {
	t.Helper()
	c := kSym(k, x)
	n := len(y)
	for i := 0; i < n; i++ {
		c.SetSym(i, i, c.At(i, i)+s2)
	}
	var ch mat.Cholesky
	if !ch.Factorize(c) {
		t.Fatal("K + σ²I not positive definite")
	}
	var a mat.VecDense
	yv := mat.NewVecDense(n, append([]float64(nil), y...))
	if err := ch.SolveVecTo(&a, yv); err != nil {
		t.Fatal(err)
	}
	return -0.5*mat.Dot(yv, &a) - 0.5*ch.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
}

// setQWhitened writes q(u) and q(v⊥), given in the whitened coordinates,
// into a whitened model's parameters (the packing of setQ).
func setQWhitened(t *testing.T, mod *gp.Model, mu []float64, su *mat.SymDense, mv []float64, sv *mat.SymDense) {
	t.Helper()
	p := make([]float64, mod.NumParams())
	mod.Params(p)
	lay := mod.Layout()
	pack := func(off int, s *mat.SymDense) {
		var c mat.Cholesky
		if !c.Factorize(s) {
			t.Fatal("covariance not positive definite")
		}
		var l mat.TriDense
		c.LTo(&l)
		n := s.SymmetricDim()
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				v := l.At(i, j)
				if i == j {
					v = transform.InvSoftplus(v)
				}
				p[off+i*(i+1)/2+j] = v
			}
		}
	}
	copy(p[lay.MU[0]:], mu)
	pack(lay.LU[0], su)
	if mv != nil {
		copy(p[lay.MV[0]:], mv)
		pack(lay.LV[0], sv)
	}
	if err := mod.SetParams(p); err != nil {
		t.Fatal(err)
	}
}

// TestUncollapsedTighterAtOptimalQ checks package gp's uncollapsed tighter
// bound (gp.WithBound(gp.TighterBound)), whitened and not, for SVGP and
// SOLVE-GP: at the optimal q of package collapsed it equals the collapsed
// tighter bound, at a perturbed q it is lower, and at the optimal q
// standard ≤ tighter ≤ the exact log marginal likelihood.
func TestUncollapsedTighterAtOptimalQ(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 41))
	const n, s2 = 50, 0.04
	x, y, z, o := planeData(rng, n, 6, 4)
	for _, withO := range []bool{false, true} {
		for _, whiten := range []bool{false, true} {
			k, _ := kernel.NewRBF(2, 0.9, 1.2)
			lik, _ := likelihood.NewGaussian(s2)
			var oo *mat.Dense
			if withO {
				oo = o
			}
			nj := chol.NoJitter()
			var cb [2]float64
			for i, b := range []collapsed.BoundKind{collapsed.Standard, collapsed.Tighter} {
				cm, err := collapsed.New(k, lik, z, oo, collapsed.Options{Bound: b, Jitter: &nj})
				if err != nil {
					t.Fatal(err)
				}
				if cb[i], err = cm.Bound(x, y); err != nil {
					t.Fatal(err)
				}
			}
			cm, _ := collapsed.New(k, lik, z, oo, collapsed.Options{Jitter: &nj})
			mu, su, mv, sv, err := cm.OptimalQ(x, y)
			if err != nil {
				t.Fatal(err)
			}
			if whiten {
				mu, su = whitenQ(t, kSym(k, z), mu, su)
				if withO {
					mv, sv = whitenQ(t, cvvOf(t, k, z, o), mv, sv)
				}
			}
			var ub [2]float64
			for i, b := range []gp.BoundKind{gp.StandardBound, gp.TighterBound} {
				opts := []gp.Option{gp.WithWhitening(whiten), gp.WithBound(b), gp.WithKuuJitter(nj), gp.WithCvvJitter(nj)}
				var mod *gp.Model
				if withO {
					mod, err = gp.NewSOLVEGP(k, lik, z, o, opts...)
				} else {
					mod, err = gp.NewSVGP(k, lik, z, opts...)
				}
				if err != nil {
					t.Fatal(err)
				}
				setQWhitened(t, mod, mu, su, mv, sv)
				if ub[i], err = mod.Objective(x, y, n, nil); err != nil {
					t.Fatal(err)
				}
				if b == gp.TighterBound {
					mu2 := append([]float64(nil), mu...)
					mu2[0] += 0.05
					setQWhitened(t, mod, mu2, su, mv, sv)
					v, err := mod.Objective(x, y, n, nil)
					if err != nil {
						t.Fatal(err)
					}
					if !(v < ub[i]) {
						t.Errorf("O=%v whiten=%v: tighter bound at a perturbed q %v not below %v", withO, whiten, v, ub[i])
					}
				}
			}
			exact := exactLML(t, k, s2, x, y)
			t.Logf("O=%v whiten=%v: standard %.10f (collapsed %.10f), tighter %.10f (collapsed %.10f), exact %.10f",
				withO, whiten, ub[0], cb[0], ub[1], cb[1], exact)
			for i := range ub {
				if math.Abs(ub[i]-cb[i]) > 1e-8*math.Abs(cb[i]) {
					t.Errorf("O=%v whiten=%v bound %d: uncollapsed %.12g at the optimal q, collapsed %.12g", withO, whiten, i, ub[i], cb[i])
				}
			}
			if !(ub[0] < ub[1] && ub[1] < exact) {
				t.Errorf("O=%v whiten=%v: want standard %v < tighter %v < exact %v", withO, whiten, ub[0], ub[1], exact)
			}
		}
	}
}
