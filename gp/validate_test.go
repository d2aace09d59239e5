package gp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// TestValidateData checks that a label outside the likelihood's support
// stops train.Fit before training, with an error naming the label, rather
// than making every mini-batch that draws it a rejected step.
func TestValidateData(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	for _, lname := range []string{"bernoulli", "poisson", "robustmax"} {
		mod, x, y := prodModel(t, SOLVEGP, false, "matern52", lname, rng, 2, 4, 3, 40)
		if err := mod.ValidateData(x, y); err != nil {
			t.Fatalf("%s: good data refused: %v", lname, err)
		}
		y[17] = 7.5
		err := mod.ValidateData(x, y)
		if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "17") {
			t.Errorf("%s: ValidateData = %v, want an ErrValue naming label 17", lname, err)
		}
		res, err := train.Fit(context.Background(), mod, x, y, train.Config{Epochs: 3, BatchSize: 8})
		if !errors.Is(err, ErrValue) || res.Steps != 0 || res.Rejected != 0 {
			t.Errorf("%s: Fit = %+v, %v; want no step and an ErrValue", lname, res, err)
		}
		y[17] = 0
		if err := mod.ValidateData(mat.DenseCopyOf(x.Slice(0, 40, 0, 1)), y); !errors.Is(err, ErrShape) {
			t.Errorf("%s: one input column of two: ValidateData = %v, want ErrShape", lname, err)
		}
		if err := mod.ValidateData(x, y[:39]); !errors.Is(err, ErrShape) {
			t.Errorf("%s: 39 labels for 40 inputs: ValidateData = %v, want ErrShape", lname, err)
		}
	}
}

// TestPredictNonFinite checks that predictions that overflow (here every
// parameter set to 1e300, which SetParams accepts) come back as errors
// wrapping ErrValue, never as NaN with a nil error.
func TestPredictNonFinite(t *testing.T) {
	k, lik := rbfGaussian(t)
	z := mat.NewDense(4, 2, []float64{0, 0, 0.2, 0.3, 0.5, 0.5, 0.9, 0.1})
	o := mat.NewDense(2, 2, []float64{0.3, 0.3, 0.7, 0.1})
	mod, err := NewODVGP(k, lik, z, o)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]float64, mod.NumParams())
	for i := range p {
		p[i] = 1e300
	}
	if err := mod.SetParams(p); err != nil {
		t.Fatal(err)
	}
	pr, err := mod.Predictor(0)
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(2, 2, []float64{0.1, 0.1, 0.4, 0.4})
	y := []float64{0, 1}
	if _, _, err := pr.PredictF(x); !errors.Is(err, ErrValue) {
		t.Errorf("PredictF: %v, want ErrValue", err)
	}
	if _, _, err := pr.PredictY(x); !errors.Is(err, ErrValue) {
		t.Errorf("PredictY: %v, want ErrValue", err)
	}
	if _, err := pr.LogPredictive(x, y); !errors.Is(err, ErrValue) {
		t.Errorf("LogPredictive: %v, want ErrValue", err)
	}
	if v, err := pr.MeanLogPredictive(x, y); !errors.Is(err, ErrValue) {
		t.Errorf("MeanLogPredictive: %v, %v; want ErrValue", v, err)
	}
	if _, err := pr.JointCov(x, 0); !errors.Is(err, ErrValue) {
		t.Errorf("JointCov: %v, want ErrValue", err)
	}
}

// TestNilArguments checks that nil arguments, including typed nils such as
// a (*mat.Dense)(nil) passed as a mat.Matrix, give errors, not panics.
func TestNilArguments(t *testing.T) {
	k, lik := rbfGaussian(t)
	z := mat.NewDense(3, 2, []float64{0, 0, 1, 0, 0, 1})
	var nz *mat.Dense
	var nk *kernel.Stationary
	var nl *likelihood.Gaussian
	for name, f := range map[string]func() error{
		"typed nil Z":          func() error { _, err := NewSVGP(k, lik, nz); return err },
		"typed nil kernel":     func() error { _, err := NewSVGP(nk, lik, z); return err },
		"typed nil likelihood": func() error { _, err := NewSOLVEGP(k, nl, z, z); return err },
		"nil option":           func() error { _, err := NewSVGP(k, lik, z, nil); return err },
	} {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// SOLVE-GP and ODVGP need O; a typed nil is no O.
	for _, o := range []mat.Matrix{nil, nz} {
		if _, err := NewSOLVEGP(k, lik, z, o); !errors.Is(err, ErrShape) {
			t.Errorf("NewSOLVEGP with O %#v: %v, want ErrShape", o, err)
		}
		if _, err := NewODVGP(k, lik, z, o); !errors.Is(err, ErrShape) {
			t.Errorf("NewODVGP with O %#v: %v, want ErrShape", o, err)
		}
	}
	mod, err := NewSVGP(k, lik, z)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := mod.Predictor(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := pr.PredictF(nz); !errors.Is(err, ErrShape) {
		t.Errorf("PredictF(typed nil): %v, want ErrShape", err)
	}
	if _, err := pr.LogPredictive(nz, nil); !errors.Is(err, ErrShape) {
		t.Errorf("LogPredictive(typed nil): %v, want ErrShape", err)
	}
}

// rbfGaussian returns an RBF kernel on two inputs and a Gaussian likelihood.
func rbfGaussian(t *testing.T) (*kernel.Stationary, *likelihood.Gaussian) {
	t.Helper()
	k, err := kernel.NewRBF(2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	lik, err := likelihood.NewGaussian(0.1)
	if err != nil {
		t.Fatal(err)
	}
	return k, lik
}

// TestBackwardAfterSetParams checks that SetParams invalidates the last
// Forward: Backward would mix the old pass's intermediates with the new
// parameters and return neither gradient. A rejected SetParams, which
// changes nothing, and SetThreads, which changes only how the work is
// split, leave it valid.
func TestBackwardAfterSetParams(t *testing.T) {
	k, lik := rbfGaussian(t)
	rng := rand.New(rand.NewPCG(3, 9))
	for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
		mod, err := newOfKind(kind, k, lik, randDense(rng, 4, 2, -1, 1), randDense(rng, 3, 2, -1, 1), WithThreads(2))
		if err != nil {
			t.Fatal(err)
		}
		x := randDense(rng, 5, 2, -1, 1)
		n := mod.NumParams()
		p := make([]float64, n)
		mod.Params(p)
		p2 := append([]float64(nil), p...)
		p2[0] += 1   // a lengthscale
		p2[n-1] += 1 // a variational parameter
		dmu := []float64{1, -1, 0.5, 2, 0.3}
		dvar := []float64{-0.3, -0.1, -0.2, -0.4, -0.5}
		mu, vr := make([]float64, 5), make([]float64, 5)
		grad := func(at []float64) []float64 {
			t.Helper()
			if err := mod.SetParams(at); err != nil {
				t.Fatal(err)
			}
			if _, _, err := mod.Forward(x, mu, vr); err != nil {
				t.Fatal(err)
			}
			g := make([]float64, n)
			if err := mod.Backward(dmu, dvar, -1, g, nil); err != nil {
				t.Fatal(err)
			}
			return g
		}
		g1 := grad(p)
		g2 := grad(p2)
		if _, _, err := mod.Forward(x, mu, vr); err != nil {
			t.Fatal(err)
		}
		if err := mod.SetParams(p); err != nil {
			t.Fatal(err)
		}
		if err := mod.Backward(dmu, dvar, -1, make([]float64, n), nil); err == nil {
			t.Errorf("%v: Backward after SetParams accepted", kind)
		}
		// A rejected SetParams, then SetThreads: the pass at p is still
		// the last one.
		if _, _, err := mod.Forward(x, mu, vr); err != nil {
			t.Fatal(err)
		}
		if err := mod.SetParams(p[:n-1]); err == nil {
			t.Fatalf("%v: short parameter vector accepted", kind)
		}
		mod.SetThreads(1)
		g := make([]float64, n)
		if err := mod.Backward(dmu, dvar, -1, g, nil); err != nil {
			t.Fatalf("%v: Backward after a rejected SetParams and SetThreads: %v", kind, err)
		}
		for i := range g {
			if math.Abs(g[i]-g1[i]) > 1e-10*(1+math.Abs(g1[i])) {
				t.Errorf("%v: gradient[%d] = %g, want %g (at p2 %g)", kind, i, g[i], g1[i], g2[i])
				break
			}
		}
	}
}

// TestSampleMarginalsLengths checks that SampleMarginals and
// SampleMarginalsGrad reject slices of different lengths with a panic
// that says so (a programming error, as documented), not with an index
// error or by silently using a prefix.
func TestSampleMarginalsLengths(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			t.Helper()
			r := recover()
			if r == nil {
				t.Errorf("%s: no panic", name)
				return
			}
			if _, ok := r.(runtime.Error); ok || !strings.Contains(fmt.Sprint(r), "lengths") {
				t.Errorf("%s: panic %v, want one naming the lengths", name, r)
			}
		}()
		f()
	}
	s := func(n int) []float64 { return make([]float64, n) }
	mustPanic("SampleMarginals long dst", func() { SampleMarginals(s(3), s(2), s(2), s(2)) })
	mustPanic("SampleMarginals short dst", func() { SampleMarginals(s(2), s(3), s(3), s(3)) })
	mustPanic("SampleMarginals short eps", func() { SampleMarginals(s(3), s(3), s(3), s(2)) })
	mustPanic("SampleMarginalsGrad long df", func() { SampleMarginalsGrad(s(2), s(2), s(3), s(2), s(2)) })
	mustPanic("SampleMarginalsGrad short dvar", func() { SampleMarginalsGrad(s(3), s(2), s(3), s(3), s(3)) })
	f := s(2)
	SampleMarginals(f, []float64{1, 2}, []float64{4, -1e-17}, []float64{0.5, 3})
	if f[0] != 2 || f[1] != 2 {
		t.Errorf("SampleMarginals = %v, want [2 2]", f)
	}
	dmu, dvar := s(2), s(2)
	SampleMarginalsGrad(dmu, dvar, []float64{1, 1}, []float64{4, -1e-17}, []float64{0.5, 3})
	if dmu[0] != 1 || dmu[1] != 1 || dvar[0] != 0.125 || dvar[1] != 0 {
		t.Errorf("SampleMarginalsGrad = %v, %v; want [1 1], [0.125 0]", dmu, dvar)
	}
}

// manyLatent is a likelihood that reports n latent functions (only its
// sizes are used).
type manyLatent struct {
	refGauss
	n int
}

func (l *manyLatent) NumLatent() int { return l.n }

// negParamsKernel and negParamsLik report a negative number of
// parameters, as a broken kernel or likelihood of a user's might.
type negParamsKernel struct{ *kernel.Stationary }

func (negParamsKernel) NumParams() int { return -1 }

type negParamsLik struct{ refGauss }

func (*negParamsLik) NumParams() int { return -2 }

// TestNegativeNumParams checks that the constructors refuse a kernel or
// likelihood with a negative NumParams with an error, not a panic from
// slicing the parameter vector.
func TestNegativeNumParams(t *testing.T) {
	k, lik := rbfGaussian(t)
	z := randDense(rand.New(rand.NewPCG(1, 1)), 3, 2, -1, 1)
	for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
		for _, c := range []struct {
			name string
			k    Kernel
			lik  Likelihood
		}{{"kernel", negParamsKernel{k}, lik}, {"likelihood", k, &negParamsLik{}}} {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%v, %s with negative NumParams: panic %v", kind, c.name, r)
					}
				}()
				if _, err := newOfKind(kind, c.k, c.lik, z, z); !errors.Is(err, ErrShape) {
					t.Errorf("%v, %s with negative NumParams: %v, want ErrShape", kind, c.name, err)
				}
			}()
		}
	}
}

// lazyMatrix is an r×c matrix of distinct values that stores none of them.
type lazyMatrix struct{ r, c int }

func (a lazyMatrix) Dims() (int, int)    { return a.r, a.c }
func (a lazyMatrix) At(i, j int) float64 { return float64(i) + 0.5*float64(j) }
func (a lazyMatrix) T() mat.Matrix       { return mat.Transpose{Matrix: a} }

// TestHugeSizes checks that the model constructors refuse sizes whose
// arrays could not be allocated (or whose products overflow int) with an
// error wrapping ErrShape, instead of panicking in makeslice or trying
// to allocate terabytes.
func TestHugeSizes(t *testing.T) {
	k, lik := rbfGaussian(t)
	z := randDense(rand.New(rand.NewPCG(1, 1)), 3, 2, -1, 1)
	for _, n := range []int{MaxLatent + 1, 1 << 31, 1 << 50, math.MaxInt} {
		for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
			if _, err := newOfKind(kind, k, &manyLatent{n: n}, z, z); !errors.Is(err, ErrShape) {
				t.Errorf("%v with %d latent functions: %v, want ErrShape", kind, n, err)
			}
		}
	}
	k1, err := kernel.NewRBF(1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	small := randDense(rand.New(rand.NewPCG(1, 2)), 2, 1, -1, 1)
	huge := lazyMatrix{1 << 23, 1} // M(M+1)/2 = 2⁴⁵ values in L_u alone
	if _, err := NewSVGP(k1, lik, huge); !errors.Is(err, ErrShape) {
		t.Errorf("SVGP with M = 2²³: %v, want ErrShape", err)
	}
	if _, err := NewSOLVEGP(k1, lik, small, huge); !errors.Is(err, ErrShape) {
		t.Errorf("SOLVE-GP with M₂ = 2²³: %v, want ErrShape", err)
	}
	// ODVGP with M₂ = 2²¹ keeps a parameter vector of 2²² values but K_vv,
	// M₂×M₂ = 2⁴² values; with 8 sampled columns only M₂×8 of it.
	o := lazyMatrix{1 << 21, 1}
	if _, err := NewODVGP(k1, lik, small, o); !errors.Is(err, ErrShape) {
		t.Errorf("ODVGP with M₂ = 2²¹: %v, want ErrShape", err)
	}
	if _, err := NewODVGP(k1, lik, small, o, WithColumnSample(8)); err != nil {
		t.Errorf("ODVGP with M₂ = 2²¹ and 8 sampled columns: %v", err)
	}
	// Many classes of a real likelihood are fine.
	rm, err := likelihood.NewRobustMax(1 << 16)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := NewSVGP(k1, rm, small, WithWhitening(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, c := mod.Dims(); c != 1<<16 {
		t.Errorf("%d latent functions, want %d", c, 1<<16)
	}
}
