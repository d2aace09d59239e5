package main

import (
	"flag"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/solvegp/solvegp/gp/train"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/regression.gob with the current checkpoint writer")

// goldenCheckpoint is the content of the golden checkpoints of a run with
// the training loop's state and every field set.
func goldenCheckpoint() *checkpoint {
	return &checkpoint{
		Key: "toy|SVGP 6|0|epochs=5", Epochs: 2, Steps: 8, TrainSeconds: 3.5, InitSeconds: 0.25,
		FinalObjective: -10.5, Resumed: []int{1}, ResumedExact: []int{2},
		ResumedRandomRestarted: []int{3}, ResumedExactSteps: []int{4},
		Params: []float64{0.5, -1.25, 3},
		Train: &train.Checkpoint{
			Epochs: 2, Steps: 8, RateScale: 1, Accepted: 8,
			Adam:      train.AdamState{M: []float64{0.1, 0.2, 0.3}, V: []float64{1, 2, 3}, T: 8},
			Best:      []float64{0.5, -1, 3},
			BestEpoch: 1, BestScore: -0.5,
		},
	}
}

// TestGoldenCheckpoint checks that checkpoint files still load with every
// field: testdata/regression.gob in package checkpoint's format, and two
// of the earlier format (a bare gob-encoded checkpoint), with and without
// the training loop's state (the latter from before Train existed).
// -update-golden rewrites the one of the current format.
func TestGoldenCheckpoint(t *testing.T) {
	full := goldenCheckpoint()
	noTrain := goldenCheckpoint()
	noTrain.Train, noTrain.ResumedRandomRestarted, noTrain.ResumedExactSteps = nil, nil, nil
	if *updateGolden {
		if err := saveCheckpoint(filepath.Join("testdata", "regression.gob"), full); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]*checkpoint{"regression.gob": full, "regression-gob.gob": full, "regression-notrain.gob": noTrain} {
		path := filepath.Join("testdata", name)
		c, err := loadCheckpoint(path, want.Key, len(want.Params))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c, want) {
			t.Errorf("%s loads as\n%+v\nwant\n%+v", path, c, want)
		}
	}
}
