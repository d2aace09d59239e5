//go:build unix

package convgp

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) used so far by the process.
// Benchmarks report it per operation: on a shared machine wall time mostly
// measures the other jobs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
