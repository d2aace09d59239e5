//go:build purego || noasm || !(amd64 || arm64)

package gemm

// archKernels reports no assembly kernels: this build uses only the
// portable Go kernel.
func archKernels() []kernelSpec { return nil }
