package convgp

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
)

// stepThreads is the goroutine budget (DeepConfig.Threads) of BenchmarkStep and
// BenchmarkPaperStep.
var stepThreads = flag.Int("step.threads", 1, "goroutines of the models of BenchmarkStep and BenchmarkPaperStep")

// BenchmarkStep times one training-objective evaluation with gradient (one
// optimizer step without the parameter update) of the single-layer TICK
// convolutional GP and of the two-layer model of bench/convgp (a 5×5
// hidden layer with 10 channels and a linear mean, M/M2 = 64, under a 4×4
// stride-2 TICK output layer) on 28×28 images with a batch of 64, as in
// bench/convgp. Images are random fields thresholded to zero
// in places, so that patches repeat like the flat backgrounds of
// Fashion-MNIST. -step.threads sets the goroutine budget (default 1).
//
//	go test ./convgp -run '^$' -bench 'BenchmarkStep/.*/L=2' -benchtime 5x -step.threads 2
func BenchmarkStep(b *testing.B) {
	for _, c := range []struct {
		kind   gp.Kind
		m, m2  int
		layers int
	}{{gp.SVGP, 100, 0, 1}, {gp.SOLVEGP, 100, 100, 1}, {gp.SVGP, 100, 0, 2}, {gp.SOLVEGP, 100, 100, 2}} {
		b.Run(fmt.Sprintf("%v/L=%d/M=%d+%d", c.kind, c.layers, c.m, c.m2), func(b *testing.B) {
			if testing.Short() && c.kind == gp.SOLVEGP {
				b.Skip("short")
			}
			x, y := stepBatch()
			cfg := DeepConfig{Height: 28, Width: 28, Channels: 1, Classes: 10, Kind: c.kind,
				Whiten: true, Threads: *stepThreads, Init: InitOptions{Images: 100, PerCentre: 10, Seed: 1},
				Output: Output{PatchHeight: 5, PatchWidth: 5, Stride: 1, M: c.m, M2: c.m2, TICK: true}}
			if c.layers == 2 {
				hm, hm2 := 64, 0
				if c.m2 > 0 {
					hm2 = 64
				}
				cfg.Whiten = false
				cfg.LinearMean, cfg.HiddenVariance, cfg.HiddenInitVar = true, 0.1, 1e-4
				cfg.Hidden = []Hidden{{PatchHeight: 5, PatchWidth: 5, Stride: 1, Channels: 10, M: hm, M2: hm2}}
				cfg.Output.PatchHeight, cfg.Output.PatchWidth, cfg.Output.Stride = 4, 4, 2
			}
			timeSteps(b, x, y, cfg)
		})
	}
}

// BenchmarkPaperStep times one training step, as BenchmarkStep does, of the
// single-layer TICK model at the sizes of the paper's Table 1: SVGP M,
// SVGP 1.6M, SOLVE-GP M + M and SVGP 2M with M = 1000, where SOLVE-GP's
// cubic operations are of order M while SVGP 2M's are of order 2M. It is
// skipped with -short.
//
//	go test ./convgp -run '^$' -bench BenchmarkPaperStep -benchtime 3x -step.threads 1
func BenchmarkPaperStep(b *testing.B) {
	for _, c := range []struct {
		kind  gp.Kind
		m, m2 int
	}{{gp.SVGP, 1000, 0}, {gp.SVGP, 1600, 0}, {gp.SOLVEGP, 1000, 1000}, {gp.SVGP, 2000, 0}} {
		b.Run(fmt.Sprintf("%v/M=%d+%d", c.kind, c.m, c.m2), func(b *testing.B) {
			if testing.Short() {
				b.Skip("short")
			}
			x, y := stepBatch()
			cfg := DeepConfig{Height: 28, Width: 28, Channels: 1, Classes: 10, Kind: c.kind,
				Whiten: true, Threads: *stepThreads, Init: InitOptions{Images: 200, PerCentre: 10, Seed: 1},
				Output: Output{PatchHeight: 5, PatchWidth: 5, Stride: 1, M: c.m, M2: c.m2, TICK: true}}
			timeSteps(b, x, y, cfg)
		})
	}
}

// stepBatch returns the step benchmarks' 200 images (random fields
// thresholded to zero in places, so that patches repeat like the flat
// backgrounds of Fashion-MNIST) and the labels of the first 64.
func stepBatch() (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := randDense(rng, 200, 28*28)
	raw := x.RawMatrix().Data
	for i := range raw {
		if raw[i] < 0.3 {
			raw[i] = 0
		}
	}
	y := make([]float64, 64)
	for i := range y {
		y[i] = float64(i % 10)
	}
	return x, y
}

// timeSteps builds the model of cfg on x and times objective-and-gradient
// evaluations on the first 64 images, reporting CPU seconds per step too.
func timeSteps(b *testing.B, x *mat.Dense, y []float64, cfg DeepConfig) {
	d, err := NewDeep(x, cfg)
	if err != nil {
		b.Fatal(err)
	}
	xb := x.Slice(0, 64, 0, 28*28).(*mat.Dense)
	grad := make([]float64, d.NumParams())
	c0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d.Objective(xb, y, 60000, grad); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e9, "cpu-s/op")
}
