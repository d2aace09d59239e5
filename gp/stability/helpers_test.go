package stability

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// long enables the slow variants of the tests (more learning rates and
// scenarios): go test ./gp/stability -stability.long.
var long = flag.Bool("stability.long", false, "run the long stability matrix")

// sinData returns n points x uniform on [-3, 3] (d = 1) with targets
// y = sin(2x) + 0.1·noise, reproducibly from seed.
func sinData(n int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 11))
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		v := -3 + 6*rng.Float64()
		x.Set(i, 0, v)
		y[i] = math.Sin(2*v) + 0.1*rng.NormFloat64()
	}
	return x, y
}

// grid returns m points evenly spaced on [lo, hi] as an m×1 matrix.
func grid(m int, lo, hi float64) *mat.Dense {
	z := mat.NewDense(m, 1, nil)
	for i := 0; i < m; i++ {
		t := 0.5
		if m > 1 {
			t = float64(i) / float64(m-1)
		}
		z.Set(i, 0, lo+(hi-lo)*t)
	}
	return z
}

// setup describes one model for a stability scenario.
type setup struct {
	kind                  gp.Kind
	z, o                  *mat.Dense
	lengthscale, variance float64
	noise                 float64
	opts                  []gp.Option
}

// build returns the RBF + Gaussian model described by s.
func (s setup) build(t testing.TB) *gp.Model {
	t.Helper()
	mod, err := s.try()
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// try is build returning the constructor's error.
func (s setup) try() (*gp.Model, error) {
	k, err := kernel.NewRBF(1, s.lengthscale, s.variance)
	if err != nil {
		return nil, err
	}
	lik, err := likelihood.NewGaussian(s.noise)
	if err != nil {
		return nil, err
	}
	switch s.kind {
	case gp.SVGP:
		return gp.NewSVGP(k, lik, s.z, s.opts...)
	case gp.ODVGP:
		return gp.NewODVGP(k, lik, s.z, s.o, s.opts...)
	}
	return gp.NewSOLVEGP(k, lik, s.z, s.o, s.opts...)
}

// logger collects the lines Fit logs; safe for concurrent use.
type logger struct {
	mu    sync.Mutex
	lines []string
}

func (l *logger) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// count returns the number of lines containing s.
func (l *logger) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			c++
		}
	}
	return c
}

// params returns a copy of the model's flat parameters.
func params(mod train.Model) []float64 {
	p := make([]float64, mod.NumParams())
	mod.Params(p)
	return p
}

// checkSound reports an error (and returns false) unless every parameter of
// mod is finite and its bound and gradient on (x, y) are finite: the state
// every training run must end in.
func checkSound(t *testing.T, what string, mod train.Model, x *mat.Dense, y []float64) bool {
	t.Helper()
	for i, v := range params(mod) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("%s: parameter %d is %v", what, i, v)
			return false
		}
	}
	grad := make([]float64, mod.NumParams())
	f, err := mod.Objective(x, y, len(y), grad)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		t.Errorf("%s: bound at the kept parameters is %v (err %v)", what, f, err)
		return false
	}
	for i, g := range grad {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			t.Errorf("%s: gradient entry %d at the kept parameters is %v", what, i, g)
			return false
		}
	}
	return true
}

// fit runs train.Fit with a fresh logger and returns its result, log and
// error.
func fit(mod train.Model, x *mat.Dense, y []float64, cfg train.Config) (train.Result, *logger, error) {
	lg := &logger{}
	cfg.Logf = lg.logf
	res, err := train.Fit(context.Background(), mod, x, y, cfg)
	return res, lg, err
}
