package checkpoint

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp/train"
)

type state struct {
	Params []float64
	Train  *train.Checkpoint
	Note   string
}

func TestRoundTrip(t *testing.T) {
	want := state{Params: []float64{1, -2.5}, Train: &train.Checkpoint{Epochs: 2, Steps: 9, RateScale: 0.5,
		Adam: train.AdamState{M: []float64{0.1, 0.2}, V: []float64{1, 2}, T: 9}}, Note: "x"}
	var buf bytes.Buffer
	if err := Write(&buf, "prog", &want); err != nil {
		t.Fatal(err)
	}
	if !Is(buf.Bytes()) {
		t.Error("Is: false for a checkpoint")
	}
	var got state
	if err := Read(bytes.NewReader(buf.Bytes()), "prog", &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read %+v, want %+v", got, want)
	}
	if err := Read(bytes.NewReader(buf.Bytes()), "other", &got); err == nil || !strings.Contains(err.Error(), `"prog"`) {
		t.Errorf("another program's checkpoint: %v", err)
	}
	if err := Read(strings.NewReader("convgp-ckpt-v2\n..."), "prog", &got); !errors.Is(err, ErrNotCheckpoint) {
		t.Errorf("another format: %v", err)
	}
	if err := Read(bytes.NewReader(buf.Bytes()[:len(buf.Bytes())-3]), "prog", &got); err == nil {
		t.Error("truncated checkpoint: no error")
	}
}
