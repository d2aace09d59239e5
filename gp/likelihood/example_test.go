package likelihood_test

import (
	"fmt"

	"github.com/solvegp/solvegp/gp/likelihood"
)

func ExampleGaussian_ExpectedLogLik() {
	g, err := likelihood.NewGaussian(0.1)
	if err != nil {
		fmt.Println(err)
		return
	}
	y := []float64{0.5, -1}
	mu := []float64{0.4, -0.8}
	v := []float64{0.05, 0.2}
	dmu := make([]float64, 2)
	dvar := make([]float64, 2)
	e := g.ExpectedLogLik(y, mu, v, dmu, dvar, nil, nil)
	fmt.Printf("%.4f %.4f %.4f\n", e, dmu[0], dvar[1])
	// Output:
	// -1.0353 1.0000 -5.0000
}

func ExampleRobustMax_PredictY() {
	r, err := likelihood.NewRobustMax(3)
	if err != nil {
		fmt.Println(err)
		return
	}
	// One point, three latent functions (point-major layout).
	mu := []float64{2, 0, -1}
	fvar := []float64{0.1, 0.1, 0.1}
	probs := make([]float64, 3)
	r.PredictY(probs, nil, mu, fvar, nil)
	fmt.Printf("%.3f\n", probs)
	// Output:
	// [0.999 0.001 0.001]
}
