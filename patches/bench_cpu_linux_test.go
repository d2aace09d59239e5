//go:build linux

package patches

import "golang.org/x/sys/unix"

// threadCPU returns the CPU time consumed by the calling OS thread in
// seconds, and true. Benchmarks lock the goroutine to its thread and report
// throughput per CPU second as well as per wall-clock second: on a shared
// machine the former is far less sensitive to being descheduled.
func threadCPU() (float64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return float64(ts.Sec) + 1e-9*float64(ts.Nsec), true
}
