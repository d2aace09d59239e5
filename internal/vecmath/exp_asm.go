//go:build !purego && !noasm && (amd64 || arm64)

package vecmath

// Shared glue for the assembly exponential kernels (exp_amd64.go,
// exp_arm64.go).

// expScanThenKernel computes src into dst with expKernel if every argument
// is in [expLo, expHi], and returns len(src); otherwise it returns 0 and
// leaves dst alone.
func expScanThenKernel(dst, src []float64) int {
	for _, x := range src {
		if !(x >= expLo && x <= expHi) {
			return 0
		}
	}
	expKernel(dst, src)
	return len(src)
}
