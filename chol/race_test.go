//go:build race

package chol

// raceEnabled reports whether the race detector is on: tests then shrink
// their problem sizes (the detector slows the kernels by 10-50×) and skip
// allocation accounting (sync.Pool drops items at random under -race).
const raceEnabled = true
