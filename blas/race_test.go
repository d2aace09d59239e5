//go:build race

package blas

// raceEnabled reports whether the race detector is on (allocation counts
// are then not meaningful: sync.Pool drops items at random).
const raceEnabled = true
