package gp

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
	"github.com/solvegp/solvegp/gp/transform"
)

// The model must plug into train.Fit's natural-gradient option.
var (
	_ train.NaturalGradientModel = (*Model)(nil)
	_ train.NaturalUpdater       = (*Model)(nil)
)

// natData is a small 2-D regression problem with inducing inputs Z (6)
// and orthogonal inputs O (5).
func natData(seed uint64, n int) (x *mat.Dense, y []float64, z, o *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, seed))
	x = mat.NewDense(n, 2, nil)
	y = make([]float64, n)
	for i := 0; i < n; i++ {
		x.Set(i, 0, rng.NormFloat64())
		x.Set(i, 1, rng.NormFloat64())
		y[i] = math.Sin(2*x.At(i, 0)) + 0.3*x.At(i, 1) + 0.1*rng.NormFloat64()
	}
	return x, y, randDense(rng, 6, 2, -2, 2), randDense(rng, 5, 2, -2, 2)
}

// natModel builds a model of the given kind with an RBF kernel and the
// likelihood lik (Gaussian noise 0.05 if nil), with q moved away from the
// prior at random.
func natModel(t *testing.T, kind Kind, whiten bool, lik Likelihood, z, o *mat.Dense, seed uint64) *Model {
	t.Helper()
	k, err := kernel.NewRBF(2, 0.9, 1.2)
	if err != nil {
		t.Fatal(err)
	}
	if lik == nil {
		if lik, err = likelihood.NewGaussian(0.05); err != nil {
			t.Fatal(err)
		}
	}
	var mod *Model
	switch kind {
	case SVGP:
		mod, err = NewSVGP(k, lik, z, WithWhitening(whiten), WithThreads(1))
	case ODVGP:
		mod, err = NewODVGP(k, lik, z, o, WithWhitening(whiten), WithThreads(1))
	default:
		mod, err = NewSOLVEGP(k, lik, z, o, WithWhitening(whiten), WithThreads(1))
	}
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	p := make([]float64, mod.NumParams())
	mod.Params(p)
	lay := mod.Layout()
	for i := lay.MU[0]; i < len(p); i++ {
		p[i] += 0.2 * rng.NormFloat64()
	}
	if err := mod.SetParams(p); err != nil {
		t.Fatal(err)
	}
	return mod
}

// factorQ returns the mean and covariance L·Lᵀ of factor f in params.
func factorQ(params []float64, f GaussianFactor) ([]float64, *mat.SymDense) {
	n := f.N
	l := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := params[f.Chol+i*(i+1)/2+j]
			if i == j {
				v = transform.Softplus(v)
			}
			l.Set(i, j, v)
		}
	}
	s := mat.NewSymDense(n, nil)
	s.SymOuterK(1, l)
	return append([]float64(nil), params[f.Mean:f.Mean+n]...), s
}

// factorGrad returns the largest |∂F/∂θ| over the mean (mean true) or the
// Cholesky entries (mean false) of factor f, relative to the bound.
func factorGrad(t *testing.T, mod *Model, x *mat.Dense, y []float64, f GaussianFactor, mean bool) float64 {
	t.Helper()
	grad := make([]float64, mod.NumParams())
	v, err := mod.Objective(x, y, len(y), grad)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := f.Chol, f.Chol+f.N*(f.N+1)/2
	if mean {
		lo, hi = f.Mean, f.Mean+f.N
	}
	var g float64
	for _, d := range grad[lo:hi] {
		g = math.Max(g, math.Abs(d))
	}
	return g / math.Max(1, math.Abs(v))
}

func closeVec(a, b []float64, tol float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol*math.Max(1, math.Abs(b[i])) {
			return false
		}
	}
	return len(a) == len(b)
}

func closeSym(a, b mat.Symmetric, tol float64) bool {
	n := a.SymmetricDim()
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			if math.Abs(a.At(i, j)-b.At(i, j)) > tol*math.Max(1, math.Abs(b.At(i, j))) {
				return false
			}
		}
	}
	return n == b.SymmetricDim()
}

// TestNaturalStepODVGP: q(u) is the only natural-gradient factor; a step
// of size 1 makes it optimal given the orthogonal mean a, which stays.
func TestNaturalStepODVGP(t *testing.T) {
	x, y, z, o := natData(5, 50)
	for _, whiten := range []bool{false, true} {
		mod := natModel(t, ODVGP, whiten, nil, z, o, 6)
		fs := mod.NaturalFactors()
		if len(fs) != 1 || fs[0].N != 6 {
			t.Fatalf("factors %+v", fs)
		}
		lay := mod.Layout()
		old := make([]float64, mod.NumParams())
		mod.Params(old)
		before, _ := mod.Objective(x, y, len(y), nil)
		if err := mod.NaturalStep(x, y, len(y), 1); err != nil {
			t.Fatal(err)
		}
		after, _ := mod.Objective(x, y, len(y), nil)
		p := make([]float64, mod.NumParams())
		mod.Params(p)
		for i := 0; i < lay.MU[0]; i++ {
			if p[i] != old[i] {
				t.Fatalf("whiten=%v: non-variational parameter %d moved", whiten, i)
			}
		}
		for i := lay.MV[0]; i < len(p); i++ {
			if p[i] != old[i] {
				t.Fatalf("whiten=%v: orthogonal mean entry %d moved", whiten, i-lay.MV[0])
			}
		}
		for _, mean := range []bool{true, false} {
			if g := factorGrad(t, mod, x, y, fs[0], mean); g > 1e-8 {
				t.Errorf("whiten=%v: relative gradient %g on q(u) (mean %v) after the step", whiten, g, mean)
			}
		}
		if !(after > before) {
			t.Errorf("whiten=%v: bound %v → %v", whiten, before, after)
		}
	}
}

// TestNaturalStepMultiLatent: with two latent functions (refTwo, Gaussian in
// each), both q(u_l) (and q(v⊥_l)) are factors and a step of size 1 puts
// every covariance, and for SVGP every mean, at its optimum.
func TestNaturalStepMultiLatent(t *testing.T) {
	x, y, z, o := natData(7, 40)
	for _, kind := range []Kind{SVGP, SOLVEGP} {
		mod := natModel(t, kind, false, &refTwo{logVar: math.Log(0.1)}, z, o, 8)
		fs := mod.NaturalFactors()
		want := 2
		if kind == SOLVEGP {
			want = 4
		}
		if len(fs) != want {
			t.Fatalf("%v: %d factors, want %d", kind, len(fs), want)
		}
		mask := make([]bool, mod.NumParams())
		mod.VariationalParams(mask)
		count := 0
		for _, v := range mask {
			if v {
				count++
			}
		}
		lay := mod.Layout()
		if count != mod.NumParams()-lay.MU[0] {
			t.Errorf("%v: %d entries marked, want the %d variational ones", kind, count, mod.NumParams()-lay.MU[0])
		}
		for i := 0; i < lay.MU[0]; i++ {
			if mask[i] {
				t.Errorf("%v: hyperparameter or inducing input %d marked", kind, i)
			}
		}
		if err := mod.NaturalStep(x, y, len(y), 1); err != nil {
			t.Fatal(err)
		}
		for i, f := range fs {
			if g := factorGrad(t, mod, x, y, f, false); g > 1e-8 {
				t.Errorf("%v: factor %d: relative covariance gradient %g", kind, i, g)
			}
			if g := factorGrad(t, mod, x, y, f, true); kind == SVGP && g > 1e-8 {
				t.Errorf("%v: factor %d: relative mean gradient %g", kind, i, g)
			}
		}
	}
}

// TestNaturalStepNonConjugate: for Poisson, Bernoulli and robust-max
// likelihoods a small natural step increases the bound, for every kind and
// parameterization, and it does so by about γ times the natural
// gradient's squared norm, so the increase shrinks linearly with γ.
func TestNaturalStepNonConjugate(t *testing.T) {
	x, _, z, o := natData(9, 40)
	n, _ := x.Dims()
	counts, labels, classes := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		f := math.Sin(2 * x.At(i, 0))
		counts[i] = math.Floor(math.Exp(f) + 0.5)
		if f > 0 {
			labels[i] = 1
		}
		classes[i] = float64(i % 3)
	}
	bern, err := likelihood.NewBernoulli()
	if err != nil {
		t.Fatal(err)
	}
	robust, err := likelihood.NewRobustMax(3) // by quadrature: deterministic
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		lik  Likelihood
		y    []float64
	}{{"poisson", refPoisson{}, counts}, {"bernoulli", bern, labels}, {"robustmax", robust, classes}} {
		for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
			for _, whiten := range []bool{false, true} {
				mod := natModel(t, kind, whiten, c.lik, z, o, 10)
				p0 := make([]float64, mod.NumParams())
				mod.Params(p0)
				f0, err := mod.Objective(x, c.y, n, nil)
				if err != nil {
					t.Fatal(err)
				}
				var gains [2]float64
				for i, gamma := range []float64{1e-4, 5e-5} {
					if err := mod.SetParams(p0); err != nil {
						t.Fatal(err)
					}
					if err := mod.NaturalStep(x, c.y, n, gamma); err != nil {
						t.Fatalf("%s %v whiten=%v γ=%v: %v", c.name, kind, whiten, gamma, err)
					}
					f, err := mod.Objective(x, c.y, n, nil)
					if err != nil {
						t.Fatal(err)
					}
					gains[i] = f - f0
				}
				if !(gains[0] > 0 && gains[1] > 0) || math.Abs(gains[0]/gains[1]-2) > 0.02 {
					t.Errorf("%s %v whiten=%v: bound gains %v for γ = 1e-4, 5e-5 (want positive, ratio 2)", c.name, kind, whiten, gains)
				}
			}
		}
	}
}

func TestNaturalStepErrors(t *testing.T) {
	x, y, z, o := natData(11, 30)
	mod := natModel(t, SOLVEGP, false, nil, z, o, 12)
	p0 := make([]float64, mod.NumParams())
	mod.Params(p0)
	unchanged := func(what string) {
		t.Helper()
		p := make([]float64, mod.NumParams())
		mod.Params(p)
		for i := range p {
			if p[i] != p0[i] {
				t.Fatalf("%s changed the model", what)
			}
		}
	}
	for _, g := range []float64{0, -0.5, 1.5, math.NaN(), math.Inf(1)} {
		if err := mod.NaturalStep(x, y, len(y), g); err == nil {
			t.Errorf("step size %v accepted", g)
		}
		unchanged("a bad step size")
	}
	if err := mod.NaturalStep(x, y[:10], len(y), 1); err == nil {
		t.Error("mismatched targets accepted")
	}
	unchanged("mismatched targets")
	bad := mat.DenseCopyOf(x)
	bad.Set(3, 1, math.NaN())
	if err := mod.NaturalStep(bad, y, len(y), 1); err == nil {
		t.Error("NaN input accepted")
	}
	unchanged("a NaN input")
	grad := make([]float64, mod.NumParams())
	next := make([]float64, mod.NumParams())
	if err := mod.NaturalUpdate(p0, grad[:5], next, 1); err == nil {
		t.Error("short gradient accepted")
	}
	grad[len(grad)-1] = math.Inf(1)
	if err := mod.NaturalUpdate(p0, grad, next, 1); err == nil {
		t.Error("infinite gradient accepted")
	}
	// A step that leaves the precision indefinite is an error: a gradient
	// pushing the precision down by far more than it is.
	clear(grad)
	f := mod.NaturalFactors()[0]
	for i := 0; i < f.N; i++ {
		grad[f.Chol+i*(i+1)/2+i] = 1e6
	}
	if err := mod.NaturalUpdate(p0, grad, next, 1); err == nil {
		t.Error("indefinite precision accepted")
	}
	unchanged("NaturalUpdate")
}

// TestNaturalGradientFitReproducible: mini-batch training with natural
// steps is bit-for-bit reproducible for a seed (one thread), and the seed
// matters.
func TestNaturalGradientFitReproducible(t *testing.T) {
	x, y, z, o := natData(15, 80)
	for _, shared := range []bool{false, true} {
		run := func(seed uint64) []float64 {
			mod := natModel(t, SOLVEGP, false, nil, z, o, 16)
			if _, err := train.Fit(context.Background(), mod, x, y, train.Config{Epochs: 5, BatchSize: 16, NaturalStep: 0.1,
				NaturalSharedGradient: shared, Seed: seed}); err != nil {
				t.Fatal(err)
			}
			p := make([]float64, mod.NumParams())
			mod.Params(p)
			return p
		}
		a, b, c := run(1), run(1), run(2)
		same, differ := true, false
		for i := range a {
			same = same && a[i] == b[i]
			differ = differ || a[i] != c[i]
		}
		if !same || !differ {
			t.Errorf("shared=%v: same seed identical: %v; other seed different: %v", shared, same, differ)
		}
	}
}

// BenchmarkNaturalFitStep times one train.Fit step on an elevators-sized
// problem (d = 18, Matérn-3/2 with a shared lengthscale, Gaussian
// likelihood, batch 1024, unwhitened, the paper's settings) with Adam on
// every parameter, with natural steps for q from the shared gradient (one
// evaluation per step, bench/regression's -natural) and with a fresh
// gradient for Adam (two evaluations). It reports wall and process CPU
// seconds per step (the latter is far less noisy on a shared machine).
// With -short the sizes are 1/16.
//
//	go test ./gp -run '^$' -bench BenchmarkNaturalFitStep -benchtime 5x -count 3
func BenchmarkNaturalFitStep(b *testing.B) {
	const d = 18
	for _, c := range []struct {
		kind  Kind
		m, m2 int
	}{{SVGP, 1024, 0}, {SOLVEGP, 1024, 1024}} {
		for _, mode := range []string{"adam", "natural", "natural-fresh"} {
			name := fmt.Sprintf("%v/M=%d", c.kind, c.m)
			if c.m2 > 0 {
				name += fmt.Sprintf("+%d", c.m2)
			}
			b.Run(name+"/"+mode, func(b *testing.B) {
				m, m2, n, batch := c.m, c.m2, 4096, 1024
				if testing.Short() {
					m, m2, n, batch = m/16, m2/16, n/16, batch/16
				}
				rng := rand.New(rand.NewPCG(3, 4))
				x := randDense(rng, n, d, -1, 1)
				y := make([]float64, n)
				for i := range y {
					y[i] = math.Sin(3*x.At(i, 0)) + 0.1*rng.NormFloat64()
				}
				k, err := kernel.NewMatern32(d, 1, 1)
				if err != nil {
					b.Fatal(err)
				}
				lik, err := likelihood.NewGaussian(0.1)
				if err != nil {
					b.Fatal(err)
				}
				z := randDense(rng, m, d, -1, 1)
				var mod *Model
				if c.kind == SVGP {
					mod, err = NewSVGP(k, lik, z)
				} else {
					mod, err = NewSOLVEGP(k, lik, z, randDense(rng, m2, d, -1, 1))
				}
				if err != nil {
					b.Fatal(err)
				}
				// Steps 2..N+1 are timed (wall and process CPU time, which
				// is far less noisy on a shared machine): the first step of
				// a natural-gradient run moves q only, and Fit evaluates
				// the kept parameters once more at the end.
				var t0 time.Time
				var cpu0 float64
				var wall, cpu float64
				cfg := train.Config{MaxSteps: b.N + 1, BatchSize: batch, OnStep: func(s train.StepInfo) error {
					switch s.Step {
					case 1:
						t0, cpu0 = time.Now(), processCPUSeconds()
					case b.N + 1:
						wall, cpu = time.Since(t0).Seconds(), processCPUSeconds()-cpu0
					}
					return nil
				}}
				if mode != "adam" {
					cfg.NaturalStep = 0.1
					cfg.NaturalSharedGradient = mode == "natural"
				}
				b.ResetTimer()
				if _, err := train.Fit(context.Background(), mod, x, y, cfg); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(wall/float64(b.N), "s/step")
				if cpu0 >= 0 {
					b.ReportMetric(cpu/float64(b.N), "cpu-s/step")
				}
			})
		}
	}
}
