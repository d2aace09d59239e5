package main

import (
	"flag"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/solvegp/solvegp/gp/train"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/train.ckpt with the current checkpoint writer")

// goldenTrainCheckpoint is the content of the golden checkpoints of
// `solvegp train -checkpoint`, with every field set: testdata/train.ckpt
// in package checkpoint's format and testdata/train-legacy.ckpt in the
// format before it (trainCheckpointMagic and the gob-encoded state).
func goldenTrainCheckpoint() *trainCheckpoint {
	f := func(v float64) *float64 { return &v }
	return &trainCheckpoint{
		Version:     trainCheckpointVersion,
		Fingerprint: [32]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32},
		Params:      []float64{0.5, -1.25, 3, 1e-300},
		Train: train.Checkpoint{
			Epochs: 3, Batches: 2, Steps: 14, RateScale: 0.5, Accepted: 4, Failures: 1, Rejected: 2,
			Adam:           train.AdamState{M: []float64{0.1, 0.2, 0.3, 0.4}, V: []float64{1, 2, 3, 4}, T: 14},
			EpochObjective: -12.5, EpochSteps: 2, EpochRejected: 1,
			Best: []float64{0.25, -1, 2.5, 0}, BestEpoch: 2, BestScore: -0.75, SinceImprove: 1,
			Random: []byte{9, 8, 7},
		},
		History: []epochRecord{
			{Epoch: 1, Steps: 5, Bound: f(-20), ValidLL: f(-1.5), ValidRMSE: f(0.8), Seconds: 0.25},
			{Epoch: 2, Steps: 10, Bound: f(-15), ValidLL: f(-1.25), ValidAcc: f(0.9), Seconds: 0.5},
		},
		Seconds: 1.5,
	}
}

// TestGoldenTrainCheckpoint checks that checkpoint files of both formats
// still load with every field; -update-golden rewrites the one of the
// current format.
func TestGoldenTrainCheckpoint(t *testing.T) {
	if *updateGolden {
		if err := saveTrainCheckpoint(filepath.Join("testdata", "train.ckpt"), goldenTrainCheckpoint()); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"train.ckpt", "train-legacy.ckpt"} {
		path := filepath.Join("testdata", name)
		ck, err := loadTrainCheckpoint(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := goldenTrainCheckpoint(); !reflect.DeepEqual(ck, want) {
			t.Errorf("%s loads as\n%+v\nwant\n%+v", path, ck, want)
		}
	}
}
