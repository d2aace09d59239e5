package exact

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// testData returns n points in d dimensions with targets from a smooth
// function plus noise.
func testData(n, d int, seed uint64) (*mat.Dense, []float64) {
	r := rand.New(rand.NewPCG(seed, 7))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < d; j++ {
			v := 2*r.Float64() - 1
			x.Set(i, j, v)
			s += math.Sin(3*v + float64(j))
		}
		y[i] = s + 0.1*r.NormFloat64()
	}
	return x, y
}

// kernelCase builds a fresh kernel for the tests.
type kernelCase struct {
	name string
	make func(d int) kernel.Kernel
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

var kernelCases = []kernelCase{
	{"rbf-ard", func(d int) kernel.Kernel {
		return must(kernel.NewRBF(d, 0.7, 1.3, kernel.ARD()))
	}},
	{"matern32", func(d int) kernel.Kernel { return must(kernel.NewMatern32(d, 0.9, 0.8)) }},
	{"rbf+periodic", func(d int) kernel.Kernel {
		return must(kernel.NewSum(must(kernel.NewRBF(d, 0.5, 1)), must(kernel.NewPeriodic(d, 1.1, 0.8, 0.6))))
	}},
	{"matern52*linear", func(d int) kernel.Kernel {
		return must(kernel.NewProduct(must(kernel.NewMatern52(d, 0.8, 1.2, kernel.ARD())), must(kernel.NewLinear(d, 0.5, 0.3))))
	}},
}

// newModel returns a model with kernel kc, noise variance 0.05 and tile
// order block.
func newModel(t *testing.T, k kernel.Kernel, noise float64, opts Options, lopts ...likelihood.Option) *Model {
	t.Helper()
	lik, err := likelihood.NewGaussian(noise, lopts...)
	if err != nil {
		t.Fatal(err)
	}
	md, err := New(k, lik, opts)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// denseK returns K(x, z) from the kernel's Matrix on whole matrices.
func denseK(k kernel.Kernel, x, z *mat.Dense) *mat.Dense {
	n, _ := x.Dims()
	m, _ := z.Dims()
	out := mat.NewDense(n, m, nil)
	k.Matrix(out, x, z)
	return out
}

// gonumReference returns log N(y | 0, K + s·I) and the Cholesky of K + s·I
// computed by gonum.
func gonumReference(t *testing.T, kxx *mat.Dense, y []float64, s float64) (float64, *mat.Cholesky) {
	t.Helper()
	n := len(y)
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := 0.5 * (kxx.At(i, j) + kxx.At(j, i))
			if i == j {
				v += s
			}
			sym.SetSym(i, j, v)
		}
	}
	var c mat.Cholesky
	if !c.Factorize(sym) {
		t.Fatal("gonum: not positive definite")
	}
	yv := mat.NewVecDense(n, append([]float64(nil), y...))
	var alpha mat.VecDense
	if err := c.SolveVecTo(&alpha, yv); err != nil {
		t.Fatal(err)
	}
	lml := -0.5*mat.Dot(yv, &alpha) - 0.5*c.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
	return lml, &c
}

// TestLogMarginalGonum checks the value against gonum's Cholesky for every
// kernel case, with tiles smaller than N (several, ragged) and one tile.
func TestLogMarginalGonum(t *testing.T) {
	x, y := testData(37, 3, 1)
	for _, kc := range kernelCases {
		for _, block := range []int{8, 0} {
			md := newModel(t, kc.make(3), 0.05, Options{BlockSize: block, Threads: 2})
			got, err := md.LogMarginal(x, y, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := gonumReference(t, denseK(md.kern, x, x), y, md.lik.NoiseVariance())
			if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
				t.Errorf("%s block %d: log marginal %.15g, gonum %.15g", kc.name, block, got, want)
			}
		}
	}
}

// TestLogMarginalClosedForm checks an RBF model against a kernel matrix
// written out from the formula k(x, x') = v·exp(−‖x − x'‖²/(2ℓ²)).
func TestLogMarginalClosedForm(t *testing.T) {
	x, y := testData(29, 2, 2)
	const ell, v, s = 0.6, 1.7, 0.03
	md := newModel(t, must(kernel.NewRBF(2, ell, v)), s, Options{BlockSize: 5})
	got, err := md.LogMarginal(x, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := len(y)
	k := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			d0, d1 := x.At(i, 0)-x.At(j, 0), x.At(i, 1)-x.At(j, 1)
			k.Set(i, j, v*math.Exp(-(d0*d0+d1*d1)/(2*ell*ell)))
		}
	}
	want, _ := gonumReference(t, k, y, s)
	if math.Abs(got-want) > 1e-10*math.Abs(want) {
		t.Errorf("log marginal %.15g, closed form %.15g", got, want)
	}
}

// checkGradFD compares md's gradient with central finite differences of
// its log marginal likelihood in every parameter.
func checkGradFD(t *testing.T, name string, md *Model, x *mat.Dense, y []float64, tol float64) {
	t.Helper()
	np := md.NumParams()
	p0 := make([]float64, np)
	md.Params(p0)
	grad := make([]float64, np)
	if _, err := md.LogMarginal(x, y, grad); err != nil {
		t.Fatal(err)
	}
	p := append([]float64(nil), p0...)
	eval := func(i int, v float64) float64 {
		p[i] = v
		if err := md.SetParams(p); err != nil {
			t.Fatal(err)
		}
		f, err := md.LogMarginal(x, y, nil)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for i := range p0 {
		h := 1e-5 * math.Max(1, math.Abs(p0[i]))
		fd := (eval(i, p0[i]+h) - eval(i, p0[i]-h)) / (2 * h)
		p[i] = p0[i]
		if math.Abs(fd-grad[i]) > tol*math.Max(1, math.Abs(fd)) {
			t.Errorf("%s: parameter %d: gradient %.10g, finite difference %.10g", name, i, grad[i], fd)
		}
	}
	if err := md.SetParams(p0); err != nil {
		t.Fatal(err)
	}
}

// TestGradientFiniteDifferences checks every gradient entry (kernel
// hyperparameters and noise) of every kernel case.
func TestGradientFiniteDifferences(t *testing.T) {
	x, y := testData(33, 3, 3)
	for _, kc := range kernelCases {
		for _, block := range []int{7, 0} {
			md := newModel(t, kc.make(3), 0.05, Options{BlockSize: block})
			checkGradFD(t, kc.name, md, x, y, 1e-6)
		}
	}
}

// duplicated returns data whose rows repeat, so that K is singular.
func duplicated() (*mat.Dense, []float64) {
	x0, y0 := testData(12, 2, 4)
	x := mat.NewDense(24, 2, nil)
	y := make([]float64, 24)
	for i := 0; i < 24; i++ {
		x.SetRow(i, x0.RawRowView(i%12))
		y[i] = y0[i%12] + 0.01*float64(i/12)
	}
	return x, y
}

// TestJitterGradient checks that a singular K + tiny σ²I is jittered and
// that the gradient, including the jitter's dependence on the mean
// diagonal, matches finite differences of the jittered value.
func TestJitterGradient(t *testing.T) {
	x, y := duplicated()
	// A large first jitter keeps the jittered matrix well conditioned, so
	// that finite differences are accurate.
	pol := chol.JitterPolicy{Start: 1e-4, MaxTries: 3, MinPivot: 1e-8}
	md := newModel(t, must(kernel.NewRBF(2, 0.8, 1)), 1e-14, Options{BlockSize: 8, Jitter: &pol}, likelihood.NoiseFloor(0))
	post, err := md.Posterior(x, y)
	if err != nil {
		t.Fatal(err)
	}
	kxx := denseK(md.kern, x, x)
	s := md.lik.NoiseVariance()
	mean := 0.0
	for i := 0; i < 24; i++ {
		mean += (kxx.At(i, i) + s) / 24
	}
	if want := 1e-4 * mean; math.Abs(post.Jitter()-want) > 1e-12*want {
		t.Fatalf("jitter %g, want %g", post.Jitter(), want)
	}
	got, err := md.LogMarginal(x, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := gonumReference(t, kxx, y, s+post.Jitter())
	if math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("jittered log marginal %.15g, gonum %.15g", got, want)
	}
	checkGradFD(t, "jittered", md, x, y, 1e-6)
}

// TestNotPositiveDefinite checks the typed error when the policy allows no
// (or too little) jitter.
func TestNotPositiveDefinite(t *testing.T) {
	x, y := duplicated()
	for _, p := range []chol.JitterPolicy{
		{MinPivot: 1e-11},
		{Start: 1e-16, MaxTries: 1, MinPivot: 1e-11},
	} {
		md := newModel(t, must(kernel.NewRBF(2, 0.8, 1)), 1e-14, Options{Jitter: &p}, likelihood.NoiseFloor(0))
		_, err := md.LogMarginal(x, y, nil)
		var npd *chol.NotPositiveDefiniteError
		if !errors.As(err, &npd) {
			t.Fatalf("policy %+v: error %v, want *chol.NotPositiveDefiniteError", p, err)
		}
		if npd.Pivot < 12 || npd.Floor <= 0 {
			t.Errorf("policy %+v: %+v: want a pivot ≥ 12 below a positive floor", p, npd)
		}
		if _, err := md.Posterior(x, y); !errors.As(err, &npd) {
			t.Errorf("Posterior: error %v, want *chol.NotPositiveDefiniteError", err)
		}
	}
}

// TestPredictGonum checks mean = K*ᵀK̃⁻¹y and variance = k** − K*ᵀK̃⁻¹K*
// against gonum, with more test points than one prediction chunk.
func TestPredictGonum(t *testing.T) {
	x, y := testData(41, 2, 5)
	xs, _ := testData(predictChunk+9, 2, 6)
	for _, kc := range kernelCases {
		md := newModel(t, kc.make(2), 0.07, Options{BlockSize: 16})
		post, err := md.Posterior(x, y)
		if err != nil {
			t.Fatal(err)
		}
		if post.NoiseVariance() != md.lik.NoiseVariance() {
			t.Errorf("NoiseVariance %g, want %g", post.NoiseVariance(), md.lik.NoiseVariance())
		}
		ts, _ := xs.Dims()
		mean, vr := make([]float64, ts), make([]float64, ts)
		if err := post.Predict(xs, mean, vr); err != nil {
			t.Fatal(err)
		}
		_, c := gonumReference(t, denseK(md.kern, x, x), y, md.lik.NoiseVariance())
		kxs := denseK(md.kern, x, xs)
		kss := denseK(md.kern, xs, xs)
		var sol mat.Dense
		if err := c.SolveTo(&sol, kxs); err != nil {
			t.Fatal(err)
		}
		var wantMean mat.VecDense
		wantMean.MulVec(sol.T(), mat.NewVecDense(len(y), y))
		for j := 0; j < ts; j++ {
			wv := kss.At(j, j) - mat.Dot(kxs.ColView(j), sol.ColView(j))
			if math.Abs(mean[j]-wantMean.AtVec(j)) > 1e-9 || math.Abs(vr[j]-math.Max(wv, 0)) > 1e-9 {
				t.Fatalf("%s point %d: mean %g var %g, gonum %g %g", kc.name, j, mean[j], vr[j], wantMean.AtVec(j), wv)
			}
		}
		mean2 := make([]float64, ts)
		if err := post.Predict(xs, mean2, nil); err != nil {
			t.Fatal(err)
		}
		for j := range mean {
			if mean2[j] != mean[j] {
				t.Fatalf("%s: mean without variance differs at %d", kc.name, j)
			}
		}
	}
}

// TestBadInput checks that bad shapes, NaN and Inf are errors.
func TestBadInput(t *testing.T) {
	x, y := testData(10, 2, 8)
	md := newModel(t, must(kernel.NewRBF(2, 1, 1)), 0.1, Options{})
	xn := mat.DenseCopyOf(x)
	xn.Set(3, 1, math.NaN())
	yn := append([]float64(nil), y...)
	yn[2] = math.Inf(1)
	x3 := mat.NewDense(10, 3, nil)
	cases := []struct {
		name string
		x    *mat.Dense
		y    []float64
		grad []float64
	}{
		{"nil x", nil, y, nil},
		{"wrong D", x3, y, nil},
		{"short y", x, y[:9], nil},
		{"NaN x", xn, y, nil},
		{"Inf y", x, yn, nil},
		{"short grad", x, y, make([]float64, 1)},
	}
	for _, c := range cases {
		if _, err := md.LogMarginal(c.x, c.y, c.grad); err == nil {
			t.Errorf("%s: LogMarginal: no error", c.name)
		}
		if c.grad == nil {
			if _, err := md.Posterior(c.x, c.y); err == nil {
				t.Errorf("%s: Posterior: no error", c.name)
			}
		}
	}
	if _, err := New(nil, nil, Options{}); err == nil {
		t.Error("New(nil): no error")
	}
	lik := must(likelihood.NewGaussian(0.1))
	if _, err := New(must(kernel.NewRBF(2, 1, 1)), lik, Options{Threads: -1}); err == nil {
		t.Error("New(Threads -1): no error")
	}
	bad := chol.JitterPolicy{MaxTries: 2}
	if _, err := New(must(kernel.NewRBF(2, 1, 1)), lik, Options{Jitter: &bad}); err == nil {
		t.Error("New(bad jitter): no error")
	}
	if err := md.SetParams([]float64{1}); err == nil {
		t.Error("SetParams(short): no error")
	}
	if err := md.SetParams([]float64{0, math.NaN(), 0}); err == nil {
		t.Error("SetParams(NaN): no error")
	}
	post, err := md.Posterior(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if err := post.Predict(x3, make([]float64, 10), nil); err == nil {
		t.Error("Predict(wrong D): no error")
	}
	if err := post.Predict(x, make([]float64, 9), nil); err == nil {
		t.Error("Predict(short mean): no error")
	}
	if err := post.Predict(xn, make([]float64, 10), nil); err == nil {
		t.Error("Predict(NaN): no error")
	}
}

// TestLargerParallel checks value and gradient at an order where the
// factorization runs its parallel task graph and the default tiles are
// ragged (512 + 88), and that one and two threads agree.
func TestLargerParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	x, y := testData(600, 2, 9)
	var vals [2]float64
	for i, threads := range []int{1, 2} {
		md := newModel(t, must(kernel.NewRBF(2, 0.5, 1, kernel.ARD())), 0.02, Options{Threads: threads})
		v, err := md.LogMarginal(x, y, nil)
		if err != nil {
			t.Fatal(err)
		}
		vals[i] = v
		if threads == 2 {
			want, _ := gonumReference(t, denseK(md.kern, x, x), y, md.lik.NoiseVariance())
			if math.Abs(v-want) > 1e-9*math.Abs(want) {
				t.Errorf("log marginal %.15g, gonum %.15g", v, want)
			}
			checkGradFD(t, "n=600", md, x, y, 1e-6)
		}
	}
	if math.Abs(vals[0]-vals[1]) > 1e-10*math.Abs(vals[0]) {
		t.Errorf("one thread %.15g, two %.15g", vals[0], vals[1])
	}
}

// TestNotPositiveDefiniteParallel checks the failing pivot reported from
// the parallel factorization: a matrix whose rows from 550 on repeat
// earlier rows fails there.
func TestNotPositiveDefiniteParallel(t *testing.T) {
	x0, y0 := testData(550, 2, 10)
	x := mat.NewDense(600, 2, nil)
	y := make([]float64, 600)
	for i := 0; i < 600; i++ {
		x.SetRow(i, x0.RawRowView(i%550))
		y[i] = y0[i%550]
	}
	p := chol.JitterPolicy{MinPivot: 1e-11}
	md := newModel(t, must(kernel.NewRBF(2, 0.05, 1)), 1e-15, Options{Jitter: &p, Threads: 2}, likelihood.NoiseFloor(0))
	_, err := md.LogMarginal(x, y, nil)
	var npd *chol.NotPositiveDefiniteError
	if !errors.As(err, &npd) {
		t.Fatalf("error %v, want *chol.NotPositiveDefiniteError", err)
	}
	if npd.Pivot < 550 {
		t.Errorf("pivot %d, want ≥ 550 (the first repeated row)", npd.Pivot)
	}
}

// TestPredictConcurrent checks that concurrent Predict calls agree with a
// sequential one (run with -race to check that they only read shared
// state).
func TestPredictConcurrent(t *testing.T) {
	x, y := testData(50, 2, 11)
	xs, _ := testData(30, 2, 12)
	md := newModel(t, must(kernel.NewMatern52(2, 0.7, 1)), 0.05, Options{})
	post, err := md.Posterior(x, y)
	if err != nil {
		t.Fatal(err)
	}
	want, wantVar := make([]float64, 30), make([]float64, 30)
	if err := post.Predict(xs, want, wantVar); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			m, v := make([]float64, 30), make([]float64, 30)
			if err := post.Predict(xs, m, v); err != nil {
				errs <- err
				return
			}
			for i := range m {
				if m[i] != want[i] || v[i] != wantVar[i] {
					errs <- fmt.Errorf("point %d: %g, %g; sequential %g, %g", i, m[i], v[i], want[i], wantVar[i])
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestFit checks that Fit raises the log marginal likelihood, leaves the
// model at the reported optimum with a near-zero gradient, and stops with
// an error on a canceled context.
func TestFit(t *testing.T) {
	x, y := testData(60, 2, 13)
	md := newModel(t, must(kernel.NewRBF(2, 1, 1, kernel.ARD())), 0.2, Options{})
	res, err := md.Fit(context.Background(), x, y, train.LBFGSOptions{GradTol: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	grad := make([]float64, md.NumParams())
	v, err := md.LogMarginal(x, y, grad)
	if err != nil {
		t.Fatal(err)
	}
	if v != res.LogMarginal || !(res.LogMarginal > res.Initial) || res.Reason == "" {
		t.Errorf("result %+v, log marginal at the model's parameters %g", res, v)
	}
	for i, g := range grad {
		if math.Abs(g) > 1e-3 {
			t.Errorf("gradient entry %d is %g at the optimum (stop reason %s)", i, g, res.Reason)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := md.Fit(ctx, x, y, train.LBFGSOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled Fit: error %v", err)
	}
	if _, err := md.Fit(context.Background(), nil, y, train.LBFGSOptions{}); err == nil {
		t.Error("Fit(nil): no error")
	}
}
