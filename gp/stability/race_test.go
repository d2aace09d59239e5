//go:build race

package stability

// raceEnabled reports whether the tests run under the race detector, which
// changes allocation behaviour (sync.Pool drops items at random).
const raceEnabled = true
