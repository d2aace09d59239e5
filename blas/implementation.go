package blas

import (
	"runtime"

	"gonum.org/v1/gonum/blas/gonum"

	"github.com/solvegp/solvegp/internal/gemm"
)

// Implementation is a gonum blas.Float64 implementation whose level-3
// routines (Dgemm, Dsyrk, Dtrsm, Dtrmm, Dsymm) run on this package's packed,
// blocked kernels. All other routines are gonum's. Dgemmt, the triangle of a
// general product (an extension that MKL and OpenBLAS also offer), and
// DgemmTrapezoid, its generalization to a rectangular C and any diagonal,
// are additional methods.
//
// The zero value is ready to use: it runs on the best micro-kernel for the
// machine (gemm.Default) and on up to GOMAXPROCS goroutines.
// Implementation holds no mutable state, so one value may be shared by any
// number of goroutines.
type Implementation struct {
	gonum.Implementation

	// Threads bounds the number of goroutines a single call may use.
	// Zero or a negative value means runtime.GOMAXPROCS(0).
	Threads int

	// backend is the micro-kernel; nil means gemm.Default(). Kernel's
	// Implementation method sets it, so that callers choose among Kernels()
	// without naming the internal backend type.
	backend *gemm.Backend
}

// threads returns the effective goroutine budget of impl.
func (impl Implementation) threads() int {
	if impl.Threads > 0 {
		return impl.Threads
	}
	return runtime.GOMAXPROCS(0)
}

// KernelBackend returns the micro-kernel backend impl's calls run on:
// impl.backend, or gemm.Default() when it is nil.
func (impl Implementation) KernelBackend() *gemm.Backend {
	if impl.backend != nil {
		return impl.backend
	}
	return gemm.Default()
}
