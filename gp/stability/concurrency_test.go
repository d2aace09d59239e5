package stability

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/train"
	"github.com/solvegp/solvegp/internal/floats"
)

// predictAll runs every prediction method of p on x (and y), returning the
// results flattened in a fixed order.
func predictAll(p *gp.Predictor, x *mat.Dense, y []float64) ([]float64, error) {
	var out []float64
	mean, variance, err := p.PredictF(x)
	if err != nil {
		return nil, err
	}
	out = append(append(out, mean.RawMatrix().Data...), variance.RawMatrix().Data...)
	ym, yv, err := p.PredictY(x)
	if err != nil {
		return nil, err
	}
	out = append(append(out, ym.RawMatrix().Data...), yv.RawMatrix().Data...)
	lp, err := p.LogPredictive(x, y)
	if err != nil {
		return nil, err
	}
	out = append(out, lp...)
	mlp, err := p.MeanLogPredictive(x, y)
	if err != nil {
		return nil, err
	}
	out = append(out, mlp)
	r, _ := x.Dims()
	cov, err := p.JointCov(x.Slice(0, min(r, 24), 0, 1), 0)
	if err != nil {
		return nil, err
	}
	n := cov.SymmetricDim()
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			out = append(out, cov.At(i, j))
		}
	}
	return out, nil
}

// TestPredictorConcurrent: one Predictor of a trained SVGP, ODVGP or
// SOLVE-GP model is shared by 8 goroutines, each running every prediction
// method on test sets of several sizes (crossing the predictor's batch of
// 37 points); every result must equal the sequential one bit for bit. Run
// with -race to check the absence of data races.
func TestPredictorConcurrent(t *testing.T) {
	x, y := sinData(300, 7)
	var tests []*mat.Dense
	var ys [][]float64
	for _, n := range []int{1, 36, 37, 100} {
		xt, yt := sinData(n, uint64(100+n))
		tests, ys = append(tests, xt), append(ys, yt)
	}
	for _, kind := range []gp.Kind{gp.SVGP, gp.ODVGP, gp.SOLVEGP} {
		mod := setup{kind: kind, z: grid(8, -2.5, 2.5), o: grid(6, -2.2, 2.8), lengthscale: 1, variance: 1, noise: 0.1,
			opts: []gp.Option{gp.WithThreads(2)}}.build(t)
		if _, err := train.Fit(context.Background(), mod, x, y, train.Config{MaxSteps: 100, BatchSize: 64, Schedule: train.Constant(0.02)}); err != nil {
			t.Fatal(err)
		}
		p, err := mod.Predictor(37)
		if err != nil {
			t.Fatal(err)
		}
		want := make([][]float64, len(tests))
		for i := range tests {
			if want[i], err = predictAll(p, tests[i], ys[i]); err != nil {
				t.Fatal(err)
			}
		}
		const workers, rounds = 8, 6
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					i := (w + r) % len(tests)
					got, err := predictAll(p, tests[i], ys[i])
					if err == nil && !floats.EqualBits(got, want[i]) {
						err = fmt.Errorf("worker %d round %d: predictions on test set %d differ from the sequential ones", w, r, i)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("%v: %v", kind, err)
		}
	}
}
