package kernel

import (
	"math"
	"math/rand/v2"
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
