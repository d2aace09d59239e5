//go:build purego || noasm || !(amd64 || arm64)

package gemm

// archBackends reports no assembly backends: this build uses only the
// portable Go kernel.
func archBackends() []*Backend { return nil }
