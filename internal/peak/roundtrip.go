package peak

import (
	"math"
	"runtime"
	"sync/atomic"
	"time"
)

// roundTripBatch is the number of round trips timed together: enough that
// reading the clock costs nothing next to them, few enough (tens of
// microseconds) that some batches run without the OS preempting either
// thread. The fastest batch is the latency: until the OS has moved the two
// threads onto different cores, or while another process takes one of
// them, the counter waits for a time slice instead of a cache line.
const roundTripBatch = 200

// sharedCore is a round trip no two cores take: the threads took turns on
// one core (a time slice is milliseconds; a cache line crosses even two
// sockets in well under a microsecond), so RoundTrip measures on.
const sharedCore = 10 * time.Microsecond

// RoundTrip measures how long a cache line takes to travel from one core to
// another and back: two goroutines, each on its own OS thread, hand a
// counter back and forth for about d (longer, up to 50·d, while the OS keeps
// both threads on one core). It returns the time of one round trip in the
// fastest batch, or 0 when fewer than two threads may run Go code at once
// (GOMAXPROCS or the CPU count below 2).
//
// Parallel kernels whose goroutines hand tiles to each other (the task-graph
// Cholesky) move their data at this latency, while those that share only
// read-only inputs (Dgemm) hardly notice it. On a virtual machine the host
// may place the two vCPUs on one core complex or on two and change that
// while a program runs: on a 2-vCPU Zen 4 VM the round trip read 75–95 ns
// at some times and 300–640 ns at others, and the two-goroutine Cholesky of
// order 1024 ran about 20% faster in the first state than in the second.
// Two-thread figures are therefore reported with this latency beside them.
func RoundTrip(d time.Duration) time.Duration {
	if runtime.GOMAXPROCS(0) < 2 || runtime.NumCPU() < 2 {
		return 0
	}
	var line struct {
		_ [64]byte // the counter has a cache line of its own
		v atomic.Int64
		_ [56]byte
	}
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(done)
		// Answer every odd value with the next even one.
		for want := int64(1); ; want += 2 {
			for line.v.Load() != want {
				if stop.Load() {
					return
				}
			}
			line.v.Store(want + 1)
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := time.Duration(math.MaxInt64)
	v := int64(0)
	start := time.Now()
	for {
		t0 := time.Now()
		for range roundTripBatch {
			line.v.Store(v + 1)
			for line.v.Load() != v+2 {
			}
			v += 2
		}
		best = min(best, time.Since(t0)/roundTripBatch)
		if el := time.Since(start); el >= d && (best < sharedCore || el >= 50*d) {
			break
		}
	}
	stop.Store(true)
	<-done
	return best
}
