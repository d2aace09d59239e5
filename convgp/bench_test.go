package convgp

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/patches"
)

// Fashion-MNIST geometry: 28×28×1 images, 5×5 patches, stride 1, one
// worker (cpu-ns/op is then the single-thread cost). The images are uniform
// noise.
func benchKernel(b *testing.B, tick bool) *Kernel {
	k, err := New(Config{Patches: patches.Config{Height: 28, Width: 28, Channels: 1, PatchHeight: 5, PatchWidth: 5},
		Variance: 5, Lengthscale: 5, TICK: tick, LocLengthscale: 3, Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	return k
}

func BenchmarkMatrix(b *testing.B) {
	for _, tick := range []bool{false, true} {
		for _, M := range []int{100, 1000} {
			b.Run(fmt.Sprintf("tick=%v/M=%d/N=64", tick, M), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 1))
				k := benchKernel(b, tick)
				z := randDense(rng, M, k.InducingDim())
				x := randDense(rng, 64, k.Dim())
				K := mat.NewDense(M, 64, nil)
				c0 := cpuTime()
				for i := 0; i < b.N; i++ {
					k.Matrix(K, z, x)
				}
				b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
			})
			b.Run(fmt.Sprintf("grad/tick=%v/M=%d/N=64", tick, M), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 1))
				k := benchKernel(b, tick)
				z := randDense(rng, M, k.InducingDim())
				x := randDense(rng, 64, k.Dim())
				dK := randDense(rng, M, 64)
				dz := mat.NewDense(M, k.InducingDim(), nil)
				dx := mat.NewDense(64, k.Dim(), nil)
				dp := make([]float64, k.NumParams())
				c0 := cpuTime()
				for i := 0; i < b.N; i++ {
					k.MatrixGrad(dK, nil, z, x, dz, dx, dp)
				}
				b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkMatrixStep times a training step's kernel work for one set of
// inducing patches, Matrix then MatrixGrad with the same inputs (TICK,
// M = 1000, 64 images, one worker), with Matrix's exponentials kept for
// MatrixGrad (Config.CacheBytes of 512 MiB) and recomputed (no cache, the
// default).
//
//	go test ./convgp -run '^$' -bench BenchmarkMatrixStep -benchtime 10x
func BenchmarkMatrixStep(b *testing.B) {
	for _, cache := range []int{512 << 20, 0} {
		b.Run(fmt.Sprintf("cache=%v", cache > 0), func(b *testing.B) {
			const M = 1000
			rng := rand.New(rand.NewPCG(1, 1))
			k, err := New(Config{Patches: patches.Config{Height: 28, Width: 28, Channels: 1, PatchHeight: 5, PatchWidth: 5},
				Variance: 5, Lengthscale: 5, TICK: true, LocLengthscale: 3, Workers: 1, CacheBytes: cache})
			if err != nil {
				b.Fatal(err)
			}
			z := randDense(rng, M, k.InducingDim())
			x := randDense(rng, 64, k.Dim())
			K, dK := mat.NewDense(M, 64, nil), randDense(rng, M, 64)
			dz := mat.NewDense(M, k.InducingDim(), nil)
			dx := mat.NewDense(64, k.Dim(), nil)
			dp := make([]float64, k.NumParams())
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				k.Matrix(K, z, x)
				k.MatrixGrad(dK, nil, z, x, dz, dx, dp)
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkInducing times the covariance among M = 1000 TICK inducing
// patches and its gradient (K_uu; a SOLVE-GP step makes three of each:
// K_uu, K_uv, K_vv), with one and two workers.
//
//	go test ./convgp -run '^$' -bench BenchmarkInducing -benchtime 20x
func BenchmarkInducing(b *testing.B) {
	for _, workers := range []int{1, 2} {
		const M = 1000
		rng := rand.New(rand.NewPCG(1, 1))
		k, err := New(Config{Patches: patches.Config{Height: 28, Width: 28, Channels: 1, PatchHeight: 5, PatchWidth: 5},
			Variance: 5, Lengthscale: 5, TICK: true, LocLengthscale: 3, Workers: workers})
		if err != nil {
			b.Fatal(err)
		}
		z := randDense(rng, M, k.InducingDim())
		d := k.geom.PatchLen()
		for i := 0; i < M; i++ {
			z.Set(i, d, rng.Float64()*24)
			z.Set(i, d+1, rng.Float64()*24)
		}
		K, dK := mat.NewDense(M, M, nil), randDense(rng, M, M)
		dz := mat.NewDense(M, k.InducingDim(), nil)
		dp := make([]float64, k.NumParams())
		b.Run(fmt.Sprintf("matrix/workers=%d", workers), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				k.InducingMatrix(K, z, z)
			}
		})
		b.Run(fmt.Sprintf("grad/workers=%d", workers), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				k.InducingMatrixGrad(dK, nil, z, z, dz, dz, dp)
			}
		})
	}
}

func BenchmarkDiag(b *testing.B) {
	for _, tick := range []bool{false, true} {
		b.Run(fmt.Sprintf("tick=%v/N=64", tick), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			k := benchKernel(b, tick)
			x := randDense(rng, 64, k.Dim())
			d := make([]float64, 64)
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				k.Diag(d, x)
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkDiagPieces times a training step's use of Diag: the forward Diag
// (which also forms the gradient pieces once a DiagGrad has been seen) and
// the DiagGrad that scales them, for the parameters only (one-layer models)
// and with the pixel gradients (deep models). Half of each image is a
// uniform background, as in Fashion-MNIST.
func BenchmarkDiagPieces(b *testing.B) {
	for _, tick := range []bool{false, true} {
		for _, pixels := range []bool{false, true} {
			b.Run(fmt.Sprintf("tick=%v/pixels=%v/N=64", tick, pixels), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 1))
				k := benchKernel(b, tick)
				x := randDense(rng, 64, k.Dim())
				for n := 0; n < 64; n++ {
					for i := 0; i < 28*14; i++ {
						x.Set(n, i, -0.8)
					}
				}
				d := make([]float64, 64)
				dd := make([]float64, 64)
				for i := range dd {
					dd[i] = rng.NormFloat64()
				}
				dp := make([]float64, k.NumParams())
				var dx *mat.Dense
				if pixels {
					dx = mat.NewDense(64, k.Dim(), nil)
				}
				k.Diag(d, x)
				k.DiagGrad(dd, x, dx, dp)
				c0 := cpuTime()
				for i := 0; i < b.N; i++ {
					k.Diag(d, x)
					k.DiagGrad(dd, x, dx, dp)
				}
				b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
