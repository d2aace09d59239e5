package kernel

import (
	"math"
	"math/rand/v2"
	"runtime/debug"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func randDense(rng *rand.Rand, r, c int, scale float64) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, scale*rng.NormFloat64())
		}
	}
	return m
}

// naiveK evaluates k(x, z) element by element from the definition.
func naiveK(f Family, ls []float64, variance float64, x, z []float64) float64 {
	s := 0.0
	for c := range x {
		l := ls[0]
		if len(ls) > 1 {
			l = ls[c]
		}
		d := (x[c] - z[c]) / l
		s += d * d
	}
	r := math.Sqrt(s)
	switch f {
	case RBF:
		return variance * math.Exp(-0.5*s)
	case Matern12:
		return variance * math.Exp(-r)
	case Matern32:
		return variance * (1 + math.Sqrt(3)*r) * math.Exp(-math.Sqrt(3)*r)
	case Matern52:
		return variance * (1 + math.Sqrt(5)*r + 5*s/3) * math.Exp(-math.Sqrt(5)*r)
	}
	panic("bad family")
}

type kernelCase struct {
	name string
	k    *Stationary
}

func allStationary(t *testing.T, dim int) []kernelCase {
	t.Helper()
	var out []kernelCase
	for _, f := range []Family{RBF, Matern12, Matern32, Matern52} {
		k, err := NewStationary(f, dim, 0.9, 1.7)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, kernelCase{f.String(), k})
		ls := make([]float64, dim)
		for i := range ls {
			ls[i] = 0.5 + 0.4*float64(i)
		}
		ka, err := NewStationary(f, dim, 1, 0.8, Lengthscales(ls))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, kernelCase{f.String() + "/ARD", ka})
	}
	return out
}

func TestStationaryMatrixAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, m, d = 7, 5, 3
	// Offset the data far from the origin to exercise the centring.
	x := randDense(rng, n, d, 1)
	z := randDense(rng, m, d, 1)
	for i := 0; i < n; i++ {
		x.Set(i, 0, x.At(i, 0)+1e5)
	}
	for j := 0; j < m; j++ {
		z.Set(j, 0, z.At(j, 0)+1e5)
	}
	for _, tc := range allStationary(t, d) {
		k := tc.k
		var K mat.Dense
		k.Matrix(&K, x, z)
		// A non-Dense view goes through the generic input path.
		var Kt mat.Dense
		k.Matrix(&Kt, x, mat.DenseCopyOf(z.T()).T())
		for i := 0; i < n; i++ {
			for j := 0; j < m; j++ {
				want := naiveK(k.family, k.ls, k.variance, x.RawRowView(i), z.RawRowView(j))
				if got := K.At(i, j); math.Abs(got-want) > 1e-12*k.variance {
					t.Errorf("%s: K[%d,%d] = %.17g, want %.17g", tc.name, i, j, got, want)
				}
				if got := Kt.At(i, j); math.Abs(got-want) > 1e-12*k.variance {
					t.Errorf("%s (view): K[%d,%d] = %.17g, want %.17g", tc.name, i, j, got, want)
				}
			}
		}
		// Symmetric case with a strided destination.
		big := mat.NewDense(n+2, n+3, nil)
		sub := big.Slice(1, n+1, 2, n+2).(*mat.Dense)
		k.Matrix(sub, x, x)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				want := naiveK(k.family, k.ls, k.variance, x.RawRowView(i), x.RawRowView(j))
				got := sub.At(i, j)
				if math.Abs(got-want) > 1e-12*k.variance {
					t.Errorf("%s sym: K[%d,%d] = %.17g, want %.17g", tc.name, i, j, got, want)
				}
				if got != sub.At(j, i) {
					t.Errorf("%s sym: not exactly symmetric at %d,%d", tc.name, i, j)
				}
			}
			if sub.At(i, i) != k.variance {
				t.Errorf("%s sym: diagonal %d = %g, want %g", tc.name, i, sub.At(i, i), k.variance)
			}
		}
		for j := 0; j < n+3; j++ {
			if big.At(0, j) != 0 || big.At(n+1, j) != 0 {
				t.Errorf("%s: write outside the destination view", tc.name)
			}
		}
		diag := make([]float64, n)
		k.Diag(diag, x)
		for i, v := range diag {
			if v != k.variance {
				t.Errorf("%s: Diag[%d] = %g", tc.name, i, v)
			}
		}
	}
}

// objective returns Σ dK ⊙ k(x, z) for the kernel's current parameters.
func objective(k Kernel, dK *mat.Dense, x, z *mat.Dense, same bool) float64 {
	var K mat.Dense
	if same {
		k.Matrix(&K, x, x)
	} else {
		k.Matrix(&K, x, z)
	}
	return mat.Sum(mulElem(&K, dK))
}

func mulElem(a, b *mat.Dense) *mat.Dense {
	var c mat.Dense
	c.MulElem(a, b)
	return &c
}

// checkMatrixGrad compares MatrixGrad with central finite differences of
// Σ dK ⊙ K for every element of x, z and every parameter. mode selects the
// symmetric variants: 0 distinct x and z, 1 same x with dx == dz, 2 same x
// with separate dx and dz, 3 same x with dz nil.
func checkMatrixGrad(t *testing.T, name string, k Kernel, x, z *mat.Dense, mode int, rng *rand.Rand, tol float64) {
	t.Helper()
	n, d := x.Dims()
	m, _ := z.Dims()
	same := mode != 0
	if same {
		z = x
		m = n
	}
	dK := randDense(rng, n, m, 1)
	if mode == 3 {
		if s, ok := k.(*Stationary); ok && s.family == Matern12 {
			// Perturbing only the first argument crosses the kink of
			// exp(−r) at r = 0, where the gradient is a convention.
			for i := 0; i < n; i++ {
				dK.Set(i, i, 0)
			}
		}
	}
	var K mat.Dense
	k.Matrix(&K, x, z)
	dx := randDense(rng, n, d, 1) // nonzero start: gradients accumulate
	dx0 := mat.DenseCopyOf(dx)
	var dz *mat.Dense
	switch mode {
	case 0, 2:
		dz = randDense(rng, m, d, 1)
	case 1:
		dz = dx
	}
	var dz0 *mat.Dense
	if dz != nil && mode != 1 {
		dz0 = mat.DenseCopyOf(dz)
	}
	np := k.NumParams()
	dp := make([]float64, np)
	for i := range dp {
		dp[i] = float64(i) + 0.25
	}
	dp0 := append([]float64(nil), dp...)
	k.MatrixGrad(dK, &K, x, z, dx, dz, dp)

	f := func() float64 { return objective(k, dK, x, z, same) }
	const h = 1e-6
	fd := func(p *float64) float64 {
		old := *p
		*p = old + h
		fp := f()
		*p = old - h
		fm := f()
		*p = old
		return (fp - fm) / (2 * h)
	}
	scale := 1 + mat.Norm(dK, 1)
	// Gradient with respect to x (includes the z side in the same modes).
	for i := 0; i < n; i++ {
		for c := 0; c < d; c++ {
			want := fd(&x.RawRowView(i)[c])
			got := dx.At(i, c) - dx0.At(i, c)
			if mode == 2 {
				got += dz.At(i, c) - dz0.At(i, c)
			}
			if mode == 3 {
				// Only the x-side contribution is in dx; compare with
				// the derivative through the first argument alone.
				want = fdFirstArg(k, dK, x, i, c, h)
			}
			if math.Abs(got-want) > tol*scale {
				t.Errorf("%s mode %d: dx[%d,%d] = %.10g, finite difference %.10g", name, mode, i, c, got, want)
			}
		}
	}
	if mode == 0 {
		for j := 0; j < m; j++ {
			for c := 0; c < d; c++ {
				want := fd(&z.RawRowView(j)[c])
				got := dz.At(j, c) - dz0.At(j, c)
				if math.Abs(got-want) > tol*scale {
					t.Errorf("%s: dz[%d,%d] = %.10g, finite difference %.10g", name, j, c, got, want)
				}
			}
		}
	}
	u := make([]float64, np)
	k.Params(u)
	for p := 0; p < np; p++ {
		g := func(delta float64) float64 {
			v := append([]float64(nil), u...)
			v[p] += delta
			if err := k.SetParams(v); err != nil {
				t.Fatal(err)
			}
			return f()
		}
		want := (g(h) - g(-h)) / (2 * h)
		if err := k.SetParams(u); err != nil {
			t.Fatal(err)
		}
		got := dp[p] - dp0[p]
		if math.Abs(got-want) > tol*scale {
			t.Errorf("%s mode %d: dparams[%d] = %.10g, finite difference %.10g", name, mode, p, got, want)
		}
	}
}

// fdFirstArg differentiates Σ dK ⊙ k(x, x') with respect to x[i,c] holding
// the second argument x' fixed.
func fdFirstArg(k Kernel, dK, x *mat.Dense, i, c int, h float64) float64 {
	xp := mat.DenseCopyOf(x)
	xm := mat.DenseCopyOf(x)
	xp.Set(i, c, x.At(i, c)+h)
	xm.Set(i, c, x.At(i, c)-h)
	var kp, km mat.Dense
	k.Matrix(&kp, xp, x)
	k.Matrix(&km, xm, x)
	return (mat.Sum(mulElem(&kp, dK)) - mat.Sum(mulElem(&km, dK))) / (2 * h)
}

func TestStationaryMatrixGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, m, d = 6, 5, 3
	for _, tc := range allStationary(t, d) {
		for mode := 0; mode < 4; mode++ {
			x := randDense(rng, n, d, 0.8)
			z := randDense(rng, m, d, 0.8)
			checkMatrixGrad(t, tc.name, tc.k, x, z, mode, rng, 1e-6)
		}
	}
}

func TestStationaryDiagGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := randDense(rng, 4, 2, 1)
	for _, tc := range allStationary(t, 2) {
		k := tc.k
		dd := []float64{0.3, -1, 2, 0.5}
		np := k.NumParams()
		dp := make([]float64, np)
		dx := mat.NewDense(4, 2, nil)
		k.DiagGrad(dd, x, dx, dp)
		u := make([]float64, np)
		k.Params(u)
		f := func() float64 {
			diag := make([]float64, 4)
			k.Diag(diag, x)
			return mat.Dot(mat.NewVecDense(4, diag), mat.NewVecDense(4, dd))
		}
		for p := 0; p < np; p++ {
			const h = 1e-6
			v := append([]float64(nil), u...)
			v[p] += h
			_ = k.SetParams(v)
			fp := f()
			v[p] -= 2 * h
			_ = k.SetParams(v)
			fm := f()
			_ = k.SetParams(u)
			if want := (fp - fm) / (2 * h); math.Abs(dp[p]-want) > 1e-7 {
				t.Errorf("%s: Diag dparams[%d] = %g, want %g", tc.name, p, dp[p], want)
			}
		}
		if mat.Norm(dx, 1) != 0 {
			t.Errorf("%s: stationary DiagGrad changed dx", tc.name)
		}
	}
}

func TestStationaryPSD(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, d = 60, 4
	x := randDense(rng, n, d, 1)
	// Add duplicates and near-duplicates.
	copy(x.RawRowView(1), x.RawRowView(0))
	copy(x.RawRowView(2), x.RawRowView(0))
	x.Set(2, 1, x.At(2, 1)+1e-9)
	for _, tc := range allStationary(t, d) {
		var K mat.Dense
		tc.k.Matrix(&K, x, x)
		sym := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if K.At(i, j) != K.At(j, i) {
					t.Fatalf("%s: K not symmetric", tc.name)
				}
				sym.SetSym(i, j, K.At(i, j))
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(sym, false) {
			t.Fatal("eigen failed")
		}
		vals := eig.Values(nil)
		if vals[0] < -1e-13*float64(n)*tc.k.variance {
			t.Errorf("%s: smallest eigenvalue %g", tc.name, vals[0])
		}
	}
}

func TestStationaryDuplicatesAndExtremes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n, d = 5, 3
	x := randDense(rng, n, d, 1)
	copy(x.RawRowView(3), x.RawRowView(1))
	z := mat.DenseCopyOf(x) // distinct matrix holding the same points
	for _, f := range []Family{RBF, Matern12, Matern32, Matern52} {
		for _, ls := range []float64{MinLengthscale, 1e-8, 1, 1e8, 1e100, 1e300} {
			for _, ard := range []bool{false, true} {
				var opts []Option
				if ard {
					opts = append(opts, ARD())
				}
				k, err := NewStationary(f, d, ls, 2, opts...)
				if err != nil {
					t.Fatal(err)
				}
				for _, zz := range []*mat.Dense{x, z} {
					var K mat.Dense
					k.Matrix(&K, x, zz)
					dK := randDense(rng, n, n, 1)
					dx := mat.NewDense(n, d, nil)
					dz := mat.NewDense(n, d, nil)
					dp := make([]float64, k.NumParams())
					k.MatrixGrad(dK, &K, x, zz, dx, dz, dp)
					for _, v := range append(append(append([]float64(nil), K.RawMatrix().Data...), dx.RawMatrix().Data...), append(dz.RawMatrix().Data, dp...)...) {
						if math.IsNaN(v) || math.IsInf(v, 0) {
							t.Fatalf("%v ls=%g ard=%v: non-finite result %g", f, ls, ard, v)
						}
					}
					// Coincident points: k = σ² up to rounding of the distance.
					if got := K.At(1, 3); math.Abs(got-2) > 1e-6 {
						t.Errorf("%v ls=%g: k(duplicate) = %g, want 2", f, ls, got)
					}
				}
			}
		}
	}
}

func TestStationaryErrors(t *testing.T) {
	if _, err := NewRBF(0, 1, 1); err == nil {
		t.Error("dim 0 accepted")
	}
	// Dimensions whose per-dimension arrays cannot be allocated are
	// refused, not attempted (makeslice used to panic).
	for _, dim := range []int{MaxDim + 1, 1 << 50, math.MaxInt} {
		for _, opts := range [][]Option{nil, {ARD()}} {
			if _, err := NewRBF(dim, 1, 1, opts...); err == nil {
				t.Errorf("dim %d accepted (ARD %v)", dim, opts != nil)
			}
		}
	}
	if k, err := NewRBF(1<<20, 1, 1, ARD()); err != nil || k.NumParams() != 1<<20+1 {
		t.Errorf("dim 2²⁰: %v", err)
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1), 1e-200} {
		if _, err := NewRBF(2, bad, 1); err == nil {
			t.Errorf("lengthscale %g accepted", bad)
		}
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := NewMatern32(2, 1, bad); err == nil {
			t.Errorf("variance %g accepted", bad)
		}
	}
	if _, err := NewRBF(2, 1, 1, Lengthscales([]float64{1})); err == nil {
		t.Error("wrong number of ARD lengthscales accepted")
	}
	if _, err := NewRBF(2, 1, 1, Lengthscales([]float64{1, -1})); err == nil {
		t.Error("negative ARD lengthscale accepted")
	}
	if _, err := NewStationary(Family(9), 2, 1, 1); err == nil {
		t.Error("bad family accepted")
	}
	k, _ := NewMatern52(2, 1, 1, ARD())
	u := make([]float64, k.NumParams())
	k.Params(u)
	for _, bad := range [][]float64{
		{math.NaN(), 0, 0}, {0, math.Inf(1), 0}, {0, 0, math.Inf(-1)},
		{0, 0}, {-1000, 0, 0}, {0, 0, -800},
	} {
		if err := k.SetParams(bad); err == nil {
			t.Errorf("SetParams(%v) accepted", bad)
		}
	}
	v := make([]float64, k.NumParams())
	k.Params(v)
	for i := range u {
		if u[i] != v[i] {
			t.Error("failed SetParams changed the parameters")
		}
	}
}

func TestStationaryShapePanics(t *testing.T) {
	k, _ := NewRBF(2, 1, 1)
	x := mat.NewDense(3, 2, nil)
	bad := mat.NewDense(3, 3, nil)
	for name, f := range map[string]func(){
		"x cols":   func() { var K mat.Dense; k.Matrix(&K, bad, x) },
		"dst":      func() { k.Matrix(mat.NewDense(2, 2, nil), x, x) },
		"diag len": func() { k.Diag(make([]float64, 2), x) },
		"dK":       func() { k.MatrixGrad(mat.NewDense(2, 3, nil), mat.NewDense(3, 3, nil), x, x, nil, nil, nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic on bad shape", name)
				}
			}()
			f()
		}()
	}
}

// TestMatrixHugeInputs checks inputs whose squared norms (or column sums)
// overflow: distinct points must get covariance 0 and identical points the
// variance, never NaN.
func TestMatrixHugeInputs(t *testing.T) {
	cases := []struct {
		x, z []float64 // one-dimensional points
	}{
		{[]float64{0, 1e200}, []float64{1e200, 0}},             // squared norms overflow
		{[]float64{1.7e308, 1e300}, []float64{1.7e308, 1e300}}, // the column sum overflows too
	}
	for _, f := range []Family{RBF, Matern12, Matern32, Matern52} {
		k, err := NewStationary(f, 1, 1, 1.5)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			x := mat.NewDense(len(c.x), 1, c.x)
			z := mat.NewDense(len(c.z), 1, c.z)
			for _, same := range []bool{false, true} {
				zz := z
				if same {
					zz = x
				}
				kk := mat.NewDense(len(c.x), zz.RawMatrix().Rows, nil)
				k.Matrix(kk, x, zz)
				for i := range c.x {
					for j := 0; j < zz.RawMatrix().Rows; j++ {
						w := 0.0
						if c.x[i] == zz.At(j, 0) {
							w = 1.5
						}
						if got := kk.At(i, j); got != w {
							t.Errorf("%v x=%v z=%v: K[%d,%d] = %g, want %g", f, c.x, zz.RawMatrix().Data, i, j, got, w)
						}
					}
				}
			}
		}
	}
}

// TestMatrixGradHugeDistances checks that pairs whose squared distance
// overflows (and whose covariance is therefore 0) add nothing — in
// particular no NaN — to any gradient.
func TestMatrixGradHugeDistances(t *testing.T) {
	for _, f := range []Family{RBF, Matern12, Matern32, Matern52} {
		for _, ard := range []bool{false, true} {
			var opts []Option
			if ard {
				opts = append(opts, ARD())
			}
			k, err := NewStationary(f, 1, 1, 1)
			if ard {
				k, err = NewStationary(f, 1, 1, 1, opts...)
			}
			if err != nil {
				t.Fatal(err)
			}
			x := mat.NewDense(2, 1, []float64{0, 0.5})
			z := mat.NewDense(2, 1, []float64{1e160, 0.25})
			kk := mat.NewDense(2, 2, nil)
			k.Matrix(kk, x, z)
			dK := mat.NewDense(2, 2, []float64{1, 1, 1, 1})
			dx, dz := mat.NewDense(2, 1, nil), mat.NewDense(2, 1, nil)
			dp := make([]float64, k.NumParams())
			k.MatrixGrad(dK, kk, x, z, dx, dz, dp)
			for _, v := range append(append(append([]float64{}, dx.RawMatrix().Data...), dz.RawMatrix().Data...), dp...) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%v ard=%v: non-finite gradient: dx=%v dz=%v dparams=%v", f, ard, dx.RawMatrix().Data, dz.RawMatrix().Data, dp)
				}
			}
			// The far inducing input gets no gradient at all.
			if g := dz.At(0, 0); g != 0 {
				t.Errorf("%v ard=%v: dz of the far point = %g, want 0", f, ard, g)
			}
		}
	}
}

// TestDistProductCoincident checks that coincident points get a covariance
// of exactly σ² at any lengthscale, for blocks small enough for the direct
// loop and large enough for the GEMM micro-kernels: the squared norms and
// the distance product accumulate in the same order, so the expansion
// ‖x‖² + ‖z‖² − 2xᵀz cancels exactly even when the norms are ~1e200.
func TestDistProductCoincident(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 37))
	for _, sz := range []struct{ n, m, d int }{{5, 4, 3}, {300, 200, 8}, {70, 130, 20}} {
		x := randDense(rng, sz.n, sz.d, 1)
		z := randDense(rng, sz.m, sz.d, 1)
		i2 := 1 + rng.IntN(sz.n-1)
		copy(x.RawRowView(i2), x.RawRowView(0))
		var pairs [][2]int
		for _, j := range rng.Perm(sz.m)[:min(6, sz.m)] {
			i := rng.IntN(sz.n)
			copy(z.RawRowView(j), x.RawRowView(i))
			pairs = append(pairs, [2]int{i, j})
		}
		for _, f := range []Family{RBF, Matern12, Matern32, Matern52} {
			for _, ls := range []float64{1e-100, 1e-8, 1} {
				k, err := NewStationary(f, sz.d, ls, 2, ARD())
				if err != nil {
					t.Fatal(err)
				}
				var K, S mat.Dense
				k.Matrix(&K, x, z)
				for _, p := range pairs {
					if got := K.At(p[0], p[1]); got != 2 {
						t.Fatalf("%v %dx%d ls=%g: k(x_%d, z_%d) = %v for coincident points, want 2", f, sz.n, sz.m, ls, p[0], p[1], got)
					}
				}
				k.Matrix(&S, x, x)
				if S.At(0, i2) != 2 {
					t.Fatalf("%v %d ls=%g: k(x_0, x_%d) = %v for coincident points, want 2", f, sz.n, ls, i2, S.At(0, i2))
				}
			}
		}
	}
}

// TestStationaryNoAllocations checks that Matrix and MatrixGrad on one
// goroutine allocate nothing once their pooled scratch exists (a pointer to
// a local in a pooled task used to escape: one allocation per call).
func TestStationaryNoAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	// A collection would empty the scratch pools; their refills are not
	// what this test is about.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	rng := rand.New(rand.NewPCG(5, 6))
	k, err := NewMatern32(3, 0.8, 1.2, ARD())
	if err != nil {
		t.Fatal(err)
	}
	k.SetWorkers(1)
	x, z := randDense(rng, 40, 3, 1), randDense(rng, 30, 3, 1)
	K := mat.NewDense(40, 30, nil)
	dK := randDense(rng, 40, 30, 1)
	dx, dz := mat.NewDense(40, 3, nil), mat.NewDense(30, 3, nil)
	dp := make([]float64, k.NumParams())
	for name, f := range map[string]func(){
		"Matrix":     func() { k.Matrix(K, x, z) },
		"MatrixGrad": func() { k.MatrixGrad(dK, K, x, z, dx, dz, dp) },
	} {
		f()
		if a := testing.AllocsPerRun(20, f); a != 0 {
			t.Errorf("%s: %v allocations per call", name, a)
		}
	}
}
