package kernel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// moreKernels returns one of each kernel of periodic.go and dotproduct.go
// on R^d, ARD and not where that applies.
func moreKernels(t *testing.T, d int) map[string]Kernel {
	t.Helper()
	ls := make([]float64, d)
	for i := range ls {
		ls[i] = 0.6 + 0.3*float64(i)
	}
	must := func(k Kernel, err error) Kernel {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	return map[string]Kernel{
		"periodic":     must(NewPeriodic(d, 1.7, 0.8, 1.3)),
		"periodic/ARD": must(NewPeriodic(d, 2.3, 1, 0.9, Lengthscales(ls))),
		"rq":           must(NewRationalQuadratic(d, 0.7, 0.9, 1.2)),
		"rq/ARD":       must(NewRationalQuadratic(d, 2.5, 1, 0.8, Lengthscales(ls))),
		"linear":       must(NewLinear(d, 0.7, 0.4)),
		"polynomial":   must(NewPolynomial(d, 3, 0.5, 0.8)),
		"constant":     must(NewConstant(d, 1.4)),
		"white":        must(NewWhite(d, 0.3)),
	}
}

func TestMoreKernelsClosedForm(t *testing.T) {
	x := mat.NewDense(1, 2, []float64{0.3, -1.2})
	z := mat.NewDense(1, 2, []float64{1.1, 0.4})
	dx, dz := 0.3-1.1, -1.2-0.4
	xz := 0.3*1.1 + -1.2*0.4
	ls := []float64{0.8, 1.5}
	per, _ := NewPeriodic(2, 1.7, 1, 1.3, Lengthscales(ls))
	rq, _ := NewRationalQuadratic(2, 0.7, 1, 1.2, Lengthscales(ls))
	lin, _ := NewLinear(2, 0.7, 0.4)
	poly, _ := NewPolynomial(2, 3, 0.5, 0.8)
	cst, _ := NewConstant(2, 1.4)
	wh, _ := NewWhite(2, 0.3)
	s1, s2 := math.Sin(math.Pi*dx/1.7)/0.8, math.Sin(math.Pi*dz/1.7)/1.5
	r2 := dx*dx/0.64 + dz*dz/2.25
	for _, tc := range []struct {
		name string
		k    Kernel
		want float64
	}{
		{"periodic", per, 1.3 * math.Exp(-0.5*(s1*s1+s2*s2))},
		{"rq", rq, 1.2 * math.Pow(1+r2/1.4, -0.7)},
		{"linear", lin, 0.7*xz + 0.4},
		{"polynomial", poly, math.Pow(0.5*xz+0.8, 3)},
		{"constant", cst, 1.4},
		{"white", wh, 0},
	} {
		var K mat.Dense
		tc.k.Matrix(&K, x, z)
		if got := K.At(0, 0); math.Abs(got-tc.want) > 1e-14*math.Max(1, math.Abs(tc.want)) {
			t.Errorf("%s: k = %.17g, want %.17g", tc.name, got, tc.want)
		}
	}
	var K mat.Dense
	wh.Matrix(&K, x, x)
	if K.At(0, 0) != 0.3 {
		t.Errorf("white k(x, x) = %g, want 0.3", K.At(0, 0))
	}
}

func TestMoreKernelsMatrixGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const n, m, d = 6, 5, 3
	for name, k := range moreKernels(t, d) {
		for mode := 0; mode < 4; mode++ {
			x := randDense(rng, n, d, 0.8)
			z := randDense(rng, m, d, 0.8)
			checkMatrixGrad(t, name, k, x, z, mode, rng, 1e-6)
		}
	}
}

// checkDiagGradX compares DiagGrad with central finite differences of
// Σ dDiag ⊙ diag k(x, x) for every element of x and every parameter.
func checkDiagGradX(t *testing.T, name string, k Kernel, x *mat.Dense, rng *rand.Rand) {
	t.Helper()
	n, d := x.Dims()
	dd := make([]float64, n)
	for i := range dd {
		dd[i] = rng.NormFloat64()
	}
	f := func() float64 {
		diag := make([]float64, n)
		k.Diag(diag, x)
		s := 0.0
		for i, v := range diag {
			s += v * dd[i]
		}
		return s
	}
	dx := mat.NewDense(n, d, nil)
	dp := make([]float64, k.NumParams())
	k.DiagGrad(dd, x, dx, dp)
	const h = 1e-6
	for i := 0; i < n; i++ {
		for c := 0; c < d; c++ {
			old := x.At(i, c)
			x.Set(i, c, old+h)
			fp := f()
			x.Set(i, c, old-h)
			fm := f()
			x.Set(i, c, old)
			if want := (fp - fm) / (2 * h); math.Abs(dx.At(i, c)-want) > 1e-6*(1+math.Abs(want)) {
				t.Errorf("%s: Diag dx[%d,%d] = %g, want %g", name, i, c, dx.At(i, c), want)
			}
		}
	}
	u := make([]float64, len(dp))
	k.Params(u)
	for p := range dp {
		v := append([]float64(nil), u...)
		v[p] += h
		_ = k.SetParams(v)
		fp := f()
		v[p] -= 2 * h
		_ = k.SetParams(v)
		fm := f()
		_ = k.SetParams(u)
		if want := (fp - fm) / (2 * h); math.Abs(dp[p]-want) > 1e-6*(1+math.Abs(want)) {
			t.Errorf("%s: Diag dparams[%d] = %g, want %g", name, p, dp[p], want)
		}
	}
}

func TestMoreKernelsDiagGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for name, k := range moreKernels(t, 2) {
		checkDiagGradX(t, name, k, randDense(rng, 5, 2, 1), rng)
		// Diag agrees with the diagonal of Matrix(x, x).
		x := randDense(rng, 4, 2, 1)
		var K mat.Dense
		k.Matrix(&K, x, x)
		diag := make([]float64, 4)
		k.Diag(diag, x)
		for i, v := range diag {
			if math.Abs(v-K.At(i, i)) > 1e-14*math.Max(1, math.Abs(v)) {
				t.Errorf("%s: Diag[%d] = %g, Matrix diagonal %g", name, i, v, K.At(i, i))
			}
		}
	}
}

// minEigen returns the smallest eigenvalue of the symmetric matrix K.
func minEigen(t *testing.T, K *mat.Dense) float64 {
	t.Helper()
	n, _ := K.Dims()
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, 0.5*(K.At(i, j)+K.At(j, i)))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(sym, false) {
		t.Fatal("eigendecomposition failed")
	}
	return es.Values(nil)[0]
}

func TestMoreKernelsPSD(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	const n, d = 40, 3
	x := randDense(rng, n, d, 1.5)
	copy(x.RawRowView(5), x.RawRowView(7)) // a duplicate point
	ks := moreKernels(t, d)
	a, _ := NewActive(ks["periodic"], 4, []int{3, 0, 2})
	ks["sum"], _ = NewSum(ks["rq"], ks["linear"], ks["white"])
	ks["product"], _ = NewProduct(ks["periodic/ARD"], ks["polynomial"])
	for name, k := range ks {
		var K mat.Dense
		k.Matrix(&K, x, x)
		var tr float64
		for i := 0; i < n; i++ {
			tr += K.At(i, i)
		}
		if e := minEigen(t, &K); e < -1e-12*tr {
			t.Errorf("%s: smallest eigenvalue %g of a Gram matrix with trace %g", name, e, tr)
		}
	}
	x4 := randDense(rng, n, 4, 1)
	var K mat.Dense
	a.Matrix(&K, x4, x4)
	if e := minEigen(t, &K); e < -1e-12*float64(n) {
		t.Errorf("active: smallest eigenvalue %g", e)
	}
}

func TestMoreKernelsInCombinations(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	const n, m, d = 5, 4, 2
	ks := moreKernels(t, d)
	rbf, _ := NewRBF(d, 0.9, 1.1)
	sum, err := NewSum(rbf, ks["periodic"], ks["linear"], ks["white"], ks["constant"])
	if err != nil {
		t.Fatal(err)
	}
	prod, err := NewProduct(ks["rq/ARD"], ks["polynomial"], ks["periodic/ARD"])
	if err != nil {
		t.Fatal(err)
	}
	for name, k := range map[string]Kernel{"sum": sum, "product": prod} {
		for mode := 0; mode < 4; mode++ {
			checkMatrixGrad(t, name, k, randDense(rng, n, d, 0.8), randDense(rng, m, d, 0.8), mode, rng, 1e-6)
		}
		checkDiagGradX(t, name, k, randDense(rng, n, d, 1), rng)
	}
}

func TestActive(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	const n, m = 5, 4
	rbf, _ := NewRBF(3, 0.9, 1.1, ARD())
	per, _ := NewPeriodic(1, 1.3, 0.7, 0.8)
	lin, _ := NewLinear(2, 0.6, 0.3)
	wh, _ := NewWhite(1, 0.2)
	ar, err := NewActive(rbf, 5, []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	ap, _ := NewActive(per, 5, []int{3})
	al, _ := NewActive(lin, 5, []int{4, 1})
	aw, _ := NewActive(wh, 5, []int{2})
	sum, err := NewSum(ar, ap, aw)
	if err != nil {
		t.Fatal(err)
	}
	prod, _ := NewProduct(al, sum)
	for name, k := range map[string]Kernel{"rbf@0,1,2": ar, "periodic@3": ap, "linear@4,1": al, "white@2": aw, "sum": sum, "product": prod} {
		for mode := 0; mode < 4; mode++ {
			if mode == 3 && name == "product" {
				// Moving only the first argument makes it another set
				// of points, which drops the white noise that the
				// product multiplies: no derivative to compare with.
				continue
			}
			checkMatrixGrad(t, name, k, randDense(rng, n, 5, 0.8), randDense(rng, m, 5, 0.8), mode, rng, 1e-6)
		}
		checkDiagGradX(t, name, k, randDense(rng, n, 5, 1), rng)
	}
	// Equal to the base kernel on the selected columns.
	x := randDense(rng, n, 5, 1)
	z := randDense(rng, m, 5, 1)
	sel := func(a *mat.Dense, cols ...int) *mat.Dense {
		r, _ := a.Dims()
		out := mat.NewDense(r, len(cols), nil)
		for i := 0; i < r; i++ {
			for j, c := range cols {
				out.Set(i, j, a.At(i, c))
			}
		}
		return out
	}
	var got, want mat.Dense
	al.Matrix(&got, x, z)
	lin.Matrix(&want, sel(x, 4, 1), sel(z, 4, 1))
	if !mat.EqualApprox(&got, &want, 1e-15) {
		t.Error("linear@4,1 differs from linear on columns 4 and 1")
	}
	// White noise survives the column selection only within one set.
	var wx mat.Dense
	aw.Matrix(&wx, x, x)
	if wx.At(2, 2) != 0.2 || wx.At(1, 2) != 0 {
		t.Errorf("white@2 on one set: %v", mat.Formatted(&wx))
	}
	var cross mat.Dense
	aw.Matrix(&cross, x, z)
	if mat.Sum(&cross) != 0 {
		t.Error("white@2 between two sets is not zero")
	}
	// Clone copies the base kernel.
	cl := ar.Clone().(*Active)
	u := make([]float64, cl.NumParams())
	cl.Params(u)
	u[0] += 1
	if err := cl.SetParams(u); err != nil {
		t.Fatal(err)
	}
	if rbf.Lengthscales()[0] == cl.Base().(*Stationary).Lengthscales()[0] {
		t.Error("Active.Clone shares its base kernel")
	}
	for _, bad := range []struct {
		cols []int
		msg  string
	}{{[]int{0, 1}, "active columns"}, {[]int{0, 0, 1}, "repeated"}, {[]int{0, 1, 5}, "outside"}} {
		if _, err := NewActive(rbf, 5, bad.cols); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("NewActive(%v): error %v, want one containing %q", bad.cols, err, bad.msg)
		}
	}
	if _, err := NewSum(ar, rbf); err == nil {
		t.Error("NewSum accepted one kernel held directly and through Active")
	}
}

func TestWhiteCrossCovariance(t *testing.T) {
	wh, _ := NewWhite(2, 0.5)
	x := mat.NewDense(4, 2, []float64{0, 0, 1, 1, 2, 2, 3, 3})
	same := mat.DenseCopyOf(x) // equal values, another set of points
	var K mat.Dense
	wh.Matrix(&K, x, same)
	if mat.Sum(&K) != 0 {
		t.Error("white noise between two different matrices is not zero")
	}
	// A block of x paired with itself through two views is one set.
	a := x.Slice(1, 3, 0, 2)
	b := x.Slice(1, 3, 0, 2)
	var B mat.Dense
	wh.Matrix(&B, a, b)
	if B.At(0, 0) != 0.5 || B.At(1, 1) != 0.5 || B.At(0, 1) != 0 {
		t.Errorf("white noise on views of one block: %v", mat.Formatted(&B))
	}
	// Overlapping but different blocks are different sets.
	wh.Matrix(&B, x.Slice(0, 2, 0, 2), x.Slice(1, 3, 0, 2))
	if mat.Sum(&B) != 0 {
		t.Error("white noise between different blocks is not zero")
	}
}

func TestPeriodicRepeats(t *testing.T) {
	k, _ := NewPeriodic(1, 2.5, 0.7, 1.1)
	x := mat.NewDense(3, 1, []float64{0.3, 0.3 + 2.5, 0.3 - 7.5})
	z := mat.NewDense(2, 1, []float64{1.0, -4})
	var K mat.Dense
	k.Matrix(&K, x, z)
	for j := 0; j < 2; j++ {
		for i := 1; i < 3; i++ {
			if math.Abs(K.At(i, j)-K.At(0, j)) > 1e-12 {
				t.Errorf("k(x + n·p, z) = %g, k(x, z) = %g", K.At(i, j), K.At(0, j))
			}
		}
	}
}

func TestMoreKernelsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func() error
	}{
		{"periodic period 0", func() error { _, err := NewPeriodic(1, 0, 1, 1); return err }},
		{"periodic dim 0", func() error { _, err := NewPeriodic(0, 1, 1, 1); return err }},
		{"rq alpha NaN", func() error { _, err := NewRationalQuadratic(1, math.NaN(), 1, 1); return err }},
		{"rq ls tiny", func() error { _, err := NewRationalQuadratic(1, 1, 1e-200, 1); return err }},
		{"polynomial degree 0", func() error { _, err := NewPolynomial(1, 0, 1, 1); return err }},
		{"linear offset -1", func() error { _, err := NewLinear(1, 1, -1); return err }},
		{"constant Inf", func() error { _, err := NewConstant(1, math.Inf(1)); return err }},
		{"white 0", func() error { _, err := NewWhite(1, 0); return err }},
		{"active nil", func() error { _, err := NewActive(nil, 2, []int{0}); return err }},
	} {
		if tc.f() == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	k, _ := NewPeriodic(2, 1, 1, 1)
	if err := k.SetParams([]float64{1, math.NaN(), 1}); err == nil {
		t.Error("SetParams accepted NaN")
	}
	if err := k.SetParams([]float64{1, 1}); err == nil {
		t.Error("SetParams accepted a short vector")
	}
}

func TestMoreKernelsClone(t *testing.T) {
	for name, k := range moreKernels(t, 2) {
		c := k.(interface{ Clone() any }).Clone().(Kernel)
		u := make([]float64, k.NumParams())
		k.Params(u)
		v := append([]float64(nil), u...)
		v[0] += 0.5
		if err := c.SetParams(v); err != nil {
			t.Fatal(err)
		}
		w := make([]float64, k.NumParams())
		k.Params(w)
		if w[0] != u[0] {
			t.Errorf("%s: Clone shares parameters", name)
		}
	}
}

// TestMoreKernelsWorkers checks that the pair kernels' matrices, computed
// in parallel row chunks, do not depend on the goroutine budget.
func TestMoreKernelsWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	x := randDense(rng, 300, 2, 1)
	z := randDense(rng, 200, 2, 1)
	for name, k := range moreKernels(t, 2) {
		var a, b mat.Dense
		k.Matrix(&a, x, z)
		k.(interface{ SetWorkers(int) }).SetWorkers(1)
		k.Matrix(&b, x, z)
		if !mat.Equal(&a, &b) {
			t.Errorf("%s: the matrix depends on the number of workers", name)
		}
	}
}
