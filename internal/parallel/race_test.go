//go:build race

package parallel

// raceEnabled reports whether the race detector is on (allocation counts
// are then not meaningful).
const raceEnabled = true
