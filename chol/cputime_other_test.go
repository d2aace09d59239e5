//go:build !linux

package chol

// threadCPUTime is unavailable on this system; it returns NaN.
func threadCPUTime() float64 { return nan() }
