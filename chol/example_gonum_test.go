package chol_test

import (
	"fmt"

	"gonum.org/v1/gonum/blas/blas64"
	gonumblas "gonum.org/v1/gonum/blas/gonum"
	gonumlapack "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/chol"
)

// Example_gonum installs this module's BLAS and Cholesky routines as
// gonum's (the README's "BLAS and LAPACK for gonum"), after which gonum's
// mat.Cholesky factors and solves with them. A program does this once at
// start-up; the example restores gonum's own implementations at the end.
func Example_gonum() {
	blas64.Use(blas.Implementation{})
	lapack64.Use(chol.Implementation{})
	defer blas64.Use(gonumblas.Implementation{})
	defer lapack64.Use(gonumlapack.Implementation{})

	a := mat.NewSymDense(3, []float64{
		4, 2, 0.4,
		2, 5, 1,
		0.4, 1, 3,
	})
	var c mat.Cholesky
	if !c.Factorize(a) {
		fmt.Println("not positive definite")
		return
	}
	var x mat.VecDense
	if err := c.SolveVecTo(&x, mat.NewVecDense(3, []float64{1, 2, 3})); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("log det A = %.6f\n", c.LogDet())
	fmt.Printf("x = [%.6f %.6f %.6f]\n", x.AtVec(0), x.AtVec(1), x.AtVec(2))
	// Output:
	// log det A = 3.802208
	// x = [0.062500 0.189286 0.928571]
}
