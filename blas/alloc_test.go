package blas

import (
	"testing"

	"gonum.org/v1/gonum/blas"
)

// TestTrsmTrmmSerialAllocs checks that single-goroutine Dtrsm and Dtrmm calls
// allocate nothing in steady state (no closure is built for serial calls).
func TestTrsmTrmmSerialAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	const n = 256
	impl := Implementation{Threads: 1}
	a := make([]float64, n*n)
	b := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			a[i*n+j] = 0.01 * float64((i*7+j*3)%11)
		}
		a[i*n+i] = float64(n)
	}
	for i := range b {
		b[i] = float64(i%13) - 6
	}
	for _, s := range []blas.Side{blas.Left, blas.Right} {
		trsm := func() { impl.Dtrsm(s, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1, a, n, b, n) }
		trmm := func() { impl.Dtrmm(s, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1, a, n, b, n) }
		// Warm up the packing-buffer pool, then measure. AllocsPerRun
		// rounds the average down, so a garbage collection emptying the
		// pool once during the 20 runs does not fail the test.
		trsm()
		trmm()
		if got := testing.AllocsPerRun(20, trsm); got != 0 {
			t.Errorf("side %c: serial Dtrsm allocates %v times per call, want 0", s, got)
		}
		if got := testing.AllocsPerRun(20, trmm); got != 0 {
			t.Errorf("side %c: serial Dtrmm allocates %v times per call, want 0", s, got)
		}
	}
}
