package blas

import (
	"runtime/debug"
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

// TestParallelAllocs checks that Dgemm, Dsyrk, Dtrsm and Dtrmm calls large
// enough to run on two goroutines allocate nothing in steady state: their
// parallel sections go to the persistent worker pool with pooled task
// state instead of starting goroutines with closures.
func TestParallelAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	const n = 384
	impl := Implementation{Threads: 2}
	a := make([]float64, n*n)
	b := make([]float64, n*n)
	c := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a[i*n+j] = 0.01 * float64((i*7+j*3)%11)
		}
		a[i*n+i] = float64(n)
	}
	for i := range b {
		b[i] = float64(i%13) - 6
	}
	if trsmThreads(impl, blas.Left, n, n, n) < 2 || n*n*n < gemmParallelMin {
		t.Fatal("test sizes do not reach the parallel code paths")
	}
	calls := []struct {
		name string
		f    func()
	}{
		{"Dgemm", func() { impl.Dgemm(blas.NoTrans, blas.Trans, n, n, n, 1, a, n, b, n, 0.5, c, n) }},
		{"Dsyrk", func() { impl.Dsyrk(blas.Lower, blas.NoTrans, n, n, 1, b, n, 0.5, c, n) }},
		{"Dtrsm/Left", func() { impl.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1, a, n, b, n) }},
		{"Dtrsm/Right", func() { impl.Dtrsm(blas.Right, blas.Upper, blas.Trans, blas.NonUnit, n, n, 1, a, n, b, n) }},
		{"Dtrmm/Left", func() { impl.Dtrmm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1.0/n, a, n, b, n) }},
	}
	// Pause the collector, which empties the buffer pools, and warm the
	// pools (their per-P caches may need a few calls to fill).
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, call := range calls {
		for i := 0; i < 8 && testing.AllocsPerRun(1, call.f) > 0; i++ {
		}
	}
	for _, call := range calls {
		if got := testing.AllocsPerRun(10, call.f); got != 0 {
			t.Errorf("%s with 2 threads: %v allocations per call, want 0", call.name, got)
		}
	}
}
