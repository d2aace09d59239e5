package parallel

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countTask counts the calls of every index.
type countTask struct {
	hits []atomic.Int32
}

func (c *countTask) Run(i int) { c.hits[i].Add(1) }

func (c *countTask) check(t *testing.T, name string) {
	t.Helper()
	for i := range c.hits {
		if got := c.hits[i].Load(); got != 1 {
			t.Fatalf("%s: index %d run %d times, want 1", name, i, got)
		}
	}
}

func TestForRunsEveryIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 64, 1000} {
		for _, w := range []int{-1, 0, 1, 2, 3, 8, 100} {
			for rep := 0; rep < 20; rep++ {
				c := &countTask{hits: make([]atomic.Int32, n)}
				For(n, w, c)
				c.check(t, fmt.Sprintf("n=%d workers=%d", n, w))
			}
		}
	}
}

// serialOrder records the order of the calls of a serial loop.
type serialOrder struct{ seq []int }

func (s *serialOrder) Run(i int) { s.seq = append(s.seq, i) }

func TestForSerialInOrder(t *testing.T) {
	s := &serialOrder{}
	For(5, 1, s)
	for i, v := range s.seq {
		if v != i {
			t.Fatalf("serial order %v, want 0…4", s.seq)
		}
	}
	if len(s.seq) != 5 {
		t.Fatalf("%d calls, want 5", len(s.seq))
	}
}

// nestedTask runs an inner parallel loop from every outer iteration.
type nestedTask struct {
	depth int
	sum   atomic.Int64
}

func (nt *nestedTask) Run(i int) {
	if nt.depth == 0 {
		nt.sum.Add(int64(i))
		return
	}
	inner := &nestedTask{depth: nt.depth - 1}
	For(6, 4, inner)
	nt.sum.Add(inner.sum.Load())
}

func TestForNested(t *testing.T) {
	// 6³ leaves of three nested levels, each adding 0+…+5 at the bottom.
	nt := &nestedTask{depth: 3}
	For(6, 4, nt)
	if got, want := nt.sum.Load(), int64(6*6*6*15); got != want {
		t.Fatalf("nested sum %d, want %d", got, want)
	}
}

func TestForConcurrentCallers(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := 0; rep < 200; rep++ {
				n := 1 + (g*31+rep)%50
				c := &countTask{hits: make([]atomic.Int32, n)}
				For(n, 1+g%4, c)
				for i := range c.hits {
					if c.hits[i].Load() != 1 {
						errs <- fmt.Sprintf("caller %d: index %d of %d run %d times", g, i, n, c.hits[i].Load())
						return
					}
				}
				if rep%10 == 0 {
					nt := &nestedTask{depth: 2}
					For(6, 3, nt)
					if nt.sum.Load() != 6*6*15 {
						errs <- fmt.Sprintf("caller %d: nested sum %d", g, nt.sum.Load())
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// goid returns the id of the calling goroutine (test use only).
func goid() uint64 {
	var buf [64]byte
	s := buf[:runtime.Stack(buf[:], false)]
	s = bytes.TrimPrefix(s, []byte("goroutine "))
	s = s[:bytes.IndexByte(s, ' ')]
	id, _ := strconv.ParseUint(string(s), 10, 64)
	return id
}

// offCallerTask misbehaves (by panicking or calling runtime.Goexit) when
// it runs on a goroutine other than the caller's, and otherwise does a
// little work so that the workers get a share of the iterations.
type offCallerTask struct {
	caller uint64
	goexit bool
	off    atomic.Int32
	sink   atomic.Int64
}

func (o *offCallerTask) Run(i int) {
	if goid() != o.caller {
		o.off.Add(1)
		if o.goexit {
			runtime.Goexit()
		}
		panic(fmt.Sprintf("iteration %d", i))
	}
	s := 0
	for k := 0; k < 20000; k++ {
		s += k ^ i
	}
	o.sink.Add(int64(s))
}

// recoverFor runs For and returns its panic value.
func recoverFor(n, w int, task Task) (p any) {
	defer func() { p = recover() }()
	For(n, w, task)
	return nil
}

func TestForPropagatesWorkerPanic(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the pool has no workers with GOMAXPROCS < 2")
	}
	for _, goexit := range []bool{false, true} {
		seen := false
		for rep := 0; rep < 2000 && !seen; rep++ {
			o := &offCallerTask{caller: goid(), goexit: goexit}
			p := recoverFor(64, 2, o)
			if o.off.Load() == 0 {
				if p != nil {
					t.Fatalf("panic %v although every iteration ran on the caller", p)
				}
				continue
			}
			seen = true
			s, ok := p.(string)
			if !ok {
				t.Fatalf("goexit=%v: For panicked with %v (%T), want a string", goexit, p, p)
			}
			if goexit && s != errGoexit {
				t.Fatalf("For panicked with %q, want %q", s, errGoexit)
			}
			if !goexit && (len(s) < 10 || s[:10] != "iteration ") {
				t.Fatalf("For panicked with %q, want the iteration's value", s)
			}
		}
		if !seen {
			t.Logf("goexit=%v: no iteration ran on a worker in 2000 calls", goexit)
		}
		// The pool still works afterwards.
		c := &countTask{hits: make([]atomic.Int32, 100)}
		For(100, 4, c)
		c.check(t, "after a worker panic")
	}
}

// panicTask panics in one iteration.
type panicTask struct{ at int }

func (p *panicTask) Run(i int) {
	if i == p.at {
		panic(p)
	}
}

func TestForPropagatesPanic(t *testing.T) {
	for _, w := range []int{1, 2, 4} {
		for _, at := range []int{0, 5, 99} {
			task := &panicTask{at: at}
			if p := recoverFor(100, w, task); p != task {
				t.Fatalf("workers=%d: For panicked with %v, want the task's value", w, p)
			}
		}
	}
	// A nil panic surfaces as a *runtime.PanicNilError.
	if p := recoverFor(4, 2, nilPanic{}); p == nil {
		t.Fatal("panic(nil) in an iteration was swallowed")
	}
}

// nilPanic calls panic(nil).
type nilPanic struct{}

func (nilPanic) Run(int) { panic(nil) }

// sumTask adds its indices.
type sumTask struct{ sum atomic.Int64 }

func (s *sumTask) Run(i int) { s.sum.Add(int64(i)) }

func TestForAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	s := &sumTask{}
	For(8, 2, s) // start the pool
	for _, w := range []int{1, 2, 4} {
		if got := testing.AllocsPerRun(100, func() { For(8, w, s) }); got != 0 {
			t.Errorf("workers=%d: %v allocations per call, want 0", w, got)
		}
	}
}

// BenchmarkDispatch compares the fork/join cost of For with starting a
// goroutine per worker, for a loop of one trivial iteration per worker.
func BenchmarkDispatch(b *testing.B) {
	workers := max(2, runtime.GOMAXPROCS(0))
	b.Run("For", func(b *testing.B) {
		s := &sumTask{}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			For(workers, workers, s)
		}
	})
	b.Run("goFunc", func(b *testing.B) {
		s := &sumTask{}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var wg sync.WaitGroup
			var next atomic.Int64
			wg.Add(workers - 1)
			for w := 1; w < workers; w++ {
				go func() {
					defer wg.Done()
					for {
						k := int(next.Add(1) - 1)
						if k >= workers {
							return
						}
						s.Run(k)
					}
				}()
			}
			for {
				k := int(next.Add(1) - 1)
				if k >= workers {
					break
				}
				s.Run(k)
			}
			wg.Wait()
		}
	})
}

func TestRangesCoverEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 5, 17, 1000} {
		for _, parts := range []int{-1, 0, 1, 2, 3, 7, 2000} {
			hits := make([]atomic.Int32, n)
			var seen sync.Map
			Ranges(n, parts, func(part, lo, hi int) {
				if _, dup := seen.LoadOrStore(part, true); dup {
					t.Errorf("n=%d parts=%d: part %d called twice", n, parts, part)
				}
				if lo >= hi {
					t.Errorf("n=%d parts=%d: empty range [%d,%d) for part %d", n, parts, lo, hi, part)
				}
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
			})
			for i := range hits {
				if got := hits[i].Load(); got != 1 {
					t.Fatalf("n=%d parts=%d: index %d covered %d times", n, parts, i, got)
				}
			}
		}
	}
}

// TestWorkers checks the goroutine count of a budget: the budget, or
// GOMAXPROCS for a budget ≤ 0, at most one per unit and at least one.
func TestWorkers(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, c := range []struct{ budget, units, want int }{
		{3, 10, 3}, {3, 2, 2}, {3, 0, 1}, {0, 1 << 20, procs}, {-1, 1 << 20, procs}, {0, 1, 1}, {1, 5, 1},
	} {
		if got := Workers(c.budget, c.units); got != c.want {
			t.Errorf("Workers(%d, %d) = %d, want %d", c.budget, c.units, got, c.want)
		}
	}
}

// TestForAfterIdleGaps runs For after pauses shorter and longer than
// spinWait, so that helpers are handed jobs both while they poll and after
// they have parked, and callers both poll for and park on their helpers.
func TestForAfterIdleGaps(t *testing.T) {
	workers := max(2, runtime.GOMAXPROCS(0))
	for _, gap := range []time.Duration{0, spinWait / 4, 3 * spinWait} {
		for _, work := range []time.Duration{0, spinWait / 4, 2 * spinWait} {
			for rep := range 3 {
				time.Sleep(gap)
				c := &countTask{hits: make([]atomic.Int32, 2*workers)}
				For(len(c.hits), workers, &slowTask{c: c, d: work})
				c.check(t, fmt.Sprintf("gap %v, work %v, rep %d", gap, work, rep))
			}
		}
	}
}

// slowTask counts its calls like countTask after busy-waiting d on index 0.
type slowTask struct {
	c *countTask
	d time.Duration
}

func (s *slowTask) Run(i int) {
	if i == 0 {
		spinFor(s.d)
	}
	s.c.Run(i)
}

// TestPoll checks that Poll reports a condition that becomes true and gives
// up after about spinWait on one that never does.
func TestPoll(t *testing.T) {
	calls := 0
	if !Poll(func() bool { calls++; return calls == 100 }) || calls != 100 {
		t.Errorf("Poll stopped after %d calls of a condition that holds at the 100th", calls)
	}
	t0 := time.Now()
	if Poll(func() bool { return false }) {
		t.Error("Poll reported a condition that never holds")
	}
	if d := time.Since(t0); d < spinWait {
		t.Errorf("Poll gave up after %v, before spinWait = %v", d, spinWait)
	}
}

// BenchmarkForAfterSerialWork times For over two 20 µs iterations issued
// after a stretch of serial work, as the sections of a factorization or a
// training step are, and reports the time beyond 20 µs (overhead-ns): the
// cost of handing the second iteration to a helper.
func BenchmarkForAfterSerialWork(b *testing.B) {
	const work = 20 * time.Microsecond
	for _, gap := range []time.Duration{0, 20 * time.Microsecond, 100 * time.Microsecond, time.Millisecond} {
		b.Run(fmt.Sprint("gap=", gap), func(b *testing.B) {
			s := &spinTask{d: work}
			var over time.Duration
			for range b.N {
				spinFor(gap)
				t0 := time.Now()
				For(2, 2, s)
				over += time.Since(t0) - work
			}
			b.ReportMetric(float64(over.Nanoseconds())/float64(b.N), "overhead-ns")
		})
	}
}

// spinTask busy-waits d in every iteration.
type spinTask struct{ d time.Duration }

func (s *spinTask) Run(int) { spinFor(s.d) }

func spinFor(d time.Duration) {
	for t0 := time.Now(); time.Since(t0) < d; {
	}
}
