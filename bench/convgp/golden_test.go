package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/solvegp/solvegp/gp/train"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/*.ckpt with the current checkpoint writers")

// goldenRunState is the content of testdata/convgp.ckpt (package
// checkpoint's format) and testdata/convgp-v2.ckpt (format v2: the magic
// and the gob-encoded runState), with every field set.
func goldenRunState() *runState {
	return &runState{
		Step: 42, Seconds: 12.5, Params: []float64{0.5, -1.25, 3}, Base: 30,
		Train: &train.Checkpoint{
			Epochs: 1, Batches: 3, Steps: 12, RateScale: 1, Accepted: 12,
			Adam:           train.AdamState{M: []float64{0.1, 0.2, 0.3}, V: []float64{1, 2, 3}, T: 12},
			EpochObjective: -3.5, EpochSteps: 3,
			Random: []byte{1, 2, 3, 4},
		},
		Settings: "model=solvegp m=10 m2=10",
	}
}

// goldenV1 is testdata/convgp-v1.ckpt, the first format: the magic, then
// the step, the seconds and the parameters in little-endian binary.
func goldenV1() []byte {
	var b bytes.Buffer
	b.WriteString(ckptMagicV1)
	binary.Write(&b, binary.LittleEndian, int64(7))
	binary.Write(&b, binary.LittleEndian, 2.25)
	binary.Write(&b, binary.LittleEndian, int64(3))
	binary.Write(&b, binary.LittleEndian, []float64{1, -2, 0.5})
	return b.Bytes()
}

// TestGoldenCheckpoints checks that checkpoint files of all three formats
// still load with every field; -update-golden rewrites those of v1 and of
// the current format.
func TestGoldenCheckpoints(t *testing.T) {
	v1 := filepath.Join("testdata", "convgp-v1.ckpt")
	cur := filepath.Join("testdata", "convgp.ckpt")
	if *updateGolden {
		if err := os.WriteFile(v1, goldenV1(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := saveCheckpoint(cur, goldenRunState()); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"convgp.ckpt", "convgp-v2.ckpt"} {
		path := filepath.Join("testdata", name)
		st, err := loadCheckpoint(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := goldenRunState(); !reflect.DeepEqual(st, want) {
			t.Errorf("%s loads as\n%+v\nwant\n%+v", path, st, want)
		}
	}
	st, err := loadCheckpoint(v1)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&runState{Step: 7, Seconds: 2.25, Params: []float64{1, -2, 0.5}, Base: 7}); !reflect.DeepEqual(st, want) {
		t.Errorf("%s loads as\n%+v\nwant\n%+v", v1, st, want)
	}
}
