//go:build !linux

package blas

// level3ThreadCPU reports that per-thread CPU time is not measured on this
// system.
func level3ThreadCPU() float64 { return -1 }
