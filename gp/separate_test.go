package gp_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/mean"
	"github.com/solvegp/solvegp/gp/train"
)

// sepData returns n points in 2D with P outputs of different smoothness
// and noise (y_p = sin((p+1)·x₀) + 0.5·x₁ + ε), point-major; every row i
// with i%7 == p+1 misses output p (NaN) when missing is set.
func sepData(n, P int, missing bool, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n*P)
	for i := 0; i < n; i++ {
		x.Set(i, 0, -2+4*rng.Float64())
		x.Set(i, 1, -1+2*rng.Float64())
		for p := 0; p < P; p++ {
			y[i*P+p] = math.Sin(float64(p+1)*x.At(i, 0)) + 0.5*x.At(i, 1) + 0.1*float64(p+1)*rng.NormFloat64()
			if missing && i%7 == p+1 {
				y[i*P+p] = math.NaN()
			}
		}
	}
	return x, y
}

// sepOutput builds the single-output model of output p: kind p%3 (SVGP,
// ODVGP, SOLVE-GP), its own kernel, noise, inducing inputs and, for
// output 1, a constant mean, so that no two outputs look alike.
func sepOutput(t testing.TB, p int) *gp.Model {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(p)+10, 4))
	k, err := kernel.NewRBF(2, 0.8+0.3*float64(p), 1+0.2*float64(p), kernel.ARD())
	if err != nil {
		t.Fatal(err)
	}
	lik, _ := likelihood.NewGaussian(0.1 + 0.05*float64(p))
	z := mat.NewDense(4, 2, nil)
	o := mat.NewDense(3, 2, nil)
	for _, a := range []*mat.Dense{z, o} {
		r, _ := a.Dims()
		for i := 0; i < r; i++ {
			a.Set(i, 0, -2+4*rng.Float64())
			a.Set(i, 1, -1+2*rng.Float64())
		}
	}
	opts := []gp.Option{gp.WithWhitening(p%2 == 0), gp.WithThreads(1)}
	if p == 1 {
		mf, _ := mean.NewConstant(2, 0.2)
		opts = append(opts, gp.WithMean(mf))
	}
	var m *gp.Model
	switch p % 3 {
	case 0:
		m, err = gp.NewSVGP(k, lik, z, opts...)
	case 1:
		m, err = gp.NewODVGP(k, lik, z, o, opts...)
	default:
		m, err = gp.NewSOLVEGP(k, lik, z, o, opts...)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Move q away from the prior so that every gradient entry is exercised.
	th := make([]float64, m.NumParams())
	m.Params(th)
	lay := m.Layout()
	for i := lay.MU[0]; i < lay.Mean; i++ {
		th[i] += 0.2 * rng.NormFloat64()
	}
	if err := m.SetParams(th); err != nil {
		t.Fatal(err)
	}
	return m
}

func newSep(t testing.TB, P int) (*gp.Separate, []*gp.Model) {
	t.Helper()
	ms := make([]*gp.Model, P)
	for p := range ms {
		ms[p] = sepOutput(t, p)
	}
	s, err := gp.NewSeparate(ms)
	if err != nil {
		t.Fatal(err)
	}
	return s, ms
}

// column returns output p's observed rows of x and values of y.
func column(x *mat.Dense, y []float64, P, p int) (*mat.Dense, []float64) {
	n, d := x.Dims()
	var rows []float64
	var yp []float64
	for i := 0; i < n; i++ {
		if v := y[i*P+p]; !math.IsNaN(v) {
			rows = append(rows, x.RawRowView(i)...)
			yp = append(yp, v)
		}
	}
	return mat.NewDense(len(yp), d, rows), yp
}

// TestSeparateObjectiveIsSum checks that the joint bound and gradient are
// the sum and concatenation of the outputs' single-model bounds and
// gradients, bit for bit, with no target missing and a mini-batch scale
// nTotal/n ≠ 1, and with missing targets on the full batch, where output
// p's term is its model's bound on its observed rows alone.
func TestSeparateObjectiveIsSum(t *testing.T) {
	const n, P = 20, 3
	for _, missing := range []bool{false, true} {
		t.Run(fmt.Sprintf("missing=%v", missing), func(t *testing.T) {
			x, y := sepData(n, P, missing, 1)
			nTotal := 57
			if missing {
				nTotal = n
			}
			s, ms := newSep(t, P)
			grad := make([]float64, s.NumParams())
			f, err := s.Objective(x, y, nTotal, grad)
			if err != nil {
				t.Fatal(err)
			}
			var sum float64
			for p, m := range ms {
				xp, yp := column(x, y, P, p)
				if missing && len(yp) == n {
					t.Fatalf("output %d has no missing value", p)
				}
				nt := nTotal
				if missing {
					nt = len(yp) // a single model fitted to the observed rows only
				}
				g := make([]float64, m.NumParams())
				fp, err := m.Objective(xp, yp, nt, g)
				if err != nil {
					t.Fatal(err)
				}
				sum += fp
				for i, v := range g {
					if got := grad[s.Offset(p)+i]; got != v {
						t.Fatalf("output %d gradient %d: joint %v, single %v", p, i, got, v)
					}
				}
			}
			if math.Abs(f-sum) > 1e-12*math.Abs(sum) {
				t.Fatalf("joint bound %v, sum of single bounds %v", f, sum)
			}
		})
	}
}

// TestSeparateGradient checks the joint gradient, with missing targets and
// an output missing from the whole batch (its term is −KL alone), against
// central finite differences.
func TestSeparateGradient(t *testing.T) {
	const n, P = 12, 3
	x, y := sepData(n, P, true, 2)
	for i := 0; i < n; i++ {
		y[i*P+2] = math.NaN()
	}
	s, _ := newSep(t, P)
	th := make([]float64, s.NumParams())
	s.Params(th)
	grad := make([]float64, len(th))
	if _, err := s.Objective(x, y, 40, grad); err != nil {
		t.Fatal(err)
	}
	tp := append([]float64(nil), th...)
	for i := range th {
		h := 1e-5 * math.Max(1, math.Abs(th[i]))
		eval := func(v float64) float64 {
			tp[i] = v
			if err := s.SetParams(tp); err != nil {
				t.Fatal(err)
			}
			f, err := s.Objective(x, y, 40, nil)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		fd := (eval(th[i]+h) - eval(th[i]-h)) / (2 * h)
		tp[i] = th[i]
		if math.Abs(fd-grad[i]) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("parameter %d: analytic %v, finite differences %v", i, grad[i], fd)
		}
	}
	// The last output's gradient is that of −KL: zero for its kernel's
	// parameters only if whitened; its noise variance gets none.
	lay := s.Output(2).Layout()
	if g := grad[s.Offset(2)+lay.Lik]; g != 0 {
		t.Errorf("noise gradient of an output missing from the batch is %v, want 0", g)
	}
}

// TestSeparateFitMatchesSingle is the defining property: train.Fit on the
// Separate model with a seed gives every output the parameters that Fit
// with the same seed and configuration gives its model trained alone on
// (x, y_p) — bit for bit, as Adam works elementwise and the mini-batches
// are the same rows. It also checks the natural-gradient path.
func TestSeparateFitMatchesSingle(t *testing.T) {
	const n, P = 40, 3
	x, y := sepData(n, P, false, 3)
	cfgs := map[string]train.Config{
		"adam":          {Epochs: 6, BatchSize: 16, Seed: 9, Schedule: train.Constant(0.02)},
		"natural":       {Epochs: 3, BatchSize: 16, Seed: 5, Schedule: train.Constant(0.02), NaturalStep: 0.1, NaturalSharedGradient: true},
		"natural-fresh": {Epochs: 2, BatchSize: 16, Seed: 6, Schedule: train.Constant(0.02), NaturalStep: 0.2},
	}
	for name, cfg := range cfgs {
		t.Run(name, func(t *testing.T) {
			s, _ := newSep(t, P)
			if _, err := train.Fit(context.Background(), s, x, y, cfg); err != nil {
				t.Fatal(err)
			}
			got := make([]float64, s.NumParams())
			s.Params(got)
			for p := 0; p < P; p++ {
				single := sepOutput(t, p)
				_, yp := column(x, y, P, p)
				if _, err := train.Fit(context.Background(), single, x, yp, cfg); err != nil {
					t.Fatal(err)
				}
				want := make([]float64, single.NumParams())
				single.Params(want)
				start := make([]float64, len(want))
				sepOutput(t, p).Params(start)
				moved := false
				for i, v := range want {
					if g := got[s.Offset(p)+i]; g != v {
						t.Fatalf("output %d parameter %d: separate %v, single %v", p, i, g, v)
					}
					moved = moved || v != start[i]
				}
				if !moved {
					t.Fatalf("output %d: training moved no parameter", p)
				}
			}
		})
	}
}

// TestSeparateMissingFullBatch checks that with missing targets a
// full-batch Fit of the Separate model gives each output the parameters of
// its model trained alone on its observed rows (the scale nTotal/n is then
// 1 for both).
func TestSeparateMissingFullBatch(t *testing.T) {
	const n, P = 30, 2
	x, y := sepData(n, P, true, 4)
	cfg := train.Config{Epochs: 5, Seed: 2, Schedule: train.Constant(0.02)}
	s, _ := newSep(t, P)
	if _, err := train.Fit(context.Background(), s, x, y, cfg); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, s.NumParams())
	s.Params(got)
	for p := 0; p < P; p++ {
		single := sepOutput(t, p)
		xp, yp := column(x, y, P, p)
		if _, err := train.Fit(context.Background(), single, xp, yp, cfg); err != nil {
			t.Fatal(err)
		}
		want := make([]float64, single.NumParams())
		single.Params(want)
		for i, v := range want {
			if g := got[s.Offset(p)+i]; math.Abs(g-v) > 1e-12*math.Max(1, math.Abs(v)) {
				t.Fatalf("output %d parameter %d: separate %v, single %v", p, i, g, v)
			}
		}
	}
}

// TestSeparateErrors checks the refusals of NewSeparate, Objective,
// ValidateData, SetParams and SetRandomState, and that a refused
// SetParams or SetRandomState changes nothing.
func TestSeparateErrors(t *testing.T) {
	m0, m1 := sepOutput(t, 0), sepOutput(t, 1)
	if _, err := gp.NewSeparate(nil); err == nil {
		t.Error("no models accepted")
	}
	if _, err := gp.NewSeparate([]*gp.Model{m0, m0}); err == nil {
		t.Error("a model used twice accepted")
	}
	if _, err := gp.NewSeparate([]*gp.Model{m0, nil}); err == nil {
		t.Error("a nil model accepted")
	}
	k, _ := kernel.NewRBF(1, 1, 1)
	lik, _ := likelihood.NewGaussian(0.1)
	m1d, _ := gp.NewSVGP(k, lik, mat.NewDense(2, 1, []float64{0, 1}))
	if _, err := gp.NewSeparate([]*gp.Model{m0, m1d}); !errors.Is(err, gp.ErrShape) {
		t.Errorf("models of different input dimensions: %v", err)
	}
	g, _ := likelihood.NewIndependentGaussian([]float64{0.1, 0.2})
	k2, _ := kernel.NewRBF(2, 1, 1)
	multi, _ := gp.NewSVGP(k2, g, mat.NewDense(2, 2, []float64{0, 1, 1, 0}))
	if _, err := gp.NewSeparate([]*gp.Model{m0, multi}); err == nil {
		t.Error("a multi-output model accepted as an output")
	}
	s, err := gp.NewSeparate([]*gp.Model{m0, m1})
	if err != nil {
		t.Fatal(err)
	}
	x, y := sepData(5, 2, false, 5)
	if _, err := s.Objective(x, y[:9], 5, nil); !errors.Is(err, gp.ErrShape) {
		t.Errorf("short y: %v", err)
	}
	yi := append([]float64(nil), y...)
	yi[3] = math.Inf(1)
	if _, err := s.Objective(x, yi, 5, nil); !errors.Is(err, gp.ErrValue) {
		t.Errorf("infinite target: %v", err)
	}
	if _, err := s.Objective(x, y, 0, nil); !errors.Is(err, gp.ErrValue) {
		t.Errorf("nTotal 0: %v", err)
	}
	if _, err := s.Objective(x, y, 5, make([]float64, 3)); !errors.Is(err, gp.ErrShape) {
		t.Errorf("short gradient: %v", err)
	}
	yn := append([]float64(nil), y...)
	for i := 0; i < 5; i++ {
		yn[2*i+1] = math.NaN()
	}
	if err := s.ValidateData(x, yn); !errors.Is(err, gp.ErrValue) {
		t.Errorf("an output with no observed target: %v", err)
	}
	if err := s.ValidateData(x, y); err != nil {
		t.Errorf("valid data refused: %v", err)
	}
	th := make([]float64, s.NumParams())
	s.Params(th)
	bad := append([]float64(nil), th...)
	bad[len(bad)-1] = math.NaN()
	if err := s.SetParams(bad); err == nil {
		t.Error("NaN parameter accepted")
	}
	if err := s.SetParams(th[1:]); !errors.Is(err, gp.ErrShape) {
		t.Errorf("short parameters: %v", err)
	}
	after := make([]float64, len(th))
	s.Params(after)
	for i := range th {
		if after[i] != th[i] {
			t.Fatalf("refused SetParams changed parameter %d", i)
		}
	}
	st := s.RandomState()
	for _, bad := range [][]byte{nil, st[:len(st)-1], append(append([]byte(nil), st...), 0), {255, 255, 255, 255}} {
		if err := s.SetRandomState(bad); !errors.Is(err, gp.ErrValue) {
			t.Errorf("random state of %d bytes: %v", len(bad), err)
		}
	}
	if err := s.SetRandomState(st); err != nil {
		t.Errorf("own random state refused: %v", err)
	}
}

// TestSeparatePredict checks that PredictF and PredictY give column p the
// predictions of output p's model.
func TestSeparatePredict(t *testing.T) {
	s, ms := newSep(t, 3)
	x, _ := sepData(6, 1, false, 6)
	fm, fv, err := s.PredictF(x)
	if err != nil {
		t.Fatal(err)
	}
	ym, yv, err := s.PredictY(x)
	if err != nil {
		t.Fatal(err)
	}
	for p, m := range ms {
		pr, _ := m.Predictor(0)
		wf, wfv, _ := pr.PredictF(x)
		wy, wyv, _ := pr.PredictY(x)
		for i := 0; i < 6; i++ {
			if fm.At(i, p) != wf.At(i, 0) || fv.At(i, p) != wfv.At(i, 0) || ym.At(i, p) != wy.At(i, 0) || yv.At(i, p) != wyv.At(i, 0) {
				t.Fatalf("output %d row %d differs from its model's prediction", p, i)
			}
		}
	}
}

// ExampleNewSeparate trains two outputs with their own kernel
// hyperparameters, noise and inducing inputs jointly on one mini-batch
// stream; the second output misses a third of its targets (NaN).
func ExampleNewSeparate() {
	const n = 60
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, 2*n)
	for i := 0; i < n; i++ {
		v := -3 + 6*float64(i)/(n-1)
		x.Set(i, 0, v)
		y[2*i] = math.Sin(v)       // smooth
		y[2*i+1] = math.Sin(3 * v) // wiggly
		if i%3 == 0 {
			y[2*i+1] = math.NaN()
		}
	}
	var models []*gp.Model
	for range 2 {
		k, _ := kernel.NewRBF(1, 1, 1)
		lik, _ := likelihood.NewGaussian(0.1)
		z := mat.NewDense(15, 1, nil)
		for j := 0; j < 15; j++ {
			z.Set(j, 0, -3+6*float64(j)/14)
		}
		m, err := gp.NewSVGP(k, lik, z, gp.WithWhitening(true))
		if err != nil {
			panic(err)
		}
		models = append(models, m)
	}
	sep, err := gp.NewSeparate(models)
	if err != nil {
		panic(err)
	}
	cfg := train.Config{Epochs: 600, BatchSize: 30, Seed: 1, Schedule: train.Constant(0.03)}
	if _, err := train.Fit(context.Background(), sep, x, y, cfg); err != nil {
		panic(err)
	}
	// Each output has learned its own lengthscale: the smooth output's is
	// about twice the wiggly one's (the exact digits depend on the
	// platform's floating-point contraction, so they are not printed).
	var ls [2]float64
	for p := 0; p < 2; p++ {
		ls[p] = sep.Output(p).Kernel().(*kernel.Stationary).Lengthscales()[0]
		noise := sep.Output(p).Likelihood().(*likelihood.Gaussian).NoiseVariance()
		fmt.Printf("output %d: noise variance below 0.01: %v\n", p, noise < 0.01)
	}
	fmt.Printf("smooth lengthscale / wiggly lengthscale above 1.5: %v\n", ls[0]/ls[1] > 1.5)
	// Output:
	// output 0: noise variance below 0.01: true
	// output 1: noise variance below 0.01: true
	// smooth lengthscale / wiggly lengthscale above 1.5: true
}
