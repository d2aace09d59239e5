//go:build race

package kernel

// raceEnabled reports whether the race detector is on: tests then skip
// allocation accounting (sync.Pool drops items at random under -race).
const raceEnabled = true
