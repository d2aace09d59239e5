package gemm

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
// against their length, not their capacity. A short dst with spare
// capacity must not be resliced up to what the kernel needs, which would
// write values into the caller's memory past it.
func TestEntryPointBounds(t *testing.T) {
	const m, k, w = 10, 7, 4
	need := (m + w - 1) / w * w * k
	src := make([]float64, m*k)
	for i := range src {
		src[i] = float64(i + 1)
	}
	for _, trans := range []bool{false, true} {
		lda := k
		if trans {
			lda = m
		}
		big := make([]float64, need+16)
		if !panicsWith(func() { PackA(w, big[:need-1], src, lda, trans, m, k) }, "destination too short") {
			t.Errorf("PackA trans=%v: a destination one short was accepted", trans)
		}
		for i, v := range big {
			if v != 0 {
				t.Fatalf("PackA trans=%v wrote big[%d] = %v", trans, i, v)
			}
		}
		if !panicsWith(func() { PackB(w, big[:need-1], src, lda, !trans, k, m) }, "destination too short") {
			t.Errorf("PackB trans=%v: a destination one short was accepted", !trans)
		}
		if !panicsWith(func() { PackA(w, big, src, lda-1, trans, m, k) }, "leading dimension") {
			t.Errorf("PackA trans=%v: a leading dimension below a row was accepted", trans)
		}
		PackA(w, big[:need], src, lda, trans, m, k) // exactly enough: fine
	}
	if !panicsWith(func() { PackA(0, make([]float64, 100), src, k, false, m, k) }, "panel width") {
		t.Error("PackA with a panel width of 0")
	}
}
