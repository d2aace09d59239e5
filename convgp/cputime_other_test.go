//go:build !unix

package convgp

import "time"

// cpuTime is unavailable here; benchmarks then report zero CPU time.
func cpuTime() time.Duration { return 0 }
