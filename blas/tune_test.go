package blas

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/internal/gemm"
	"github.com/solvegp/solvegp/internal/peak"
)

var (
	tune       = flag.Bool("tune", false, "TestTune: search kernel and blocking on this machine and print the configuration table entry (minutes)")
	tuneN      = flag.Int("tune.n", 1536, "TestTune: order of the square Dgemm products timed")
	tuneReps   = flag.Int("tune.reps", 3, "TestTune: timed runs per candidate (the best counts)")
	tuneRounds = flag.Int("tune.rounds", 2, "TestTune: rounds of coordinate search over KC, MC, NC")
)

// TestTune is the configuration tuner. For every assembly kernel the CPU
// runs, it searches the cache blocking by coordinate descent (KC, then MC,
// then NC, repeated) from the current configuration, timing one-thread
// Dgemm NN and TN products of order -tune.n, and prints the entry to add to
// the configuration table of package gemm with the measurement that chose
// it. Run it on an idle machine:
//
//	go test ./blas -run TestTune -tune -v
func TestTune(t *testing.T) {
	if !*tune {
		t.Skip("the tuner runs with -tune")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := *tuneN
	rng := rand.New(rand.NewPCG(1, 2))
	a, b, c := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	for i := range a {
		a[i], b[i] = rng.Float64(), rng.Float64()
	}
	pk := peak.Best().Measure(time.Second)
	t.Logf("machine: %s; FMA peak %.1f GFLOP/s per core; arch %q", peak.Machine(), pk, gemm.Arch())
	for _, be := range gemm.Backends() {
		if be.ISA() == "generic" {
			continue
		}
		rate := func(bl gemm.Blocking) float64 {
			impl := Implementation{Threads: 1, backend: be.WithBlocking(bl)}
			best := 0.0
			for range *tuneReps {
				for _, tA := range []gblas.Transpose{gblas.NoTrans, gblas.Trans} {
					t0 := time.Now()
					impl.Dgemm(tA, gblas.NoTrans, n, n, n, 1, a, n, b, n, 0, c, n)
					best = max(best, 2*float64(n)*float64(n)*float64(n)/time.Since(t0).Seconds()/1e9)
				}
			}
			return best
		}
		bl, r := tuneBlocking(be, rate, *tuneRounds)
		t.Logf("%s: %.1f GFLOP/s (%.0f%% of peak)", be.Describe(), rate(be.Blocking()), 100*rate(be.Blocking())/pk)
		fmt.Printf("{%q, Blocking{MC: %d, KC: %d, NC: %d}, \"measured: %s, Dgemm n=%d NN/TN %.1f GFLOP/s (%.0f%% of %.1f peak)\"},\n",
			be.Name(), bl.MC, bl.KC, bl.NC, peak.Machine(), n, r, 100*r/pk, pk)
	}
}

// tuneBlocking runs the coordinate search of TestTune for one backend and
// returns the best blocking and its rate.
func tuneBlocking(be *gemm.Backend, rate func(gemm.Blocking) float64, rounds int) (gemm.Blocking, float64) {
	bl := be.Blocking()
	best := rate(bl)
	mr, nr := be.MR(), be.NR()
	try := func(cand gemm.Blocking) {
		cand = be.WithBlocking(cand).Blocking() // rounded as the kernel will run it
		if cand == bl {
			return
		}
		if r := rate(cand); r > best {
			bl, best = cand, r
		}
	}
	for range rounds {
		for _, kc := range []int{128, 192, 256, 320, 384, 448, 512, 640, 768, 1024} {
			try(gemm.Blocking{MC: bl.MC, KC: kc, NC: bl.NC})
		}
		for _, tiles := range []int{2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48} {
			try(gemm.Blocking{MC: tiles * mr, KC: bl.KC, NC: bl.NC})
		}
		for _, panels := range []int{256, 512, 768, 1024, 1536, 2048, 3072, 4096} {
			try(gemm.Blocking{MC: bl.MC, KC: bl.KC, NC: panels / nr * nr})
		}
	}
	return bl, best
}
