//go:build linux

package blas

import (
	"syscall"
	"unsafe"
)

// level3ThreadCPU returns the CPU time in seconds consumed so far by the
// calling OS thread (CLOCK_THREAD_CPUTIME_ID, nanosecond resolution), or a
// negative value if it cannot be measured.
func level3ThreadCPU() float64 {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return -1
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}
