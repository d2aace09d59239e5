//go:build !race

package blas

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
