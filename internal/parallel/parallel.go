// Package parallel runs the iterations of parallel-for loops on a
// persistent pool of worker goroutines.
//
// Starting goroutines for every parallel section costs a heap allocation
// per goroutine (its closure) plus the WaitGroup and the captured variables,
// which in a training loop adds up to hundreds of allocations per step. For
// instead hands the loop to workers that are started on first use and then
// parked between calls, so that a call allocates nothing in steady state
// when its Task is a pointer to memory that is already on the heap.
//
// Between calls, idle workers poll for new work for a bounded time (spinWait)
// before parking, and a caller waiting for its helpers polls likewise:
// waking a parked goroutine on an idle CPU costs tens of microseconds on a
// virtual machine, whose idle vCPU has halted — longer than many of the
// parallel sections of a blocked factorization or a training step.
//
// The calling goroutine always takes part in the work, and a call never
// waits for a worker to become free: when no idle worker exists (all are
// busy with other calls, or the call is nested inside a task running on a
// worker), the iterations run on the caller alone. Calls from any number
// of goroutines, nested to any depth, therefore cannot deadlock, as long
// as the iterations of one call do not wait for each other.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// spinWait is how long an idle worker polls for a new job, and a caller
// polls for its helpers to finish, before parking on a channel. Measured on
// a two-vCPU virtual machine (AMD Zen 5): a For of two 20 µs iterations
// took 46 µs with parking (the worker woke after the caller had run both
// iterations) and 23 µs with polling. The bound caps the CPU time an idle
// worker burns after each call.
const spinWait = 200 * time.Microsecond

// Poll calls done until it reports true or spinWait has passed, yielding
// the processor now and then so that runnable goroutines are not held up,
// and reports whether done did. Code that waits for another goroutine's
// progress polls with it before blocking, for the reason For's helpers do.
func Poll(done func() bool) bool {
	var start time.Time
	for i := 0; ; i++ {
		if done() {
			return true
		}
		if i%256 == 255 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > spinWait {
				return false
			}
			runtime.Gosched()
		}
	}
}

// Task is the body of a parallel-for loop. Run is called once for every
// index i of the loop, in no particular order and possibly concurrently
// from several goroutines, so calls for different indices must not depend
// on each other (in particular, one iteration must never wait for
// another). Implementations are usually pointers to structs holding the
// loop's operands; a pointer to a heap object does not allocate when it is
// converted to a Task.
type Task interface {
	Run(i int)
}

// For calls t.Run(i) for every i in [0, n) and returns when all calls have
// returned. At most workers goroutines, the calling one included, run
// iterations; workers ≤ 1 runs every iteration on the caller, in order.
// Iterations are handed out dynamically in increasing order of i.
//
// If an iteration panics, the iterations not yet started are skipped,
// For waits for the ones in progress and then panics on the calling
// goroutine with the first panic value recorded (the worker's stack trace
// is not preserved). An iteration that calls runtime.Goexit (such as
// testing.T.FailNow) on a pool worker makes For panic likewise.
func For(n, workers int, t Task) {
	if n <= 0 {
		return
	}
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			t.Run(i)
		}
		return
	}
	j := start(t, n, workers-1)
	if j == nil {
		for i := 0; i < n; i++ {
			t.Run(i)
		}
		return
	}
	j.participate()
	if j.pending.Add(-1) != 0 {
		j.await()
	}
	p, failed := j.panicVal, j.failed
	j.task, j.panicVal, j.failed = nil, nil, false
	putJob(j)
	if failed {
		panic(p)
	}
}

// job is one For call with at least one helper.
type job struct {
	task    Task
	n       int
	next    atomic.Int64 // next index to hand out
	pending atomic.Int32 // participants still running
	// signal is how the last helper to finish tells the caller: it swaps
	// 0 → signalled while the caller polls, or finds parked (the caller
	// gave up polling) and sends on done. Either way the helper does not
	// touch the job afterwards.
	signal atomic.Int32
	done   chan struct{}

	mu       sync.Mutex // guards panicVal and failed
	panicVal any
	failed   bool
}

// Values of job.signal.
const (
	polling   = iota // the caller is polling, or still working
	signalled        // the last helper finished while the caller polled
	parked           // the caller waits on done
)

// await returns once the last helper has finished with j.
func (j *job) await() {
	if Poll(func() bool { return j.signal.Load() == signalled }) {
		return
	}
	if j.signal.CompareAndSwap(polling, parked) {
		<-j.done
	}
}

// release is the last helper's report to the caller that j is finished.
func (j *job) release() {
	if !j.signal.CompareAndSwap(polling, signalled) {
		j.done <- struct{}{}
	}
}

// participate runs iterations of j until none is left, recording a panic
// instead of letting it unwind past the caller's goroutine boundary.
func (j *job) participate() {
	defer func() {
		if r := recover(); r != nil {
			j.mu.Lock()
			if !j.failed {
				j.failed, j.panicVal = true, r
			}
			j.mu.Unlock()
			// Skip the iterations not yet handed out.
			j.next.Store(int64(j.n))
		}
	}()
	n := int64(j.n)
	for {
		i := j.next.Add(1) - 1
		if i >= n {
			return
		}
		j.task.Run(int(i))
	}
}

// worker is one persistent goroutine of the pool.
type worker struct {
	// slot hands the worker its next job while it polls: nil while it
	// polls and has none, the job, or parkedSlot once it has stopped
	// polling and waits on wake.
	slot atomic.Pointer[job]
	wake chan *job // capacity 1; empty while the worker is idle
}

// parkedSlot marks a worker's slot while the worker waits on its channel.
var parkedSlot = new(job)

// hand gives j to the idle worker w: through its slot while it polls,
// else through its channel. Only the dispatcher that took w from the idle
// list calls it.
func (w *worker) hand(j *job) {
	if w.slot.CompareAndSwap(nil, j) {
		return
	}
	w.slot.Store(nil) // it was parkedSlot: w is on its channel
	w.wake <- j       // never blocks: an idle worker's channel is empty
}

// next returns the worker's next job, polling its slot first.
func (w *worker) next() *job {
	if Poll(func() bool { return w.slot.Load() != nil }) || !w.slot.CompareAndSwap(nil, parkedSlot) {
		return w.slot.Swap(nil) // a job: only this worker clears a filled slot
	}
	return <-w.wake
}

// errGoexit is the panic value of a For call one of whose iterations
// called runtime.Goexit on a worker.
const errGoexit = "parallel: an iteration called runtime.Goexit on a pool worker"

// loop runs the jobs sent to w until an iteration calls runtime.Goexit.
func (w *worker) loop(first *job) {
	var cur *job
	defer func() {
		// Reached only through runtime.Goexit: the worker is lost, but
		// the caller must still be released.
		j := cur
		if j == nil {
			return
		}
		j.mu.Lock()
		if !j.failed {
			j.failed, j.panicVal = true, errGoexit
		}
		j.mu.Unlock()
		j.next.Store(int64(j.n))
		pool.mu.Lock()
		pool.started--
		pool.mu.Unlock()
		if j.pending.Add(-1) == 0 {
			j.release()
		}
	}()
	for j := first; ; j = w.next() {
		cur = j
		j.participate()
		cur = nil
		// Become available again before reporting completion, so that the
		// caller's next For (often issued immediately) finds this worker.
		pool.mu.Lock()
		pool.idle = append(pool.idle, w)
		pool.mu.Unlock()
		if j.pending.Add(-1) == 0 {
			j.release()
		}
	}
}

// pool is the process-wide set of workers and recycled jobs.
var pool struct {
	mu      sync.Mutex
	idle    []*worker // parked workers
	started int       // workers started so far
	jobs    []*job    // free jobs
}

// start hands a job running t over [0, n) to up to want idle workers,
// starting new ones while the pool has fewer than GOMAXPROCS−1 workers. It
// returns nil, having dispatched nothing, when no worker is available.
func start(t Task, n, want int) *job {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	idle := min(want, len(pool.idle))
	fresh := 0
	if idle < want {
		fresh = max(0, min(want-idle, runtime.GOMAXPROCS(0)-1-pool.started))
	}
	if idle+fresh == 0 {
		return nil
	}
	var j *job
	if k := len(pool.jobs); k > 0 {
		j = pool.jobs[k-1]
		pool.jobs = pool.jobs[:k-1]
	} else {
		j = &job{done: make(chan struct{}, 1)}
	}
	j.task, j.n = t, n
	j.next.Store(0)
	j.signal.Store(polling)
	// pending counts the participants (helpers and the caller) that have
	// not finished; it is set before any helper can see the job.
	j.pending.Store(int32(1 + idle + fresh))
	for range idle {
		w := pool.idle[len(pool.idle)-1]
		pool.idle = pool.idle[:len(pool.idle)-1]
		w.hand(j)
	}
	for range fresh {
		w := &worker{wake: make(chan *job, 1)}
		pool.started++
		go w.loop(j)
	}
	return j
}

// putJob recycles j, which no goroutine references any more.
func putJob(j *job) {
	pool.mu.Lock()
	pool.jobs = append(pool.jobs, j)
	pool.mu.Unlock()
}

// Workers returns the goroutines a loop over units independent pieces of
// work uses under the budget (≤ 0: GOMAXPROCS): at most one per unit, and
// at least one.
func Workers(budget, units int) int {
	if budget <= 0 {
		budget = runtime.GOMAXPROCS(0)
	}
	return max(1, min(budget, units))
}

// Ranges splits [0, n) into parts contiguous ranges of nearly equal size
// and calls f(part, lo, hi) for each on up to parts goroutines (the caller
// included), returning when all calls have returned. It is a convenience
// for loops whose body is a closure: the closure and the range descriptor
// are allocated, so allocation-sensitive hot paths should implement Task
// instead. Panics propagate as in For.
func Ranges(n, parts int, f func(part, lo, hi int)) {
	if n <= 0 {
		return
	}
	parts = max(1, min(parts, n))
	if parts == 1 {
		f(0, 0, n)
		return
	}
	For(parts, parts, &rangeTask{f: f, n: n, parts: parts})
}

// rangeTask adapts a range closure to Task.
type rangeTask struct {
	f        func(part, lo, hi int)
	n, parts int
}

// Run calls the closure on the part-th range.
func (r *rangeTask) Run(part int) {
	r.f(part, part*r.n/r.parts, (part+1)*r.n/r.parts)
}
