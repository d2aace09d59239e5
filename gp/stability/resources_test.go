package stability

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	sblas "github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/train"
	"github.com/solvegp/solvegp/internal/parallel"
)

// memModel returns the SOLVE-GP model of the memory tests: M = M₂ = 16.
func memModel(t *testing.T) *gp.Model {
	return setup{kind: gp.SOLVEGP, z: grid(16, -3, 3), o: grid(16, -2.9, 3.1), lengthscale: 1, variance: 1, noise: 0.1,
		opts: []gp.Option{gp.WithThreads(1)}}.build(t)
}

// heapDelta returns how many bytes f allocated in total and how much the
// live heap grew across it (after a GC on both sides; negative growth is
// reported as 0).
func heapDelta(f func()) (total, retained uint64) {
	var before, mid, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&mid)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if after.HeapAlloc > before.HeapAlloc {
		retained = after.HeapAlloc - before.HeapAlloc
	}
	return mid.TotalAlloc - before.TotalAlloc, retained
}

// perN wraps a model and allocates one float64 per data point on its first
// evaluation: the negative control of TestTrainingMemoryIndependentOfN.
type perN struct {
	*gp.Model
	buf []float64
}

func (p *perN) Objective(x *mat.Dense, y []float64, n int, grad []float64) (float64, error) {
	if p.buf == nil {
		p.buf = make([]float64, n)
	}
	return p.Model.Objective(x, y, n, grad)
}

// TestTrainingMemoryIndependentOfN trains the same SOLVE-GP model (M = M₂ =
// 16, batch 64, 30 steps) on data sets of N = 1000, 8000 and 64000 points.
// Fit's allocations may grow with N only by its shuffling index (8 bytes
// per row); everything else — the model's workspaces, the mini-batch
// buffers, Adam's moments — is O(M² + batch·M), whatever N is. A model that
// allocates a single N-sized buffer fails the same check. Timing is not
// measured; the thresholds are generous byte counts.
func TestTrainingMemoryIndependentOfN(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race (sync.Pool drops items at random)")
	}
	const batch, steps = 64, 30
	ns := []int{1000, 8000, 64000}
	// growth returns by how many bytes Fit's allocations exceed, for each
	// N, those for the smallest N plus the shuffling index and 256 KiB of
	// slack (positive: too much).
	growth := func(control bool) []int64 {
		totals := make([]uint64, len(ns))
		for i, n := range ns {
			x, y := sinData(n, 8)
			// The minimum of three runs: a GC empties the sync.Pools
			// that the BLAS and kernels draw scratch memory from.
			for r := 0; r < 3; r++ {
				var mod train.Model = memModel(t)
				if control {
					mod = &perN{Model: mod.(*gp.Model)}
				}
				total, _ := heapDelta(func() {
					if _, err := train.Fit(context.Background(), mod, x, y, train.Config{MaxSteps: steps, BatchSize: batch}); err != nil {
						t.Fatal(err)
					}
				})
				if r == 0 || total < totals[i] {
					totals[i] = total
				}
			}
			if !control {
				t.Logf("N = %6d: Fit allocated %8d bytes (%.1f per row)", n, totals[i], float64(totals[i])/float64(n))
			}
		}
		excess := make([]int64, len(ns))
		for i := 1; i < len(ns); i++ {
			excess[i] = int64(totals[i]) - int64(totals[0]) - int64(8*(ns[i]-ns[0])+256<<10)
		}
		return excess
	}
	for i, e := range growth(false) {
		if e > 0 {
			t.Errorf("N %d → %d: allocations grew by %d bytes more than the shuffling index allows", ns[0], ns[i], e)
		}
	}
	if e := growth(true); e[len(ns)-1] <= 0 {
		t.Errorf("the check missed a model allocating 8·N bytes (margin %d)", e[len(ns)-1])
	}
}

// TestObjectiveMemoryLinearInBatch evaluates the bound and gradient on
// mini-batches of 64 and 8·64 points drawn from data sets of 1000 and
// 8·1000 points. The model's retained workspace grows by O(batch·(M + M₂))
// — not O(batch²) — and neither it nor the allocations of a warm
// evaluation depend on N.
func TestObjectiveMemoryLinearInBatch(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race (sync.Pool drops items at random)")
	}
	const m = 32 // M + M₂
	warmAt := map[[2]int]uint64{}
	for _, n := range []int{1000, 8000} {
		x, y := sinData(n, 9)
		var ws [2]uint64
		for i, b := range []int{64, 512} {
			mod := memModel(t)
			grad := make([]float64, mod.NumParams())
			xb := x.Slice(0, b, 0, 1).(*mat.Dense)
			_, ws[i] = heapDelta(func() {
				if _, err := mod.Objective(xb, y[:b], n, grad); err != nil {
					t.Fatal(err)
				}
			})
			warm, _ := heapDelta(func() {
				for r := 0; r < 5; r++ {
					if _, err := mod.Objective(xb, y[:b], n, grad); err != nil {
						t.Fatal(err)
					}
				}
			})
			runtime.KeepAlive(mod)
			warmAt[[2]int{n, b}] = warm / 5
			t.Logf("N = %d, batch %3d: workspace %7d bytes, warm evaluation allocates %6d bytes", n, b, ws[i], warm/5)
			// A warm evaluation reuses the workspace: at most some
			// batch×(M+M₂) temporaries (scratch from sync.Pools, which a GC
			// may have emptied).
			if warm/5 > uint64(8*16*b*m+64<<10) {
				t.Errorf("N = %d, batch %d: a warm evaluation allocates %d bytes", n, b, warm/5)
			}
		}
		// 448 more points may cost at most 24 batch×(M+M₂) arrays; a
		// single batch×batch matrix would cost 512²·8 = 2 MiB on its own.
		if growth := int64(ws[1]) - int64(ws[0]); growth > int64(8*24*448*m) {
			t.Errorf("N = %d: workspace grew by %d bytes from batch 64 to 512", n, growth)
		}
	}
	for _, b := range []int{64, 512} {
		if small, large := warmAt[[2]int{1000, b}], warmAt[[2]int{8000, b}]; large > small+64<<10 {
			t.Errorf("batch %d: a warm evaluation allocates %d bytes for N = 8000, %d for N = 1000", b, large, small)
		}
	}
}

// settle waits (up to 2 s) for the number of goroutines to come back to at
// most base and returns the last count.
func settle(base int) int {
	n := runtime.NumGoroutine()
	for i := 0; i < 200 && n > base; i++ {
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}

// TestNoGoroutineLeaks: after a Fit canceled from a callback or from
// another goroutine, and after parallel BLAS level-3 calls, the number of
// goroutines returns to what it was. The detector itself is checked on a
// deliberately parked goroutine.
func TestNoGoroutineLeaks(t *testing.T) {
	// The persistent worker pool of package parallel (at most GOMAXPROCS−1
	// goroutines, started on first use) is not a leak: start it before
	// counting.
	parallel.For(runtime.GOMAXPROCS(0), runtime.GOMAXPROCS(0), noopTask{})
	base := runtime.NumGoroutine()

	// The detector sees a parked goroutine.
	release := make(chan struct{})
	var parked sync.WaitGroup
	parked.Add(1)
	go func() { defer parked.Done(); <-release }()
	if n := runtime.NumGoroutine(); n <= base {
		t.Fatalf("leak detector missed a parked goroutine (%d ≤ %d)", n, base)
	}
	close(release)
	parked.Wait()

	x, y := sinData(2000, 10)
	newModel := func() *gp.Model {
		return setup{kind: gp.SOLVEGP, z: grid(48, -3, 3), o: grid(48, -2.95, 3.05), lengthscale: 1, variance: 1, noise: 0.1,
			opts: []gp.Option{gp.WithThreads(4)}}.build(t)
	}
	ctx, cancel := context.WithCancel(context.Background())
	res, err := train.Fit(ctx, newModel(), x, y, train.Config{Epochs: 1000, BatchSize: 256, OnStep: func(s train.StepInfo) error {
		if s.Step == 3 {
			cancel()
		}
		return nil
	}})
	if !errors.Is(err, context.Canceled) || res.Reason != train.Canceled {
		t.Fatalf("callback cancel: %v, %+v", err, res)
	}
	if n := settle(base); n > base {
		t.Errorf("after a canceled Fit: %d goroutines, %d before", n, base)
	}

	ctx, cancel = context.WithCancel(context.Background())
	started := make(chan struct{})
	var once sync.Once
	go func() { <-started; time.Sleep(20 * time.Millisecond); cancel() }()
	_, err = train.Fit(ctx, newModel(), x, y, train.Config{Epochs: 100000, BatchSize: 256, OnStep: func(train.StepInfo) error {
		once.Do(func() { close(started) })
		return nil
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("asynchronous cancel: %v", err)
	}
	if n := settle(base); n > base {
		t.Errorf("after an asynchronously canceled Fit: %d goroutines, %d before", n, base)
	}

	impl := sblas.Implementation{Threads: 4}
	const n = 200
	a := make([]float64, n*n)
	b := make([]float64, n*n)
	c := make([]float64, n*n)
	for i := range a {
		a[i] = float64(i%7) - 3
		b[i] = float64(i%5) - 2
	}
	for i := 0; i < n; i++ {
		a[i*n+i] = 50
	}
	impl.Dgemm(blas.NoTrans, blas.Trans, n, n, n, 1, a, n, b, n, 0, c, n)
	impl.Dsyrk(blas.Lower, blas.NoTrans, n, n, 1, a, n, 0, c, n)
	impl.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1, a, n, b, n)
	impl.Dtrmm(blas.Right, blas.Upper, blas.Trans, blas.NonUnit, n, n, 1, a, n, b, n)
	impl.Dsymm(blas.Left, blas.Upper, n, n, 1, a, n, b, n, 0, c, n)
	if n := settle(base); n > base {
		t.Errorf("after parallel BLAS calls: %d goroutines, %d before", n, base)
	}
}

// noopTask is a parallel loop body that does nothing.
type noopTask struct{}

// Run does nothing.
func (noopTask) Run(int) {}
