//go:build race

package gp

// raceEnabled reports whether the race detector is on: allocation tests
// are skipped (sync.Pool drops items at random under -race).
const raceEnabled = true
