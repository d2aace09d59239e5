package train

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// rowChecker is a model of two outputs per point whose objective fails
// unless each row of a mini-batch carries its own two targets (y = (x, −x)
// or a missing NaN), which checks how Fit gathers multi-output batches.
type rowChecker struct {
	theta []float64
	seen  int
}

func (r *rowChecker) NumOutputs() int               { return 2 }
func (r *rowChecker) NumParams() int                { return 1 }
func (r *rowChecker) Params(dst []float64)          { dst[0] = r.theta[0] }
func (r *rowChecker) SetParams(src []float64) error { r.theta[0] = src[0]; return nil }
func (r *rowChecker) Objective(x *mat.Dense, y []float64, nTotal int, grad []float64) (float64, error) {
	n, _ := x.Dims()
	if len(y) != 2*n {
		return 0, fmt.Errorf("%d targets for %d rows", len(y), n)
	}
	for i := 0; i < n; i++ {
		v := x.At(i, 0)
		if y[2*i] != v || !(y[2*i+1] == -v || math.IsNaN(y[2*i+1])) {
			return 0, fmt.Errorf("row %d: x %g, targets %g, %g", i, v, y[2*i], y[2*i+1])
		}
	}
	r.seen += n
	if grad != nil {
		grad[0] = -r.theta[0]
	}
	return -0.5 * r.theta[0] * r.theta[0], nil
}

// TestFitMultiOutput checks that Fit takes NumOutputs targets per row,
// gathers them with their row into shuffled mini-batches, accepts NaN as a
// missing target, and refuses a y of the wrong length and FitSource.
func TestFitMultiOutput(t *testing.T) {
	const n = 10
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, 2*n)
	for i := 0; i < n; i++ {
		x.Set(i, 0, float64(i))
		y[2*i], y[2*i+1] = float64(i), -float64(i)
	}
	y[7] = math.NaN()
	m := &rowChecker{theta: []float64{1}}
	cfg := Config{Epochs: 3, BatchSize: 3, Schedule: Constant(0.1), Seed: 1}
	res, err := Fit(context.Background(), m, x, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rejected != 0 || m.seen < 3*n {
		t.Errorf("%d rejected steps, %d rows seen", res.Rejected, m.seen)
	}
	if _, err := Fit(context.Background(), m, x, y[:n], cfg); err == nil || !strings.Contains(err.Error(), "2 outputs") {
		t.Errorf("y of one target per row: %v", err)
	}
	y[7] = math.Inf(1)
	if _, err := Fit(context.Background(), m, x, y, cfg); err == nil {
		t.Error("infinite target accepted")
	}
	if _, err := FitSource(context.Background(), m, &permSource{x: x, y: y[:n]}, cfg); err == nil || !strings.Contains(err.Error(), "outputs") {
		t.Errorf("FitSource with a multi-output model: %v", err)
	}
}
