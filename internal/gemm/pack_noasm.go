//go:build purego || noasm || !amd64

package gemm

// packAsm is false: this build has no assembly pack routines.
const packAsm = false

// packTransposed is never called when packAsm is false.
func packTransposed(w int, dst, src []float64, ld, k int) int { return 0 }

// packContiguous is never called when packAsm is false.
func packContiguous(w int, dst, src []float64, ld, k int) int { return 0 }

// unpackTransposed is never called when packAsm is false.
func unpackTransposed(w int, dst, src []float64, ld, k int) int { return 0 }
