package vecmath

import (
	"strings"
	"testing"
)

// panicsWith reports whether f panics with a message containing want.
func panicsWith(f func(), want string) (ok bool) {
	defer func() {
		r := recover()
		s, _ := r.(string)
		ok = r != nil && strings.Contains(s, want)
	}()
	f()
	return false
}

// TestEntryPointBounds: the exported kernels check their destinations
// against their length, not their capacity, and write nothing when a
// destination is too short.
func TestEntryPointBounds(t *testing.T) {
	big := make([]float64, 40)
	if !panicsWith(func() { Exp(big[:20], make([]float64, 40)) }, "dst shorter than src") {
		t.Error("Exp with a short dst")
	}
	if !panicsWith(func() { RadialProfile(big[:20], make([]float64, 40), RadialRBF, 1) }, "dst shorter than src") {
		t.Error("RadialProfile with a short dst")
	}
	for i, v := range big {
		if v != 0 {
			t.Fatalf("Exp or RadialProfile wrote big[%d] = %v", i, v)
		}
	}
}
