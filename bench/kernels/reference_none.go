//go:build !(openblas && cgo)

package main

import gblas "gonum.org/v1/gonum/blas"

// reference is absent without the openblas build tag: the report then has
// solvegp's columns only.
var reference = noReference{}

type noReference struct{}

func (noReference) available() bool                     { return false }
func (noReference) config() string                      { return "" }
func (noReference) prepare() error                      { return nil }
func (noReference) setThreads(int)                      {}
func (noReference) dpotrfLower(int, []float64, int) int { panic("kernels: no OpenBLAS") }
func (noReference) dgemm(gblas.Transpose, gblas.Transpose, int, int, int, float64, []float64, int, []float64, int, float64, []float64, int) {
	panic("kernels: no OpenBLAS")
}
func (noReference) dsyrk(gblas.Uplo, gblas.Transpose, int, int, float64, []float64, int, float64, []float64, int) {
	panic("kernels: no OpenBLAS")
}
func (noReference) dtrsm(gblas.Side, gblas.Uplo, gblas.Transpose, gblas.Diag, int, int, float64, []float64, int, []float64, int) {
	panic("kernels: no OpenBLAS")
}
