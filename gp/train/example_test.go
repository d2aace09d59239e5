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

// Fit a line with mini-batch Adam, a step-decay schedule and a callback.
func ExampleFit() {
	x := mat.NewDense(100, 1, nil)
	y := make([]float64, 100)
	for i := range y {
		xi := float64(i)/50 - 1
		x.Set(i, 0, xi)
		y[i] = 2*xi + 1
	}
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

// Initialize M inducing inputs Z and M2 orthogonal inducing inputs O.
func ExampleInducingInit() {
	x := mat.NewDense(200, 1, nil)
	for i := 0; i < 200; i++ {
		x.Set(i, 0, float64(i%4)) // four distinct values
	}
	z, o, err := train.InducingInit(x, 2, 2, train.KMeansOptions{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(z.RawMatrix().Rows, o.RawMatrix().Rows)
	// Output:
	// 2 2
}
