package gp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/transform"
	"github.com/solvegp/solvegp/internal/floats"
)

// TestElemPasses checks the layer's elementwise passes, split over 1 to 5
// goroutines, bit for bit against plain loops, on blocks above elemParMin
// with strided vectors.
func TestElemPasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	const r, c, inc = 97, 401, 3
	if r*c < elemParMin {
		t.Fatal("block too small to split the passes")
	}
	vec := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	same := func(name string, threads int, got, want []float64) {
		t.Helper()
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%s, %d goroutines: element %d = %v, want %v", name, threads, i, got[i], want[i])
			}
		}
	}
	a, b, v := vec(r*c), vec(r*c), vec((c-1)*inc+1)
	for threads := 1; threads <= 5; threads++ {
		// Column sums of squares into a strided vector.
		s := vec((c-1)*inc + 1)
		want := append([]float64(nil), s...)
		for i := 0; i < r; i++ {
			for n := 0; n < c; n++ {
				want[n*inc] += -0.5 * a[i*c+n] * a[i*c+n]
			}
		}
		colSumSq(threads, s, inc, -0.5, r, c, a)
		same("colSumSq", threads, s, want)

		dst := vec(r * c)
		want = make([]float64, r*c)
		for i := 0; i < r; i++ {
			for n := 0; n < c; n++ {
				want[i*c+n] = -2 * a[i*c+n] * v[n*inc]
			}
		}
		scaleCols(threads, r, c, -2, a, v, inc, dst)
		same("scaleCols", threads, dst, want)

		want = append([]float64(nil), dst...)
		for i := range want {
			want[i] += b[i]
		}
		addTo(threads, r, c, b, dst)
		same("addTo", threads, dst, want)
	}
}

// TestTriPasses checks the row-parallel passes over M×M triangles and
// blocks (copy, clear, the KL adjoint terms, the packed-gradient
// accumulation and the unpacking of the packed parameters), split over 1
// to 5 goroutines, bit for bit against plain loops, at an order above
// elemParMin's threshold for the triangular passes.
func TestTriPasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	const n = 300
	if n*n/2 < elemParMin {
		t.Fatal("triangle too small to split the passes")
	}
	vec := func(k int) []float64 {
		v := make([]float64, k)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	np := n * (n + 1) / 2
	packed, p, g := vec(np), vec(n*n), vec(n*n)
	for i := 0; i < n; i++ {
		p[i*n+i] = 1 + math.Abs(p[i*n+i])
	}
	const kappa = 0.7
	for threads := 1; threads <= 5; threads++ {
		src, dst := vec(n*n), vec(n*n)
		copyPar(threads, n, n, src, dst)
		if !slices.Equal(dst, src) {
			t.Fatalf("copyPar, %d goroutines: copy differs", threads)
		}
		clearPar(threads, n, n, dst)
		if slices.ContainsFunc(dst, func(v float64) bool { return v != 0 }) {
			t.Fatalf("clearPar, %d goroutines: non-zero left", threads)
		}
		long := vec(3*clearVecWidth*maxElemParts + 5)
		clearVec(threads, long)
		if slices.ContainsFunc(long, func(v float64) bool { return v != 0 }) {
			t.Fatalf("clearVec, %d goroutines: non-zero left", threads)
		}

		pbar := vec(n * n)
		want := slices.Clone(pbar)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				want[i*n+j] += kappa * p[i*n+j]
			}
			want[i*n+i] -= kappa / p[i*n+i]
			clear(want[i*n+i+1 : i*n+n])
		}
		triAdjust(threads, n, pbar, p, kappa)
		if !slices.Equal(pbar, want) {
			t.Fatalf("triAdjust, %d goroutines: result differs", threads)
		}

		acc := vec(np)
		want = slices.Clone(acc)
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				want[i*(i+1)/2+j] += g[i*n+j]
			}
			want[i*(i+1)/2+i] += g[i*n+i] * transform.SoftplusDeriv(packed[i*(i+1)/2+i])
		}
		addTriGrad(threads, acc, n, g, packed)
		if !slices.Equal(acc, want) {
			t.Fatalf("addTriGrad, %d goroutines: result differs", threads)
		}

		// The fused whitened pass equals triAdjust then addTriGrad on the
		// unpacked triangle.
		lt := make([]float64, n*n)
		unpackTri(1, lt, n, packed)
		pb := vec(n * n)
		acc = vec(np)
		want = slices.Clone(acc)
		pbWant := slices.Clone(pb)
		triAdjust(1, n, pbWant, lt, kappa)
		addTriGrad(1, want, n, pbWant, packed)
		pbBefore := slices.Clone(pb)
		addTriGradKL(threads, acc, n, pb, packed, kappa)
		if !slices.Equal(acc, want) || !slices.Equal(pb, pbBefore) {
			t.Fatalf("addTriGradKL, %d goroutines: result differs", threads)
		}

		xv, yv, ga := vec(n), vec(n), vec(n*n)
		want = slices.Clone(ga)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				want[i*n+j] += xv[i] * yv[j]
			}
		}
		gerLower(threads, n, xv, yv, ga)
		for i, v := range want {
			if math.Abs(ga[i]-v) > 1e-14*(1+math.Abs(v)) {
				t.Fatalf("gerLower, %d goroutines: element %d = %v, want %v", threads, i, ga[i], v)
			}
		}

		l := vec(n * n)
		want = make([]float64, n*n)
		for i := 0; i < n; i++ {
			copy(want[i*n:i*n+i], packed[i*(i+1)/2:])
			want[i*n+i] = transform.Softplus(packed[i*(i+1)/2+i])
		}
		unpackTri(threads, l, n, packed)
		if !slices.Equal(l, want) {
			t.Fatalf("unpackTri, %d goroutines: result differs", threads)
		}
	}
}

// TestBackInit checks backInit for one and three latent functions against
// plain loops (to rounding) and bit for bit across 1 to 5 goroutines.
func TestBackInit(t *testing.T) {
	rng := rand.New(rand.NewPCG(55, 56))
	const m, n = 67, 601
	if m*n < elemParMin {
		t.Fatal("block too small to split the pass")
	}
	vec := func(k int) []float64 {
		v := make([]float64, k)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	for _, L := range []int{1, 3} {
		b, h, am, g := vec(m*n), vec(n), vec(m*L), vec(n*L)
		wantB, wantA := make([]float64, m*n), make([]float64, L*m)
		for i := 0; i < m; i++ {
			for k := 0; k < n; k++ {
				v := -2 * b[i*n+k] * h[k]
				for l := 0; l < L; l++ {
					v += am[i*L+l] * g[k*L+l]
					wantA[l*m+i] += b[i*n+k] * g[k*L+l]
				}
				wantB[i*n+k] = v
			}
		}
		var first []float64
		for threads := 1; threads <= 5; threads++ {
			bbar, abars := vec(m*n), vec(L*m)
			backInit(threads, &backBlock{m: m, b: b, bbar: bbar}, n, L, h, am, g, abars)
			for i, v := range wantB {
				if math.Abs(bbar[i]-v) > 1e-12*(1+math.Abs(v)) {
					t.Fatalf("L=%d, %d goroutines: B̄[%d] = %v, want %v", L, threads, i, bbar[i], v)
				}
			}
			for i, v := range wantA {
				if math.Abs(abars[i]-v) > 1e-10*(1+math.Abs(v)) {
					t.Fatalf("L=%d, %d goroutines: ā[%d] = %v, want %v", L, threads, i, abars[i], v)
				}
			}
			got := append(bbar, abars...)
			if first == nil {
				first = got
			} else if !slices.Equal(got, first) {
				t.Fatalf("L=%d: %d goroutines differ from one", L, threads)
			}
		}
	}
}

// TestFwdCols checks fwdCols for one and three latent functions against
// plain loops (to rounding) and bit for bit across 1 to 5 goroutines.
func TestFwdCols(t *testing.T) {
	rng := rand.New(rand.NewPCG(59, 60))
	const m, n = 67, 601
	vec := func(k int) []float64 {
		v := make([]float64, k)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	for _, L := range []int{1, 3} {
		src, basis, am, mu0 := vec(m*n), vec(m*n), vec(m*L), vec(n*L)
		wantSq, wantMu := make([]float64, n), slices.Clone(mu0)
		for i := 0; i < m; i++ {
			for k := 0; k < n; k++ {
				wantSq[k] += src[i*n+k] * src[i*n+k]
				for l := 0; l < L; l++ {
					wantMu[k*L+l] += basis[i*n+k] * am[i*L+l]
				}
			}
		}
		var first []float64
		for threads := 1; threads <= 5; threads++ {
			sq, mu := vec(n), slices.Clone(mu0)
			fwdCols(threads, &fwdBlock{m: m, basis: basis, src: src, sq: sq}, n, L, am, mu)
			got := append(sq, mu...)
			for i, v := range append(slices.Clone(wantSq), wantMu...) {
				if math.Abs(got[i]-v) > 1e-10*(1+math.Abs(v)) {
					t.Fatalf("L=%d, %d goroutines: value %d = %v, want %v", L, threads, i, got[i], v)
				}
			}
			if first == nil {
				first = got
			} else if !slices.Equal(got, first) {
				t.Fatalf("L=%d: %d goroutines differ from one", L, threads)
			}
		}
	}
}

// TestKLBlock checks klBlock against the plain sums (to rounding) and bit
// for bit across 1 to 5 goroutines, for orders below and above the
// parallel threshold.
func TestKLBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(57, 58))
	for _, m := range []int{5, 300} {
		p := make([]float64, m*m)
		a := make([]float64, m)
		for i := 0; i < m; i++ {
			a[i] = rng.NormFloat64()
			for j := 0; j < i; j++ {
				p[i*m+j] = rng.NormFloat64()
			}
			p[i*m+i] = 0.5 + rng.Float64()
		}
		var ss, ld float64
		for i := 0; i < m; i++ {
			for j := 0; j <= i; j++ {
				ss += p[i*m+j] * p[i*m+j]
			}
			ld += math.Log(p[i*m+i])
			ss += a[i] * a[i]
		}
		want := 0.5*(ss-float64(m)) - ld
		scratch := make([]float64, 2*klParts)
		first := klBlock(1, m, p, a, scratch)
		if math.Abs(first-want) > 1e-10*(1+math.Abs(want)) {
			t.Fatalf("m=%d: klBlock = %v, want %v", m, first, want)
		}
		for threads := 2; threads <= 5; threads++ {
			if got := klBlock(threads, m, p, a, scratch); math.Float64bits(got) != math.Float64bits(first) {
				t.Fatalf("m=%d, %d goroutines: %v, one goroutine %v", m, threads, got, first)
			}
		}
	}
}

// TestFinite checks finite with one NaN or infinity at every position of
// slices of several lengths (each lane of its four partial sums, and the
// tail).
func TestFinite(t *testing.T) {
	for n := 0; n <= 11; n++ {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(i) - 3.5
		}
		if !floats.AllFinite(s) {
			t.Fatalf("n=%d: finite values reported non-finite", n)
		}
		for i := 0; i < n; i++ {
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				old := s[i]
				s[i] = bad
				if floats.AllFinite(s) {
					t.Fatalf("n=%d: %v at %d not detected", n, bad, i)
				}
				s[i] = old
			}
		}
	}
	if !floats.AllFinite([]float64{math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, math.Copysign(0, -1)}) {
		t.Fatal("extreme finite values reported non-finite")
	}
}

// workerRecorder wraps a kernel or likelihood and records SetWorkers calls.
type workerRecorder struct{ got []int }

func (w *workerRecorder) SetWorkers(n int) { w.got = append(w.got, n) }

type recordingKernel struct {
	*kernel.Stationary
	rec workerRecorder
}

func (k *recordingKernel) SetWorkers(n int) { k.rec.SetWorkers(n); k.Stationary.SetWorkers(n) }

type recordingLik struct {
	*likelihood.RobustMax
	rec workerRecorder
}

func (l *recordingLik) SetWorkers(n int) { l.rec.SetWorkers(n); l.RobustMax.SetWorkers(n) }

// newRecorders returns an RBF kernel on R² and a three-class robust-max
// likelihood that record their SetWorkers calls.
func newRecorders(t *testing.T) (*recordingKernel, *recordingLik) {
	t.Helper()
	st, err := kernel.NewRBF(2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := likelihood.NewRobustMax(3)
	if err != nil {
		t.Fatal(err)
	}
	return &recordingKernel{Stationary: st}, &recordingLik{RobustMax: rm}
}

// TestWithThreadsSetsWorkers checks that WithThreads(t), t > 0, bounds the
// kernel's and the likelihood's goroutines too, and that without it they
// keep their own bound.
func TestWithThreadsSetsWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	z := randDense(rng, 5, 2, -1, 1)
	for _, c := range []struct {
		opts []Option
		want []int
	}{{nil, nil}, {[]Option{WithThreads(0)}, nil}, {[]Option{WithThreads(1)}, []int{1}}, {[]Option{WithThreads(3)}, []int{3}}} {
		k, lik := newRecorders(t)
		if _, err := NewSOLVEGP(k, lik, z, randDense(rng, 4, 2, -1, 1), c.opts...); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(k.rec.got, c.want) || !slices.Equal(lik.rec.got, c.want) {
			t.Errorf("%d options: SetWorkers calls %v (kernel) and %v (likelihood), want %v", len(c.opts), k.rec.got, lik.rec.got, c.want)
		}
	}
}
