//go:build openblas && cgo

package main

import (
	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/bench/openblas"
)

// reference is OpenBLAS, bound through cgo by package bench/openblas.
var reference = openblasReference{}

type openblasReference struct{}

func (openblasReference) available() bool { return true }

// prepare re-executes the program with OPENBLAS_THREAD_TIMEOUT=4 unless it
// is set, so that OpenBLAS's idle threads do not spin on the core our
// second goroutine needs (see openblas.ThreadTimeoutEnv).
func (openblasReference) prepare() error   { return openblas.ReexecWithThreadTimeout() }
func (openblasReference) config() string   { return openblas.Config() }
func (openblasReference) setThreads(n int) { openblas.SetThreads(n) }
func (openblasReference) dpotrfLower(n int, a []float64, lda int) int {
	return openblas.DpotrfLower(n, a, lda)
}

func (openblasReference) dgemm(tA, tB gblas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	openblas.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (openblasReference) dsyrk(ul gblas.Uplo, t gblas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	openblas.Dsyrk(ul, t, n, k, alpha, a, lda, beta, c, ldc)
}

func (openblasReference) dtrsm(s gblas.Side, ul gblas.Uplo, t gblas.Transpose, d gblas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	openblas.Dtrsm(s, ul, t, d, m, n, alpha, a, lda, b, ldb)
}
