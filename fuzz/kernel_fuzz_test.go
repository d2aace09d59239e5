package fuzz

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// kernelEps is the float64 machine epsilon 2⁻⁵² (twice the unit roundoff).
const kernelEps = 0x1p-52

// kernelProfile returns the correlation g(s) (g(0) = 1) of family f at the
// squared scaled distance s ≥ 0. Every profile decreases in s.
func kernelProfile(f kernel.Family, s float64) float64 {
	r := math.Sqrt(s)
	switch f {
	case kernel.RBF:
		return math.Exp(-0.5 * s)
	case kernel.Matern12:
		return math.Exp(-r)
	case kernel.Matern32:
		return (1 + math.Sqrt(3)*r) * math.Exp(-math.Sqrt(3)*r)
	default:
		return (1 + math.Sqrt(5)*r + 5*s/3) * math.Exp(-math.Sqrt(5)*r)
	}
}

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
	// The correlation is formed first and scaled by the variance last, so
	// that a variance near the float64 maximum does not overflow an
	// intermediate product whose final value is representable.
	return variance * kernelProfile(f, s)
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

// kernelPart is one stationary part of a kernel under test: its family,
// lengthscales (one shared, or one per dimension) and variance.
type kernelPart struct {
	fam kernel.Family
	ls  []float64
	v   float64
}

func (p kernelPart) lengthscale(c int) float64 {
	if len(p.ls) > 1 {
		return p.ls[c]
	}
	return p.ls[0]
}

// kernelEnclosure returns row-major n×n bounds lo ≤ hi on the entries of
// the symmetric matrix k(x, x) of one stationary part, which contain both
// the matrix the kernel package computes and the exact kernel matrix of
// inputs perturbed by a few ulp (an exactly PSD matrix).
//
// The package forms r² = ‖x̃_i‖² + ‖x̃_j‖² − 2x̃_iᵀx̃_j from the centred,
// scaled inputs x̃ = (x − median)·ℓ⁻¹ by fused multiply-add chains of length
// d + 2 (kernel package doc). Standard dot-product error analysis bounds
// the error of that expansion by (2γ_{d+2} + γ_d)·(N_i + N_j) with
// N_i = ‖x̃_i‖²; rounding x̃ itself moves each point by a relative 2ε per
// coordinate, changing r² by at most 4ε·(N_i + N_j) + 2ε·r², and the
// profile's argument (3·r², √, …) is formed with a few more relative
// roundings of r². δ below is about twice the sum. Since every profile g
// decreases in r², both values lie in [σ²g(r² + δ), σ²g(max(r² − δ, 0))],
// widened by 32ε relative for Exp (≤ 2 ulp), the Matérn polynomial and the
// variance product, and absolutely for gradual underflow. Bitwise
// identical rows give exactly σ² (documented).
func kernelEnclosure(p kernelPart, x *mat.Dense) (lo, hi []float64) {
	n, d := x.Dims()
	// Centre on the per-column median, as the package does (and the
	// median is where its doc says it centres); N_i are the squared norms
	// of the centred, scaled rows.
	xs := make([]float64, n*d)
	col := make([]float64, n)
	for c := 0; c < d; c++ {
		for i := range col {
			col[i] = x.At(i, c)
		}
		slices.Sort(col)
		med := col[n/2]
		for i := 0; i < n; i++ {
			xs[i*d+c] = (x.At(i, c) - med) / p.lengthscale(c)
		}
	}
	nrm := make([]float64, n)
	for i := range nrm {
		for _, v := range xs[i*d : i*d+d] {
			nrm[i] += v * v
		}
	}
	tiny := (p.v + 1) * 0x1p-1050
	lo, hi = make([]float64, n*n), make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if slices.Equal(x.RawRowView(i), x.RawRowView(j)) {
				lo[i*n+j], hi[i*n+j] = p.v, p.v
				continue
			}
			s := 0.0
			for c := 0; c < d; c++ {
				t := (x.At(i, c) - x.At(j, c)) / p.lengthscale(c)
				s += t * t
			}
			fd := float64(d)
			delta := 4*(fd+3)*kernelEps*(nrm[i]+nrm[j]) + 4*(fd+4)*kernelEps*s
			lo[i*n+j] = math.Max(0, p.v*kernelProfile(p.fam, s+delta)*(1-32*kernelEps)-tiny)
			hi[i*n+j] = p.v*kernelProfile(p.fam, math.Max(s-delta, 0))*(1+32*kernelEps) + tiny
		}
	}
	return lo, hi
}

// kernelCheckPSD reports whether the symmetric n×n matrix K (diagonal
// value diag > 0) is positive semidefinite to within slack, a bound on
// ‖K − K_exact‖₂ for some exactly PSD K_exact. By Weyl's inequality
// λ_min(K) ≥ −slack, so K + (slack + τ)·I has λ_min ≥ τ; with τ =
// 2n(n+1)ε·diag, four times the n·γ_{n+1}·diag below which Cholesky can
// fail on a positive definite matrix (Demmel 1989; Higham, Accuracy and
// Stability, Thm 10.7), Cholesky must succeed. K is scaled by a power of
// two (exactly) to a unit-order diagonal first so that nothing overflows.
// It returns nil when the check is vacuous (slack not small against diag).
func kernelCheckPSD(K *mat.Dense, diag, slack float64) error {
	n, _ := K.Dims()
	rel := slack/diag + 2*float64(n)*float64(n+1)*kernelEps
	if !(diag > 0) || !(rel < 0.25) {
		return nil
	}
	_, e := math.Frexp(diag)
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a[i*n+j] = math.Ldexp(K.At(i, j), -e)
		}
	}
	var c chol.Cholesky
	if _, err := c.Factor(n, a, n, chol.JitterPolicy{Start: rel, MaxTries: 1}, 1); err != nil {
		return fmt.Errorf("K(x, x) + %.3g·σ²·I does not factor (slack %.3g·σ², n = %d): %w", rel, slack/diag, n, err)
	}
	return nil
}

// FuzzKernelMatrix builds a kernel from fuzzed family, ARD flag,
// lengthscale, variance and data (with duplicated rows and a far offset),
// which the constructor must accept or reject with an error; combo makes
// it the sum or the product of that kernel with a second stationary one.
// Accepted kernels must give finite, bounded, exactly symmetric matrices
// agreeing with the element-wise definition, a matrix k(x, x) inside the
// rounding enclosure of kernelEnclosure and positive semidefinite to
// within that rounding (kernelCheckPSD), and finite gradients agreeing
// with the element-wise derivative (away from the Matérn 1/2 kink).
func FuzzKernelMatrix(f *testing.F) {
	f.Add(uint8(0), false, uint8(5), uint8(4), uint8(2), uint64(1), 0.0, 0.0, 1.0, 0.0, uint8(0), uint8(0))
	f.Add(uint8(1), true, uint8(9), uint8(3), uint8(3), uint64(2), -3.0, 2.0, 10.0, 1e3, uint8(2), uint8(0))
	f.Add(uint8(2), true, uint8(70), uint8(66), uint8(4), uint64(3), 1.0, -1.0, 0.1, -50.0, uint8(5), uint8(0))
	f.Add(uint8(3), false, uint8(1), uint8(1), uint8(1), uint64(4), 200.0, 40.0, 1e-3, 0.0, uint8(1), uint8(0))
	f.Add(uint8(3), true, uint8(3), uint8(2), uint8(1), uint64(5), -230.0, 0.0, 1.0, 0.0, uint8(0), uint8(0))
	f.Add(uint8(7), false, uint8(3), uint8(2), uint8(1), uint64(6), math.NaN(), 0.0, 1.0, 0.0, uint8(0), uint8(0))
	// Sums and products, with duplicates, offsets and both lengthscales.
	f.Add(uint8(0), false, uint8(40), uint8(20), uint8(2), uint64(7), 0.0, 0.0, 1.0, 0.0, uint8(5), uint8(1))
	f.Add(uint8(3), true, uint8(60), uint8(7), uint8(5), uint64(8), 0.5, 3.0, 2.0, 500.0, uint8(7), uint8(2+3*2+12*6))
	f.Add(uint8(1), false, uint8(30), uint8(30), uint8(1), uint64(9), -2.0, -4.0, 0.3, -7e3, uint8(3), uint8(1+3*3+12*1))
	f.Add(uint8(2), true, uint8(79), uint8(5), uint8(3), uint64(10), 5.0, 700.0, 50.0, 0.0, uint8(0), uint8(2+3*1))
	f.Fuzz(func(t *testing.T, fam uint8, ard bool, n8, m8, d8 uint8, seed uint64, logLS, logVar, scale, offset float64, dups, combo uint8) {
		n, m, d := int(n8%80)+1, int(m8%80)+1, int(d8%6)+1
		kc := newKernelFuzzCase(t, fam, ard, d, logLS, logVar, scale, offset, combo)
		if kc == nil {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		x, z := kernelFuzzInputs(rng, n, m, d, scale, offset, dups)
		K, Ks := kc.checkValues(t, x, z)
		kc.checkEnclosure(t, x, Ks)
		kc.checkGradient(t, rng, x, z, K)
	})
}

// kernelFuzzCase is the kernel under test in FuzzKernelMatrix: one
// stationary kernel, or its sum or product with a second one, with the
// parts' hyperparameters for the reference, the diagonal value vmax, the
// smallest lengthscale, the largest input spread in lengthscales, and each
// part's element-wise tolerance against kernelNaive.
type kernelFuzzCase struct {
	kk            kernel.Kernel
	parts         []kernelPart
	vmax          float64
	sum           bool
	minLS, spread float64
	tols          []float64
}

// newKernelFuzzCase builds the kernel of FuzzKernelMatrix's inputs, or
// returns nil when the inputs are rejected (an error from the constructor
// for invalid hyperparameters, or a combined variance that overflows).
// combo%3: 0 the kernel alone, 1 its sum and 2 its product with a
// shared-lengthscale kernel of variance 1 (so that neither overflows where
// the first part does not), family (combo/3)%4 and lengthscale
// ℓ₁·2^((combo/12)%8 − 4).
func newKernelFuzzCase(t *testing.T, fam uint8, ard bool, d int, logLS, logVar, scale, offset float64, combo uint8) *kernelFuzzCase {
	t.Helper()
	ls, variance := math.Exp(logLS), math.Exp(logVar)
	var opts []kernel.Option
	if ard {
		opts = append(opts, kernel.ARD())
	}
	k, err := kernel.NewStationary(kernel.Family(fam%5), d, ls, variance, opts...)
	if err != nil {
		return nil // rejected: fine, as long as it did not panic
	}
	if !(scale > 0 && scale < 1e3) || !(math.Abs(offset) < 1e4) {
		return nil
	}
	parts := []kernelPart{{k.Family(), k.Lengthscales(), k.Variance()}}
	var kk kernel.Kernel = k
	vmax := parts[0].v // the diagonal value
	if mode := combo % 3; mode != 0 {
		l2 := math.Ldexp(parts[0].ls[0], int(combo/12)%8-4)
		k2, err := kernel.NewStationary(kernel.Family(combo/3%4), d, l2, 1)
		if err != nil {
			return nil
		}
		parts = append(parts, kernelPart{k2.Family(), k2.Lengthscales(), k2.Variance()})
		if mode == 1 {
			kk, err = kernel.NewSum(k, k2)
			vmax += parts[1].v
		} else {
			kk, err = kernel.NewProduct(k, k2)
			vmax *= parts[1].v
		}
		if err != nil {
			if math.IsInf(vmax, 0) {
				return nil // the combined variance overflows: rejected, as documented
			}
			t.Fatal(err)
		}
		if math.IsInf(vmax, 0) {
			t.Fatalf("combination with variance %g accepted", vmax)
		}
	}
	kc := &kernelFuzzCase{kk: kk, parts: parts, vmax: vmax, sum: len(parts) == 2 && combo%3 == 1}
	// Rounding of ‖x̃‖² + ‖z̃‖² − 2x̃ᵀz̃ after centring is about
	// ε·spread²/ℓ²; the kernel's error follows through √ for Matérn 1/2.
	kc.tols = make([]float64, len(parts))
	kc.minLS, kc.spread = math.Inf(1), 0.0
	for p, pt := range parts {
		ml := slices.Min(pt.ls)
		sp := (scale*8 + 1) / ml
		dsErr := 64 * 1.1e-16 * sp * sp * float64(d)
		kc.tols[p] = pt.v * (1e-12 + 4*math.Sqrt(dsErr) + dsErr)
		kc.minLS, kc.spread = math.Min(kc.minLS, ml), math.Max(kc.spread, sp)
	}
	return kc
}

// kernelFuzzInputs draws n inputs x and m inducing inputs z in d
// dimensions, offset + scale·N(0, 1) each, with the first dups%8 rows of x
// (and of z) copies of x's first row.
func kernelFuzzInputs(rng *rand.Rand, n, m, d int, scale, offset float64, dups uint8) (x, z *mat.Dense) {
	x = mat.NewDense(n, d, nil)
	z = mat.NewDense(m, d, nil)
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
	return x, z
}

// checkValues checks K(x, z) and K(x, x) element by element against the
// naive reference, the diagonal and Diag against vmax, and the exact
// symmetry of K(x, x); it returns both matrices.
func (kc *kernelFuzzCase) checkValues(t *testing.T, x, z *mat.Dense) (K, Ks *mat.Dense) {
	t.Helper()
	parts, vmax, tols := kc.parts, kc.vmax, kc.tols
	// naive returns the reference value of the kernel under test and
	// its tolerance.
	naive := func(xi, zj []float64) (want, tol float64) {
		w0 := kernelNaive(parts[0].fam, parts[0].ls, parts[0].v, xi, zj)
		if len(parts) == 1 {
			return w0, tols[0]
		}
		w1 := kernelNaive(parts[1].fam, parts[1].ls, parts[1].v, xi, zj)
		if kc.sum {
			return w0 + w1, tols[0] + tols[1] + 4*kernelEps*vmax
		}
		// |a₀a₁ − b₀b₁| ≤ |a₀ − b₀|·a₁ + b₀·|a₁ − b₁|, with a₁ ≤ σ₁² = 1.
		return w0 * w1, tols[0] + parts[0].v*tols[1] + 4*kernelEps*vmax
	}

	K, Ks = new(mat.Dense), new(mat.Dense)
	kc.kk.Matrix(K, x, z)
	kc.kk.Matrix(Ks, x, x)
	if !kernelFinite(K.RawMatrix().Data, Ks.RawMatrix().Data) {
		t.Fatal("non-finite kernel matrix")
	}
	n, _ := x.Dims()
	m, _ := z.Dims()
	diag := make([]float64, n)
	kc.kk.Diag(diag, x)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			got := K.At(i, j)
			want, tol := naive(x.RawRowView(i), z.RawRowView(j))
			if got < 0 || got > vmax*(1+1e-15) || math.Abs(got-want) > tol {
				t.Fatalf("K[%d,%d] = %g, want %g (tol %g)", i, j, got, want, tol)
			}
		}
		if Ks.At(i, i) != vmax || diag[i] != vmax {
			t.Fatalf("diagonal %g, Diag %g, want %g", Ks.At(i, i), diag[i], vmax)
		}
		for j := 0; j < n; j++ {
			if Ks.At(i, j) != Ks.At(j, i) {
				t.Fatal("k(x, x) not exactly symmetric")
			}
		}
	}
	return K, Ks
}

// checkEnclosure checks that k(x, x) lies in the rounding enclosure of an
// exactly PSD matrix and is PSD to within it.
func (kc *kernelFuzzCase) checkEnclosure(t *testing.T, x, Ks *mat.Dense) {
	t.Helper()
	// k(x, x) lies in the rounding enclosure of an exactly PSD matrix
	// (combined over the parts with the rounding of the sum or product),
	// so it is PSD to within the enclosure's widest row sum of widths,
	// which bounds the 2-norm of the symmetric error.
	n, _ := x.Dims()
	lo, hi := kernelEnclosure(kc.parts[0], x)
	if len(kc.parts) == 2 {
		lo1, hi1 := kernelEnclosure(kc.parts[1], x)
		for e := range lo {
			if kc.sum {
				lo[e], hi[e] = (lo[e]+lo1[e])*(1-2*kernelEps), (hi[e]+hi1[e])*(1+2*kernelEps)
			} else {
				lo[e], hi[e] = lo[e]*lo1[e]*(1-2*kernelEps), hi[e]*hi1[e]*(1+2*kernelEps)+0x1p-1070
			}
		}
	}
	slack := 0.0
	for i := 0; i < n; i++ {
		row := 0.0
		for j := 0; j < n; j++ {
			e := i*n + j
			if got := Ks.At(i, j); got < lo[e] || got > hi[e] {
				t.Fatalf("k(x, x)[%d,%d] = %g outside its rounding enclosure [%g, %g]", i, j, got, lo[e], hi[e])
			}
			row += hi[e] - lo[e]
		}
		slack = math.Max(slack, row)
	}
	if err := kernelCheckPSD(Ks, kc.vmax, slack); err != nil {
		t.Fatal(err)
	}
}

// checkGradient checks MatrixGrad for a random adjoint: finite within
// generous bounds, and dx against the naive derivative where the
// reference is well conditioned.
func (kc *kernelFuzzCase) checkGradient(t *testing.T, rng *rand.Rand, x, z, K *mat.Dense) {
	t.Helper()
	n, d := x.Dims()
	m, _ := z.Dims()
	parts, vmax, sum, minLS, spread := kc.parts, kc.vmax, kc.sum, kc.minLS, kc.spread
	dK := mat.NewDense(n, m, nil)
	for i := range dK.RawMatrix().Data {
		dK.RawMatrix().Data[i] = rng.NormFloat64()
	}
	dx := mat.NewDense(n, d, nil)
	dz := mat.NewDense(m, d, nil)
	dp := make([]float64, kc.kk.NumParams())
	kc.kk.MatrixGrad(dK, K, x, z, dx, dz, dp)
	// The matrix-product form of the gradients carries an absolute
	// rounding error of about ε·Σ|dK|·σ²·spread²/ℓ³ (documented on
	// kernel.Stationary); within these generous bounds it stays finite.
	if vmax <= 1e30 && minLS >= 1e-30 && spread <= 1e30 &&
		!kernelFinite(dx.RawMatrix().Data, dz.RawMatrix().Data, dp) {
		t.Fatal("non-finite gradient")
	}
	for _, pt := range parts {
		if pt.fam == kernel.Matern12 {
			return // kink at r = 0
		}
	}
	if minLS < 1e-2 || spread > 1e4 {
		return // reference itself ill-conditioned
	}
	// Compared relative to vmax (a common factor of every gradient
	// entry for one part or a product, an upper bound on each term's
	// for a sum), so a variance near the float64 maximum does not
	// overflow the reference sum or the tolerance.
	gtol := 1e-9 * (1 + spread) * (1 + mat.Norm(dK, 1)) * float64(len(parts))
	for i := 0; i < n; i++ {
		xi := x.RawRowView(i)
		for c := 0; c < d; c++ {
			want := 0.0
			for j := 0; j < m; j++ {
				zj := z.RawRowView(j)
				g := kernelNaiveDx(parts[0].fam, parts[0].ls, 1, xi, zj, c)
				switch {
				case len(parts) == 1:
				case sum:
					g = parts[0].v/vmax*g + 1/vmax*kernelNaiveDx(parts[1].fam, parts[1].ls, 1, xi, zj, c)
				default:
					g = g*kernelNaive(parts[1].fam, parts[1].ls, 1, xi, zj) +
						kernelNaive(parts[0].fam, parts[0].ls, 1, xi, zj)*kernelNaiveDx(parts[1].fam, parts[1].ls, 1, xi, zj, c)
				}
				want += dK.At(i, j) * g
			}
			if got := dx.At(i, c) / vmax; math.Abs(got-want) > gtol {
				t.Fatalf("dx[%d,%d]/σ² = %g, reference %g (tol %g)", i, c, got, want, gtol)
			}
		}
	}
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
	f.Add(1e308, math.MaxFloat64, 1e308, 1e308) // valid variances whose sum overflows
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
	f.Add(1e16, 36.84, 0.01, 0.0, 0.0, 0.0) // a count of the Poisson's Stirling form
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
		st, _ := likelihood.NewStudentT(0.7, 3)
		h, _ := likelihood.NewHeteroscedastic()
		type lik interface {
			NumLatent() int
			NumParams() int
			Validate([]float64) error
			ExpectedLogLik(y, mu, variance []float64, dmu, dvar, dparams []float64, rng *rand.Rand) float64
			LogPredictive(dst, y, mu, variance []float64, rng *rand.Rand)
			PredictY(mean, variance, mu, fvar []float64, rng *rand.Rand)
		}
		for _, l := range []lik{g, b, p, r, s, st, h} {
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
