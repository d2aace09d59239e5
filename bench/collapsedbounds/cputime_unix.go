//go:build unix

package main

import "syscall"

// processCPUSeconds returns the user + system CPU time consumed by the
// process so far, or -1 if it is unavailable.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
