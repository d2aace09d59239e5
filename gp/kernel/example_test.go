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

// An RBF kernel on the first two input columns plus a periodic kernel of
// period 7 on the third (day of the week, say), as one kernel on R^3.
func ExampleNewActive() {
	rbf, _ := kernel.NewRBF(2, 1.0, 1.0)
	weekly, _ := kernel.NewPeriodic(1, 7, 1.0, 0.5)
	a, err := kernel.NewActive(rbf, 3, []int{0, 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := kernel.NewActive(weekly, 3, []int{2})
	k, err := kernel.NewSum(a, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Parameters: [rbf ℓ, rbf σ², periodic ℓ, period, periodic σ²].
	fmt.Println("parameters:", k.NumParams())
	x := mat.NewDense(3, 3, []float64{
		0, 0, 0,
		0, 0, 7, // a week later: the periodic part repeats
		0, 0, 3.5,
	})
	var K mat.Dense
	k.Matrix(&K, x, x)
	// Half a week apart: 1 + 0.5·exp(−½ sin²(π/2)) = 1 + 0.5·e^(−½).
	fmt.Printf("%.4f\n", mat.Formatted(&K))
	// Output:
	// parameters: 5
	// ⎡1.5000  1.5000  1.3033⎤
	// ⎢1.5000  1.5000  1.3033⎥
	// ⎣1.3033  1.3033  1.5000⎦
}
