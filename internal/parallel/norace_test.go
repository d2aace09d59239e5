//go:build !race

package parallel

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
