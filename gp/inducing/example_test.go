package inducing_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/inducing"
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
