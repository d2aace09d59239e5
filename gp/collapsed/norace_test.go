//go:build !race

package collapsed

const raceEnabled = false
