package train_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// classData returns n points in [−2, 2]² labelled by the sign of
// sin(2x₁) + x₂/2 with 5% of the labels flipped.
func classData(n int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range y {
		a, b := 4*rng.Float64()-2, 4*rng.Float64()-2
		x.Set(i, 0, a)
		x.Set(i, 1, b)
		if math.Sin(2*a)+b/2 > 0 {
			y[i] = 1
		}
		if rng.Float64() < 0.05 {
			y[i] = 1 - y[i]
		}
	}
	return x, y
}

// fitClassifier trains a Bernoulli SVGP with 9 inducing points by
// mini-batch Adam on the given bound and returns it.
func fitClassifier(t *testing.T, b gp.BoundKind, x *mat.Dense, y []float64) *gp.Model {
	t.Helper()
	k, err := kernel.NewRBF(2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	lik, err := likelihood.NewBernoulli()
	if err != nil {
		t.Fatal(err)
	}
	z := mat.NewDense(9, 2, nil)
	for i := 0; i < 9; i++ {
		z.Set(i, 0, float64(i%3)*1.6-1.6)
		z.Set(i, 1, float64(i/3)*1.6-1.6)
	}
	mod, err := gp.NewSVGP(k, lik, z, gp.WithWhitening(true), gp.WithBound(b), gp.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := train.Fit(context.Background(), mod, x, y, train.Config{Epochs: 60, BatchSize: 50, Schedule: train.Constant(0.03), Seed: 4}); err != nil {
		t.Fatal(err)
	}
	return mod
}

// accuracy returns the fraction of points whose predicted class
// (p(y = 1) > ½) is their label.
func accuracy(t *testing.T, mod *gp.Model, x *mat.Dense, y []float64) float64 {
	t.Helper()
	p, err := mod.Predictor(0)
	if err != nil {
		t.Fatal(err)
	}
	mean, _, err := p.PredictY(x)
	if err != nil {
		t.Fatal(err)
	}
	var hit float64
	for i, yi := range y {
		if (mean.At(i, 0) > 0.5) == (yi == 1) {
			hit++
		}
	}
	return hit / float64(len(y))
}

// TestTighterBernoulliTraining trains a Bernoulli classifier by mini-batches
// on the standard and on the tighter bound from the same start: at the
// tighter-trained parameters the tighter bound is above the standard one,
// and the tighter-trained classifier predicts held-out labels about as well
// (both well above chance, within 5 points of each other).
func TestTighterBernoulliTraining(t *testing.T) {
	x, y := classData(300, 1)
	xt, yt := classData(400, 2)
	std := fitClassifier(t, gp.StandardBound, x, y)
	tig := fitClassifier(t, gp.TighterBound, x, y)
	ft, err := tig.Objective(x, y, 300, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The standard bound at the tighter-trained parameters.
	k, _ := kernel.NewRBF(2, 1, 1)
	lik, _ := likelihood.NewBernoulli()
	z := mat.NewDense(9, 2, nil)
	same, err := gp.NewSVGP(k, lik, z, gp.WithWhitening(true))
	if err != nil {
		t.Fatal(err)
	}
	th := make([]float64, tig.NumParams())
	tig.Params(th)
	if err := same.SetParams(th); err != nil {
		t.Fatal(err)
	}
	fs, err := same.Objective(x, y, 300, nil)
	if err != nil {
		t.Fatal(err)
	}
	fstd, err := std.Objective(x, y, 300, nil)
	if err != nil {
		t.Fatal(err)
	}
	as, at := accuracy(t, std, xt, yt), accuracy(t, tig, xt, yt)
	t.Logf("tighter-trained: tighter bound %.4f, standard bound %.4f; standard-trained: standard bound %.4f; test accuracy standard %.3f, tighter %.3f", ft, fs, fstd, as, at)
	if !(ft > fs) {
		t.Errorf("tighter bound %.6g not above the standard %.6g at the same parameters", ft, fs)
	}
	if !(as > 0.8 && at > 0.8 && at > as-0.05) {
		t.Errorf("test accuracy: standard %.3f, tighter %.3f", as, at)
	}
}
