//go:build !unix

package kernel

import "time"

// processCPUTime is not available on this platform; benchmarks then
// report a CPU time of zero.
func processCPUTime() time.Duration { return 0 }
