//go:build !linux

package patches

// threadCPU is unavailable off Linux; benchmarks then report wall-clock
// throughput only.
func threadCPU() (float64, bool) { return 0, false }
