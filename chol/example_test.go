package chol_test

import (
	"errors"
	"fmt"

	"github.com/solvegp/solvegp/chol"
)

// Factor a symmetric positive-definite matrix, solve a linear system with
// it and read off its log-determinant.
func ExampleCholesky() {
	a := []float64{ // row-major 3×3; only the lower triangle is read
		4, 0, 0,
		2, 5, 0,
		-2, 1, 6,
	}
	var c chol.Cholesky
	if _, err := c.Factor(3, a, 3, chol.NoJitter(), 1); err != nil {
		fmt.Println(err)
		return
	}
	b := []float64{2, 7, 5} // one right-hand side, overwritten by x = A⁻¹b
	if err := c.Solve(1, b, 1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("x = [%.4f %.4f %.4f]\n", b[0], b[1], b[2])
	fmt.Printf("log det A = %.4f\n", c.LogDet())
	// Output:
	// x = [0.3125 1.1250 0.7500]
	// log det A = 4.1589
}

// A kernel matrix that is singular to working precision gets jitter added
// to its diagonal under a JitterPolicy; without one, the typed error names
// the failing pivot.
func ExampleJitterPolicy() {
	// Two identical points under an RBF kernel: exactly singular.
	k := []float64{
		1, 1,
		1, 1,
	}
	var c chol.Cholesky
	_, err := c.Factor(2, k, 2, chol.NoJitter(), 1)
	var npd *chol.NotPositiveDefiniteError
	fmt.Println(errors.As(err, &npd), npd.Pivot)

	jitter, err := c.Factor(2, k, 2, chol.DefaultJitter(), 1)
	fmt.Println(err, jitter > 0)
	// Output:
	// true 1
	// <nil> true
}
