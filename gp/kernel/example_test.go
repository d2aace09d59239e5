package kernel_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/kernel"
)

// The kernels satisfy kernel.Kernel, the method set of gp.Kernel.
var _ kernel.Kernel = (*kernel.Stationary)(nil)

func ExampleNewMatern32() {
	k, err := kernel.NewMatern32(2, 1.5, 2.0, kernel.ARD())
	if err != nil {
		fmt.Println(err)
		return
	}
	x := mat.NewDense(3, 2, []float64{0, 0, 1, 0, 0, 3})
	var K mat.Dense
	k.Matrix(&K, x, x)
	fmt.Printf("%.4f\n", mat.Formatted(&K))
	fmt.Println("parameters:", k.NumParams())
	// Output:
	// ⎡2.0000  1.3581  0.2795⎤
	// ⎢1.3581  2.0000  0.2414⎥
	// ⎣0.2795  0.2414  2.0000⎦
	// parameters: 3
}

func ExampleNewSum() {
	smooth, _ := kernel.NewRBF(1, 2.0, 1.0)
	rough, _ := kernel.NewMatern12(1, 0.1, 0.05)
	k, err := kernel.NewSum(smooth, rough)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Parameters: [smooth ℓ, smooth σ², rough ℓ, rough σ²], unconstrained.
	fmt.Println("parameters:", k.NumParams())
	x := mat.NewDense(2, 1, []float64{0, 0.5})
	var K mat.Dense
	k.Matrix(&K, x, x)
	fmt.Printf("%.4f\n", mat.Formatted(&K))
	// Output:
	// parameters: 4
	// ⎡1.0500  0.9696⎤
	// ⎣0.9696  1.0500⎦
}
