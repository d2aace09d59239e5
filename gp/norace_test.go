//go:build !race

package gp

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
