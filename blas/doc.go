// Package blas provides packed, cache-blocked level-3 BLAS routines for
// float64 built on the SIMD micro-kernels of package internal/gemm.
//
// The routines follow gonum's row-major conventions and argument checks
// exactly, so that Implementation is a drop-in replacement for gonum's
// native BLAS:
//
//	blas64.Use(blas.Implementation{})
//
// makes gonum/mat and gonum's LAPACK use these kernels with no other change.
// Routines that this package does not accelerate are inherited from the
// embedded gonum implementation.
package blas
