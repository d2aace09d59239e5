package gp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// concaveOnly hides every method of a likelihood but those of Likelihood
// (so a TighterLikelihood loses its closed form) and declares it concave:
// it sends a Gaussian likelihood through the per-point α solve.
type concaveOnly struct{ Likelihood }

func (concaveOnly) ConcaveLogLik() bool { return true }

// concaveLik names a likelihood of the concave tighter-bound tests.
type concaveLik struct {
	name string
	make func(t testing.TB) Likelihood
	// label turns a latent value and a standard normal draw into a label.
	label func(f, e float64) float64
}

func concaveLiks() []concaveLik {
	bern := func(t testing.TB) Likelihood {
		b, err := likelihood.NewBernoulli()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pois := func(t testing.TB) Likelihood {
		p, err := likelihood.NewPoisson()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	return []concaveLik{
		{"bernoulli", bern, func(f, e float64) float64 {
			if f+e > 0 {
				return 1
			}
			return 0
		}},
		{"poisson", pois, func(f, e float64) float64 { return math.Floor(math.Exp(f + 0.3*e)) }},
		{"gaussian-generic", func(testing.TB) Likelihood { return concaveOnly{&refGauss{logVar: math.Log(0.15)}} },
			func(f, e float64) float64 { return f + 0.3*e }},
	}
}

// buildConcave makes a model of case c with the given bound and likelihood
// and random, non-prior q.
func buildConcave(t testing.TB, c tightCase, b BoundKind, lik Likelihood, seed uint64) *Model {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	k := newRefRBF(2, 1.3, 0.9, 1.2)
	z := randDense(rng, 4, 2, -2, 2)
	o := randDense(rng, 3, 2, -2, 2)
	opts := []Option{WithWhitening(c.whiten), WithKuuJitter(chol.NoJitter()), WithCvvJitter(chol.NoJitter()), WithBound(b)}
	if c.sample > 0 {
		opts = append(opts, WithColumnSample(c.sample))
	}
	mod, err := newOfKind(c.kind, k, lik, z, o, opts...)
	if err != nil {
		t.Fatal(err)
	}
	mod.cfg.colChunk = c.chunk
	perturbQ(mod, rng, 0.3)
	return mod
}

func concaveData(cl concaveLik, seed uint64, n int) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 9))
	x := randDense(rng, n, 2, -2.5, 2.5)
	y := make([]float64, n)
	for i := range y {
		y[i] = cl.label(math.Sin(2*x.At(i, 0)), rng.NormFloat64())
	}
	return x, y
}

// TestConcaveTighterGradient checks every entry of the gradient of the
// tighter bound of a concave likelihood, α solved per point, against
// central finite differences: SVGP, ODVGP (also column-sampled) and
// SOLVE-GP, whitened and not, chunked, Bernoulli, Poisson and the generic
// path of a Gaussian (whose noise variance checks the likelihood-parameter
// gradient), for a mini-batch (nTotal > n) and the full batch.
func TestConcaveTighterGradient(t *testing.T) {
	for _, cl := range concaveLiks() {
		for _, c := range tightCases() {
			for _, nTotal := range []int{10, 40} {
				t.Run(fmt.Sprintf("%s/%v/nTotal=%d", cl.name, c, nTotal), func(t *testing.T) {
					mod := buildConcave(t, c, TighterBound, cl.make(t), 1)
					x, y := concaveData(cl, 2, 10)
					idx := make([]int, mod.NumParams())
					for i := range idx {
						idx[i] = i
					}
					checkGrad(t, mod, x, y, nTotal, idx, 2e-6)
				})
			}
		}
	}
}

// TestConcaveTighterGaussianGeneric checks that the per-point α solve run
// on a Gaussian likelihood gives the closed-form tighter bound of
// TighterTerm: value and gradient.
func TestConcaveTighterGaussianGeneric(t *testing.T) {
	for _, c := range tightCases() {
		t.Run(c.String(), func(t *testing.T) {
			cl := concaveLiks()[2]
			x, y := concaveData(cl, 3, 12)
			var f [2]float64
			var g [2][]float64
			for i, lik := range []Likelihood{&refGauss{logVar: math.Log(0.15)}, cl.make(t)} {
				mod := buildConcave(t, c, TighterBound, lik, 4)
				g[i] = make([]float64, mod.NumParams())
				mod.resetRNG()
				v, err := mod.Objective(x, y, 50, g[i])
				if err != nil {
					t.Fatal(err)
				}
				f[i] = v
			}
			if math.Abs(f[0]-f[1]) > 1e-10*math.Abs(f[0]) {
				t.Errorf("generic path %.14g, closed form %.14g", f[1], f[0])
			}
			for i := range g[0] {
				if math.Abs(g[0][i]-g[1][i]) > 1e-8*math.Max(1, math.Abs(g[0][i])) {
					t.Errorf("gradient %d: generic %.12g, closed form %.12g", i, g[1][i], g[0][i])
				}
			}
		})
	}
}

// TestConcaveTighterAboveStandard checks, at equal parameters, that the
// tighter bound of each concave likelihood is at least the standard one
// (strictly above it with non-zero residuals), that with every αₙ = 1 its
// terms give back the standard bound, and that each solved αₙ lies in
// (0, 1] and is a stationary point or the boundary.
func TestConcaveTighterAboveStandard(t *testing.T) {
	for _, cl := range concaveLiks() {
		for _, c := range tightCases() {
			t.Run(cl.name+"/"+c.String(), func(t *testing.T) {
				x, y := concaveData(cl, 5, 16)
				std := buildConcave(t, c, StandardBound, cl.make(t), 6)
				tig := buildConcave(t, c, TighterBound, cl.make(t), 6)
				std.resetRNG()
				fs, err := std.Objective(x, y, 70, nil)
				if err != nil {
					t.Fatal(err)
				}
				tig.resetRNG()
				ft, err := tig.Objective(x, y, 70, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !(ft > fs) {
					t.Errorf("tighter %.12g not above standard %.12g", ft, fs)
				}
				ws := &tig.ws
				vt := make([]float64, ws.n)
				for i := range vt {
					vt[i] = ws.sv[i] + ws.res[i]
				}
				ell1 := tig.lik.ExpectedLogLik(y, ws.mu, vt, nil, nil, nil, nil)
				if want := std.LastTerms().ExpLogLik; math.Abs(ell1-want) > 1e-11*math.Abs(want) {
					t.Errorf("at α = 1: expected log-likelihood %.14g, standard %.14g", ell1, want)
				}
				checkStationary(t, tig, y)
			})
		}
	}
}

// checkStationary checks that each αₙ of mod's last solve is in (0, 1],
// and that φₙ'(αₙ) = 0 (by central differences) unless αₙ = 1.
func checkStationary(t *testing.T, mod *Model, y []float64) {
	t.Helper()
	ws := &mod.ws
	phi := func(i int, a float64) float64 {
		v := []float64{ws.sv[i] + a*ws.res[i]}
		return mod.lik.ExpectedLogLik(y[i:i+1], ws.mu[i:i+1], v, nil, nil, nil, nil) - alphaPenalty(a)
	}
	for i, a := range ws.alpha[:ws.n] {
		if !(a > 0 && a <= 1) {
			t.Fatalf("α[%d] = %g", i, a)
		}
		if a == 1 {
			continue
		}
		h := 1e-5 * a
		if d := (phi(i, a+h) - phi(i, a-h)) / (2 * h); math.Abs(d) > 1e-6*(1+1/a) {
			t.Errorf("point %d: φ'(α = %g) = %g", i, a, d)
		}
		if phi(i, a) < phi(i, 1) {
			t.Errorf("point %d: φ(α = %g) = %g below φ(1) = %g", i, a, phi(i, a), phi(i, 1))
		}
	}
}

// TestConcaveTighterIterations records how many ExpectedLogLik calls the α
// solve takes for Bernoulli and Poisson likelihoods and prior variances
// from 0.1 to 20 (the cost stated in concaveTighter's documentation), and
// checks the solution (where finite differences of φ are accurate).
func TestConcaveTighterIterations(t *testing.T) {
	for li, cl := range concaveLiks()[:2] {
		for _, v := range []float64{0.1, 1.3, 5, 20} {
			rng := rand.New(rand.NewPCG(1, 7))
			mod, err := NewSVGP(newRefRBF(2, v, 0.9, 1.2), cl.make(t), randDense(rng, 4, 2, -2, 2),
				WithKuuJitter(chol.NoJitter()), WithBound(TighterBound))
			if err != nil {
				t.Fatal(err)
			}
			perturbQ(mod, rng, 0.3)
			x, y := concaveData(cl, 9, 300)
			// Wider inputs than the inducing points: residuals up to k(x,x).
			x.Scale(2, x)
			if _, err := mod.Objective(x, y, 1000, nil); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s, prior variance %g: %d ExpectedLogLik calls in the solve", cl.name, v, mod.ws.alphaIter)
			if limit := []int{6, 9}[li]; mod.ws.alphaIter > limit {
				t.Errorf("%s, prior variance %g: α solve took %d calls, want ≤ %d", cl.name, v, mod.ws.alphaIter, limit)
			}
			if li == 0 || v < 10 {
				checkStationary(t, mod, y)
			}
		}
	}
}

// TestTighterRefusesNonConcave checks that TighterBound refuses a
// Student-t (not log-concave) and a multi-latent likelihood.
func TestTighterRefusesNonConcave(t *testing.T) {
	st, err := likelihood.NewStudentT(0.5, 4)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := likelihood.NewSoftmax(3)
	if err != nil {
		t.Fatal(err)
	}
	z := mat.NewDense(2, 1, []float64{-1, 1})
	for _, lik := range []Likelihood{st, sm} {
		_, err := NewSVGP(newRefRBF(1, 1, 1), lik, z, WithBound(TighterBound))
		if !errors.Is(err, ErrValue) {
			t.Errorf("%T: error %v, want ErrValue", lik, err)
		}
	}
}

// TestPerPointScalesNeedConcavity is why a Student-t likelihood is
// refused: two observations at one input (perfectly correlated latent
// values f ~ N(0, 1), no inducing information) with a per-point αₙ give
// a value above the exact log marginal likelihood log ∫ N(f|0,1)·p(y₁|f)·
// p(y₂|f) df, so the per-point form is not a bound without concavity.
func TestPerPointScalesNeedConcavity(t *testing.T) {
	st, err := likelihood.NewStudentT(0.05, 30, likelihood.QuadraturePoints(100))
	if err != nil {
		t.Fatal(err)
	}
	y := []float64{0, 3}
	var perPoint float64
	for _, yn := range y {
		best := math.Inf(-1)
		for a := 1e-4; a <= 1; a *= 1.01 {
			v := st.ExpectedLogLik([]float64{yn}, []float64{0}, []float64{a}, nil, nil, nil, nil) - alphaPenalty(a)
			best = math.Max(best, v)
		}
		perPoint += best
	}
	// Exact: a fine midpoint rule over f.
	var p float64
	const nf = 20000
	for i := 0; i < nf; i++ {
		f := -10 + 20*(float64(i)+0.5)/nf
		l := 0.0
		for _, yn := range y {
			var dst [1]float64
			st.LogPredictive(dst[:], []float64{yn}, []float64{f}, []float64{0}, nil)
			l += dst[0]
		}
		p += math.Exp(l-f*f/2) / math.Sqrt(2*math.Pi) * 20 / nf
	}
	if exact := math.Log(p); !(perPoint > exact+1) {
		t.Errorf("per-point value %.4f, exact log p(y) %.4f: expected the per-point form to exceed it", perPoint, exact)
	}
}

// TestSequentialConditioningKL checks numerically the construction behind
// the tighter bound of a concave likelihood: for a random covariance R and
// scales α ∈ (0, 1], conditioning N(0, R) one coordinate after another on
// a pseudo-observation that brings that coordinate's variance down to
// αₙRₙₙ gives marginal variances ≤ αₙRₙₙ and a KL divergence from N(0, R)
// of at most ½·Σₙ(αₙ − 1 − log αₙ).
func TestSequentialConditioningKL(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 200; trial++ {
		n := 2 + trial%6
		a := randDense(rng, n, n, -1, 1)
		r := mat.NewSymDense(n, nil)
		r.SymOuterK(1, a)
		// Mostly strongly correlated, near-singular covariances.
		for i := 0; i < n; i++ {
			r.SetSym(i, i, r.At(i, i)+1e-3)
		}
		alpha := make([]float64, n)
		var budget float64
		for i := range alpha {
			alpha[i] = math.Exp(-3 * rng.Float64())
			budget += alphaPenalty(alpha[i])
		}
		s := mat.NewSymDense(n, nil)
		s.CopySym(r)
		for k := 0; k < n; k++ {
			v, want := s.At(k, k), alpha[k]*r.At(k, k)
			if v <= want {
				continue
			}
			// Σ ← Σ − c·s·sᵀ, s = Σ·e_k, with c chosen so Σ_kk = want.
			c := (1 - want/v) / v
			col := make([]float64, n)
			for i := range col {
				col[i] = s.At(i, k)
			}
			for i := 0; i < n; i++ {
				for j := i; j < n; j++ {
					s.SetSym(i, j, s.At(i, j)-c*col[i]*col[j])
				}
			}
		}
		for i := 0; i < n; i++ {
			if s.At(i, i) > alpha[i]*r.At(i, i)*(1+1e-9) {
				t.Fatalf("trial %d: variance %d is %g, above α·R = %g", trial, i, s.At(i, i), alpha[i]*r.At(i, i))
			}
		}
		var rc, sc mat.Cholesky
		if !rc.Factorize(r) || !sc.Factorize(s) {
			t.Fatalf("trial %d: not positive definite", trial)
		}
		var rinvS mat.Dense
		if err := rc.SolveTo(&rinvS, s); err != nil {
			t.Fatal(err)
		}
		kl := 0.5 * (mat.Trace(&rinvS) - float64(n) - sc.LogDet() + rc.LogDet())
		if kl > budget*(1+1e-7)+1e-12 {
			t.Errorf("trial %d: KL %.10g above ½Σ(α − 1 − log α) = %.10g", trial, kl, budget)
		}
	}
}
