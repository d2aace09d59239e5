package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// These tests run the models on the production kernels and likelihoods.

func prodKernel(t testing.TB, name string, d int) Kernel {
	t.Helper()
	var k Kernel
	var err error
	switch name {
	case "rbf-ard":
		k, err = kernel.NewRBF(d, 1.1, 1.3, kernel.ARD())
	case "matern12":
		k, err = kernel.NewMatern12(d, 1.4, 0.9)
	case "matern32-ard":
		k, err = kernel.NewMatern32(d, 1.2, 1.1, kernel.ARD())
	case "matern52":
		k, err = kernel.NewMatern52(d, 0.9, 1.2)
	case "sum":
		a, e1 := kernel.NewRBF(d, 1.0, 0.7)
		b, e2 := kernel.NewMatern32(d, 1.5, 0.5, kernel.ARD())
		if e1 != nil || e2 != nil {
			t.Fatal(e1, e2)
		}
		k, err = kernel.NewSum(a, b)
	}
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func prodLik(t testing.TB, name string) (Likelihood, func(x float64, rng *rand.Rand) float64) {
	t.Helper()
	var lik Likelihood
	var err error
	var label func(x float64, rng *rand.Rand) float64
	switch name {
	case "gaussian":
		lik, err = likelihood.NewGaussian(0.2)
		label = func(x float64, rng *rand.Rand) float64 { return math.Sin(x) + 0.3*rng.NormFloat64() }
	case "bernoulli":
		lik, err = likelihood.NewBernoulli()
		label = func(x float64, rng *rand.Rand) float64 {
			if math.Sin(x)+0.5*rng.NormFloat64() > 0 {
				return 1
			}
			return 0
		}
	case "poisson":
		lik, err = likelihood.NewPoisson()
		label = func(x float64, rng *rand.Rand) float64 { return float64(rng.IntN(4)) }
	case "robustmax":
		lik, err = likelihood.NewRobustMax(3)
		label = func(x float64, rng *rand.Rand) float64 { return float64(rng.IntN(3)) }
	case "softmax":
		lik, err = likelihood.NewSoftmax(3)
		label = func(x float64, rng *rand.Rand) float64 { return float64(rng.IntN(3)) }
	}
	if err != nil {
		t.Fatal(err)
	}
	return lik, label
}

func prodModel(t testing.TB, kind Kind, whiten bool, kname, lname string, rng *rand.Rand, d, m, m2, n int) (*Model, *mat.Dense, []float64) {
	t.Helper()
	k := prodKernel(t, kname, d)
	lik, label := prodLik(t, lname)
	z := randDense(rng, m, d, -2, 2)
	o := randDense(rng, m2, d, -2, 2)
	opts := append(noJit(), WithWhitening(whiten))
	var mod *Model
	var err error
	mod, err = newOfKind(kind, k, lik, z, o, opts...)
	if err != nil {
		t.Fatal(err)
	}
	perturbQ(mod, rng, 0.25)
	x := randDense(rng, n, d, -2.5, 2.5)
	y := make([]float64, n)
	for i := range y {
		y[i] = label(x.At(i, 0), rng)
	}
	return mod, x, y
}

// TestGradientProduction checks every gradient against central finite
// differences for every production likelihood, several kernels, all three
// model kinds, whitened and not.
func TestGradientProduction(t *testing.T) {
	kernels := []string{"rbf-ard", "matern12", "matern32-ard", "matern52", "sum"}
	liks := []string{"gaussian", "bernoulli", "poisson", "robustmax", "softmax"}
	i := 0
	for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
		for _, w := range []bool{false, true} {
			for _, ln := range liks {
				kn := kernels[i%len(kernels)]
				i++
				t.Run(fmt.Sprintf("%v/whiten=%v/%s/%s", kind, w, kn, ln), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(i), 77))
					mod, x, y := prodModel(t, kind, w, kn, ln, rng, 2, 4, 3, 6)
					idx := make([]int, mod.NumParams())
					for j := range idx {
						idx[j] = j
					}
					checkGrad(t, mod, x, y, 30, idx, 5e-6)
				})
			}
		}
	}
}

// TestGradientProductionMedium samples gradient entries of medium-size
// models with the Matérn-3/2 ARD kernel.
func TestGradientProductionMedium(t *testing.T) {
	for _, c := range []struct {
		kind Kind
		w    bool
		lik  string
	}{{SVGP, false, "gaussian"}, {SVGP, true, "bernoulli"}, {SOLVEGP, false, "robustmax"}, {SOLVEGP, true, "gaussian"}, {ODVGP, false, "gaussian"}, {ODVGP, true, "poisson"}} {
		t.Run(fmt.Sprintf("%v/whiten=%v/%s", c.kind, c.w, c.lik), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(31, 32))
			mod, x, y := prodModel(t, c.kind, c.w, "matern32-ard", c.lik, rng, 4, 24, 16, 50)
			var idx []int
			for j := 0; j < mod.NumParams(); j += 1 + rng.IntN(23) {
				idx = append(idx, j)
			}
			checkGrad(t, mod, x, y, 500, idx, 1e-5)
		})
	}
}
