package kernel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func combos(t *testing.T, d int) map[string]Kernel {
	t.Helper()
	a, _ := NewRBF(d, 0.7, 1.3)
	b, _ := NewMatern32(d, 1.1, 0.6, ARD())
	c, _ := NewMatern52(d, 0.9, 0.9)
	e, _ := NewMatern12(d, 1.4, 0.5)
	sum, err := NewSum(a, b)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := NewProduct(b, c, a)
	if err != nil {
		t.Fatal(err)
	}
	nested, err := NewProduct(sum, c)
	if err != nil {
		t.Fatal(err)
	}
	single, _ := NewSum(c)
	withM12, _ := NewSum(e, c)
	return map[string]Kernel{"sum": sum, "product": prod, "nested": nested, "single": single, "m12sum": withM12}
}

func TestCombinationMatrix(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n, m, d = 5, 4, 2
	x := randDense(rng, n, d, 1)
	z := randDense(rng, m, d, 1)
	a, _ := NewRBF(d, 0.7, 1.3)
	b, _ := NewMatern32(d, 1.1, 0.6, ARD())
	sum, _ := NewSum(a, b)
	prod, _ := NewProduct(a, b)
	var ka, kb, ks, kp mat.Dense
	a.Matrix(&ka, x, z)
	b.Matrix(&kb, x, z)
	sum.Matrix(&ks, x, z)
	prod.Matrix(&kp, x, z)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			if got, want := ks.At(i, j), ka.At(i, j)+kb.At(i, j); math.Abs(got-want) > 1e-15 {
				t.Errorf("sum[%d,%d] = %g, want %g", i, j, got, want)
			}
			if got, want := kp.At(i, j), ka.At(i, j)*kb.At(i, j); math.Abs(got-want) > 1e-15 {
				t.Errorf("product[%d,%d] = %g, want %g", i, j, got, want)
			}
		}
	}
	ds, dp := make([]float64, n), make([]float64, n)
	sum.Diag(ds, x)
	prod.Diag(dp, x)
	for i := range ds {
		if math.Abs(ds[i]-1.9) > 1e-14 || math.Abs(dp[i]-1.3*0.6) > 1e-14 {
			t.Errorf("diag %d: sum %g product %g", i, ds[i], dp[i])
		}
	}
	if sum.NumParams() != 2+3 || prod.NumParams() != 5 {
		t.Errorf("NumParams %d %d", sum.NumParams(), prod.NumParams())
	}
}

func TestCombinationGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const n, m, d = 5, 4, 3
	for name, k := range combos(t, d) {
		for mode := 0; mode < 4; mode++ {
			if name == "m12sum" && mode == 3 {
				continue // kink of exp(−r) at r = 0, see checkMatrixGrad
			}
			x := randDense(rng, n, d, 0.8)
			z := randDense(rng, m, d, 0.8)
			checkMatrixGrad(t, name, k, x, z, mode, rng, 1e-6)
		}
		checkDiagGrad(t, name, k, randDense(rng, n, d, 1))
	}
}

func checkDiagGrad(t *testing.T, name string, k Kernel, x *mat.Dense) {
	t.Helper()
	n, d := x.Dims()
	dd := make([]float64, n)
	for i := range dd {
		dd[i] = float64(i) - 1.5
	}
	np := k.NumParams()
	dp := make([]float64, np)
	dx := mat.NewDense(n, d, nil)
	k.DiagGrad(dd, x, dx, dp)
	u := make([]float64, np)
	k.Params(u)
	f := func() float64 {
		diag := make([]float64, n)
		k.Diag(diag, x)
		return mat.Dot(mat.NewVecDense(n, diag), mat.NewVecDense(n, dd))
	}
	for p := 0; p < np; p++ {
		const h = 1e-6
		v := append([]float64(nil), u...)
		v[p] += h
		if err := k.SetParams(v); err != nil {
			t.Fatal(err)
		}
		fp := f()
		v[p] -= 2 * h
		if err := k.SetParams(v); err != nil {
			t.Fatal(err)
		}
		fm := f()
		if err := k.SetParams(u); err != nil {
			t.Fatal(err)
		}
		if want := (fp - fm) / (2 * h); math.Abs(dp[p]-want) > 1e-7*(1+math.Abs(want)) {
			t.Errorf("%s: Diag dparams[%d] = %g, want %g", name, p, dp[p], want)
		}
	}
	if mat.Norm(dx, 1) != 0 {
		t.Errorf("%s: stationary DiagGrad changed dx", name)
	}
}

func TestCombinationErrors(t *testing.T) {
	a, _ := NewRBF(2, 1, 1)
	b, _ := NewRBF(3, 1, 1)
	if _, err := NewSum(); err == nil {
		t.Error("empty sum accepted")
	}
	if _, err := NewSum(a, b); err == nil {
		t.Error("dimension mismatch accepted")
	}
	if _, err := NewProduct(a, nil); err == nil {
		t.Error("nil part accepted")
	}
	var typedNil *Stationary
	if _, err := NewSum(a, typedNil); err == nil {
		t.Error("typed nil part accepted")
	}
	c, _ := NewMatern32(2, 1, 1)
	s, _ := NewSum(a, c)
	u := make([]float64, 4)
	s.Params(u)
	// The second part rejects its value; the first must be restored.
	if err := s.SetParams([]float64{1, 1, 1, -1000}); err == nil {
		t.Error("underflowing variance accepted")
	}
	if err := s.SetParams([]float64{1, math.NaN(), 1, 1}); err == nil {
		t.Error("NaN accepted")
	}
	v := make([]float64, 4)
	s.Params(v)
	for i := range u {
		if u[i] != v[i] {
			t.Fatalf("failed SetParams changed parameter %d: %g -> %g", i, u[i], v[i])
		}
	}
}

// TestCombinationVarianceOverflow checks that sums and products whose
// parts have valid variances but whose combined variance overflows are
// rejected, by the constructors and by SetParams, leaving the parameters
// unchanged.
func TestCombinationVarianceOverflow(t *testing.T) {
	big := math.MaxFloat64 / 1.5 // valid alone; twice it, or squared, overflows
	a, _ := NewRBF(2, 1, big)
	b, _ := NewMatern32(2, 1, big)
	if _, err := NewSum(a, b); err == nil {
		t.Error("sum with an infinite variance accepted")
	}
	if _, err := NewProduct(a, b); err == nil {
		t.Error("product with an infinite variance accepted")
	}
	c, _ := NewRBF(2, 1, 1)
	d, _ := NewMatern32(2, 1, 1)
	s, _ := NewSum(c, d)
	p, _ := NewProduct(c, d)
	uBig := []float64{0, 0}
	ab := make([]float64, 2)
	a.Params(ab)
	uBig[0], uBig[1] = ab[0], ab[1] // lengthscale 1, variance big
	for name, k := range map[string]Kernel{"sum": s, "product": p} {
		before := make([]float64, 4)
		k.Params(before)
		if err := k.SetParams([]float64{uBig[0], uBig[1], uBig[0], uBig[1]}); err == nil {
			t.Errorf("%s: SetParams accepted an overflowing variance", name)
		}
		after := make([]float64, 4)
		k.Params(after)
		for i := range before {
			if before[i] != after[i] {
				t.Errorf("%s: failed SetParams changed parameter %d", name, i)
			}
		}
	}
}

// TestProductGradHugeVariance checks that a product whose first part's
// variance is near the float64 maximum (and whose product variance is
// finite) has finite gradients equal to 2^1000 times those of the same
// product with that variance divided by 2^1000.
func TestProductGradHugeVariance(t *testing.T) {
	const d, n, m = 3, 7, 5
	rng := rand.New(rand.NewPCG(3, 4))
	x := mat.NewDense(n, d, nil)
	z := mat.NewDense(m, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	for i := 0; i < m; i++ {
		for j := 0; j < d; j++ {
			z.Set(i, j, rng.NormFloat64())
		}
	}
	dK := mat.NewDense(n, m, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			dK.Set(i, j, 100*rng.NormFloat64())
		}
	}
	grads := func(v1 float64) (*mat.Dense, *mat.Dense, []float64) {
		a, _ := NewRBF(d, 0.8, v1)
		b, _ := NewMatern32(d, 1.3, 0x1p-30)
		pr, err := NewProduct(a, b)
		if err != nil {
			t.Fatal(err)
		}
		K := mat.NewDense(n, m, nil)
		pr.Matrix(K, x, z)
		dx := mat.NewDense(n, d, nil)
		dz := mat.NewDense(m, d, nil)
		dp := make([]float64, pr.NumParams())
		pr.MatrixGrad(dK, K, x, z, dx, dz, dp)
		return dx, dz, dp
	}
	const v = 0x1p1020
	hx, hz, hp := grads(v)
	sx, sz, sp := grads(v / 0x1p1000)
	near := func(what string, got, small float64) {
		want := small * 0x1p1000
		if math.IsInf(got, 0) || math.IsNaN(got) || math.Abs(got-want) > 1e-12*math.Abs(want)+1e-300 {
			t.Errorf("%s = %g, want %g", what, got, want)
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			near("dx", hx.At(i, j), sx.At(i, j))
		}
	}
	for i := 0; i < m; i++ {
		for j := 0; j < d; j++ {
			near("dz", hz.At(i, j), sz.At(i, j))
		}
	}
	// Every entry scales with σ₁² except the gradient of part 0's own
	// (unconstrained) variance, Σ dK ⊙ K₂ ⊙ k̂₁, which does not depend on it.
	near("dℓ₁", hp[0], sp[0])
	if math.Abs(hp[1]-sp[1]) > 1e-12*math.Abs(sp[1]) {
		t.Errorf("dσ₁² = %g, want %g", hp[1], sp[1])
	}
	for k := 2; k < len(hp); k++ {
		near("dparams", hp[k], sp[k])
	}
}

// negParams is a broken kernel with a negative number of parameters.
type negParams struct{ *Stationary }

func (negParams) NumParams() int { return -1 }

// TestCombinationNegativeParams checks that a part with a negative
// NumParams is an error, not a panic on the first use of the combination.
func TestCombinationNegativeParams(t *testing.T) {
	a, _ := NewRBF(2, 1, 1)
	b, _ := NewRBF(2, 1, 1)
	if _, err := NewSum(a, negParams{b}); err == nil {
		t.Error("Sum with a part of -1 parameters accepted")
	}
	if _, err := NewProduct(negParams{b}, a); err == nil {
		t.Error("Product with a part of -1 parameters accepted")
	}
}

// TestCombinationSharedParts checks that a kernel cannot be two parts of a
// sum or product, directly or through nested combinations: its parameters
// would appear twice in the vector, and SetParams would keep only the
// later copy's values (the model's Params and the kernel's would differ).
func TestCombinationSharedParts(t *testing.T) {
	a, _ := NewRBF(2, 1, 1)
	b, _ := NewMatern32(2, 1, 1)
	c, _ := NewMatern52(2, 1, 1)
	ab, err := NewSum(a, b)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := NewProduct(c, a)
	if err != nil {
		t.Fatal(err)
	}
	for name, build := range map[string]func() (Kernel, error){
		"Sum(a, a)":                      func() (Kernel, error) { return NewSum(a, a) },
		"Product(a, a)":                  func() (Kernel, error) { return NewProduct(a, a) },
		"Sum(a, b, a)":                   func() (Kernel, error) { return NewSum(a, b, a) },
		"Sum(Sum(a, b), a)":              func() (Kernel, error) { return NewSum(ab, a) },
		"Product(b, Sum(a, b))":          func() (Kernel, error) { return NewProduct(b, ab) },
		"Sum(s, s)":                      func() (Kernel, error) { return NewSum(ab, ab) },
		"Product(Sum(a, b), Prod(c, a))": func() (Kernel, error) { return NewProduct(ab, ca) },
	} {
		k, err := build()
		if err == nil {
			t.Errorf("%s accepted (%d parameters)", name, k.NumParams())
		} else if !strings.Contains(err.Error(), "same kernel") {
			t.Errorf("%s: error %q does not say why", name, err)
		}
	}
	// Separate kernels, and one kernel in two separate combinations, are
	// fine.
	if _, err := NewSum(ab, c); err != nil {
		t.Error(err)
	}
	if _, err := NewProduct(ca, b); err != nil {
		t.Error(err)
	}
}
