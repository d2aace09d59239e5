//go:build !unix

package gp

// processCPUSeconds is unavailable on this platform.
func processCPUSeconds() float64 { return -1 }
