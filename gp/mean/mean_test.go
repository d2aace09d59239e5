package mean_test

import (
	"context"
	"errors"
	"fmt"
	"log"
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

var _ = []gp.MeanFunction{&mean.Zero{}, &mean.Constant{}, &mean.Linear{}}

// Eval and Grad agree: the gradient of Σ g[n]·m(x_n) in the parameters and
// inputs matches central finite differences.
func TestGradFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d = 6, 3
	x := mat.NewDense(n, d, nil)
	g := make([]float64, n)
	for i := 0; i < n; i++ {
		g[i] = rng.NormFloat64()
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	z, _ := mean.NewZero(d)
	c, _ := mean.NewConstant(d, 0.4)
	l, _ := mean.NewLinear([]float64{0.5, -1, 2}, 0.3)
	for _, m := range []gp.MeanFunction{z, c, l} {
		f := func(x *mat.Dense) float64 {
			v := make([]float64, n)
			m.Eval(x, v)
			var s float64
			for i := range v {
				s += g[i] * v[i]
			}
			return s
		}
		p := make([]float64, m.NumParams())
		m.Params(p)
		dp := make([]float64, len(p))
		dx := mat.NewDense(n, d, nil)
		m.Grad(x, g, dp, dx)
		const h = 1e-6
		for i := range p {
			q := append([]float64(nil), p...)
			q[i] = p[i] + h
			m.SetParams(q)
			fp := f(x)
			q[i] = p[i] - h
			m.SetParams(q)
			fm := f(x)
			m.SetParams(p)
			if fd := (fp - fm) / (2 * h); math.Abs(fd-dp[i]) > 1e-7 {
				t.Errorf("%T: parameter %d: gradient %g, finite difference %g", m, i, dp[i], fd)
			}
		}
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				xp, xm := mat.DenseCopyOf(x), mat.DenseCopyOf(x)
				xp.Set(i, j, x.At(i, j)+h)
				xm.Set(i, j, x.At(i, j)-h)
				if fd := (f(xp) - f(xm)) / (2 * h); math.Abs(fd-dx.At(i, j)) > 1e-7 {
					t.Errorf("%T: dx[%d][%d] = %g, finite difference %g", m, i, j, dx.At(i, j), fd)
				}
			}
		}
	}
}

func TestErrors(t *testing.T) {
	if _, err := mean.NewZero(0); !errors.Is(err, mean.ErrParams) {
		t.Errorf("NewZero(0): %v", err)
	}
	if _, err := mean.NewConstant(1, math.NaN()); !errors.Is(err, mean.ErrParams) {
		t.Errorf("NewConstant(NaN): %v", err)
	}
	if _, err := mean.NewLinear(nil, 0); !errors.Is(err, mean.ErrParams) {
		t.Errorf("NewLinear(nil): %v", err)
	}
	if _, err := mean.NewLinear([]float64{math.Inf(1)}, 0); !errors.Is(err, mean.ErrParams) {
		t.Errorf("NewLinear(Inf): %v", err)
	}
	l, _ := mean.NewLinear([]float64{1, 2}, 0)
	if err := l.SetParams([]float64{1, 2}); !errors.Is(err, mean.ErrParams) {
		t.Errorf("SetParams of the wrong length: %v", err)
	}
	c := l.Clone().(*mean.Linear)
	c.SetParams([]float64{5, 6, 7})
	if w := l.Weights(); w[0] != 1 || w[1] != 2 || l.Bias() != 0 {
		t.Error("Clone shares the weights")
	}
}

// trendData draws y = 1.5·x + sin(3x) + noise on [0, 5].
func trendData(rng *rand.Rand, n int, lo, hi float64) (*mat.Dense, []float64) {
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range y {
		xi := lo + (hi-lo)*rng.Float64()
		x.Set(i, 0, xi)
		y[i] = 1.5*xi + math.Sin(3*xi) + 0.1*rng.NormFloat64()
	}
	return x, y
}

// fitTrend trains a whitened SVGP with the given mean on trend data and
// returns its RMSE on points beyond the training range.
func fitTrend(t *testing.T, m gp.MeanFunction) float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	x, y := trendData(rng, 120, 0, 5)
	xt, yt := trendData(rng, 50, 6, 8)
	z := mat.NewDense(12, 1, nil)
	for i := 0; i < 12; i++ {
		z.Set(i, 0, 5*float64(i)/11)
	}
	k, _ := kernel.NewRBF(1, 1, 1)
	lik, _ := likelihood.NewGaussian(0.1)
	opts := []gp.Option{gp.WithWhitening(true)}
	if m != nil {
		opts = append(opts, gp.WithMean(m))
	}
	mod, err := gp.NewSVGP(k, lik, z, opts...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := train.Config{Epochs: 1500, Schedule: train.Constant(0.05), Seed: 1}
	if _, err := train.Fit(context.Background(), mod, x, y, cfg); err != nil {
		t.Fatal(err)
	}
	pm, _, err := mod.PredictF(xt)
	if err != nil {
		t.Fatal(err)
	}
	var s float64
	for i, v := range yt {
		s += (pm.At(i, 0) - v) * (pm.At(i, 0) - v)
	}
	return math.Sqrt(s / float64(len(yt)))
}

// On data with a strong linear trend, a learned linear mean extrapolates
// beyond the training inputs far better than the zero mean, which reverts
// to zero there.
func TestLinearMeanExtrapolates(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two models")
	}
	lin, _ := mean.NewLinear([]float64{0}, 0)
	rLin := fitTrend(t, lin)
	rZero := fitTrend(t, nil)
	t.Logf("extrapolation RMSE: linear mean %.3f, zero mean %.3f", rLin, rZero)
	if !(rLin < 1.5 && rLin < rZero/3) {
		t.Errorf("extrapolation RMSE: linear mean %.3f, zero mean %.3f", rLin, rZero)
	}
}

// Give an SVGP a linear prior mean m(x) = w·x + b, learned with the other
// parameters; its predictions follow the trend beyond the data.
func ExampleNewLinear() {
	rng := rand.New(rand.NewPCG(3, 4))
	x, y := trendData(rng, 120, 0, 5)
	z := mat.NewDense(12, 1, nil)
	for i := 0; i < 12; i++ {
		z.Set(i, 0, 5*float64(i)/11)
	}
	k, _ := kernel.NewRBF(1, 1, 1)
	lik, _ := likelihood.NewGaussian(0.1)
	lin, err := mean.NewLinear([]float64{0}, 0)
	if err != nil {
		log.Fatal(err)
	}
	model, err := gp.NewSVGP(k, lik, z, gp.WithWhitening(true), gp.WithMean(lin))
	if err != nil {
		log.Fatal(err)
	}
	cfg := train.Config{Epochs: 1500, Schedule: train.Constant(0.05), Seed: 1}
	if _, err := train.Fit(context.Background(), model, x, y, cfg); err != nil {
		log.Fatal(err)
	}
	f, _, err := model.PredictF(mat.NewDense(1, 1, []float64{10}))
	if err != nil {
		log.Fatal(err)
	}
	// The learned slope is close to the trend's 1.5, and the prediction at
	// x = 10, twice the training range away, follows the trend (15) where a
	// zero-mean GP would have fallen back towards 0. (The exact digits vary
	// with the platform's fused multiply-adds over 1500 Adam steps.)
	slope := model.Mean().(*mean.Linear).Weights()[0]
	fmt.Println("slope within 0.5 of 1.5:", math.Abs(slope-1.5) < 0.5)
	fmt.Println("f(10) within 3 of 15:", math.Abs(f.At(0, 0)-15) < 3)
	// Output:
	// slope within 0.5 of 1.5: true
	// f(10) within 3 of 15: true
}
