package convgp

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/patches"
)

func randDense(rng *rand.Rand, r, c int) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, rng.Float64())
		}
	}
	return m
}

// testImages returns n random images for k whose top 2/3 rows are zero in
// every channel, so that they contain repeated (all-zero) patches as real
// images do.
func testImages(rng *rand.Rand, n int, k *Kernel) *mat.Dense {
	cfg := k.geom.Config()
	H, W, C := cfg.Height, cfg.Width, cfg.Channels
	x := randDense(rng, n, k.Dim())
	for i := 0; i < n; i++ {
		for r := 0; r < 2*H/3; r++ {
			for c := 0; c < W; c++ {
				for ch := 0; ch < C; ch++ {
					j := (r*W+c)*C + ch
					if cfg.Layout == patches.NCHW {
						j = (ch*H+r)*W + c
					}
					x.Set(i, j, 0)
				}
			}
		}
	}
	return x
}

type testCase struct {
	name string
	cfg  Config
}

func testCases() []testCase {
	base := patches.Config{Height: 5, Width: 6, Channels: 2, PatchHeight: 3, PatchWidth: 2, StrideH: 1, StrideW: 2}
	pad := patches.Config{Height: 4, Width: 4, Channels: 1, PatchHeight: 3, PatchWidth: 3, Padding: patches.Same}
	blocks := patches.Config{Height: 11, Width: 10, Channels: 1, PatchHeight: 3, PatchWidth: 3}
	nchw := base
	nchw.Layout = patches.NCHW
	return []testCase{
		{"conv", Config{Patches: base, Variance: 1.3, Lengthscale: 0.8}},
		{"conv-fixedw", Config{Patches: base, Variance: 0.7, Lengthscale: 1.1, FixedWeights: true}},
		{"conv-same-nchw", Config{Patches: nchw, Variance: 0.9, Lengthscale: 0.9}},
		{"tick", Config{Patches: base, Variance: 1.1, Lengthscale: 0.9, TICK: true, LocLengthscale: 1.7}},
		{"tick-pad", Config{Patches: pad, Variance: 1.1, Lengthscale: 0.7, TICK: true, LocLengthscale: 2.5}},
		// 72 patches: the image variances take their pairs in blocks of
		// diagBlock rows, and these cross two block edges.
		{"tick-blocks", Config{Patches: blocks, Variance: 1.2, Lengthscale: 1.5, TICK: true, LocLengthscale: 2}},
		{"conv-blocks", Config{Patches: blocks, Variance: 0.8, Lengthscale: 1.3}},
	}
}

// newTestKernel builds the kernel with random (non-unit) weights.
func newTestKernel(t *testing.T, cfg Config, rng *rand.Rand) *Kernel {
	t.Helper()
	g, err := patches.New(cfg.Patches)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, g.NumPatches())
	for i := range w {
		w[i] = 0.5 + rng.Float64()
	}
	cfg.Weights = w
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// inducing returns M random inducing points; locations spread over the grid.
func inducing(k *Kernel, rng *rand.Rand, M int) *mat.Dense {
	z := randDense(rng, M, k.InducingDim())
	if k.TICK() {
		d := k.geom.PatchLen()
		for i := 0; i < M; i++ {
			z.Set(i, d, rng.Float64()*float64(k.geom.OutHeight()))
			z.Set(i, d+1, rng.Float64()*float64(k.geom.OutWidth()))
		}
	}
	return z
}

// brute-force covariances from the definition, straight loops.
func bruteKg(k *Kernel, a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return k.variance * math.Exp(-s/(2*k.ell*k.ell))
}

func bruteKl(k *Kernel, r1, c1, r2, c2 float64) float64 {
	if !k.tick {
		return 1
	}
	r := math.Hypot(r1-r2, c1-c2)
	s := math.Sqrt(3) * r / k.locEll
	return (1 + s) * math.Exp(-s)
}

// brutePatches extracts patch p of an image without package patches' copy
// kernels: taps at origin + (i·dilation, j·dilation), zeros in the padding,
// in the geometry's column order.
func brutePatches(k *Kernel, img []float64) [][]float64 {
	cfg := k.geom.Config()
	g := k.geom
	H, W, C := cfg.Height, cfg.Width, cfg.Channels
	dh, dw := max(cfg.DilationH, 1), max(cfg.DilationW, 1)
	out := make([][]float64, g.NumPatches())
	for p := range out {
		r0, c0 := g.Origin(p)
		v := make([]float64, 0, g.PatchLen())
		at := func(i, j, ch int) float64 {
			r, c := r0+i*dh, c0+j*dw
			if r < 0 || r >= H || c < 0 || c >= W {
				return 0
			}
			if cfg.Layout == patches.NCHW {
				return img[(ch*H+r)*W+c]
			}
			return img[(r*W+c)*C+ch]
		}
		chw := cfg.Columns == patches.ColumnsCHW || (cfg.Columns == patches.ColumnsDefault && cfg.Layout == patches.NCHW)
		if chw {
			for ch := 0; ch < C; ch++ {
				for i := 0; i < cfg.PatchHeight; i++ {
					for j := 0; j < cfg.PatchWidth; j++ {
						v = append(v, at(i, j, ch))
					}
				}
			}
		} else {
			for i := 0; i < cfg.PatchHeight; i++ {
				for j := 0; j < cfg.PatchWidth; j++ {
					for ch := 0; ch < C; ch++ {
						v = append(v, at(i, j, ch))
					}
				}
			}
		}
		out[p] = v
	}
	return out
}

// checkKuf compares column n of K = Matrix(z, x) with the definition, for
// the patches ps of image n.
func checkKuf(t *testing.T, k *Kernel, K, z *mat.Dense, n int, ps [][]float64) {
	t.Helper()
	d := k.geom.PatchLen()
	M, _ := z.Dims()
	for m := 0; m < M; m++ {
		zr := z.RawRowView(m)
		want := 0.0
		for p, xp := range ps {
			lr, lc := k.geom.Location(p)
			kl := 1.0
			if k.tick {
				kl = bruteKl(k, zr[d], zr[d+1], float64(lr), float64(lc))
			}
			want += k.w[p] * bruteKg(k, zr[:d], xp) * kl
		}
		if got := K.At(m, n); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("Kuf[%d,%d] = %v, want %v", m, n, got, want)
		}
	}
}

func TestBruteForce(t *testing.T) {
	for _, tc := range testCases() {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			k := newTestKernel(t, tc.cfg, rng)
			M, N := 4, 3
			z := inducing(k, rng, M)
			x := testImages(rng, N, k)
			d := k.geom.PatchLen()
			K := mat.NewDense(M, N, nil)
			k.Matrix(K, z, x)
			diag := make([]float64, N)
			k.Diag(diag, x)
			for n := 0; n < N; n++ {
				ps := brutePatches(k, x.RawRowView(n))
				checkKuf(t, k, K, z, n, ps)
				want := 0.0
				for p := range ps {
					for q := range ps {
						r1, c1 := k.geom.Location(p)
						r2, c2 := k.geom.Location(q)
						want += k.w[p] * k.w[q] * bruteKg(k, ps[p], ps[q]) *
							bruteKl(k, float64(r1), float64(c1), float64(r2), float64(c2))
					}
				}
				if math.Abs(diag[n]-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Errorf("diag[%d] = %v, want %v", n, diag[n], want)
				}
			}
			Kuu := mat.NewDense(M, M, nil)
			k.InducingMatrix(Kuu, z, z)
			for i := 0; i < M; i++ {
				for j := 0; j < M; j++ {
					a, b := z.RawRowView(i), z.RawRowView(j)
					want := bruteKg(k, a[:d], b[:d])
					if k.tick {
						want *= bruteKl(k, a[d], a[d+1], b[d], b[d+1])
					}
					if got := Kuu.At(i, j); math.Abs(got-want) > 1e-12 {
						t.Errorf("Kuu[%d,%d] = %v, want %v", i, j, got, want)
					}
				}
			}
			// The full-image covariance must be positive semi-definite
			// jointly with the inducing points: check the joint Gram
			// [Kuu Kuf; Kfu Kff] through its diagonal bound
			// Kff ≥ Kfu Kuu⁻¹ Kuf (Nyström never exceeds the prior).
			var ch mat.Cholesky
			jit := mat.NewSymDense(M, nil)
			for i := 0; i < M; i++ {
				for j := 0; j < M; j++ {
					v := Kuu.At(i, j)
					if i == j {
						v += 1e-10
					}
					jit.SetSym(i, j, v)
				}
			}
			if !ch.Factorize(jit) {
				t.Fatal("Kuu not positive definite")
			}
			var sol mat.Dense
			if err := ch.SolveTo(&sol, K); err != nil {
				t.Fatal(err)
			}
			for n := 0; n < N; n++ {
				q := mat.Dot(K.ColView(n), sol.ColView(n))
				if q > diag[n]*(1+1e-8) {
					t.Errorf("Nyström %v exceeds prior variance %v", q, diag[n])
				}
			}
		})
	}
}

// fd returns the central finite difference of f at v[i].
func fd(v []float64, i int, h float64, f func() float64) float64 {
	old := v[i]
	v[i] = old + h
	fp := f()
	v[i] = old - h
	fm := f()
	v[i] = old
	return (fp - fm) / (2 * h)
}

func checkClose(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
		t.Errorf("%s: analytic %.10g, finite difference %.10g", what, got, want)
	}
}

func TestGradients(t *testing.T) {
	for _, tc := range testCases() {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			k := newTestKernel(t, tc.cfg, rng)
			M, N := 3, 2
			z := inducing(k, rng, M)
			z2 := inducing(k, rng, M+1)
			x := testImages(rng, N, k)
			dK := randDense(rng, M, N)
			dKuu := randDense(rng, M, M)
			dKuv := randDense(rng, M, M+1)
			dDiag := []float64{0.7, -1.3}
			theta := make([]float64, k.NumParams())
			k.Params(theta)
			// Scalar objective J = <dK, Kuf> + <dDiag, diag> + <dKuu, Kuu(z,z)> + <dKuv, Kuv(z,z2)>.
			J := func() float64 {
				if err := k.SetParams(theta); err != nil {
					t.Fatal(err)
				}
				K := mat.NewDense(M, N, nil)
				k.Matrix(K, z, x)
				dg := make([]float64, N)
				k.Diag(dg, x)
				Kuu := mat.NewDense(M, M, nil)
				k.InducingMatrix(Kuu, z, z)
				Kuv := mat.NewDense(M, M+1, nil)
				k.InducingMatrix(Kuv, z, z2)
				s := mat.Sum(mulElem(dK, K)) + mat.Sum(mulElem(dKuu, Kuu)) + mat.Sum(mulElem(dKuv, Kuv))
				for i, v := range dg {
					s += dDiag[i] * v
				}
				return s
			}
			J()
			dz := mat.NewDense(M, k.InducingDim(), nil)
			dz2 := mat.NewDense(M+1, k.InducingDim(), nil)
			dx := mat.NewDense(N, k.Dim(), nil)
			dp := make([]float64, k.NumParams())
			k.MatrixGrad(dK, nil, z, x, dz, dx, dp)
			k.DiagGrad(dDiag, x, dx, dp)
			k.InducingMatrixGrad(dKuu, nil, z, z, dz, dz, dp)
			k.InducingMatrixGrad(dKuv, nil, z, z2, dz, dz2, dp)
			const h = 1e-6
			for i := range theta {
				// The weight parameters are P·w_p: steps scale with them.
				checkClose(t, "param", dp[i], fd(theta, i, h*math.Max(1, math.Abs(theta[i])), J))
			}
			zr := z.RawMatrix().Data
			for i := range zr {
				checkClose(t, "z", dz.RawMatrix().Data[i], fd(zr, i, h, J))
			}
			z2r := z2.RawMatrix().Data
			for i := range z2r {
				checkClose(t, "z2", dz2.RawMatrix().Data[i], fd(z2r, i, h, J))
			}
			xr := x.RawMatrix().Data
			for i := range xr {
				checkClose(t, "x", dx.RawMatrix().Data[i], fd(xr, i, h, J))
			}
		})
	}
}

func mulElem(a, b *mat.Dense) *mat.Dense {
	var c mat.Dense
	c.MulElem(a, b)
	return &c
}

// A convolutional kernel with one patch covering the whole image and unit
// weight is the plain RBF kernel on images.
func TestOnePatchIsPlainKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pc := patches.Config{Height: 4, Width: 3, Channels: 2, PatchHeight: 4, PatchWidth: 3}
	k, err := New(Config{Patches: pc, Variance: 1.7, Lengthscale: 1.3})
	if err != nil {
		t.Fatal(err)
	}
	if k.geom.NumPatches() != 1 || k.InducingDim() != k.Dim() {
		t.Fatal("not a single full patch")
	}
	rbf, err := kernel.NewRBF(k.Dim(), 1.3, 1.7)
	if err != nil {
		t.Fatal(err)
	}
	M, N := 5, 4
	z := randDense(rng, M, k.Dim())
	x := testImages(rng, N, k)
	got, want := mat.NewDense(M, N, nil), mat.NewDense(M, N, nil)
	k.Matrix(got, z, x)
	rbf.Matrix(want, z, x)
	if !mat.EqualApprox(got, want, 1e-12) {
		t.Errorf("Kuf differs from the plain kernel:\n%v\n%v", mat.Formatted(got), mat.Formatted(want))
	}
	gz, wz := mat.NewDense(M, M, nil), mat.NewDense(M, M, nil)
	k.InducingMatrix(gz, z, z)
	rbf.Matrix(wz, z, z)
	if !mat.EqualApprox(gz, wz, 1e-12) {
		t.Error("Kuu differs from the plain kernel")
	}
	gd, wd := make([]float64, N), make([]float64, N)
	k.Diag(gd, x)
	rbf.Diag(wd, x)
	for i := range gd {
		if math.Abs(gd[i]-wd[i]) > 1e-12 {
			t.Errorf("diag %v, want %v", gd[i], wd[i])
		}
	}
}

// Results do not depend on the number of workers beyond rounding of the
// final reduction. TICK, with more inducing points than locGradBlocks, so
// that the location gradients' blocks are uneven and split among the
// workers.
func TestWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	cfg := testCases()[3].cfg
	k1 := newTestKernel(t, cfg, rand.New(rand.NewPCG(9, 9)))
	cfg.Workers = 3
	k3 := newTestKernel(t, cfg, rand.New(rand.NewPCG(9, 9)))
	M, N := locGradBlocks+5, 7
	z := inducing(k1, rng, M)
	x := testImages(rng, N, k1)
	a, b := mat.NewDense(M, N, nil), mat.NewDense(M, N, nil)
	k1.Matrix(a, z, x)
	k3.Matrix(b, z, x)
	if !mat.Equal(a, b) {
		t.Error("Matrix depends on workers")
	}
	dK := randDense(rng, M, N)
	dx1, dx3 := mat.NewDense(N, k1.Dim(), nil), mat.NewDense(N, k1.Dim(), nil)
	dz1, dz3 := mat.NewDense(M, k1.InducingDim(), nil), mat.NewDense(M, k1.InducingDim(), nil)
	p1, p3 := make([]float64, k1.NumParams()), make([]float64, k1.NumParams())
	k1.MatrixGrad(dK, nil, z, x, dz1, dx1, p1)
	k3.MatrixGrad(dK, nil, z, x, dz3, dx3, p3)
	if !mat.Equal(dx1, dx3) {
		t.Error("dx depends on workers")
	}
	if !mat.EqualApprox(dz1, dz3, 1e-12) {
		t.Error("dz depends on workers beyond rounding")
	}
	for i := range p1 {
		if math.Abs(p1[i]-p3[i]) > 1e-12*math.Max(1, math.Abs(p1[i])) {
			t.Errorf("param grad %d: %v vs %v", i, p1[i], p3[i])
		}
	}
}

func TestNewErrors(t *testing.T) {
	pc := patches.Config{Height: 4, Width: 4, Channels: 1, PatchHeight: 2, PatchWidth: 2}
	bad := []Config{
		{Patches: pc, Variance: 0, Lengthscale: 1},
		{Patches: pc, Variance: 1, Lengthscale: math.NaN()},
		{Patches: pc, Variance: 1, Lengthscale: 1, TICK: true},
		{Patches: pc, Variance: 1, Lengthscale: 1, Weights: []float64{1}},
		{Patches: pc, Variance: 1, Lengthscale: 1, Weights: make([]float64, 9)},
		{Patches: patches.Config{Height: 1, Width: 1, Channels: 1, PatchHeight: 2, PatchWidth: 2}, Variance: 1, Lengthscale: 1},
	}
	bad[4].Weights[3] = math.Inf(1)
	for i, c := range bad {
		if _, err := New(c); err == nil {
			t.Errorf("config %d: no error", i)
		}
	}
	// One patch more than MaxTICKPatches: refused before its location
	// tables are allocated; without TICK the same geometry is fine.
	big := Config{Patches: patches.Config{Height: 1, Width: MaxTICKPatches + 1, Channels: 1, PatchHeight: 1, PatchWidth: 1},
		Variance: 1, Lengthscale: 1, TICK: true, LocLengthscale: 1}
	if _, err := New(big); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "patches") {
		t.Errorf("a TICK kernel with %d patches: %v", MaxTICKPatches+1, err)
	}
	big.TICK = false
	if _, err := New(big); err != nil {
		t.Errorf("the same geometry without TICK: %v", err)
	}
	k, err := New(Config{Patches: pc, Variance: 1, Lengthscale: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.SetParams([]float64{1}); err == nil {
		t.Error("SetParams: wrong length accepted")
	}
	p := make([]float64, k.NumParams())
	p[0] = math.NaN()
	if err := k.SetParams(p); err == nil {
		t.Error("SetParams: NaN accepted")
	}
}

// TestMinLengthscale checks that the patch and location lengthscales have
// gp/kernel's floor, at construction and in SetParams: below about 1e-154
// the squared lengthscale underflows to zero and InducingMatrix's diagonal
// was NaN (0/0), which gp's models reported only as a failed Cholesky
// factorization.
func TestMinLengthscale(t *testing.T) {
	pc := patches.Config{Height: 4, Width: 4, Channels: 1, PatchHeight: 2, PatchWidth: 2}
	for _, ls := range []float64{1e-160, 1e-300, kernel.MinLengthscale / 2} {
		if _, err := New(Config{Patches: pc, Variance: 1, Lengthscale: ls}); !errors.Is(err, ErrConfig) {
			t.Errorf("lengthscale %g: %v, want ErrConfig", ls, err)
		}
		if _, err := New(Config{Patches: pc, Variance: 1, Lengthscale: 1, TICK: true, LocLengthscale: ls}); !errors.Is(err, ErrConfig) {
			t.Errorf("location lengthscale %g: %v, want ErrConfig", ls, err)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tick := range []bool{false, true} {
		// At the floor the kernel is still finite.
		k, err := New(Config{Patches: pc, Variance: 1, Lengthscale: kernel.MinLengthscale, TICK: tick, LocLengthscale: kernel.MinLengthscale})
		if err != nil {
			t.Fatalf("TICK %v: lengthscales at the floor: %v", tick, err)
		}
		z := inducing(k, rng, 3)
		kuu := mat.NewDense(3, 3, nil)
		k.InducingMatrix(kuu, z, z)
		for i := 0; i < 3; i++ {
			if v := kuu.At(i, i); !(v > 0) || math.IsInf(v, 0) {
				t.Errorf("TICK %v: Kuu[%d,%d] = %v at the floor", tick, i, i, v)
			}
		}
		p := make([]float64, k.NumParams())
		k.Params(p)
		if err := k.SetParams(p); err != nil {
			t.Errorf("TICK %v: SetParams of its own parameters: %v", tick, err)
		}
		v, l, ll := k.Hyper()
		for i := 1; i < k.wOff(); i++ {
			q := append([]float64(nil), p...)
			q[i] = -460 // softplus: 1.7e-200
			if err := k.SetParams(q); !errors.Is(err, ErrConfig) {
				t.Errorf("TICK %v: parameter %d giving lengthscale %g: %v, want ErrConfig", tick, i, math.Exp(-460), err)
			}
			if v2, l2, ll2 := k.Hyper(); v2 != v || l2 != l || ll2 != ll {
				t.Errorf("TICK %v: a refused SetParams changed the kernel", tick)
			}
		}
	}
}

// TestLocTables checks the TICK location tables, filled from the distinct
// grid distances, against the Matérn-3/2 formula at every pair of patch
// locations, bit for bit, on a non-square output grid and after a change
// of the location lengthscale.
func TestLocTables(t *testing.T) {
	cfg := Config{Patches: patches.Config{Height: 7, Width: 9, Channels: 1, PatchHeight: 2, PatchWidth: 3},
		Variance: 1, Lengthscale: 1, TICK: true, LocLengthscale: 1.7}
	k := newTestKernel(t, cfg, rand.New(rand.NewPCG(3, 4)))
	for round := 0; round < 2; round++ {
		P := k.geom.NumPatches()
		for p := 0; p < P; p++ {
			for q := 0; q < P; q++ {
				dr, dc := k.locs[2*p]-k.locs[2*q], k.locs[2*p+1]-k.locs[2*q+1]
				sq := math.Sqrt(3*(dr*dr+dc*dc)) / k.locEll
				e := math.Exp(-sq)
				want, dwant := (1+sq)*e, sq*sq*e/k.locEll
				if got := k.klocPP[p*P+q]; math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("round %d: kloc[%d,%d] = %v, want %v", round, p, q, got, want)
				}
				if got := k.dlocPP[p*P+q]; math.Float64bits(got) != math.Float64bits(dwant) {
					t.Fatalf("round %d: dloc[%d,%d] = %v, want %v", round, p, q, got, dwant)
				}
			}
		}
		p := make([]float64, k.NumParams())
		k.Params(p)
		p[2] += 0.4 // the location lengthscale's unconstrained parameter
		before := k.locEll
		if err := k.SetParams(p); err != nil {
			t.Fatal(err)
		}
		if math.Abs(k.locEll-before) < 0.1 {
			t.Fatalf("SetParams changed the location lengthscale from %v to %v only", before, k.locEll)
		}
	}
}
