package kernel

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/internal/floats"
)

// kernelOutputs returns k(x, z), k(x, x) and diag k(x, x).
func kernelOutputs(k Kernel, x, z *mat.Dense) []float64 {
	n, _ := x.Dims()
	m, _ := z.Dims()
	out := make([]float64, n*m+n*n+n)
	k.Matrix(mat.NewDense(n, m, out[:n*m]), x, z)
	k.Matrix(mat.NewDense(n, n, out[n*m:n*m+n*n]), x, x)
	k.Diag(out[n*m+n*n:], x)
	return out
}

// TestClone checks that a kernel's Clone gives the same values to the bit
// and is independent of the original: setting the original's parameters
// or goroutine budget leaves the copy unchanged, and the copy set to the
// new parameters agrees with the original.
func TestClone(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, m, d = 6, 5, 2
	x := randDense(rng, n, d, 1)
	z := randDense(rng, m, d, 1)
	ks := combos(t, d)
	ard, _ := NewMatern52(d, 0.8, 1.2, ARD())
	ks["ard"] = ard
	for name, k := range ks {
		c, ok := k.(interface{ Clone() any }).Clone().(Kernel)
		if !ok {
			t.Fatalf("%s: Clone did not return a Kernel", name)
		}
		want := kernelOutputs(k, x, z)
		if !floats.EqualBits(kernelOutputs(c, x, z), want) {
			t.Errorf("%s: the copy's values differ from the original's", name)
		}
		old := make([]float64, k.NumParams())
		k.Params(old)
		th := make([]float64, len(old))
		for i := range th {
			th[i] = old[i] + 0.3*rng.NormFloat64()
		}
		if err := k.SetParams(th); err != nil {
			t.Fatal(err)
		}
		k.(interface{ SetWorkers(int) }).SetWorkers(1)
		got := make([]float64, len(old))
		c.Params(got)
		if !floats.EqualBits(got, old) {
			t.Errorf("%s: setting the original's parameters changed the copy's", name)
		}
		if !floats.EqualBits(kernelOutputs(c, x, z), want) {
			t.Errorf("%s: setting the original's parameters changed the copy's values", name)
		}
		if err := c.SetParams(th); err != nil {
			t.Fatal(err)
		}
		if !floats.EqualBits(kernelOutputs(c, x, z), kernelOutputs(k, x, z)) {
			t.Errorf("%s: the copy with the original's new parameters disagrees with it", name)
		}
	}
}

// noClone hides the Clone method of the kernel it holds.
type noClone struct{ Kernel }

// TestCloneUncopyablePart checks that a combination with a part that
// cannot be copied reports it by a nil Clone.
func TestCloneUncopyablePart(t *testing.T) {
	a, _ := NewRBF(1, 1, 1)
	b, _ := NewMatern32(1, 1, 1)
	s, err := NewSum(a, noClone{b})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Clone(); c != nil {
		t.Errorf("Sum with an uncopyable part: Clone = %v, want nil", c)
	}
	p, err := NewProduct(s)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Clone(); c != nil {
		t.Errorf("Product of such a Sum: Clone = %v, want nil", c)
	}
}
