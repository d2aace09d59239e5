package train_test

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/train"
)

// line is a toy model: the log-likelihood of y = a·x + b with unit noise,
// maximized over (a, b).
type line struct{ a, b float64 }

func (l *line) NumParams() int       { return 2 }
func (l *line) Params(dst []float64) { dst[0], dst[1] = l.a, l.b }
func (l *line) SetParams(src []float64) error {
	if math.IsNaN(src[0]+src[1]) || math.IsInf(src[0]+src[1], 0) {
		return fmt.Errorf("line: non-finite parameters")
	}
	l.a, l.b = src[0], src[1]
	return nil
}
func (l *line) Objective(x *mat.Dense, y []float64, nTotal int, grad []float64) (float64, error) {
	scale := float64(nTotal) / float64(len(y))
	var f float64
	for i, yi := range y {
		r := yi - l.a*x.At(i, 0) - l.b
		f -= 0.5 * r * r * scale
		grad[0] += r * x.At(i, 0) * scale
		grad[1] += r * scale
	}
	return f, nil
}

// lineData returns 100 points on y = 2x + 1, x in [−1, 1).
func lineData() (*mat.Dense, []float64) {
	x := mat.NewDense(100, 1, nil)
	y := make([]float64, 100)
	for i := range y {
		xi := float64(i)/50 - 1
		x.Set(i, 0, xi)
		y[i] = 2*xi + 1
	}
	return x, y
}

// Fit a line with mini-batch Adam, a step-decay schedule and a callback.
func ExampleFit() {
	x, y := lineData()
	m := &line{}
	res, err := train.Fit(context.Background(), m, x, y, train.Config{
		Epochs:    300,
		BatchSize: 10,
		Schedule:  train.StepDecay{Initial: 0.05, Factor: 0.3, Every: 1000},
		Seed:      1,
		OnEpoch: func(e train.EpochInfo) error {
			if e.Epoch%100 == 0 {
				fmt.Printf("epoch %d done\n", e.Epoch)
			}
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s after %d steps: a = %.3f, b = %.3f\n", res.Reason, res.Steps, m.a, m.b)
	// Output:
	// epoch 0 done
	// epoch 100 done
	// epoch 200 done
	// finished after 3000 steps: a = 2.000, b = 1.000
}

// Stop a run after any step, keep its state, and resume it later: the
// resumed run ends exactly where the uninterrupted one does.
func ExampleStepInfo_checkpoint() {
	x, y := lineData()
	cfg := train.Config{Epochs: 30, BatchSize: 16, Schedule: train.Constant(0.05), Seed: 1}

	// The uninterrupted run.
	whole := &line{}
	if _, err := train.Fit(context.Background(), whole, x, y, cfg); err != nil {
		fmt.Println(err)
		return
	}

	// A run stopped after step 50, in the middle of its eighth epoch. In a
	// program the checkpoint and the parameters would go to a file
	// (encoding/gob stores a train.Checkpoint).
	first := &line{}
	var ck train.Checkpoint
	var params [2]float64
	stop := cfg
	stop.OnStep = func(s train.StepInfo) error {
		if s.Step == 50 {
			ck = s.Checkpoint()
			first.Params(params[:])
			return train.ErrStop
		}
		return nil
	}
	if _, err := train.Fit(context.Background(), first, x, y, stop); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("stopped after %d steps (epoch %d, batch %d)\n", ck.Steps, ck.Epochs+1, ck.Batches)

	// Later: a new model at the saved parameters, the same data and
	// settings, and the saved state.
	second := &line{}
	if err := second.SetParams(params[:]); err != nil {
		fmt.Println(err)
		return
	}
	resume := cfg
	resume.Resume = &ck
	res, err := train.Fit(context.Background(), second, x, y, resume)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s after %d steps; same parameters as the uninterrupted run: %v\n", res.Reason, res.Steps, *second == *whole)
	// Output:
	// stopped after 50 steps (epoch 8, batch 1)
	// finished after 210 steps; same parameters as the uninterrupted run: true
}
