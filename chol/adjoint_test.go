package chol

import (
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// refAdjoint returns the symmetric-convention adjoint from the closed form
// Ā = sym(L⁻ᵀ·Φ(Lᵀ·L̄)·L⁻¹), computed with gonum/mat.
func refAdjoint(n int, l, lbar []float64) []float64 {
	L := mat.NewDense(n, n, append([]float64(nil), l...))
	Lb := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			Lb.Set(i, j, lbar[i*n+j])
		}
	}
	var m mat.Dense
	m.Mul(L.T(), Lb)
	phi := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			phi.Set(i, j, m.At(i, j))
		}
		phi.Set(i, i, m.At(i, i)/2)
	}
	var linv mat.Dense
	if err := linv.Inverse(L); err != nil {
		panic(err)
	}
	var t1, t2 mat.Dense
	t1.Mul(linv.T(), phi)
	t2.Mul(&t1, &linv)
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			out[i*n+j] = 0.5 * (t2.At(i, j) + t2.At(j, i))
		}
	}
	return out
}

func TestAdjointReference(t *testing.T) {
	rnd := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{1, 2, 3, 16, 31, 32, 33, 47, 64, 65, 96, 130, 200} {
		for _, threads := range []int{1, 2} {
			l := randLower(rnd, n)
			lbar := make([]float64, n*n)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					lbar[i*n+j] = rnd.NormFloat64()
					if j > i {
						lbar[i*n+j] = math.NaN() // must not be read
					}
				}
			}
			want := refAdjoint(n, l, lbar)
			// Padded output stride, NaN in L's upper triangle.
			ld := n + 3
			abar := nanSlice((n-1)*ld + n)
			lp := append([]float64(nil), l...)
			for i := 0; i < n; i++ {
				for j := i + 1; j < n; j++ {
					lp[i*n+j] = math.NaN()
				}
			}
			if err := Adjoint(n, lp, n, lbar, n, abar, ld, threads); err != nil {
				t.Fatal(err)
			}
			var scale float64
			for _, v := range want {
				scale = math.Max(scale, math.Abs(v))
			}
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					if d := math.Abs(abar[i*ld+j] - want[i*n+j]); !(d <= 1e-11*scale*float64(n)) {
						t.Fatalf("n=%d threads=%d: Ā[%d,%d] = %g, want %g", n, threads, i, j, abar[i*ld+j], want[i*n+j])
					}
				}
			}
			// In place (abar == lbar) and through a Cholesky.
			var c Cholesky
			a := gramLower(n, l)
			if _, err := c.Factor(n, a, n, NoJitter(), threads); err != nil {
				t.Fatal(err)
			}
			g := append([]float64(nil), lbar...)
			if err := c.Adjoint(g, n, g, n); err != nil {
				t.Fatal(err)
			}
			for i := range g {
				if d := math.Abs(g[i] - want[i]); !(d <= 1e-9*scale*float64(n)) {
					t.Fatalf("n=%d in place: Ā[%d] = %g, want %g", n, i, g[i], want[i])
				}
			}
		}
	}
}

// cholFunctional returns F(A) = Σ_{i≥j} W_ij·chol(A)_ij.
func cholFunctional(t *testing.T, n int, a, w []float64) float64 {
	var c Cholesky
	if _, err := c.Factor(n, a, n, NoJitter(), 1); err != nil {
		t.Fatal(err)
	}
	l := c.RawL()
	var f float64
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			f += w[i*n+j] * l[i*n+j]
		}
	}
	return f
}

func TestAdjointFiniteDifference(t *testing.T) {
	rnd := rand.New(rand.NewPCG(23, 24))
	for _, n := range []int{1, 2, 5, 33, 70} {
		a := randSPD(rnd, n, n, 10)
		w := make([]float64, n*n)
		for i := range w {
			w[i] = rnd.NormFloat64()
		}
		var c Cholesky
		if _, err := c.Factor(n, a, n, NoJitter(), 2); err != nil {
			t.Fatal(err)
		}
		abar := make([]float64, n*n)
		if err := c.Adjoint(w, n, abar, n); err != nil {
			t.Fatal(err)
		}
		for trial := 0; trial < 4; trial++ {
			// Symmetric direction E; trial 0 is a single off-diagonal pair.
			e := make([]float64, n*n)
			if trial == 0 && n > 1 {
				i, j := n-1, n/3
				e[i*n+j], e[j*n+i] = 1, 1
			} else {
				for i := 0; i < n; i++ {
					for j := 0; j <= i; j++ {
						v := rnd.NormFloat64()
						e[i*n+j], e[j*n+i] = v, v
					}
				}
			}
			const h = 1e-5
			ap := append([]float64(nil), a...)
			am := append([]float64(nil), a...)
			var pred float64
			for i := range e {
				ap[i] += h * e[i]
				am[i] -= h * e[i]
				pred += abar[i] * e[i]
			}
			fd := (cholFunctional(t, n, ap, w) - cholFunctional(t, n, am, w)) / (2 * h)
			if math.Abs(fd-pred) > 1e-6*(1+math.Abs(fd)) {
				t.Errorf("n=%d trial %d: finite difference %g, adjoint %g", n, trial, fd, pred)
			}
		}
	}
}

func TestSolveAdjoints(t *testing.T) {
	rnd := rand.New(rand.NewPCG(25, 26))
	const h = 1e-6
	for _, n := range []int{1, 4, 40, 70, 140} {
		for _, m := range []int{1, 5, 90} {
			l := randLower(rnd, n)
			b := make([]float64, n*m)
			xbar := make([]float64, n*m)
			for i := range b {
				b[i] = rnd.NormFloat64()
				xbar[i] = rnd.NormFloat64()
			}
			// F(L, B) = <X̄, op(L)⁻¹·B> for the three solves, via Dtrtrs-like
			// forward substitution on a perturbed L.
			for _, kind := range []string{"L", "LT", "A"} {
				f := func(l, b []float64) float64 {
					var c Cholesky
					c.setFactor(n, l)
					x := append([]float64(nil), b...)
					switch kind {
					case "L":
						c.SolveL(m, x, m)
					case "LT":
						c.SolveLT(m, x, m)
					default:
						c.Solve(m, x, m)
					}
					var s float64
					for i := range x {
						s += xbar[i] * x[i]
					}
					return s
				}
				var c Cholesky
				c.setFactor(n, l)
				x := append([]float64(nil), b...)
				bb := append([]float64(nil), xbar...)
				lbar := make([]float64, n*n)
				for i := 0; i < n; i++ {
					for j := i + 1; j < n; j++ {
						lbar[i*n+j] = math.NaN() // must stay untouched
					}
				}
				var err error
				switch kind {
				case "L":
					c.SolveL(m, x, m)
					err = c.SolveLAdjoint(m, x, m, bb, m, lbar, n)
				case "LT":
					c.SolveLT(m, x, m)
					err = c.SolveLTAdjoint(m, x, m, bb, m, lbar, n)
				default:
					c.Solve(m, x, m)
					err = c.SolveAdjoint(m, x, m, bb, m, lbar, n) // Ā (symmetric) in lbar
				}
				if err != nil {
					t.Fatal(err)
				}
				// B̄ against finite differences along a random direction.
				d := make([]float64, n*m)
				var pred float64
				for i := range d {
					d[i] = rnd.NormFloat64()
					pred += bb[i] * d[i]
				}
				bp, bm := append([]float64(nil), b...), append([]float64(nil), b...)
				for i := range d {
					bp[i] += h * d[i]
					bm[i] -= h * d[i]
				}
				if fd := (f(l, bp) - f(l, bm)) / (2 * h); math.Abs(fd-pred) > 1e-6*(1+math.Abs(fd)) {
					t.Errorf("%s n=%d m=%d: B̄ fd %g, adjoint %g", kind, n, m, fd, pred)
				}
				// L̄ (or Ā) along a random lower (or symmetric) direction.
				e := make([]float64, n*n)
				pred = 0
				for i := 0; i < n; i++ {
					for j := 0; j <= i; j++ {
						v := rnd.NormFloat64()
						e[i*n+j] = v
						if kind == "A" {
							e[j*n+i] = v
						}
					}
				}
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						if kind != "A" && j > i {
							if !math.IsNaN(lbar[i*n+j]) {
								t.Fatalf("%s: upper triangle of L̄ written", kind)
							}
							continue
						}
						pred += lbar[i*n+j] * e[i*n+j]
					}
				}
				var fd float64
				if kind == "A" {
					// Perturb A = L·Lᵀ symmetrically and refactor.
					a := gramLower(n, l)
					fa := func(s float64) float64 {
						ap := append([]float64(nil), a...)
						for i := range ap {
							ap[i] += s * e[i]
						}
						var c Cholesky
						if _, err := c.Factor(n, ap, n, NoJitter(), 1); err != nil {
							t.Fatal(err)
						}
						return f(c.RawL(), b)
					}
					fd = (fa(h) - fa(-h)) / (2 * h)
				} else {
					lp, lm := append([]float64(nil), l...), append([]float64(nil), l...)
					for i := range e {
						lp[i] += h * e[i]
						lm[i] -= h * e[i]
					}
					fd = (f(lp, b) - f(lm, b)) / (2 * h)
				}
				if math.Abs(fd-pred) > 1e-5*(1+math.Abs(fd)) {
					t.Errorf("%s n=%d m=%d: L̄/Ā fd %g, adjoint %g", kind, n, m, fd, pred)
				}
			}
		}
	}
}

// setFactor installs the n×n lower factor l (stride n) into c (tests only).
func (c *Cholesky) setFactor(n int, l []float64) {
	c.n, c.l, c.valid, c.threads, c.jitter = n, append([]float64(nil), l...), true, 2, 0
}

func TestLogDetAdjoint(t *testing.T) {
	rnd := rand.New(rand.NewPCG(27, 28))
	for _, n := range []int{1, 9, 50} {
		l := randLower(rnd, n)
		var c Cholesky
		c.setFactor(n, l)
		lbar := make([]float64, n*n)
		lbar[0] = 0.25
		const g = 1.7
		if err := c.LogDetAdjoint(g, lbar, n); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			want := 2 * g / l[i*n+i]
			if i == 0 {
				want += 0.25
			}
			if math.Abs(lbar[i*n+i]-want) > 1e-15*math.Abs(want) {
				t.Errorf("n=%d: L̄[%d,%d] = %g, want %g", n, i, i, lbar[i*n+i], want)
			}
		}
		// Through the Cholesky adjoint this is g·A⁻¹.
		abar := make([]float64, n*n)
		if err := c.Adjoint(lbar, n, abar, n); err != nil {
			t.Fatal(err)
		}
		lbar2 := make([]float64, n*n)
		c.LogDetAdjoint(g, lbar2, n)
		c.Adjoint(lbar2, n, abar, n)
		inv := make([]float64, n*n)
		c.Inverse(inv, n)
		for i := range inv {
			if math.Abs(abar[i]-g*inv[i]) > 1e-10*(1+math.Abs(g*inv[i])) {
				t.Fatalf("n=%d: adjoint of logdet %g, want g·A⁻¹ = %g", n, abar[i], g*inv[i])
			}
		}
	}
}

// TestAdjointFromProduct checks the product form against the closed form
// of Adjoint, across the congruence's recursion and serial cutoffs, for
// several scalings, with NaN in the unread upper triangle and a padded
// stride.
func TestAdjointFromProduct(t *testing.T) {
	rnd := rand.New(rand.NewPCG(25, 26))
	sizes := []int{1, 2, 7, congruenceBase, congruenceBase + 1, 150, congruenceSerial + 1, 300}
	if raceEnabled {
		sizes = []int{1, 7, congruenceBase + 1, congruenceSerial + 1}
	}
	for _, n := range sizes {
		a := randSPD(rnd, n, n, 100)
		var c0 Cholesky
		if _, err := c0.Factor(n, a, n, NoJitter(), 1); err != nil {
			t.Fatal(err)
		}
		l := append([]float64(nil), c0.RawL()...)
		lbar := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				lbar[i*n+j] = rnd.NormFloat64()
			}
		}
		want := refAdjoint(n, l, lbar)
		var scale float64
		for _, v := range want {
			scale = math.Max(scale, math.Abs(v))
		}
		// P = tril(Lᵀ·L̄).
		p := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				var s float64
				for k := i; k < n; k++ {
					s += l[k*n+i] * lbar[k*n+j]
				}
				p[i*n+j] = s
			}
		}
		alphas := []float64{-1}
		if n <= congruenceBase+1 {
			alphas = []float64{1, -1, 2.5}
		}
		for _, threads := range []int{1, 2} {
			var c Cholesky
			if _, err := c.Factor(n, a, n, NoJitter(), threads); err != nil {
				t.Fatal(err)
			}
			for _, alpha := range alphas {
				// Q = P/alpha with a padded stride and NaN above the
				// diagonal (not read).
				ld := n + 2
				q := nanSlice((n-1)*ld + n)
				for i := 0; i < n; i++ {
					for j := 0; j <= i; j++ {
						q[i*ld+j] = p[i*n+j] / alpha
					}
				}
				if err := c.AdjointFromProduct(alpha, q, ld); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						if d := math.Abs(q[i*ld+j] - want[i*n+j]); !(d <= 1e-11*scale*float64(n)) {
							t.Fatalf("n=%d threads=%d alpha=%g: Ā[%d,%d] = %g, want %g", n, threads, alpha, i, j, q[i*ld+j], want[i*n+j])
						}
					}
				}
			}
		}
	}
	var c Cholesky
	if err := c.AdjointFromProduct(1, make([]float64, 4), 2); err != ErrNoFactor {
		t.Errorf("no factor: %v", err)
	}
	if _, err := c.Factor(3, randSPD(rnd, 3, 3, 10), 3, NoJitter(), 1); err != nil {
		t.Fatal(err)
	}
	if err := c.AdjointFromProduct(1, make([]float64, 9), 2); err == nil {
		t.Error("stride 2 for order 3 accepted")
	}
	if err := c.AdjointFromProduct(1, make([]float64, 8), 3); err == nil {
		t.Error("short Q accepted")
	}
}

// TestAdjointFromProductAllocs asserts that the product form allocates no
// matrix-sized memory once the factor's workspace has grown: what remains
// are small allocations inside package blas (with one thread: the closure
// of each Dtrsm, and packing buffers), counted with the collector paused
// so that a collection emptying blas's buffer pools does not count.
func TestAdjointFromProductAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	const n = 300
	rnd := rand.New(rand.NewPCG(27, 28))
	var c Cholesky
	if _, err := c.Factor(n, randSPD(rnd, n, n, 10), n, NoJitter(), 1); err != nil {
		t.Fatal(err)
	}
	q := randSPD(rnd, n, n, 10)
	w := make([]float64, n*n)
	run := func() {
		copy(w, q)
		if err := c.AdjointFromProduct(-1, w, n); err != nil {
			t.Fatal(err)
		}
	}
	run()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const reps = 5
	for r := 0; r < reps; r++ {
		run()
	}
	runtime.ReadMemStats(&after)
	allocs := (after.Mallocs - before.Mallocs) / reps
	bytes := (after.TotalAlloc - before.TotalAlloc) / reps
	// The bytes are blas's packing buffers (its pools hand out contexts
	// sized for earlier calls); half a matrix is far below the n² scratch
	// a per-call workspace would take.
	if limit := uint64(n * n * 8 / 2); allocs > 32 || bytes > limit {
		t.Errorf("%d allocations, %d bytes per call (order %d, one thread); want ≤ 32 and ≤ %d bytes", allocs, bytes, n, limit)
	}
}
