package blas_test

import (
	"fmt"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/blas"
)

// Dgemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices with
// gonum's conventions. Here C = A·Bᵀ for a 2×3 A and a 2×3 B.
func ExampleImplementation_Dgemm() {
	a := []float64{
		1, 2, 3,
		4, 5, 6,
	}
	b := []float64{
		1, 0, 1,
		0, 1, 0,
	}
	c := make([]float64, 2*2)
	var impl blas.Implementation // best kernel for this CPU, GOMAXPROCS goroutines
	impl.Dgemm(gblas.NoTrans, gblas.Trans, 2, 2, 3, 1, a, 3, b, 3, 0, c, 2)
	fmt.Println(c)
	// Output:
	// [4 2 10 5]
}

// Every backend usable on the machine can be selected explicitly, e.g. to
// compare them. Multiplying by the identity is exact on every backend.
func ExampleImplementation_backends() {
	const n = 20
	a := make([]float64, n*n)
	id := make([]float64, n*n)
	for i := range a {
		a[i] = float64(i%7) - 2.5
	}
	for i := 0; i < n; i++ {
		id[i*n+i] = 1
	}
	for _, k := range blas.Kernels() {
		impl := k.Implementation(1)
		c := make([]float64, n*n)
		impl.Dgemm(gblas.NoTrans, gblas.NoTrans, n, n, n, 1, a, n, id, n, 0, c, n)
		for i := range c {
			if c[i] != a[i] {
				fmt.Println(k.Name(), "differs at", i)
				break
			}
		}
	}
	fmt.Println("ok")
	// Output:
	// ok
}

// Small cache blocks make a small product cross every block edge, which is
// how the tests reach those edges without large matrices. The blocking
// changes the order of the work, not the sum of any element: with integer
// data the result is the same bit for bit.
func ExampleKernel_WithBlocking() {
	const m, n, k = 9, 11, 13
	a := make([]float64, m*k)
	b := make([]float64, k*n)
	for i := range a {
		a[i] = float64(i%5) - 2
	}
	for i := range b {
		b[i] = float64(i%3) - 1
	}
	want := make([]float64, m*n)
	blas.Implementation{}.Dgemm(gblas.NoTrans, gblas.NoTrans, m, n, k, 1, a, k, b, n, 0, want, n)
	same := true
	for _, kern := range blas.Kernels() {
		got := make([]float64, m*n)
		kern.WithBlocking(1, 2, 1).Implementation(2).Dgemm(gblas.NoTrans, gblas.NoTrans, m, n, k, 1, a, k, b, n, 0, got, n)
		for i := range got {
			same = same && got[i] == want[i]
		}
	}
	fmt.Println("same:", same)
	// Output:
	// same: true
}

// Dgemmt computes only one triangle of a product: here the lower triangle of
// A·Bᵀ for 3×2 matrices A and B. The upper triangle of C (set to -1) is not
// touched.
func ExampleImplementation_Dgemmt() {
	a := []float64{
		1, 2,
		3, 4,
		5, 6,
	}
	b := []float64{
		1, 0,
		0, 1,
		1, 1,
	}
	c := []float64{
		0, -1, -1,
		0, 0, -1,
		0, 0, 0,
	}
	var impl blas.Implementation
	impl.Dgemmt(gblas.Lower, gblas.NoTrans, gblas.Trans, 3, 2, 1, a, 2, b, 2, 0, c, 3)
	for i := 0; i < 3; i++ {
		fmt.Println(c[i*3 : i*3+3])
	}
	// Output:
	// [1 -1 -1]
	// [3 4 -1]
	// [5 6 11]
}

// DgemmTrapezoid updates the part of C on and left of a shifted diagonal:
// here C (2×4) −= A·Bᵀ where column j of row i is updated when j − i ≤ 2,
// the shape of one row block of a blocked Cholesky's trailing update (a
// 2×2 rectangle and the lower triangle of the 2×2 diagonal block beside
// it). The element above that diagonal (set to 9) is not touched.
func ExampleImplementation_DgemmTrapezoid() {
	a := []float64{1, 2}       // 2×1
	b := []float64{1, 2, 3, 4} // 4×1, used transposed
	c := []float64{
		10, 10, 10, 9,
		10, 10, 10, 10,
	}
	var impl blas.Implementation
	impl.DgemmTrapezoid(gblas.Lower, gblas.NoTrans, gblas.Trans, 2, 4, 1, 2, -1, a, 1, b, 1, 1, c, 4)
	for i := 0; i < 2; i++ {
		fmt.Println(c[i*4 : i*4+4])
	}
	// Output:
	// [9 8 7 9]
	// [8 6 4 2]
}
