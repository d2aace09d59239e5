package inducing_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
)

// Initialize M inducing inputs Z and M2 orthogonal inducing inputs O.
func ExampleInit() {
	x := mat.NewDense(200, 1, nil)
	for i := 0; i < 200; i++ {
		x.Set(i, 0, float64(i%4)) // four distinct values
	}
	z, o, err := inducing.Init(x, 2, 2, inducing.KMeansOptions{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(z.RawMatrix().Rows, o.RawMatrix().Rows)
	// Output:
	// 2 2
}

// Choose M inducing inputs Z and M2 orthogonal inducing inputs O by greedy
// conditional-variance selection for an RBF kernel.
func ExampleGreedyInit() {
	x := mat.NewDense(100, 1, nil)
	for i := 0; i < 100; i++ {
		x.Set(i, 0, float64(i)/10) // 0, 0.1, …, 9.9
	}
	k, err := kernel.NewRBF(1, 3, 1) // lengthscale 3
	if err != nil {
		fmt.Println(err)
		return
	}
	z, o, err := inducing.GreedyInit(k, x, 3, 2, inducing.GreedyOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The ends first, then the middle, then the middles of the gaps.
	fmt.Println(mat.Formatted(z.T()), mat.Formatted(o.T()))
	// Output:
	// [  0  9.9  4.9] [7.4  2.1]
}
