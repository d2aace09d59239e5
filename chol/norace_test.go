//go:build !race

package chol

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
