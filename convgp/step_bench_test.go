package convgp

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
)

// stepThreads is the goroutine budget (DeepConfig.Threads) of BenchmarkStep.
var stepThreads = flag.Int("step.threads", 1, "goroutines of BenchmarkStep's models")

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
			d, err := NewDeep(x, cfg)
			if err != nil {
				b.Fatal(err)
			}
			xb := x.Slice(0, 64, 0, 28*28)
			grad := make([]float64, d.NumParams())
			c0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := d.Objective(xb.(*mat.Dense), y, 60000, grad); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e9, "cpu-s/op")
		})
	}
}
