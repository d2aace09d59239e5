package peak

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/klauspost/cpuid/v2"
)

// Unit is one FMA throughput loop the running machine can execute.
type Unit struct {
	// Name is the vector unit: "avx512", "avx2", "neon" or "scalar".
	Name string
	// Flops is the number of floating-point operations one iteration of
	// the loop performs.
	Flops int
	loop  func(n int)
}

// Units returns the loops the running CPU supports, widest first. The last
// one is always the portable scalar loop.
func Units() []Unit { return append(archUnits(), scalarUnit) }

// Best returns the widest unit of the running CPU: the one whose rate is the
// machine's floating-point peak.
func Best() Unit { return Units()[0] }

// chunkTime is the length of one timed call of a loop: of the order of
// the shortest runs the peak is a yardstick for (a Dgemm of order 1024
// takes about 20 ms at 100 GFLOP/s). The peak is the best chunk, and the
// best of hundreds of 1-ms chunks catches bursts of a higher clock that no
// run of 10 ms or more holds: on a shared Zen 5 VM 1-ms chunks read
// 116–120 GFLOP/s where 10-ms chunks read 114 and 100-ms chunks 113.5.
// Shorter than the runs, so that a 300-ms measurement still has some 30
// chances to miss the host's interruptions.
const chunkTime = 10 * time.Millisecond

// chunk returns the iteration count of one timed call, calibrated to last
// about chunkTime on the running machine. The calibration calls also warm
// the core up for vector work.
func (u Unit) chunk() int {
	n := max(1, 1_000_000/u.Flops)
	for {
		t0 := time.Now()
		u.loop(n)
		if el := time.Since(t0); el >= chunkTime/8 {
			return max(1, int(float64(n)*float64(chunkTime)/float64(el)))
		}
		n *= 4
	}
}

// Measure runs the loop on the calling goroutine's OS thread for about d and
// returns the best rate seen over its chunks, in GFLOP/s. The best, not the
// mean: on a shared machine interference only ever lowers a rate.
func (u Unit) Measure(d time.Duration) float64 {
	start := time.Now()
	return u.MeasureClock(d, func() time.Duration { return time.Since(start) })
}

// MeasureClock is Measure with each chunk timed by clock, a monotonic
// clock of the calling OS thread (which stays locked to the goroutine for
// the measurement), instead of the wall clock: with the thread's CPU time,
// the time the thread waited for a core on a shared host is left out. The
// measurement still lasts about d of wall time.
func (u Unit) MeasureClock(d time.Duration, clock func() time.Duration) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := u.chunk()
	best := 0.0
	for end := time.Now().Add(d); time.Now().Before(end); {
		t0 := clock()
		u.loop(n)
		if s := (clock() - t0).Seconds(); s > 0 {
			best = max(best, float64(n)*float64(u.Flops)/s/1e9)
		}
	}
	return best
}

// MeasureCores runs the loop on threads goroutines at once, each locked to
// its own OS thread, in rounds for about d, and returns the best combined
// rate of a round in GFLOP/s. A round lasts until its slowest goroutine
// finishes, so the figure is the rate all threads sustain together.
func (u Unit) MeasureCores(threads int, d time.Duration) float64 {
	if threads <= 1 {
		return u.Measure(d)
	}
	n := u.chunk()
	best := 0.0
	for end := time.Now().Add(d); time.Now().Before(end); {
		var start, done sync.WaitGroup
		start.Add(1)
		done.Add(threads)
		for range threads {
			go func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				defer done.Done()
				start.Wait()
				u.loop(n)
			}()
		}
		t0 := time.Now()
		start.Done()
		done.Wait()
		if s := time.Since(t0).Seconds(); s > 0 {
			best = max(best, float64(threads)*float64(n)*float64(u.Flops)/s/1e9)
		}
	}
	return best
}

// scalarAccumulators is the number of independent chains of the scalar loop.
const scalarAccumulators = 8

// scalarX and scalarY are variables so that the compiler cannot fold the
// chains.
var scalarX, scalarY = 1.0000001, 0.9999999

var scalarUnit = Unit{Name: "scalar", Flops: 2 * scalarAccumulators, loop: fmaScalar}

// fmaScalar is the portable loop: n iterations of one math.FMA into each of
// eight independent accumulators.
func fmaScalar(n int) {
	var a [scalarAccumulators]float64
	x, y := scalarX, scalarY
	for range n {
		for j := range a {
			a[j] = math.FMA(x, y, a[j])
		}
	}
	runtime.KeepAlive(a) // the chains' results are used
}

// Machine describes the running CPU in one line: brand, x86 family and
// model (or the architecture), logical CPUs, widest FMA unit and cache
// sizes, as every benchmark report should state.
func Machine() string {
	c := cpuid.CPU
	s := c.BrandName
	if s == "" {
		s = runtime.GOARCH
	}
	if c.Family != 0 || c.Model != 0 {
		s += fmt.Sprintf(" (family %d, model %d)", c.Family, c.Model)
	}
	s += fmt.Sprintf(", %d logical CPUs, %s FMA", runtime.NumCPU(), Best().Name)
	if c.Cache.L1D > 0 {
		s += fmt.Sprintf(", L1d %d KiB", c.Cache.L1D>>10)
	}
	if c.Cache.L2 > 0 {
		s += fmt.Sprintf(", L2 %d KiB", c.Cache.L2>>10)
	}
	if c.Cache.L3 > 0 {
		s += fmt.Sprintf(", L3 %d MiB", c.Cache.L3>>20)
	}
	return s
}
