//go:build race

package convgp

// raceEnabled reports whether the race detector is on; sync.Pool drops
// items at random under it, so allocation counts are not meaningful.
const raceEnabled = true
