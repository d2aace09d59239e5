package gp

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
)

func approx(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// setQ writes the dense mean m and lower factor l (m×m) of latent 0's q(u)
// (or q(v⊥) when v is true) into the model's parameters.
func setQ(t testing.TB, mod *Model, v bool, mean []float64, l *mat.Dense) {
	t.Helper()
	th := make([]float64, mod.NumParams())
	mod.Params(th)
	n, _ := l.Dims()
	mo, lo := mod.layout.MU[0], mod.layout.LU[0]
	if v {
		mo, lo = mod.layout.MV[0], mod.layout.LV[0]
	}
	copy(th[mo:mo+len(mean)], mean)
	if l != nil && lo >= 0 {
		packTri(th[lo:], n, l.RawMatrix().Data)
	}
	if err := mod.SetParams(th); err != nil {
		t.Fatal(err)
	}
}

// getQ returns latent 0's mean and dense factor of q(u) (or q(v⊥)).
func getQ(mod *Model, v bool) ([]float64, *mat.Dense) {
	n := mod.m
	mo, lo := mod.layout.MU[0], mod.layout.LU[0]
	if v {
		n = mod.m2
		mo, lo = mod.layout.MV[0], mod.layout.LV[0]
	}
	mean := append([]float64(nil), mod.theta[mo:mo+n]...)
	if lo < 0 {
		return mean, nil
	}
	l := mat.NewDense(n, n, nil)
	unpackTri(1, l.RawMatrix().Data, n, mod.theta[lo:])
	return mean, l
}

func noJit() []Option {
	return []Option{WithKuuJitter(chol.NoJitter()), WithCvvJitter(chol.NoJitter())}
}

func problem(seed uint64, n, d int) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	x := randDense(rng, n, d, -3, 3)
	y := make([]float64, n)
	for i := range y {
		y[i] = math.Sin(x.At(i, 0)) + 0.3*rng.NormFloat64()
	}
	return x, y
}

func bound(t testing.TB, mod *Model, x *mat.Dense, y []float64, nTotal int) float64 {
	t.Helper()
	f, err := mod.Objective(x, y, nTotal, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSOLVEPriorEqualsSVGP: with q(v⊥) = p⊥(v⊥) the SOLVE-GP bound is the
// SVGP bound.
func TestSOLVEPriorEqualsSVGP(t *testing.T) {
	for _, w := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(7, 8))
		x, y := problem(1, 25, 2)
		z := randDense(rng, 6, 2, -3, 3)
		o := randDense(rng, 5, 2, -3, 3)
		opts := append(noJit(), WithWhitening(w))
		sv, err := NewSVGP(newRefRBF(2, 1.1, 0.8, 1.3), &refGauss{logVar: math.Log(0.2)}, z, opts...)
		if err != nil {
			t.Fatal(err)
		}
		so, err := NewSOLVEGP(newRefRBF(2, 1.1, 0.8, 1.3), &refGauss{logVar: math.Log(0.2)}, z, o, opts...)
		if err != nil {
			t.Fatal(err)
		}
		perturbQ(sv, rng, 0.3)
		mu, lu := getQ(sv, false)
		setQ(t, so, false, mu, lu)
		a, b := bound(t, sv, x, y, 100), bound(t, so, x, y, 100)
		if !approx(a, b, 1e-10) {
			t.Errorf("whiten=%v: SVGP %v, SOLVE-GP with prior q(v) %v", w, a, b)
		}
		if kl := so.LastTerms().KLV; math.Abs(kl) > 1e-10 {
			t.Errorf("KL_v at the prior = %g", kl)
		}
	}
}

// bruteCvv returns C_vv = K_vv − K_vu K_uu⁻¹ K_uv.
func bruteCvv(k Kernel, z, o *mat.Dense) *mat.Dense {
	kvv := kmat(k, o, o)
	kvu := kmat(k, o, z)
	var c mat.Dense
	c.Sub(kvv, mul(kvu, inv(kmat(k, z, z)), kvu.T()))
	return &c
}

// TestODVGPEqualsSOLVE: SOLVE-GP with S_v = C_vv and m_v = C_vv·a equals
// ODVGP with mean parameter a.
func TestODVGPEqualsSOLVE(t *testing.T) {
	for _, w := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(9, 10))
		x, y := problem(2, 30, 2)
		z := randDense(rng, 6, 2, -3, 3)
		o := randDense(rng, 5, 2, -3, 3)
		opts := append(noJit(), WithWhitening(w))
		od, err := NewODVGP(newRefRBF(2, 1.1, 0.8, 1.3), &refGauss{logVar: math.Log(0.2)}, z, o, opts...)
		if err != nil {
			t.Fatal(err)
		}
		so, err := NewSOLVEGP(newRefRBF(2, 1.1, 0.8, 1.3), &refGauss{logVar: math.Log(0.2)}, z, o, opts...)
		if err != nil {
			t.Fatal(err)
		}
		perturbQ(od, rng, 0.5)
		mu, lu := getQ(od, false)
		setQ(t, so, false, mu, lu)
		a, _ := getQ(od, true)
		cvv := bruteCvv(od.kern, z, o)
		var mv mat.VecDense
		mv.MulVec(cvv, mat.NewVecDense(len(a), a))
		l0v := cholLower(cvv)
		if w {
			// m_v′ = L0v⁻¹·m_v = L0vᵀ·a, S_v′ = I.
			var mw mat.VecDense
			mw.MulVec(l0v.T(), mat.NewVecDense(len(a), a))
			eye := mat.NewDense(5, 5, nil)
			for i := 0; i < 5; i++ {
				eye.Set(i, i, 1)
			}
			setQ(t, so, true, mw.RawVector().Data, eye)
		} else {
			setQ(t, so, true, mv.RawVector().Data, l0v)
		}
		b1, b2 := bound(t, od, x, y, 90), bound(t, so, x, y, 90)
		if !approx(b1, b2, 1e-9) {
			t.Errorf("whiten=%v: ODVGP %v, SOLVE-GP with S_v = C_vv %v", w, b1, b2)
		}
		p1, _ := od.Predictor(4)
		p2, _ := so.Predictor(0)
		xt, _ := problem(3, 9, 2)
		m1, v1, _ := p1.PredictF(xt)
		m2, v2, _ := p2.PredictF(xt)
		if !mat.EqualApprox(m1, m2, 1e-9) || !mat.EqualApprox(v1, v2, 1e-9) {
			t.Errorf("whiten=%v: ODVGP and SOLVE-GP predictions differ", w)
		}
	}
}

// titsias returns the collapsed bound (eq. 4) and the optimal q(u).
func titsias(k Kernel, s2 float64, z, x *mat.Dense, y []float64) (float64, []float64, *mat.Dense) {
	n, _ := x.Dims()
	kuu := kmat(k, z, z)
	kuf := kmat(k, z, x)
	kuuInv := inv(kuu)
	qff := mul(kuf.T(), kuuInv, kuf)
	cov := mat.NewSymDense(n, nil)
	var tr float64
	kd := make([]float64, n)
	k.Diag(kd, x)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := 0.5 * (qff.At(i, j) + qff.At(j, i))
			if i == j {
				v += s2
				tr += kd[i] - qff.At(i, i)
			}
			cov.SetSym(i, j, v)
		}
	}
	var c mat.Cholesky
	c.Factorize(cov)
	yv := mat.NewVecDense(n, y)
	var sol mat.VecDense
	c.SolveVecTo(&sol, yv)
	ll := -0.5*mat.Dot(yv, &sol) - 0.5*c.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
	b := ll - tr/(2*s2)
	// Optimal q(u): Σ = (Kuu + σ⁻²KufKfu)⁻¹, m = σ⁻²KuuΣKuf y, S = KuuΣKuu.
	var a mat.Dense
	a.Mul(kuf, kuf.T())
	a.Scale(1/s2, &a)
	a.Add(&a, kuu)
	sig := inv(&a)
	var kfy mat.VecDense
	kfy.MulVec(kuf, yv)
	var mvec mat.VecDense
	mvec.MulVec(mul(kuu, sig), &kfy)
	mvec.ScaleVec(1/s2, &mvec)
	sm := mul(kuu, sig, kuu)
	return b, mvec.RawVector().Data, cholLower(sm)
}

// TestTitsiasCollapsed: SVGP with the optimal q(u) equals Titsias' bound,
// and with Z = X it equals the exact log marginal likelihood.
func TestTitsiasCollapsed(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	x, y := problem(4, 20, 2)
	s2 := 0.15
	for _, exact := range []bool{false, true} {
		z := randDense(rng, 7, 2, -3, 3)
		if exact {
			z = mat.DenseCopyOf(x)
		}
		k := newRefRBF(2, 1.0, 1.1, 0.9)
		sv, err := NewSVGP(k, &refGauss{logVar: math.Log(s2)}, z, noJit()...)
		if err != nil {
			t.Fatal(err)
		}
		want, m, l := titsias(k, s2, z, x, y)
		setQ(t, sv, false, m, l)
		got := bound(t, sv, x, y, 20)
		if !approx(got, want, 1e-8) {
			t.Errorf("exact=%v: SVGP bound at optimal q(u) %v, collapsed bound %v", exact, got, want)
		}
		if exact {
			// Exact GP: log N(y | 0, K + σ²I).
			kff := kmat(k, x, x)
			n := len(y)
			cov := mat.NewSymDense(n, nil)
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					v := kff.At(i, j)
					if i == j {
						v += s2
					}
					cov.SetSym(i, j, v)
				}
			}
			var c mat.Cholesky
			c.Factorize(cov)
			var sol mat.VecDense
			yv := mat.NewVecDense(n, y)
			c.SolveVecTo(&sol, yv)
			lml := -0.5*mat.Dot(yv, &sol) - 0.5*c.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
			if !approx(got, lml, 1e-7) {
				t.Errorf("Z = X: bound %v, exact log marginal likelihood %v", got, lml)
			}
		}
	}
}

// TestWhitenedEqualsUnwhitened: the same q in both parameterizations gives
// the same bound and predictions.
func TestWhitenedEqualsUnwhitened(t *testing.T) {
	for _, kind := range []Kind{SVGP, SOLVEGP} {
		rng := rand.New(rand.NewPCG(13, 14))
		x, y := problem(5, 22, 2)
		z := randDense(rng, 6, 2, -3, 3)
		o := randDense(rng, 4, 2, -3, 3)
		mk := func(w bool) *Model {
			k := newRefRBF(2, 1.2, 0.9, 1.1)
			var mod *Model
			var err error
			if kind == SVGP {
				mod, err = NewSVGP(k, &refGauss{logVar: math.Log(0.3)}, z, append(noJit(), WithWhitening(w))...)
			} else {
				mod, err = NewSOLVEGP(k, &refGauss{logVar: math.Log(0.3)}, z, o, append(noJit(), WithWhitening(w))...)
			}
			if err != nil {
				t.Fatal(err)
			}
			return mod
		}
		un, wh := mk(false), mk(true)
		perturbQ(un, rng, 0.4)
		l0u := cholLower(kmat(un.kern, z, z))
		conv := func(l0 *mat.Dense, m []float64, l *mat.Dense) ([]float64, *mat.Dense) {
			li := inv(l0)
			var mv mat.VecDense
			mv.MulVec(li, mat.NewVecDense(len(m), m))
			return mv.RawVector().Data, mul(li, l)
		}
		m, l := getQ(un, false)
		mw, lw := conv(l0u, m, l)
		setQ(t, wh, false, mw, lw)
		if kind == SOLVEGP {
			l0v := cholLower(bruteCvv(un.kern, z, o))
			m, l := getQ(un, true)
			mw, lw := conv(l0v, m, l)
			setQ(t, wh, true, mw, lw)
		}
		a, b := bound(t, un, x, y, 50), bound(t, wh, x, y, 50)
		if !approx(a, b, 1e-9) {
			t.Errorf("%v: unwhitened %v, whitened %v", kind, a, b)
		}
		ta, tb := un.LastTerms(), wh.LastTerms()
		if !approx(ta.KLU, tb.KLU, 1e-9) || !approx(ta.KLV, tb.KLV, 1e-9) {
			t.Errorf("%v: KL terms differ: %+v vs %+v", kind, ta, tb)
		}
	}
}

// TestStructuredCovariance: SOLVE-GP equals an SVGP on Z ∪ O whose q(u, v)
// has the structured mean and covariance of Section 3.3.
func TestStructuredCovariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	x, y := problem(6, 24, 2)
	z := randDense(rng, 5, 2, -3, 3)
	o := randDense(rng, 4, 2, -3, 3)
	so, err := NewSOLVEGP(newRefRBF(2, 1.2, 0.9, 1.1), &refGauss{logVar: math.Log(0.3)}, z, o, noJit()...)
	if err != nil {
		t.Fatal(err)
	}
	perturbQ(so, rng, 0.4)
	zo := stack(z, o)
	sv, err := NewSVGP(newRefRBF(2, 1.2, 0.9, 1.1), &refGauss{logVar: math.Log(0.3)}, zo, noJit()...)
	if err != nil {
		t.Fatal(err)
	}
	mu, lu := getQ(so, false)
	mv, lv := getQ(so, true)
	k := so.kern
	tmat := mul(kmat(k, o, z), inv(kmat(k, z, z))) // K_vu K_uu⁻¹
	su := mul(lu, lu.T())
	sv2 := mul(lv, lv.T())
	var mvu mat.VecDense
	mvu.MulVec(tmat, mat.NewVecDense(5, mu))
	mean := append(append([]float64(nil), mu...), make([]float64, 4)...)
	for i := 0; i < 4; i++ {
		mean[5+i] = mv[i] + mvu.AtVec(i)
	}
	s := mat.NewDense(9, 9, nil)
	s.Slice(0, 5, 0, 5).(*mat.Dense).Copy(su)
	s.Slice(0, 5, 5, 9).(*mat.Dense).Copy(mul(su, tmat.T()))
	s.Slice(5, 9, 0, 5).(*mat.Dense).Copy(mul(tmat, su))
	var lower mat.Dense
	lower.Add(sv2, mul(tmat, su, tmat.T()))
	s.Slice(5, 9, 5, 9).(*mat.Dense).Copy(&lower)
	setQ(t, sv, false, mean, cholLower(s))
	a, b := bound(t, so, x, y, 80), bound(t, sv, x, y, 80)
	if !approx(a, b, 1e-8) {
		t.Errorf("SOLVE-GP %v, SVGP on Z∪O with S_{u,v} %v", a, b)
	}
	xt, _ := problem(7, 11, 2)
	p1, _ := so.Predictor(3)
	p2, _ := sv.Predictor(0)
	m1, v1, _ := p1.PredictF(xt)
	m2, v2, _ := p2.PredictF(xt)
	if !mat.EqualApprox(m1, m2, 1e-8) || !mat.EqualApprox(v1, v2, 1e-8) {
		t.Errorf("predictive marginals differ")
	}
	c1, _ := p1.JointCov(xt, 0)
	c2, _ := p2.JointCov(xt, 0)
	if !mat.EqualApprox(c1, c2, 1e-8) {
		t.Errorf("joint covariances differ")
	}
}

// TestPredictDense compares prediction with the dense formulas of
// Appendix D.2 computed by brute force.
func TestPredictDense(t *testing.T) {
	for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
		for _, w := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(17, 18))
			z := randDense(rng, 6, 2, -3, 3)
			o := randDense(rng, 5, 2, -3, 3)
			mod := buildModel(t, gradCase{kind: kind, whiten: w, lik: "gauss"}, rng, 2, 6, 5)
			_ = z
			_ = o
			z, o = mod.Z(), mod.O()
			k := mod.kern
			xt, _ := problem(8, 13, 2)
			kuu := kmat(k, z, z)
			l0u := cholLower(kuu)
			ku := kmat(k, xt, z)
			mu, lu := getQ(mod, false)
			if w {
				var mv mat.VecDense
				mv.MulVec(l0u, mat.NewVecDense(6, mu))
				mu = mv.RawVector().Data
				lu = mul(l0u, lu)
			}
			kuuI := inv(kuu)
			var mean mat.VecDense
			mean.MulVec(mul(ku, kuuI), mat.NewVecDense(6, mu))
			var cs mat.Dense // C_** = K_** − K_*u K_uu⁻¹ K_u*
			cs.Sub(kmat(k, xt, xt), mul(ku, kuuI, ku.T()))
			var cov mat.Dense
			cov.Add(&cs, mul(ku, kuuI, lu, lu.T(), kuuI, ku.T()))
			switch kind {
			case SOLVEGP, ODVGP:
				var csv mat.Dense // C_*v
				csv.Sub(kmat(k, xt, o), mul(ku, kuuI, kmat(k, z, o)))
				cvv := bruteCvv(k, z, o)
				cvvI := inv(cvv)
				mv, lv := getQ(mod, true)
				if kind == ODVGP {
					var add mat.VecDense
					add.MulVec(&csv, mat.NewVecDense(5, mv))
					mean.AddVec(&mean, &add)
					break
				}
				if w {
					l0v := cholLower(cvv)
					var t1 mat.VecDense
					t1.MulVec(l0v, mat.NewVecDense(5, mv))
					mv = t1.RawVector().Data
					lv = mul(l0v, lv)
				}
				var add mat.VecDense
				add.MulVec(mul(&csv, cvvI), mat.NewVecDense(5, mv))
				mean.AddVec(&mean, &add)
				var d mat.Dense
				d.Sub(mul(lv, lv.T()), cvv)
				cov.Add(&cov, mul(&csv, cvvI, &d, cvvI, csv.T()))
			}
			p, err := mod.Predictor(4)
			if err != nil {
				t.Fatal(err)
			}
			pm, pv, err := p.PredictF(xt)
			if err != nil {
				t.Fatal(err)
			}
			jc, err := p.JointCov(xt, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 13; i++ {
				if !approx(pm.At(i, 0), mean.AtVec(i), 1e-8) || !approx(pv.At(i, 0), cov.At(i, i), 1e-8) {
					t.Errorf("%v whiten=%v point %d: got (%v, %v), want (%v, %v)", kind, w, i, pm.At(i, 0), pv.At(i, 0), mean.AtVec(i), cov.At(i, i))
				}
				for j := 0; j < 13; j++ {
					if !approx(jc.At(i, j), cov.At(i, j), 1e-8) {
						t.Fatalf("%v whiten=%v: JointCov[%d][%d] = %v, want %v", kind, w, i, j, jc.At(i, j), cov.At(i, j))
					}
				}
			}
			// Training marginals (Forward) agree with prediction.
			mu2 := make([]float64, 13)
			vr2 := make([]float64, 13)
			if _, _, err := mod.Forward(xt, mu2, vr2); err != nil {
				t.Fatal(err)
			}
			for i := range mu2 {
				if !approx(mu2[i], pm.At(i, 0), 1e-10) || !approx(vr2[i], pv.At(i, 0), 1e-10) {
					t.Errorf("%v whiten=%v: Forward and PredictF differ at %d", kind, w, i)
				}
			}
			// Log predictive density of the Gaussian: log N(y | μ, σ² + s²).
			yt := make([]float64, 13)
			lp, err := p.LogPredictive(xt, yt)
			if err != nil {
				t.Fatal(err)
			}
			s2 := 0.3
			for i := range lp {
				v := cov.At(i, i) + s2
				want := -0.5*math.Log(2*math.Pi*v) - mean.AtVec(i)*mean.AtVec(i)/(2*v)
				if !approx(lp[i], want, 1e-8) {
					t.Errorf("log predictive %d = %v, want %v", i, lp[i], want)
				}
			}
		}
	}
}

// TestPredictConcurrent runs predictions from several goroutines (run
// with -race).
func TestPredictConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	mod := buildModel(t, gradCase{kind: SOLVEGP, lik: "gauss"}, rng, 2, 6, 5)
	p, err := mod.Predictor(5)
	if err != nil {
		t.Fatal(err)
	}
	xt, yt := problem(9, 23, 2)
	want, _, _ := p.PredictF(xt)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, _, err := p.PredictF(xt)
			if err != nil || !mat.Equal(m, want) {
				errs <- "mismatch"
			}
			if _, err := p.MeanLogPredictive(xt, yt); err != nil {
				errs <- err.Error()
			}
			if _, _, err := p.PredictY(xt); err != nil {
				errs <- err.Error()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestColumnSampleUnbiased: the sampled-column estimate of ODVGP's KL_v
// averages to the exact value.
func TestColumnSampleUnbiased(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	x, y := problem(12, 10, 2)
	exact := buildModel(t, gradCase{kind: ODVGP, lik: "gauss"}, rng, 2, 4, 6)
	th := make([]float64, exact.NumParams())
	exact.Params(th)
	sampled, err := NewODVGP(newRefRBF(2, 1.3, 0.9, 1.2), &refGauss{logVar: math.Log(0.3)}, exact.Z(), exact.O(), append(noJit(), WithColumnSample(2))...)
	if err != nil {
		t.Fatal(err)
	}
	if err := sampled.SetParams(th); err != nil {
		t.Fatal(err)
	}
	bound(t, exact, x, y, 10)
	want := exact.LastTerms().KLV
	const draws = 5000
	var sum, sum2 float64
	for i := 0; i < draws; i++ {
		bound(t, sampled, x, y, 10)
		v := sampled.LastTerms().KLV
		sum += v
		sum2 += v * v
	}
	mean := sum / draws
	se := math.Sqrt((sum2/draws - mean*mean) / draws)
	if se == 0 || math.Abs(mean-want) > 4*se {
		t.Errorf("mean sampled KL_v %v ± %v, exact %v", mean, se, want)
	}
}
