//go:build !unix

package main

// processCPUSeconds reports that the process CPU time is unavailable on
// this system.
func processCPUSeconds() float64 { return -1 }
