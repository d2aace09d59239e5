//go:build !race

package convgp

const raceEnabled = false
