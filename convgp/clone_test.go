package convgp

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/internal/floats"
)

// cloneOutputs returns K(z, x), K(z, z) (InducingMatrix) and diag K(x, x).
func cloneOutputs(k *Kernel, z, x *mat.Dense) []float64 {
	M, _ := z.Dims()
	N, _ := x.Dims()
	out := make([]float64, M*N+M*M+N)
	k.Matrix(mat.NewDense(M, N, out[:M*N]), z, x)
	k.InducingMatrix(mat.NewDense(M, M, out[M*N:M*N+M*M]), z, z)
	k.Diag(out[M*N+M*M:], x)
	return out
}

// TestKernelClone checks that Clone gives the same values to the bit and
// is independent of the original: training steps on the original (new
// parameters, MatrixGrad and DiagGrad with their caches) leave the copy's
// parameters and values unchanged, and the copy set to the new parameters
// agrees with the original.
func TestKernelClone(t *testing.T) {
	for _, tc := range testCases() {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(41, 42))
			k := newTestKernel(t, tc.cfg, rng)
			z := inducing(k, rng, 4)
			x := testImages(rng, 3, k)
			// Warm the original's caches as a training step does.
			step := func() {
				K := mat.NewDense(4, 3, nil)
				k.Matrix(K, z, x)
				dK := randDense(rng, 4, 3)
				k.MatrixGrad(dK, K, z, x, nil, nil, make([]float64, k.NumParams()))
				d := make([]float64, 3)
				k.Diag(d, x)
				k.DiagGrad([]float64{1, 2, 3}, x, nil, make([]float64, k.NumParams()))
			}
			step()
			c := k.Clone().(*Kernel)
			want := cloneOutputs(k, z, x)
			if got := cloneOutputs(c, z, x); !floats.EqualBits(got, want) {
				t.Fatalf("the copy's values differ from the original's")
			}
			old := make([]float64, k.NumParams())
			k.Params(old)
			th := make([]float64, len(old))
			for i := range th {
				th[i] = old[i] + 0.2*rng.NormFloat64()
			}
			if err := k.SetParams(th); err != nil {
				t.Fatal(err)
			}
			k.SetWorkers(1)
			step()
			got := make([]float64, len(old))
			c.Params(got)
			if !floats.EqualBits(got, old) {
				t.Errorf("setting the original's parameters changed the copy's")
			}
			if !floats.EqualBits(cloneOutputs(c, z, x), want) {
				t.Errorf("setting the original's parameters changed the copy's values")
			}
			if err := c.SetParams(th); err != nil {
				t.Fatal(err)
			}
			if !floats.EqualBits(cloneOutputs(c, z, x), cloneOutputs(k, z, x)) {
				t.Errorf("the copy with the original's new parameters disagrees with it")
			}
		})
	}
}
