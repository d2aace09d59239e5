package gp

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/train"
)

// TestValidateData checks that a label outside the likelihood's support
// stops train.Fit before training, with an error naming the label, rather
// than making every mini-batch that draws it a rejected step.
func TestValidateData(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	for _, lname := range []string{"bernoulli", "poisson", "robustmax"} {
		mod, x, y := prodModel(t, SOLVEGP, false, "matern52", lname, rng, 2, 4, 3, 40)
		if err := mod.ValidateData(x, y); err != nil {
			t.Fatalf("%s: good data refused: %v", lname, err)
		}
		y[17] = 7.5
		err := mod.ValidateData(x, y)
		if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "17") {
			t.Errorf("%s: ValidateData = %v, want an ErrValue naming label 17", lname, err)
		}
		res, err := train.Fit(context.Background(), mod, x, y, train.Config{Epochs: 3, BatchSize: 8})
		if !errors.Is(err, ErrValue) || res.Steps != 0 || res.Rejected != 0 {
			t.Errorf("%s: Fit = %+v, %v; want no step and an ErrValue", lname, res, err)
		}
		y[17] = 0
		if err := mod.ValidateData(mat.DenseCopyOf(x.Slice(0, 40, 0, 1)), y); !errors.Is(err, ErrShape) {
			t.Errorf("%s: one input column of two: ValidateData = %v, want ErrShape", lname, err)
		}
		if err := mod.ValidateData(x, y[:39]); !errors.Is(err, ErrShape) {
			t.Errorf("%s: 39 labels for 40 inputs: ValidateData = %v, want ErrShape", lname, err)
		}
	}
}
