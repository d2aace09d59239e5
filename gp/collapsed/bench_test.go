package collapsed

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// BenchmarkBoundGrad times one evaluation of the collapsed bound and its
// full gradient (kernel, noise, Z and O) with a Matérn-3/2 kernel on d = 8
// inputs. With -short the sizes are small.
func BenchmarkBoundGrad(b *testing.B) {
	type size struct {
		n, m, m2 int
		tight    bool
	}
	sizes := []size{{4096, 512, 0, false}, {4096, 256, 256, false}, {4096, 1024, 0, false}, {4096, 512, 512, false}, {4096, 512, 0, true}}
	if testing.Short() {
		sizes = []size{{256, 16, 16, false}, {256, 16, 0, true}}
	}
	for _, s := range sizes {
		name := fmt.Sprintf("SGPR/N=%d,M=%d", s.n, s.m)
		if s.m2 > 0 {
			name = fmt.Sprintf("SOLVE-GP/N=%d,M=%d+%d", s.n, s.m, s.m2)
		}
		if s.tight {
			name = fmt.Sprintf("Tight/N=%d,M=%d", s.n, s.m)
		}
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			x := mat.NewDense(s.n, 8, nil)
			for i := range x.RawMatrix().Data {
				x.RawMatrix().Data[i] = rng.NormFloat64()
			}
			y := make([]float64, s.n)
			for i := range y {
				y[i] = rng.NormFloat64()
			}
			w := mat.NewDense(s.m+s.m2, 8, nil)
			for i := range w.RawMatrix().Data {
				w.RawMatrix().Data[i] = rng.NormFloat64()
			}
			z := mat.DenseCopyOf(w.Slice(0, s.m, 0, 8))
			var o *mat.Dense
			if s.m2 > 0 {
				o = mat.DenseCopyOf(w.Slice(s.m, s.m+s.m2, 0, 8))
			}
			k, _ := kernel.NewMatern32(8, 2, 1)
			noise, _ := likelihood.NewGaussian(0.1)
			md, err := New(k, noise, z, o, Options{Tight: s.tight})
			if err != nil {
				b.Fatal(err)
			}
			g := make([]float64, md.NumParams())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := md.BoundGrad(x, y, g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
