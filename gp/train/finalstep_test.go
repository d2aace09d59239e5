package train

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestFitChecksUnevaluatedKeptParams: the last step of a run moves the
// parameters to a point Fit has not evaluated. When that point's objective
// is not finite Fit must not keep it: it is rejected like any other step
// (logged, counted) and the model goes back to the last evaluated
// parameters — also when a callback stops training or training ends by
// the step limit.
func TestFitChecksUnevaluatedKeptParams(t *testing.T) {
	x, y := dummyData(4)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"step limit", Config{MaxSteps: 1}},
		{"epoch limit", Config{Epochs: 1}},
		{"callback stop", Config{MaxSteps: 100, OnStep: func(StepInfo) error { return ErrStop }}},
	} {
		// One Adam step of rate 5 moves p[0] from 0 to 5, beyond the
		// cliff at 3 where the objective is NaN.
		q := &quad{p: []float64{0, 0}, c: []float64{2.9, -1}, cliff: 3}
		var log []string
		cfg := tc.cfg
		cfg.Schedule = Constant(5)
		cfg.Logf = func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }
		res, err := Fit(context.Background(), q, x, y, cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		grad := make([]float64, 2)
		if f, _ := q.Objective(x, y, 4, grad); math.IsNaN(f) || math.IsNaN(grad[0]) || q.p[0] != 0 || q.p[1] != 0 {
			t.Errorf("%s: kept parameters %v (objective %v, gradient %v), want the evaluated start [0 0]", tc.name, q.p, f, grad)
		}
		if res.Rejected != 1 || len(log) != 1 || !strings.Contains(log[0], "kept parameters rejected: gradient entry 0 is NaN") {
			t.Errorf("%s: rejected %d, log %q", tc.name, res.Rejected, log)
		}
	}
	// A finite last step is kept as before, with one extra evaluation.
	q := &quad{p: []float64{0, 0}, c: []float64{2.9, -1}, cliff: 3}
	res, err := Fit(context.Background(), q, x, y, Config{MaxSteps: 3, Schedule: Constant(0.5)})
	if err != nil || res.Rejected != 0 || q.evals != 4 || !(q.p[0] > 1.4) {
		t.Errorf("finite run: err %v, %+v, %d evaluations, params %v", err, res, q.evals, q.p)
	}
}
