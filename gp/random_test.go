package gp

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// TestResumeRandomState trains models that draw random numbers in every
// evaluation, SOLVE-GP with the softmax likelihood (a Monte Carlo expected
// log-likelihood) and ODVGP with sampled columns of K_vv, through
// train.Fit, stops them after a mid-epoch step and resumes each on a fresh
// model at the saved parameters: the final parameters are those of the
// uninterrupted run, bit for bit, and without the checkpoint's random state
// they are not.
func TestResumeRandomState(t *testing.T) {
	const d, n = 2, 60
	for _, c := range []struct {
		name  string
		build func() *Model
	}{
		{"softmax", func() *Model {
			rng := rand.New(rand.NewPCG(21, 22))
			k, err := kernel.NewRBF(d, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			lik, err := likelihood.NewSoftmax(3, likelihood.Samples(4))
			if err != nil {
				t.Fatal(err)
			}
			mod, err := NewSOLVEGP(k, lik, randDense(rng, 5, d, -2, 2), randDense(rng, 4, d, -2, 2), WithSeed(5))
			if err != nil {
				t.Fatal(err)
			}
			return mod
		}},
		{"odvgp-columns", func() *Model {
			rng := rand.New(rand.NewPCG(23, 24))
			k, err := kernel.NewRBF(d, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			lik, err := likelihood.NewGaussian(0.1)
			if err != nil {
				t.Fatal(err)
			}
			mod, err := NewODVGP(k, lik, randDense(rng, 5, d, -2, 2), randDense(rng, 12, d, -2, 2), WithSeed(6), WithColumnSample(4))
			if err != nil {
				t.Fatal(err)
			}
			return mod
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(25, 26))
			x := randDense(rng, n, d, -2, 2)
			y := make([]float64, n)
			for i := range y {
				if c.name == "softmax" {
					y[i] = float64(rng.IntN(3))
				} else {
					y[i] = math.Sin(x.At(i, 0)) + 0.1*rng.NormFloat64()
				}
			}
			cfg := train.Config{Epochs: 3, BatchSize: 16, Schedule: train.Constant(0.02), Seed: 9}
			fit := func(m *Model, cfg train.Config) []float64 {
				t.Helper()
				if _, err := train.Fit(context.Background(), m, x, y, cfg); err != nil {
					t.Fatal(err)
				}
				p := make([]float64, m.NumParams())
				m.Params(p)
				return p
			}
			want := fit(c.build(), cfg)

			m1 := c.build()
			var ck train.Checkpoint
			var saved []float64
			c1 := cfg
			c1.OnStep = func(si train.StepInfo) error {
				if si.Step == 6 {
					ck = si.Checkpoint()
					saved = make([]float64, m1.NumParams())
					m1.Params(saved)
					return train.ErrStop
				}
				return nil
			}
			fit(m1, c1)
			resume := func(ck train.Checkpoint) []float64 {
				m2 := c.build()
				if err := m2.SetParams(saved); err != nil {
					t.Fatal(err)
				}
				c2 := cfg
				c2.Resume = &ck
				return fit(m2, c2)
			}
			same := func(a, b []float64) bool {
				for i := range a {
					if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
						return false
					}
				}
				return true
			}
			if got := resume(ck); !same(got, want) {
				t.Error("the resumed run's parameters differ from the uninterrupted run's")
			}
			ck.Random = nil
			if got := resume(ck); same(got, want) {
				t.Error("without the random state the resumed run still ends as the uninterrupted one: the test cannot see it")
			}
		})
	}
}

// TestSetRandomState checks that RandomState and SetRandomState round-trip
// and that a state that is not one is refused without touching the stream.
func TestSetRandomState(t *testing.T) {
	k, err := kernel.NewRBF(1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	lik, err := likelihood.NewGaussian(0.1)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := NewSVGP(k, lik, mat.NewDense(2, 1, []float64{-1, 1}), WithSeed(3))
	if err != nil {
		t.Fatal(err)
	}
	st := mod.RandomState()
	a := mod.rng.Uint64()
	if err := mod.SetRandomState([]byte("pcg:short")); !errors.Is(err, ErrValue) {
		t.Errorf("a bad state: %v, want ErrValue", err)
	}
	b := mod.rng.Uint64()
	if err := mod.SetRandomState(st); err != nil {
		t.Fatal(err)
	}
	if got := mod.rng.Uint64(); got != a {
		t.Errorf("after SetRandomState the stream gives %d, want %d", got, a)
	}
	if got := mod.rng.Uint64(); got != b {
		t.Errorf("a refused state changed the stream: %d, want %d", got, b)
	}
}

// TestSetThreads checks that SetThreads sets the model's budget and passes
// it to the kernel and the likelihood, and that a model built with one
// budget and moved to another evaluates exactly as a model built with the
// second.
func TestSetThreads(t *testing.T) {
	rk, rl := newRecorders(t)
	r := rand.New(rand.NewPCG(45, 46))
	rec, err := NewSVGP(rk, rl, randDense(r, 5, 2, -1, 1), WithThreads(3))
	if err != nil {
		t.Fatal(err)
	}
	rec.SetThreads(2)
	if rec.cfg.threads != 2 || !slices.Equal(rk.rec.got, []int{3, 2}) || !slices.Equal(rl.rec.got, []int{3, 2}) {
		t.Errorf("after SetThreads(2): budget %d, SetWorkers calls %v (kernel) and %v (likelihood)", rec.cfg.threads, rk.rec.got, rl.rec.got)
	}

	const d, n = 3, 200
	build := func(threads int) *Model {
		rng := rand.New(rand.NewPCG(41, 42))
		k, err := kernel.NewMatern32(d, 1, 1, kernel.ARD())
		if err != nil {
			t.Fatal(err)
		}
		lik, err := likelihood.NewSoftmax(3, likelihood.Samples(5))
		if err != nil {
			t.Fatal(err)
		}
		mod, err := NewSOLVEGP(k, lik, randDense(rng, 40, d, -2, 2), randDense(rng, 30, d, -2, 2), WithThreads(threads), WithSeed(7))
		if err != nil {
			t.Fatal(err)
		}
		return mod
	}
	rng := rand.New(rand.NewPCG(43, 44))
	x := randDense(rng, n, d, -2, 2)
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(rng.IntN(3))
	}
	eval := func(m *Model) (float64, []float64) {
		g := make([]float64, m.NumParams())
		f, err := m.Objective(x, y, n, g)
		if err != nil {
			t.Fatal(err)
		}
		return f, g
	}
	fa, ga := eval(build(1))
	moved := build(3)
	moved.SetThreads(1)
	fb, gb := eval(moved)
	if math.Float64bits(fa) != math.Float64bits(fb) {
		t.Errorf("objective %v after SetThreads(1), %v when built with one thread", fb, fa)
	}
	for i := range ga {
		if math.Float64bits(ga[i]) != math.Float64bits(gb[i]) {
			t.Fatalf("gradient %d: %v after SetThreads(1), %v when built with one thread", i, gb[i], ga[i])
		}
	}
}
