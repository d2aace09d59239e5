//go:build linux

package chol

import (
	"syscall"
	"unsafe"
)

// threadCPUTime returns the CPU time consumed by the calling OS thread in
// seconds (clock_gettime(CLOCK_THREAD_CPUTIME_ID)), or NaN if unavailable.
func threadCPUTime() float64 {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return nan()
	}
	return float64(ts.Sec) + 1e-9*float64(ts.Nsec)
}
