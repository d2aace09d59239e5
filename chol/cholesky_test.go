package chol

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

var testSizes = []int{0, 1, 2, 3, 7, 16, 31, 32, 33, 47, 64, 65, 100, 129, 200}

// recursionSizes exceed the leaf order 256 so that the recursive levels
// (Dtrsm + Dsyrk) run too.
var recursionSizes = []int{257, 300, 520}

func TestFactorBackwardError(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	sizes := append(append([]int(nil), testSizes...), recursionSizes...)
	if raceEnabled {
		sizes = []int{0, 1, 33, 65, 257}
	}
	for _, n := range sizes {
		for _, cond := range []float64{1, 1e3, 1e6, 1e9, 1e12} {
			base := randSPD(rnd, n, max(1, n), cond)
			for _, pad := range []int{0, 3} {
				for _, threads := range []int{1, 2} {
					lda := max(1, n+pad)
					a := nanSlice((n-1)*lda + n)
					for i := 0; i < n; i++ {
						copy(a[i*lda:i*lda+n], base[i*n:i*n+n])
					}
					orig := append([]float64(nil), a...)
					var c Cholesky
					jit, err := c.Factor(n, a, lda, NoJitter(), threads)
					if err != nil {
						t.Fatalf("n=%d cond=%g: %v", n, cond, err)
					}
					if jit != 0 {
						t.Errorf("n=%d: jitter %g with NoJitter", n, jit)
					}
					for i := range a {
						if !(a[i] == orig[i] || math.IsNaN(a[i]) && math.IsNaN(orig[i])) {
							t.Fatalf("n=%d: Factor modified its input at %d", n, i)
						}
					}
					l := c.RawL()
					for i := 0; i < n; i++ {
						for j := i + 1; j < n; j++ {
							if l[i*n+j] != 0 {
								t.Fatalf("n=%d: upper triangle of L not zero at (%d,%d)", n, i, j)
							}
						}
						if !(l[i*n+i] > 0) {
							t.Fatalf("n=%d: L[%d,%d] = %g", n, i, i, l[i*n+i])
						}
					}
					if n == 0 {
						continue
					}
					be := backwardError(n, l, n, a, lda, 0)
					if tol := 2 * float64(n) * 0x1p-52; be > tol {
						t.Errorf("n=%d cond=%g threads=%d: backward error %g > %g", n, cond, threads, be, tol)
					}
				}
			}
		}
	}
}

func TestFactorKernelMatrices(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	sizes := []int{1, 20, 64, 150, 300}
	if raceEnabled {
		sizes = []int{1, 20, 64}
	}
	for _, n := range sizes {
		for _, d := range []int{1, 3} {
			x := clusteredPoints(rnd, n, d)
			for _, ell := range []float64{1e-3, 0.05, 1, 10, 1e3} {
				for name, k := range map[string][]float64{
					"rbf":      rbfMatrix(x, n, d, ell),
					"matern52": matern52Matrix(x, n, d, ell),
				} {
					var c Cholesky
					jit, err := c.Factor(n, k, n, DefaultJitter(), 0)
					if err != nil {
						t.Errorf("%s n=%d d=%d ell=%g: %v", name, n, d, ell, err)
						continue
					}
					be := backwardError(n, c.RawL(), n, k, n, jit)
					if tol := 2 * float64(n) * 0x1p-52; be > tol {
						t.Errorf("%s n=%d d=%d ell=%g jitter=%g: backward error %g > %g", name, n, d, ell, jit, be, tol)
					}
					// The reported jitter is the first in the sequence that works.
					if jit > 0 {
						var c2 Cholesky
						p := DefaultJitter()
						if jit/p.Growth >= p.Start*0.999 { // a smaller jitter was tried before
							if _, err := c2.Factor(n, withJitter(k, n, jit/p.Growth), n, NoJitter(), 1); err == nil {
								t.Errorf("%s n=%d ell=%g: jitter %g used but %g suffices", name, n, ell, jit, jit/p.Growth)
							}
						}
					}
				}
			}
		}
	}
}

// withJitter returns a copy of the n×n matrix a with jit added to its diagonal.
func withJitter(a []float64, n int, jit float64) []float64 {
	b := append([]float64(nil), a...)
	for i := 0; i < n; i++ {
		b[i*n+i] += jit
	}
	return b
}

func TestFactorFailingPivot(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	sizes := []int{1, 2, 5, 31, 32, 33, 64, 65, 97, 160, 300}
	if raceEnabled {
		sizes = []int{1, 5, 33, 65, 97}
	}
	for _, n := range sizes {
		for _, p := range []int{0, n / 3, n / 2, n - 1, 31, 32, 33, 255, 256, 257, 290} {
			if p >= n {
				continue
			}
			for _, target := range []float64{-1, -1e-6, math.Inf(1)} {
				l := randLower(rnd, n)
				a := gramLower(n, l)
				// Make the Schur complement at pivot p equal to target.
				var s float64
				for k := 0; k < p; k++ {
					s += l[p*n+k] * l[p*n+k]
				}
				a[p*n+p] = s + target
				if math.IsInf(target, 1) {
					// Overflow in the update: L[p,p-1] = −Inf makes pivot p −Inf
					// while all earlier pivots are finite and positive.
					a[p*n+p] = math.MaxFloat64
					for k := 0; k < p; k++ {
						a[p*n+k] = 0
					}
					if p == 0 {
						continue
					}
					a[p*n+p-1] = -math.MaxFloat64
					a[(p-1)*n+p-1] = 0.25
					for k := 0; k < p-1; k++ {
						a[(p-1)*n+k] = 0
					}
				}
				var c Cholesky
				_, err := c.Factor(n, a, n, NoJitter(), 2)
				var npd *NotPositiveDefiniteError
				if !errors.As(err, &npd) {
					t.Fatalf("n=%d p=%d target=%g: err = %v, want NotPositiveDefiniteError", n, p, target, err)
				}
				if math.IsInf(target, 1) {
					if npd.Pivot != p || !math.IsInf(npd.Value, -1) {
						t.Errorf("n=%d p=%d: got pivot %d value %g, want %d −Inf", n, p, npd.Pivot, npd.Value, p)
					}
				} else if npd.Pivot != p || math.Abs(npd.Value-target) > 1e-8 {
					t.Errorf("n=%d p=%d: got pivot %d value %g, want %d %g", n, p, npd.Pivot, npd.Value, p, target)
				}
				if c.Valid() || c.RawL() != nil || !math.IsNaN(c.LogDet()) {
					t.Errorf("n=%d: failed factor still valid", n)
				}
				if err := c.Solve(1, make([]float64, n), 1); !errors.Is(err, ErrNoFactor) {
					t.Errorf("Solve after failure: %v", err)
				}
				// Same answer from the LAPACK entry point.
				a2 := append([]float64(nil), a...)
				if math.IsInf(target, 1) {
					continue
				}
				if (Implementation{}).Dpotrf('L', n, a2, n) {
					t.Errorf("Dpotrf succeeded on non-PD matrix")
				} else if math.Abs(a2[p*n+p]-target) > 1e-8 {
					t.Errorf("Dpotrf left %g at pivot %d, want %g", a2[p*n+p], p, target)
				}
			}
		}
	}
}

func TestJitterPolicy(t *testing.T) {
	// A rank-1 matrix u·uᵀ: pivot 1 is 0 without jitter.
	const n = 40
	u := make([]float64, n)
	for i := range u {
		u[i] = 1 + float64(i%3)
	}
	a := make([]float64, n*n)
	var mean float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a[i*n+j] = u[i] * u[j]
		}
		mean += a[i*n+i] / n
	}
	var c Cholesky
	_, err := c.Factor(n, a, n, NoJitter(), 1)
	var npd *NotPositiveDefiniteError
	if !errors.As(err, &npd) || npd.Jitter != 0 {
		t.Fatalf("NoJitter: err = %v", err)
	}
	p := JitterPolicy{Start: 1e-12, Growth: 100, MaxTries: 3}
	jit, err := c.Factor(n, a, n, p, 1)
	if err != nil {
		t.Fatalf("jitter policy failed: %v", err)
	}
	if want := 1e-12 * mean; jit != want {
		t.Errorf("jitter %g, want %g (first try)", jit, want)
	}
	if be := backwardError(n, c.RawL(), n, a, n, jit); be > 4*n*0x1p-52 {
		t.Errorf("backward error %g", be)
	}
	if c.Jitter() != jit {
		t.Errorf("Jitter() = %g, want %g", c.Jitter(), jit)
	}
	// A matrix with a negative eigenvalue −0.5·mean needs jitter > 0.5·mean:
	// 1e-3·mean·10^t succeeds at t = 3 (jitter = mean) but not with 3 tries.
	b := append([]float64(nil), a...)
	for i := 0; i < n; i++ {
		b[i*n+i] -= 0.5 * mean * 0 // keep the rank-one part
	}
	b[(n-1)*n+n-1] -= 0.5 * a[(n-1)*n+n-1] // pivot n-1 gets −½·a_nn + 0
	m2 := 0.0
	for i := 0; i < n; i++ {
		m2 += b[i*n+i] / n
	}
	_, err = c.Factor(n, b, n, JitterPolicy{Start: 1e-3, MaxTries: 2}, 1)
	if !errors.As(err, &npd) {
		t.Fatalf("expected failure with 2 tries, got %v", err)
	}
	if want := 1e-2 * m2; math.Abs(npd.Jitter-want) > 1e-15*want {
		t.Errorf("last jitter %g, want %g", npd.Jitter, want)
	}
	if npd.Pivot != n-1 {
		t.Errorf("pivot %d, want %d", npd.Pivot, n-1)
	}
	jit, err = c.Factor(n, b, n, JitterPolicy{Start: 1e-3, MaxTries: 10}, 1)
	if err != nil {
		t.Fatalf("expected success with 10 tries: %v", err)
	}
	need := 0.5 * a[(n-1)*n+n-1]
	if !(jit >= need/10) || jit > 10*need+m2 {
		t.Errorf("jitter %g not in the expected range around %g", jit, need)
	}
	// Invalid policies.
	for _, bad := range []JitterPolicy{
		{MaxTries: -1}, {MaxTries: 1}, {Start: -1, MaxTries: 1}, {Start: math.NaN(), MaxTries: 1},
		{Start: math.Inf(1), MaxTries: 1}, {Start: 1, Growth: 1, MaxTries: 1}, {Start: 1, Growth: math.NaN(), MaxTries: 1},
	} {
		if _, err := c.Factor(n, a, n, bad, 1); !errors.Is(err, ErrPolicy) {
			t.Errorf("policy %+v: err = %v, want ErrPolicy", bad, err)
		}
	}
	if err := DefaultJitter().Validate(); err != nil {
		t.Error(err)
	}
}

// TestJitterMinPivot: a matrix that factors with a positive but tiny
// pivot (squared pivot 1e-14 relative to its mean diagonal) is accepted
// without a floor and jittered under one; without jittered tries the floor
// makes it an error that says so; the floor applies to jittered tries too.
func TestJitterMinPivot(t *testing.T) {
	const eps = 1e-14
	a := []float64{
		1, 0, 0,
		1, 1 + eps, 0,
		0.5, 0.5, 2,
	}
	mean := (1 + 1 + eps + 2) / 3
	var c Cholesky
	jit, err := c.Factor(3, a, 3, JitterPolicy{Start: 1e-10, MaxTries: 7}, 1)
	if err != nil || jit != 0 {
		t.Fatalf("no floor: jitter %g, err %v", jit, err)
	}
	if l := c.RawL(); math.Abs(l[4]*l[4]-eps) > 1e-2*eps {
		t.Fatalf("squared pivot 1 is %g, want about %g", l[4]*l[4], eps)
	}
	jit, err = c.Factor(3, a, 3, DefaultJitter(), 1)
	if want := 1e-10 * mean; err != nil || jit != want {
		t.Errorf("DefaultJitter: jitter %g, err %v; want %g", jit, err, want)
	}
	if l := c.RawL(); !(l[4]*l[4] >= 1e-11*mean) {
		t.Errorf("DefaultJitter: squared pivot 1 is %g, below the floor", l[4]*l[4])
	}
	_, err = c.Factor(3, a, 3, JitterPolicy{MinPivot: 1e-11}, 1)
	var npd *NotPositiveDefiniteError
	if !errors.As(err, &npd) || npd.Pivot != 1 || !(npd.Value > 0 && npd.Value < 1e-11*mean) || npd.Floor != 1e-11*mean ||
		!strings.Contains(err.Error(), "numerically singular: pivot 1 is") || !strings.Contains(err.Error(), "below the floor") {
		t.Errorf("floor without jitter: err %v (%+v)", err, npd)
	}
	if c.Valid() {
		t.Error("a failed factorization left a factor")
	}
	// A floor above the first jitter: the first try's pivot (about 1e-12)
	// is below it, the second's (about 1e-10) is not.
	jit, err = c.Factor(3, a, 3, JitterPolicy{Start: 1e-12, Growth: 100, MaxTries: 3, MinPivot: 1e-11}, 1)
	if want := 1e-10 * mean; err != nil || math.Abs(jit-want) > 1e-15*want {
		t.Errorf("floor above the first jitter: jitter %g, err %v; want %g", jit, err, want)
	}
	// A non-positive pivot is still reported as such, without a floor.
	b := []float64{1, 0, 1, 1 - eps}
	_, err = c.Factor(2, b, 2, JitterPolicy{MinPivot: 1e-11}, 1)
	if !errors.As(err, &npd) || npd.Value > 0 || npd.Floor != 0 || !strings.Contains(err.Error(), "not positive definite") {
		t.Errorf("negative pivot: err %v", err)
	}
	// A pivot that overflowed (the diagonal plus its jitter) is not finite,
	// not below the floor.
	huge := []float64{math.MaxFloat64, 0, math.MaxFloat64, math.MaxFloat64}
	_, err = c.Factor(2, huge, 2, DefaultJitter(), 1)
	if !errors.As(err, &npd) || !math.IsInf(npd.Value, 1) || npd.Floor != 0 || strings.Contains(err.Error(), "floor") {
		t.Errorf("overflowing pivot: err %v (%+v)", err, npd)
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := c.Factor(3, a, 3, JitterPolicy{MinPivot: bad}, 1); !errors.Is(err, ErrPolicy) {
			t.Errorf("MinPivot %v: err %v, want ErrPolicy", bad, err)
		}
	}
}

func TestFactorNonFinite(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	n := 50
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, pos := range [][2]int{{0, 0}, {10, 3}, {49, 49}, {49, 0}} {
			a := randSPD(rnd, n, n, 10)
			a[pos[0]*n+pos[1]] = v
			var c Cholesky
			_, err := c.Factor(n, a, n, DefaultJitter(), 1)
			var nf *NonFiniteError
			if !errors.As(err, &nf) || nf.Row != pos[0] || nf.Col != pos[1] || !(nf.Value == v || math.IsNaN(v) && math.IsNaN(nf.Value)) {
				t.Errorf("%g at %v: err = %v", v, pos, err)
			}
		}
	}
	// The strict upper triangle is not referenced.
	a := randSPD(rnd, n, n, 10)
	a[3*n+10] = math.NaN()
	var c Cholesky
	if _, err := c.Factor(n, a, n, NoJitter(), 1); err != nil {
		t.Errorf("NaN in the upper triangle: %v", err)
	}
}

func TestShapeErrors(t *testing.T) {
	var c Cholesky
	cases := []struct {
		n   int
		a   []float64
		lda int
	}{
		{-1, nil, 1}, {3, make([]float64, 9), 2}, {3, make([]float64, 8), 3}, {2, make([]float64, 5), 4},
		{1 << 32, make([]float64, 4), 1 << 32}, // (n−1)·lda + n overflows int
	}
	for _, tc := range cases {
		if _, err := c.Factor(tc.n, tc.a, tc.lda, NoJitter(), 1); !errors.Is(err, ErrShape) {
			t.Errorf("n=%d len=%d lda=%d: err = %v", tc.n, len(tc.a), tc.lda, err)
		}
	}
	a := []float64{4, 0, 2, 5}
	if _, err := c.Factor(2, a, 2, NoJitter(), 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Solve(2, make([]float64, 3), 2); !errors.Is(err, ErrShape) {
		t.Errorf("short B: %v", err)
	}
	if err := c.Solve(2, make([]float64, 4), 1); !errors.Is(err, ErrShape) {
		t.Errorf("bad ldb: %v", err)
	}
	if err := c.SolveLRight(1, make([]float64, 1), 2); !errors.Is(err, ErrShape) {
		t.Errorf("short right B: %v", err)
	}
	if err := c.Inverse(make([]float64, 3), 2); !errors.Is(err, ErrShape) {
		t.Errorf("short inverse: %v", err)
	}
	if err := c.Adjoint(make([]float64, 4), 2, make([]float64, 3), 2); !errors.Is(err, ErrShape) {
		t.Errorf("short abar: %v", err)
	}
	if err := Adjoint(2, []float64{0, 0, 1, 1}, 2, make([]float64, 4), 2, make([]float64, 4), 2, 1); err == nil {
		t.Errorf("Adjoint accepted a singular factor")
	}
	var empty Cholesky
	if err := empty.SolveL(1, make([]float64, 2), 1); !errors.Is(err, ErrNoFactor) {
		t.Errorf("unfactored: %v", err)
	}
}

// mulLower returns op(L)·B for the n×n lower L (stride n) and n×m B.
func mulLower(n, m int, l []float64, trans bool, b []float64, ldb int) []float64 {
	out := make([]float64, n*m)
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			var lik float64
			if trans {
				if k < i {
					continue
				}
				lik = l[k*n+i]
			} else {
				if k > i {
					break
				}
				lik = l[i*n+k]
			}
			for j := 0; j < m; j++ {
				out[i*m+j] += lik * b[k*ldb+j]
			}
		}
	}
	return out
}

func TestSolves(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 5, 33, 70, 130} {
		a := randSPD(rnd, n, max(n, 1), 100)
		var c Cholesky
		if _, err := c.Factor(n, a, max(n, 1), NoJitter(), 2); err != nil {
			t.Fatal(err)
		}
		l := c.RawL()
		for _, m := range []int{1, 3, 40} {
			ldb := m + 2
			b := make([]float64, max(0, (n-1)*ldb+m))
			for i := range b {
				b[i] = rnd.NormFloat64()
			}
			check := func(name string, got []float64, want func(x []float64) []float64) {
				t.Helper()
				r := want(got)
				var num, den float64
				for i := 0; i < n; i++ {
					for j := 0; j < m; j++ {
						num = math.Max(num, math.Abs(r[i*m+j]-b[i*ldb+j]))
						den = math.Max(den, math.Abs(b[i*ldb+j]))
					}
				}
				if num > 1e-10*(den+1) {
					t.Errorf("%s n=%d m=%d: residual %g", name, n, m, num)
				}
			}
			x := append([]float64(nil), b...)
			if err := c.SolveL(m, x, ldb); err != nil {
				t.Fatal(err)
			}
			check("SolveL", x, func(x []float64) []float64 { return mulLower(n, m, l, false, x, ldb) })
			x = append(x[:0], b...)
			if err := c.SolveLT(m, x, ldb); err != nil {
				t.Fatal(err)
			}
			check("SolveLT", x, func(x []float64) []float64 { return mulLower(n, m, l, true, x, ldb) })
			x = append(x[:0], b...)
			if err := c.Solve(m, x, ldb); err != nil {
				t.Fatal(err)
			}
			check("Solve", x, func(x []float64) []float64 {
				y := mulLower(n, m, l, true, x, ldb)
				return mulLower(n, m, l, false, y, m)
			})
			// Right-side solves on Bᵀ (m×n).
			bt := make([]float64, max(0, (m-1)*(n+1)+n))
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					bt[i*(n+1)+j] = b[j*ldb+i]
				}
			}
			for _, rc := range []struct {
				name string
				f    func(int, []float64, int) error
				// equivalent left solve
				g func(int, []float64, int) error
			}{
				{"SolveLTRight", c.SolveLTRight, c.SolveL},
				{"SolveLRight", c.SolveLRight, c.SolveLT},
				{"SolveRight", c.SolveRight, c.Solve},
			} {
				y := append([]float64(nil), bt...)
				if err := rc.f(m, y, n+1); err != nil {
					t.Fatal(err)
				}
				x = append(x[:0], b...)
				if err := rc.g(m, x, ldb); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						if d := math.Abs(y[i*(n+1)+j] - x[j*ldb+i]); d > 1e-10*(1+math.Abs(x[j*ldb+i])) {
							t.Fatalf("%s n=%d m=%d: (%d,%d) = %g, want %g", rc.name, n, m, i, j, y[i*(n+1)+j], x[j*ldb+i])
						}
					}
				}
			}
		}
	}
}

func TestInverseLogDet(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 2, 17, 33, 64, 65, 150} {
		a := randSPD(rnd, n, n, 1e4)
		var c Cholesky
		if _, err := c.Factor(n, a, n, NoJitter(), 2); err != nil {
			t.Fatal(err)
		}
		ldd := n + 1
		inv := nanSlice((n-1)*ldd + n)
		if err := c.Inverse(inv, ldd); err != nil {
			t.Fatal(err)
		}
		var maxErr float64
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if inv[i*ldd+j] != inv[j*ldd+i] {
					t.Fatalf("n=%d: inverse not symmetric", n)
				}
				var s float64
				for k := 0; k < n; k++ {
					s += a[i*n+k] * inv[k*ldd+j]
				}
				if i == j {
					s--
				}
				maxErr = math.Max(maxErr, math.Abs(s))
			}
		}
		if maxErr > 1e-8 {
			t.Errorf("n=%d: |A·A⁻¹ − I| = %g", n, maxErr)
		}
		var ch mat.Cholesky
		if !ch.Factorize(mat.NewSymDense(n, append([]float64(nil), a...))) {
			t.Fatal("gonum factorization failed")
		}
		if got, want := c.LogDet(), ch.LogDet(); math.Abs(got-want) > 1e-10*(1+math.Abs(want)) {
			t.Errorf("n=%d: LogDet %g, want %g", n, got, want)
		}
	}
}

func TestRefactorReusesMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	rnd := rand.New(rand.NewPCG(13, 14))
	// Large enough that one n×n matrix (2.9 MB) dwarfs the blas packing
	// buffers.
	const n = 600
	a := make([]float64, n*n)
	l0 := randLower(rnd, n)
	copy(a, gramLower(n, l0))
	var c Cholesky
	if _, err := c.Factor(n, a, n, DefaultJitter(), 1); err != nil {
		t.Fatal(err)
	}
	first := &c.RawL()[0]
	// Pause the collector while measuring: a GC cycle empties the blas
	// packing-buffer pools, and under slow emulation (qemu) several cycles
	// can fall inside the loop, which would count refills of those pools
	// rather than steady-state allocations of Factor.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const reps = 5
	for r := 0; r < reps; r++ {
		if _, err := c.Factor(n, a, n, DefaultJitter(), 1); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if &c.RawL()[0] != first {
		t.Error("Factor reallocated the factor storage")
	}
	// Far less than one n×n matrix per factorization.
	if perCall := (after.TotalAlloc - before.TotalAlloc) / reps; perCall > n*n*8/4 {
		t.Errorf("Factor allocated %d bytes per call", perCall)
	}
	// Smaller matrices reuse the same memory too.
	if _, err := c.Factor(10, a, n, NoJitter(), 1); err != nil {
		t.Fatal(err)
	}
	if &c.RawL()[0] != first || c.N() != 10 {
		t.Error("smaller refactor reallocated")
	}
}

// TestAddJitterAdjoint checks the arithmetic of AddJitterAdjoint; its use
// in back-propagation is checked against finite differences by the gp and
// collapsed packages' TestJitterGradient.
func TestAddJitterAdjoint(t *testing.T) {
	abar := []float64{1, 9, 9, 9, 2, 9, 9, 9, 3} // trace 6; off-diagonals not read
	rbar := make([]float64, 9)
	AddJitterAdjoint(3, 0.5, 4, abar, 3, rbar, 3)
	for i, v := range rbar {
		want := 0.0
		if i%4 == 0 {
			want = 6 * 0.5 / 4 / 3
		}
		if v != want {
			t.Fatalf("rbar %v, want 0.25 on the diagonal only", rbar)
		}
	}
	// In place, and nothing without jitter or without a usable scale.
	in := append([]float64(nil), abar...)
	AddJitterAdjoint(3, 0.5, 4, in, 3, in, 3)
	if in[0] != 1.25 || in[4] != 2.25 || in[8] != 3.25 || in[1] != 9 {
		t.Fatalf("in place: %v", in)
	}
	for _, c := range [][2]float64{{0, 4}, {0.5, 0}, {0.5, -1}, {0.5, math.Inf(1)}, {0.5, math.NaN()}} {
		r := make([]float64, 9)
		AddJitterAdjoint(3, c[0], c[1], abar, 3, r, 3)
		for _, v := range r {
			if v != 0 {
				t.Fatalf("jitter %v, mean diagonal %v: added %v", c[0], c[1], r)
			}
		}
	}
	// MeanDiag, also where the diagonal's sum overflows.
	if m := MeanDiag(2, []float64{1, 9, 9, 3}, 2); m != 2 {
		t.Errorf("MeanDiag = %v, want 2", m)
	}
	if m := MeanDiag(2, []float64{1.5e308, 0, 0, 1.5e308}, 2); m != 1.5e308 {
		t.Errorf("MeanDiag of an overflowing sum = %v, want 1.5e308", m)
	}
}
