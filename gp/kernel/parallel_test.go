package kernel

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

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
