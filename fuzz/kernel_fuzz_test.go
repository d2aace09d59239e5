package fuzz

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// kernelNaive evaluates a stationary kernel element by element from its
// definition, for reference.
func kernelNaive(f kernel.Family, ls []float64, variance float64, x, z []float64) float64 {
	s := 0.0
	for c := range x {
		l := ls[0]
		if len(ls) > 1 {
			l = ls[c]
		}
		t := (x[c] - z[c]) / l
		s += t * t
	}
	r := math.Sqrt(s)
	// The correlation is formed first and scaled by the variance last, so
	// that a variance near the float64 maximum does not overflow an
	// intermediate product whose final value is representable.
	var c float64
	switch f {
	case kernel.RBF:
		c = math.Exp(-0.5 * s)
	case kernel.Matern12:
		c = math.Exp(-r)
	case kernel.Matern32:
		c = (1 + math.Sqrt(3)*r) * math.Exp(-math.Sqrt(3)*r)
	default:
		c = (1 + math.Sqrt(5)*r + 5*s/3) * math.Exp(-math.Sqrt(5)*r)
	}
	return variance * c
}

// kernelNaiveDx returns ∂k(x, z)/∂x_c element by element (0 at r = 0).
func kernelNaiveDx(f kernel.Family, ls []float64, variance float64, x, z []float64, c int) float64 {
	s := 0.0
	for k := range x {
		l := ls[0]
		if len(ls) > 1 {
			l = ls[k]
		}
		t := (x[k] - z[k]) / l
		s += t * t
	}
	r := math.Sqrt(s)
	var g float64 // (dk/dr)/r
	switch f {
	case kernel.RBF:
		g = -math.Exp(-0.5 * s)
	case kernel.Matern12:
		if r > 0 {
			g = -math.Exp(-r) / r
		}
	case kernel.Matern32:
		g = -3 * math.Exp(-math.Sqrt(3)*r)
	default:
		g = -5.0 / 3 * (1 + math.Sqrt(5)*r) * math.Exp(-math.Sqrt(5)*r)
	}
	l := ls[0]
	if len(ls) > 1 {
		l = ls[c]
	}
	return variance * g * (x[c] - z[c]) / (l * l)
}

func kernelFinite(vs ...[]float64) bool {
	for _, v := range vs {
		for _, e := range v {
			if math.IsNaN(e) || math.IsInf(e, 0) {
				return false
			}
		}
	}
	return true
}

func kernelHasNaN(vs ...[]float64) bool {
	for _, v := range vs {
		for _, e := range v {
			if math.IsNaN(e) {
				return true
			}
		}
	}
	return false
}

// FuzzKernelMatrix builds a kernel from fuzzed family, ARD flag,
// lengthscale, variance and data (with duplicated rows and a far offset),
// which the constructor must accept or reject with an error. Accepted
// kernels must give finite, bounded, exactly symmetric matrices agreeing
// with the element-wise definition, and finite gradients agreeing with the
// element-wise derivative (away from the Matérn 1/2 kink).
func FuzzKernelMatrix(f *testing.F) {
	f.Add(uint8(0), false, uint8(5), uint8(4), uint8(2), uint64(1), 0.0, 0.0, 1.0, 0.0, uint8(0))
	f.Add(uint8(1), true, uint8(9), uint8(3), uint8(3), uint64(2), -3.0, 2.0, 10.0, 1e3, uint8(2))
	f.Add(uint8(2), true, uint8(70), uint8(66), uint8(4), uint64(3), 1.0, -1.0, 0.1, -50.0, uint8(5))
	f.Add(uint8(3), false, uint8(1), uint8(1), uint8(1), uint64(4), 200.0, 40.0, 1e-3, 0.0, uint8(1))
	f.Add(uint8(3), true, uint8(3), uint8(2), uint8(1), uint64(5), -230.0, 0.0, 1.0, 0.0, uint8(0))
	f.Add(uint8(7), false, uint8(3), uint8(2), uint8(1), uint64(6), math.NaN(), 0.0, 1.0, 0.0, uint8(0))
	f.Fuzz(func(t *testing.T, fam uint8, ard bool, n8, m8, d8 uint8, seed uint64, logLS, logVar, scale, offset float64, dups uint8) {
		n, m, d := int(n8%80)+1, int(m8%80)+1, int(d8%6)+1
		ls, variance := math.Exp(logLS), math.Exp(logVar)
		var opts []kernel.Option
		if ard {
			opts = append(opts, kernel.ARD())
		}
		k, err := kernel.NewStationary(kernel.Family(fam%5), d, ls, variance, opts...)
		if err != nil {
			return // rejected: fine, as long as it did not panic
		}
		if !(scale > 0 && scale < 1e3) || !(math.Abs(offset) < 1e4) {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		x := mat.NewDense(n, d, nil)
		z := mat.NewDense(m, d, nil)
		for _, a := range []*mat.Dense{x, z} {
			r, _ := a.Dims()
			for i := 0; i < r; i++ {
				for c := 0; c < d; c++ {
					a.Set(i, c, offset+scale*rng.NormFloat64())
				}
			}
		}
		for i := 0; i < int(dups%8) && i+1 < n; i++ {
			copy(x.RawRowView(i+1), x.RawRowView(0))
			if i < m {
				copy(z.RawRowView(i), x.RawRowView(0))
			}
		}
		lsv := k.Lengthscales()
		v := k.Variance()
		minLS := lsv[0]
		for _, l := range lsv {
			minLS = math.Min(minLS, l)
		}
		// Rounding of ‖x̃‖² + ‖z̃‖² − 2x̃ᵀz̃ after centring is about
		// ε·spread²/ℓ²; the kernel's error follows through √ for Matérn 1/2.
		spread := (scale*8 + 1) / minLS
		dsErr := 64 * 1.1e-16 * spread * spread * float64(d)
		tol := v * (1e-12 + 4*math.Sqrt(dsErr) + dsErr)

		var K, Ks mat.Dense
		k.Matrix(&K, x, z)
		k.Matrix(&Ks, x, x)
		if !kernelFinite(K.RawMatrix().Data, Ks.RawMatrix().Data) {
			t.Fatal("non-finite kernel matrix")
		}
		for i := 0; i < n; i++ {
			for j := 0; j < m; j++ {
				got := K.At(i, j)
				want := kernelNaive(k.Family(), lsv, v, x.RawRowView(i), z.RawRowView(j))
				if got < 0 || got > v*(1+1e-15) || math.Abs(got-want) > tol {
					t.Fatalf("K[%d,%d] = %g, want %g (tol %g)", i, j, got, want, tol)
				}
			}
			if Ks.At(i, i) != v {
				t.Fatalf("diagonal %g, want %g", Ks.At(i, i), v)
			}
			for j := 0; j < n; j++ {
				if Ks.At(i, j) != Ks.At(j, i) {
					t.Fatal("k(x, x) not exactly symmetric")
				}
			}
		}

		dK := mat.NewDense(n, m, nil)
		for i := range dK.RawMatrix().Data {
			dK.RawMatrix().Data[i] = rng.NormFloat64()
		}
		dx := mat.NewDense(n, d, nil)
		dz := mat.NewDense(m, d, nil)
		dp := make([]float64, k.NumParams())
		k.MatrixGrad(dK, &K, x, z, dx, dz, dp)
		// The matrix-product form of the gradients carries an absolute
		// rounding error of about ε·Σ|dK|·σ²·spread²/ℓ³ (documented on
		// kernel.Stationary); within these generous bounds it stays finite.
		if v <= 1e30 && minLS >= 1e-30 && spread <= 1e30 &&
			!kernelFinite(dx.RawMatrix().Data, dz.RawMatrix().Data, dp) {
			t.Fatal("non-finite gradient")
		}
		if k.Family() == kernel.Matern12 || minLS < 1e-2 || spread > 1e4 {
			return // kink at r = 0, or reference itself ill-conditioned
		}
		// Compared relative to the variance (a common factor of every
		// gradient entry), so a variance near the float64 maximum does not
		// overflow the reference sum or the tolerance.
		gtol := 1e-9 * (1 + spread) * (1 + mat.Norm(dK, 1))
		for i := 0; i < n; i++ {
			for c := 0; c < d; c++ {
				want := 0.0
				for j := 0; j < m; j++ {
					want += dK.At(i, j) * kernelNaiveDx(k.Family(), lsv, 1, x.RawRowView(i), z.RawRowView(j), c)
				}
				if got := dx.At(i, c) / v; math.Abs(got-want) > gtol {
					t.Fatalf("dx[%d,%d]/σ² = %g, reference %g (tol %g)", i, c, got, want, gtol)
				}
			}
		}
	})
}

// FuzzKernelSetParams feeds arbitrary unconstrained parameters (NaN, Inf,
// huge, tiny) to a kernel and a sum of kernels: SetParams must either
// succeed with valid positive hyperparameters or fail and leave the
// parameters unchanged.
func FuzzKernelSetParams(f *testing.F) {
	f.Add(0.0, 0.0, 0.0, 0.0)
	f.Add(math.NaN(), 1.0, 2.0, 3.0)
	f.Add(-1e4, 0.0, 0.0, 0.0)
	f.Add(0.0, -800.0, 1e308, math.Inf(1))
	f.Add(-230.0, -745.0, 700.0, -1.0)
	f.Fuzz(func(t *testing.T, a, b, c, d float64) {
		k1, _ := kernel.NewRBF(2, 1, 1)
		k2, _ := kernel.NewMatern52(1, 1, 1)
		k2a, _ := kernel.NewMatern52(2, 1, 1)
		_ = k2
		s, err := kernel.NewSum(k1, k2a)
		if err != nil {
			t.Fatal(err)
		}
		for _, kk := range []kernel.Kernel{k1, s} {
			before := make([]float64, kk.NumParams())
			kk.Params(before)
			src := []float64{a, b, c, d}[:kk.NumParams()]
			err := kk.SetParams(src)
			after := make([]float64, kk.NumParams())
			kk.Params(after)
			for i := range after {
				if err != nil && after[i] != before[i] && !(math.IsNaN(after[i]) && math.IsNaN(before[i])) {
					t.Fatalf("failed SetParams changed parameter %d", i)
				}
				if err == nil && after[i] != src[i] {
					t.Fatalf("SetParams stored %g, want %g", after[i], src[i])
				}
			}
			if err == nil {
				x := mat.NewDense(2, 2, []float64{0, 1, 1, 0})
				var K mat.Dense
				kk.Matrix(&K, x, x)
				if !kernelFinite(K.RawMatrix().Data) || K.At(0, 0) <= 0 {
					t.Fatalf("accepted parameters %v give K = %v", src, K.RawMatrix().Data)
				}
			}
		}
	})
}

// FuzzKernelLikelihoods evaluates every likelihood on fuzzed labels (valid
// or not) and marginals: nothing may panic, Validate must agree with the
// documented −Inf for labels outside the support, and gradients must be
// free of NaN whenever the inputs are finite.
func FuzzKernelLikelihoods(f *testing.F) {
	f.Add(1.0, 0.0, 1.0, 0.5, -0.3, 0.2)
	f.Add(2.5, -40.0, 1e-12, 0.0, 3.0, 0.0)
	f.Add(-1.0, 1e3, 50.0, 7.0, -7.0, 1e-300)
	f.Add(math.NaN(), 0.0, 1.0, 0.0, 0.0, 1.0)
	f.Fuzz(func(t *testing.T, y, mu0, v0, mu1, mu2, v1 float64) {
		if !kernelFinite([]float64{mu0, v0, mu1, mu2, v1}) || v0 < 0 || v1 < 0 ||
			math.Abs(mu0) > 1e3 || math.Abs(mu1) > 1e3 || math.Abs(mu2) > 1e3 || v0 > 1e3 || v1 > 1e3 {
			return
		}
		g, _ := likelihood.NewGaussian(0.5)
		b, _ := likelihood.NewBernoulli()
		p, _ := likelihood.NewPoisson()
		r, _ := likelihood.NewRobustMax(3)
		s, _ := likelihood.NewSoftmax(3, likelihood.Samples(8))
		type lik interface {
			NumLatent() int
			NumParams() int
			Validate([]float64) error
			ExpectedLogLik(y, mu, variance []float64, dmu, dvar, dparams []float64, rng *rand.Rand) float64
			LogPredictive(dst, y, mu, variance []float64, rng *rand.Rand)
			PredictY(mean, variance, mu, fvar []float64, rng *rand.Rand)
		}
		for _, l := range []lik{g, b, p, r, s} {
			L := l.NumLatent()
			mu := []float64{mu0, mu1, mu2}[:L]
			v := []float64{v0, v1, v0}[:L]
			ys := []float64{y}
			dmu, dvar := make([]float64, L), make([]float64, L)
			dp := make([]float64, l.NumParams())
			rng := rand.New(rand.NewPCG(1, 2))
			e := l.ExpectedLogLik(ys, mu, v, dmu, dvar, dp, rng)
			lp := []float64{0}
			l.LogPredictive(lp, ys, mu, v, rng)
			mean := make([]float64, L)
			if L == 1 {
				mean = make([]float64, 1)
			}
			l.PredictY(mean, nil, mu, v, rng)
			valid := l.Validate(ys) == nil
			if !valid && (!math.IsInf(e, -1) || !math.IsInf(lp[0], -1)) {
				t.Fatalf("%T: invalid label %g gives %g, %g; want -Inf", l, y, e, lp[0])
			}
			// Overflow (e.g. of the Poisson rate exp(μ + v/2)) may give ±Inf;
			// NaN never.
			if math.IsNaN(e) || math.IsNaN(lp[0]) || kernelHasNaN(dmu, dvar, dp) {
				t.Fatalf("%T: y=%g mu=%v v=%v: E=%g lp=%g dmu=%v dvar=%v dp=%v", l, y, mu, v, e, lp[0], dmu, dvar, dp)
			}
			for _, q := range mean {
				if math.IsNaN(q) {
					t.Fatalf("%T: NaN prediction for mu=%v v=%v", l, mu, v)
				}
			}
		}
	})
}
