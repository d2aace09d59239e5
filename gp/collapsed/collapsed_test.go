package collapsed

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
)

func randMat(rng *rand.Rand, r, c int, scale float64) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := range m.RawMatrix().Data {
		m.RawMatrix().Data[i] = scale * rng.NormFloat64()
	}
	return m
}

// toyData returns n points in d = 2 with a smooth target plus noise.
func toyData(n int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := randMat(rng, n, 2, 1)
	y := make([]float64, n)
	for i := range y {
		y[i] = math.Sin(2*x.At(i, 0)) + 0.5*x.At(i, 1) + 0.1*rng.NormFloat64()
	}
	return x, y
}

func newKernel(t testing.TB, ls, v float64) kernel.Kernel {
	k, err := kernel.NewRBF(2, ls, v)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newNoise(t testing.TB, s float64) *likelihood.Gaussian {
	g, err := likelihood.NewGaussian(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// ---- dense references ----

func kmat(k kernel.Kernel, a, b mat.Matrix) *mat.Dense {
	var out mat.Dense
	k.Matrix(&out, a, b)
	return &out
}

func inv(a mat.Matrix) *mat.Dense {
	var out mat.Dense
	if err := out.Inverse(a); err != nil {
		panic(err)
	}
	return &out
}

func sym(a *mat.Dense) *mat.SymDense {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			s.SetSym(i, j, 0.5*(a.At(i, j)+a.At(j, i)))
		}
	}
	return s
}

func logDet(a *mat.Dense) float64 {
	var c mat.Cholesky
	if !c.Factorize(sym(a)) {
		panic("not PD")
	}
	return c.LogDet()
}

// logNormal returns log N(y | mu, cov).
func logNormal(y, mu []float64, cov *mat.Dense) float64 {
	n := len(y)
	r := mat.NewVecDense(n, nil)
	for i := range y {
		r.SetVec(i, y[i]-mu[i])
	}
	var c mat.Cholesky
	if !c.Factorize(sym(cov)) {
		panic("not PD")
	}
	var a mat.VecDense
	c.SolveVecTo(&a, r)
	return -0.5*mat.Dot(r, &a) - 0.5*c.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
}

func mul(a, b mat.Matrix) *mat.Dense {
	var out mat.Dense
	out.Mul(a, b)
	return &out
}

func sub(a, b mat.Matrix) *mat.Dense {
	var out mat.Dense
	out.Sub(a, b)
	return &out
}

func addDiag(a *mat.Dense, s float64) *mat.Dense {
	out := mat.DenseCopyOf(a)
	n, _ := a.Dims()
	for i := 0; i < n; i++ {
		out.Set(i, i, out.At(i, i)+s)
	}
	return out
}

func trace(a mat.Matrix) float64 {
	n, _ := a.Dims()
	var t float64
	for i := 0; i < n; i++ {
		t += a.At(i, i)
	}
	return t
}

// denseSGPR is Titsias' bound (eq. 4) with dense N×N matrices.
func denseSGPR(k kernel.Kernel, s float64, z, x *mat.Dense, y []float64) float64 {
	kuu, kuf, kff := kmat(k, z, z), kmat(k, z, x), kmat(k, x, x)
	q := mul(kuf.T(), mul(inv(kuu), kuf))
	return logNormal(y, make([]float64, len(y)), addDiag(q, s)) - trace(sub(kff, q))/(2*s)
}

// solveParts holds the dense quantities of eq. (10).
type solveParts struct {
	cvv, cfv, cff, a *mat.Dense
	s                float64
}

func denseParts(k kernel.Kernel, s float64, z, o, x *mat.Dense) solveParts {
	kuu, kuf, kff := kmat(k, z, z), kmat(k, z, x), kmat(k, x, x)
	kuv, kvv, kvf := kmat(k, z, o), kmat(k, o, o), kmat(k, o, x)
	kuuInv := inv(kuu)
	q := mul(kuf.T(), mul(kuuInv, kuf))
	cvv := sub(kvv, mul(kuv.T(), mul(kuuInv, kuv)))
	cfv := sub(kvf.T(), mul(kuf.T(), mul(kuuInv, kuv)))
	return solveParts{cvv: cvv, cfv: cfv, cff: sub(kff, q), a: addDiag(q, s), s: s}
}

// eq10 evaluates the collapsed SOLVE-GP bound (eq. 10) at q(v⊥) = N(mv, sv).
func (p solveParts) eq10(y []float64, mv []float64, sv *mat.Dense) float64 {
	m2 := len(mv)
	cinv := inv(p.cvv)
	h := mul(p.cfv, cinv)
	mvv := mat.NewVecDense(m2, mv)
	var mu mat.VecDense
	mu.MulVec(h, mvv)
	sf := mat.DenseCopyOf(p.cff)
	sf.Add(sf, mul(h, mul(sub(sv, p.cvv), h.T())))
	var cm mat.VecDense
	cm.MulVec(cinv, mvv)
	kl := 0.5 * (trace(mul(cinv, sv)) + mat.Dot(mvv, &cm) - float64(m2) - logDet(sv) + logDet(p.cvv))
	return logNormal(y, mu.RawVector().Data, p.a) - trace(sf)/(2*p.s) - kl
}

// optimum returns Appendix C's m* and S*.
func (p solveParts) optimum(y []float64) ([]float64, *mat.Dense) {
	n := len(y)
	ainv := inv(p.a)
	cvf := p.cfv.T()
	t := mat.DenseCopyOf(p.cvv)
	t.Add(t, mul(cvf, mul(ainv, p.cfv)))
	var ay mat.VecDense
	ay.MulVec(ainv, mat.NewVecDense(n, y))
	var r mat.VecDense
	r.MulVec(cvf, &ay)
	var m mat.VecDense
	m.MulVec(mul(p.cvv, inv(t)), &r)
	t2 := mat.DenseCopyOf(p.cvv)
	cc := mul(cvf, p.cfv)
	cc.Scale(1/p.s, cc)
	t2.Add(t2, cc)
	return m.RawVector().Data, mul(p.cvv, mul(inv(t2), p.cvv))
}

// ---- tests ----

func TestSGPRMatchesDense(t *testing.T) {
	x, y := toyData(40, 1)
	rng := rand.New(rand.NewPCG(2, 2))
	z := randMat(rng, 6, 2, 1)
	k := newKernel(t, 0.8, 1.3)
	for _, chunk := range []int{0, 7, 40} {
		md, err := New(k, newNoise(t, 0.05), z, nil, Options{ChunkSize: chunk})
		if err != nil {
			t.Fatal(err)
		}
		got, err := md.Bound(x, y)
		if err != nil {
			t.Fatal(err)
		}
		want := denseSGPR(k, 0.05, z, x, y)
		if math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("chunk %d: SGPR bound %v, dense %v", chunk, got, want)
		}
	}
}

func TestSGPRExactWhenZEqualsX(t *testing.T) {
	x, y := toyData(25, 3)
	k := newKernel(t, 1, 1)
	s := 0.1
	md, err := New(k, newNoise(t, s), x, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := md.Bound(x, y)
	if err != nil {
		t.Fatal(err)
	}
	exact := logNormal(y, make([]float64, len(y)), addDiag(kmat(k, x, x), s))
	if math.Abs(got-exact) > 1e-8*math.Abs(exact) {
		t.Errorf("SGPR with Z = X: %v, exact log marginal likelihood %v", got, exact)
	}
}

func TestSolveGPMatchesEq10AtOptimum(t *testing.T) {
	x, y := toyData(35, 4)
	rng := rand.New(rand.NewPCG(5, 5))
	z := randMat(rng, 4, 2, 1)
	o := randMat(rng, 5, 2, 1.2)
	k := newKernel(t, 0.7, 1.1)
	s := 0.02
	p := denseParts(k, s, z, o, x)
	mStar, sStar := p.optimum(y)
	atOpt := p.eq10(y, mStar, sStar)
	for _, chunk := range []int{0, 6} {
		md, err := New(k, newNoise(t, s), z, o, Options{ChunkSize: chunk})
		if err != nil {
			t.Fatal(err)
		}
		got, err := md.Bound(x, y)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-atOpt) > 1e-8*math.Abs(atOpt) {
			t.Errorf("chunk %d: collapsed SOLVE-GP %v, eq. (10) at q* %v", chunk, got, atOpt)
		}
	}
	// q(v⊥) = prior gives SGPR(Z) exactly.
	prior := p.eq10(y, make([]float64, 5), p.cvv)
	if sg := denseSGPR(k, s, z, x, y); math.Abs(prior-sg) > 1e-8*math.Abs(sg) {
		t.Errorf("eq. (10) at the prior %v, SGPR %v", prior, sg)
	}
	// q* is optimal: perturbations of it give smaller values.
	for trial := 0; trial < 5; trial++ {
		mv := append([]float64(nil), mStar...)
		for i := range mv {
			mv[i] += 0.05 * rng.NormFloat64()
		}
		pert := randMat(rng, 5, 5, 0.05)
		sv := mat.DenseCopyOf(sStar)
		sv.Add(sv, mul(pert, pert.T()))
		if v := p.eq10(y, mv, sv); v > atOpt {
			t.Errorf("eq. (10) at a perturbed q: %v > optimum %v", v, atOpt)
		}
	}
	// SGPR(Z) ≤ SOLVE-GP(Z, O) ≤ SGPR(Z ∪ O).
	w := mat.NewDense(9, 2, nil)
	w.Stack(z, o)
	if lo, hi := denseSGPR(k, s, z, x, y), denseSGPR(k, s, w, x, y); !(lo <= atOpt && atOpt <= hi) {
		t.Errorf("ordering: SGPR(Z) %v, SOLVE-GP %v, SGPR(Z∪O) %v", lo, atOpt, hi)
	}
}

func checkGrad(t *testing.T, md *Model, x *mat.Dense, y []float64) {
	t.Helper()
	p := make([]float64, md.NumParams())
	md.Params(p)
	g := make([]float64, len(p))
	f0, err := md.BoundGrad(x, y, g)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := md.Bound(x, y); v != f0 {
		t.Errorf("Bound %v != BoundGrad %v", v, f0)
	}
	for i := range p {
		const h = 1e-5
		q := append([]float64(nil), p...)
		q[i] = p[i] + h
		md.SetParams(q)
		fp, err1 := md.Bound(x, y)
		q[i] = p[i] - h
		md.SetParams(q)
		fm, err2 := md.Bound(x, y)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		fd := (fp - fm) / (2 * h)
		if math.Abs(fd-g[i]) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("param %d of %d: gradient %v, finite difference %v", i, len(p), g[i], fd)
		}
	}
	md.SetParams(p)
}

func TestGradients(t *testing.T) {
	x, y := toyData(30, 6)
	rng := rand.New(rand.NewPCG(7, 7))
	z := randMat(rng, 4, 2, 1)
	o := randMat(rng, 3, 2, 1)
	for _, c := range []struct {
		name  string
		o     *mat.Dense
		chunk int
	}{{"SGPR", nil, 0}, {"SGPR chunked", nil, 8}, {"SOLVE-GP", o, 0}, {"SOLVE-GP chunked", o, 7}} {
		t.Run(c.name, func(t *testing.T) {
			md, err := New(newKernel(t, 0.9, 1.2), newNoise(t, 0.05), z, c.o, Options{ChunkSize: c.chunk})
			if err != nil {
				t.Fatal(err)
			}
			checkGrad(t, md, x, y)
		})
	}
	// Matérn-3/2 (the regression benchmarks' kernel), fixed inducing inputs.
	k, _ := kernel.NewMatern32(2, 1.1, 0.8)
	md, err := New(k, newNoise(t, 0.2), z, o, Options{FixInducing: true})
	if err != nil {
		t.Fatal(err)
	}
	if md.NumParams() != 3 {
		t.Fatalf("NumParams %d with fixed inducing inputs", md.NumParams())
	}
	checkGrad(t, md, x, y)
}

// TestJitterGradient checks BoundGrad where K_ww needs jitter (a repeated
// inducing input): the jitter scales with mean(diag(K_ww)), so with the
// kernel variance, and the gradient must include that. The inducing inputs
// stay fixed, so that every evaluation takes the same jitter branch.
func TestJitterGradient(t *testing.T) {
	x, y := toyData(30, 9)
	z := mat.NewDense(4, 2, []float64{0.1, 0.2, -0.5, 0.7, 0.9, -0.3, 0.1, 0.2})
	o := mat.NewDense(2, 2, []float64{0.4, 0.4, -0.8, -0.1})
	pol := chol.JitterPolicy{Start: 1e-3, MaxTries: 1}
	for _, c := range []struct {
		name string
		o    *mat.Dense
	}{{"SGPR", nil}, {"SOLVE-GP", o}} {
		t.Run(c.name, func(t *testing.T) {
			md, err := New(newKernel(t, 0.9, 1.2), newNoise(t, 0.05), z, c.o, Options{FixInducing: true, Jitter: &pol})
			if err != nil {
				t.Fatal(err)
			}
			nj := chol.NoJitter()
			if bare, _ := New(newKernel(t, 0.9, 1.2), newNoise(t, 0.05), z, c.o, Options{FixInducing: true, Jitter: &nj}); bare != nil {
				if _, err := bare.Bound(x, y); err == nil {
					t.Fatal("K_ww factors without jitter: the test needs it singular")
				}
			}
			checkGrad(t, md, x, y)
		})
	}
}

// negParams is a broken kernel with a negative number of parameters.
type negParams struct{ kernel.Kernel }

func (negParams) NumParams() int { return -1 }

func TestErrors(t *testing.T) {
	x, y := toyData(10, 8)
	z := mat.NewDense(2, 2, []float64{0, 0, 1, 1})
	k := newKernel(t, 1, 1)
	if _, err := New(k, newNoise(t, 0.1), mat.NewDense(2, 3, nil), nil, Options{}); err == nil {
		t.Error("wrong Z width accepted")
	}
	if _, err := New(k, newNoise(t, 0.1), z, mat.NewDense(1, 3, nil), Options{}); err == nil {
		t.Error("wrong O width accepted")
	}
	if _, err := New(nil, newNoise(t, 0.1), z, nil, Options{}); err == nil {
		t.Error("nil kernel accepted")
	}
	var typedNil *kernel.Stationary
	if _, err := New(typedNil, newNoise(t, 0.1), z, nil, Options{}); err == nil {
		t.Error("typed nil kernel accepted")
	}
	if _, err := New(negParams{k}, newNoise(t, 0.1), z, nil, Options{}); err == nil {
		t.Error("kernel with a negative NumParams accepted")
	}
	zn := mat.DenseCopyOf(z)
	zn.Set(0, 0, math.NaN())
	if _, err := New(k, newNoise(t, 0.1), zn, nil, Options{}); err == nil {
		t.Error("NaN Z accepted")
	}
	md, _ := New(k, newNoise(t, 0.1), z, nil, Options{})
	if _, err := md.Bound(x, y[:3]); err == nil {
		t.Error("length mismatch accepted")
	}
	yn := append([]float64(nil), y...)
	yn[2] = math.Inf(1)
	if _, err := md.Bound(x, yn); err == nil {
		t.Error("Inf target accepted")
	}
	if _, err := md.BoundGrad(x, y, make([]float64, 2)); err == nil {
		t.Error("short gradient accepted")
	}
	p := make([]float64, md.NumParams())
	md.Params(p)
	p[0] = math.NaN()
	if err := md.SetParams(p); err == nil {
		t.Error("NaN parameter accepted")
	}
	// Duplicate inducing inputs: the jitter policy factors K_ww; with no
	// jitter the error says what failed.
	dup := mat.NewDense(2, 2, []float64{0.5, 0.5, 0.5, 0.5})
	nj := chol.NoJitter()
	md, _ = New(k, newNoise(t, 0.1), dup, nil, Options{Jitter: &nj})
	if _, err := md.Bound(x, y); err == nil {
		t.Error("singular K_ww accepted without jitter")
	}
	md, _ = New(k, newNoise(t, 0.1), dup, nil, Options{})
	if v, err := md.Bound(x, y); err != nil || math.IsNaN(v) {
		t.Errorf("duplicate Z with default jitter: %v %v", v, err)
	}
}

// TestExtremeParameters evaluates the bounds at extreme but valid
// hyperparameters and with colliding inducing inputs: the result must be
// finite values and gradients, or a clear error — never NaN without one.
func TestExtremeParameters(t *testing.T) {
	x, y := toyData(30, 31)
	rng := rand.New(rand.NewPCG(32, 32))
	z := randMat(rng, 5, 2, 1)
	o := randMat(rng, 4, 2, 1)
	o.SetRow(0, z.RawRowView(0)) // an orthogonal point on top of an inducing point
	for _, ls := range []float64{1e-6, 1e-2, 1e2, 1e6} {
		for _, v := range []float64{1e-6, 1e6} {
			for _, s := range []float64{2e-6, 1e4} {
				for _, oo := range []*mat.Dense{nil, o} {
					for _, tight := range []bool{false, true} {
						if tight && oo != nil {
							continue
						}
						k, err := kernel.NewRBF(2, ls, v)
						if err != nil {
							t.Fatal(err)
						}
						md, err := New(k, newNoise(t, s), z, oo, Options{Tight: tight})
						if err != nil {
							t.Fatal(err)
						}
						g := make([]float64, md.NumParams())
						f, err := md.BoundGrad(x, y, g)
						if err != nil {
							t.Logf("ls %g var %g noise %g O %v tight %v: %v", ls, v, s, oo != nil, tight, err)
							if err.Error() == "" {
								t.Error("empty error message")
							}
							continue
						}
						if math.IsNaN(f) || math.IsInf(f, 0) {
							t.Errorf("ls %g var %g noise %g O %v tight %v: bound %v without error", ls, v, s, oo != nil, tight, f)
						}
						for i, gi := range g {
							if math.IsNaN(gi) || math.IsInf(gi, 0) {
								t.Errorf("ls %g var %g noise %g O %v: gradient %d is %v without error", ls, v, s, oo != nil, i, gi)
								break
							}
						}
					}
				}
			}
		}
	}
}

// TestMemoryChunked checks that with a fixed chunk size the allocations of
// BoundGrad are O((M+M₂)² + (M+M₂)·chunk), not proportional to N·(M+M₂).
func TestMemoryChunked(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	rng := rand.New(rand.NewPCG(51, 51))
	z := randMat(rng, 24, 2, 1)
	o := randMat(rng, 24, 2, 1)
	const chunk = 256
	alloc := func(n int) uint64 {
		x, y := toyData(n, 52)
		md, err := New(newKernel(t, 1, 1), newNoise(t, 0.1), z, o, Options{ChunkSize: chunk})
		if err != nil {
			t.Fatal(err)
		}
		g := make([]float64, md.NumParams())
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := md.BoundGrad(x, y, g); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(2048), alloc(32768)
	k := uint64(48)
	if perRow := 8 * k * 32768; large > perRow/2 {
		t.Errorf("BoundGrad allocated %d bytes for N = 32768 (an N×(M+M₂) matrix is %d)", large, perRow)
	}
	if large > 2*small+(1<<20) {
		t.Errorf("allocations grow with N: %d bytes at N = 2048, %d at N = 32768", small, large)
	}
	t.Logf("allocated %d bytes at N = 2048, %d at N = 32768", small, large)
}
