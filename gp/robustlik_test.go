package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// TestGradientStudentTHeteroscedastic checks every gradient entry of the
// mini-batch objective (nTotal > batch) against central finite differences
// for SVGP, ODVGP and SOLVE-GP with the Student-t likelihood (its σ and ν
// included) and with the heteroscedastic one (two latent functions).
func TestGradientStudentTHeteroscedastic(t *testing.T) {
	newLik := map[string]func() Likelihood{
		"studentt": func() Likelihood {
			l, err := likelihood.NewStudentT(0.6, 3.5)
			if err != nil {
				t.Fatal(err)
			}
			return l
		},
		"heteroscedastic": func() Likelihood {
			l, err := likelihood.NewHeteroscedastic()
			if err != nil {
				t.Fatal(err)
			}
			return l
		},
	}
	for _, name := range []string{"studentt", "heteroscedastic"} {
		for _, kind := range []Kind{SVGP, ODVGP, SOLVEGP} {
			for _, wh := range []bool{false, true} {
				c := gradCase{kind: kind, whiten: wh, lik: name}
				t.Run(c.String(), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(5, 6))
					k := newRefRBF(2, 1.3, 0.9, 1.2, 1.1)
					z := randDense(rng, 4, 2, -2, 2)
					o := randDense(rng, 3, 2, -2, 2)
					mod, err := newOfKind(kind, k, newLik[name](), z, o,
						WithWhitening(wh), WithKuuJitter(chol.NoJitter()), WithCvvJitter(chol.NoJitter()))
					if err != nil {
						t.Fatal(err)
					}
					perturbQ(mod, rng, 0.3)
					x := randDense(rng, 7, 2, -2.5, 2.5)
					y := make([]float64, 7)
					for i := range y {
						y[i] = math.Sin(x.At(i, 0)) + 0.3*rng.NormFloat64()
					}
					y[3] += 6 // an outlier
					idx := make([]int, mod.NumParams())
					for i := range idx {
						idx[i] = i
					}
					checkGrad(t, mod, x, y, 25, idx, 2e-6)
				})
			}
		}
	}
}
