//go:build unix

package likelihood

import (
	"syscall"
	"time"
)

// processCPUTime returns the user plus system CPU time consumed so far by
// all threads of the process. Benchmarks report it per operation because,
// on a machine shared with other jobs, wall-clock time measures the
// contention as much as the code.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
