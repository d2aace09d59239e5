package kernel

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

// TestParallelDeterminism checks that kernel matrices are bit-identical
// whatever the number of goroutines (each row chunk is computed by one
// goroutine, so this holds by construction), and gradients identical to
// rounding (their large products run on the multi-threaded BLAS, whose
// partitioning is that package's business).
func TestParallelDeterminism(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const n, m, d = 300, 250, 3
	x := randDense(rng, n, d, 1)
	z := randDense(rng, m, d, 1)
	dK := randDense(rng, n, m, 1)
	dKs := randDense(rng, n, n, 1)
	k, _ := NewMatern52(d, 0.7, 1.1, ARD())
	run := func(procs int) ([]float64, []float64) {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		var K, Ks mat.Dense
		k.Matrix(&K, x, z)
		k.Matrix(&Ks, x, x)
		dx := mat.NewDense(n, d, nil)
		dz := mat.NewDense(m, d, nil)
		dp := make([]float64, k.NumParams())
		k.MatrixGrad(dK, &K, x, z, dx, dz, dp)
		k.MatrixGrad(dKs, &Ks, x, x, dx, dx, dp)
		ks := append(append([]float64(nil), K.RawMatrix().Data...), Ks.RawMatrix().Data...)
		gs := append(append(append([]float64(nil), dx.RawMatrix().Data...), dz.RawMatrix().Data...), dp...)
		return ks, gs
	}
	k1, g1 := run(1)
	k4, g4 := run(4)
	for i := range k1 {
		if k1[i] != k4[i] {
			t.Fatalf("kernel element %d: %v with 1 goroutine, %v with 4", i, k1[i], k4[i])
		}
	}
	for i := range g1 {
		if math.Abs(g1[i]-g4[i]) > 1e-12*(1+math.Abs(g1[i])) {
			t.Fatalf("gradient element %d: %v with 1 goroutine, %v with 4", i, g1[i], g4[i])
		}
	}
}

// concurrencyProbe is a chunk body that records how many of its chunks
// ran at the same time.
type concurrencyProbe struct {
	active, peak atomic.Int32
}

func (p *concurrencyProbe) chunk(_, _, _ int) {
	a := p.active.Add(1)
	for {
		old := p.peak.Load()
		if a <= old || p.peak.CompareAndSwap(old, a) {
			break
		}
	}
	time.Sleep(200 * time.Microsecond)
	p.active.Add(-1)
}

// TestForChunksWorkers checks that forChunks keeps to its workers bound:
// with 1 the chunks run one at a time on the caller, with 0 up to
// GOMAXPROCS at once.
func TestForChunksWorkers(t *testing.T) {
	old := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(old)
	for _, c := range []struct{ workers, max int }{{1, 1}, {2, 2}, {0, 4}} {
		var p concurrencyProbe
		forChunks(64*rowChunk, 1<<30, c.workers, &p)
		if got := int(p.peak.Load()); got > c.max || got < 1 {
			t.Errorf("workers %d: %d chunks at once, want 1…%d", c.workers, got, c.max)
		}
	}
}

// TestSetWorkers checks that a Stationary kernel, and a sum and a product
// of such kernels, give the same results with SetWorkers(1) as with the
// default bound (the matrix bit for bit), and that sums and products pass
// the bound on to their parts.
func TestSetWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	const n, m, d = 300, 250, 3
	x := randDense(rng, n, d, 1)
	z := randDense(rng, m, d, 1)
	dK := randDense(rng, n, m, 1)
	eval := func(k Kernel) []float64 {
		var K mat.Dense
		k.Matrix(&K, x, z)
		dx := mat.NewDense(n, d, nil)
		dz := mat.NewDense(m, d, nil)
		dp := make([]float64, k.NumParams())
		k.MatrixGrad(dK, &K, x, z, dx, dz, dp)
		out := append([]float64(nil), K.RawMatrix().Data...)
		out = append(append(out, dx.RawMatrix().Data...), dz.RawMatrix().Data...)
		return append(out, dp...)
	}
	a, _ := NewMatern32(d, 0.8, 1.2, ARD())
	b, _ := NewRBF(d, 1.3, 0.7)
	sum, _ := NewSum(a, b)
	prod, _ := NewProduct(a, b)
	for _, c := range []struct {
		name string
		k    interface {
			Kernel
			SetWorkers(int)
		}
	}{{"Stationary", a}, {"Sum", sum}, {"Product", prod}} {
		c.k.SetWorkers(0)
		want := eval(c.k)
		c.k.SetWorkers(1)
		if a.workers != 1 || (c.name != "Stationary" && b.workers != 1) {
			t.Fatalf("%s: SetWorkers(1) left the parts at %d and %d", c.name, a.workers, b.workers)
		}
		got := eval(c.k)
		for i := range want {
			// The matrix is bit-identical; the gradients' products may
			// run on differently partitioned BLAS calls.
			if tol := 1e-12 * (1 + math.Abs(want[i])); i >= n*m && math.Abs(got[i]-want[i]) <= tol {
				continue
			}
			if got[i] != want[i] {
				t.Fatalf("%s: element %d is %v with one worker, %v with GOMAXPROCS", c.name, i, got[i], want[i])
			}
		}
		c.k.SetWorkers(0)
	}
}
