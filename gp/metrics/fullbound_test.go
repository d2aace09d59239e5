package metrics_test

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/metrics"
)

func toyModel(t *testing.T) (*gp.Model, *mat.Dense, []float64) {
	t.Helper()
	n := 37
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		v := float64(i) / 6
		x.Set(i, 0, v)
		y[i] = math.Sin(v) + 0.1*math.Cos(7*v)
	}
	z := mat.NewDense(4, 1, []float64{0.5, 2, 3.5, 5})
	k, err := kernel.NewRBF(1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	lik, err := likelihood.NewGaussian(0.1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := gp.NewSVGP(k, lik, z)
	if err != nil {
		t.Fatal(err)
	}
	return m, x, y
}

func TestFullBoundBatches(t *testing.T) {
	m, x, y := toyModel(t)
	whole, err := m.Objective(x, y, len(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []int{0, 1, 5, 36, 37, 100} {
		got, err := metrics.FullBound(m, x, y, b)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-whole) > 1e-10*math.Abs(whole) {
			t.Errorf("batch %d: bound %v, want %v", b, got, whole)
		}
	}
	if _, err := metrics.FullBound(m, x, y[:3], 0); err == nil {
		t.Error("mismatched lengths: no error")
	}
}
