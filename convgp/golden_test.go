package convgp

import (
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
)

// updateGolden rewrites the golden model file and its predictions:
// go test ./convgp -run TestGoldenModel -update-golden. Do so only to add
// a file: the existing one stands for the files users already have, which
// must keep loading as they are.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden-*")

const (
	goldenModel       = "testdata/golden-deep-solvegp.cgp"
	goldenPredictions = "testdata/golden-deep-solvegp.pred.json"
)

// goldenPred is what the golden model predicted when it was written: the
// class probabilities of the images X (one image per row).
type goldenPred struct {
	Samples, Batch int
	X, Probs       [][]float64
}

// TestGoldenModel loads a committed model file (a two-layer SOLVE-GP with
// TICK and a linear mean) and checks that it predicts what it predicted
// when it was written, so that a change of the format or the reader keeps
// existing files working. The tolerance allows for another
// summation order or fused multiply-adds, not for a misread parameter.
func TestGoldenModel(t *testing.T) {
	if *updateGolden {
		writeGoldenModel(t)
	}
	d, info, err := LoadModel(goldenModel)
	if err != nil {
		t.Fatal(err)
	}
	if info["written by"] == "" || d.Config().Kind != gp.SOLVEGP || len(d.Config().Hidden) != 1 || !d.Config().Output.TICK {
		t.Fatalf("info %v, configuration %+v", info, d.Config())
	}
	js, err := os.ReadFile(goldenPredictions)
	if err != nil {
		t.Fatal(err)
	}
	var want goldenPred
	if err := json.Unmarshal(js, &want); err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(len(want.X), len(want.X[0]), nil)
	for i, r := range want.X {
		x.SetRow(i, r)
	}
	got, err := d.Predict(x, want.Samples, want.Batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range want.Probs {
		for j, v := range r {
			if g := got.At(i, j); !(math.Abs(g-v) <= 1e-9*math.Max(1, math.Abs(v))) {
				t.Errorf("probability [%d][%d] = %v, want %v", i, j, g, v)
			}
		}
	}
}

func writeGoldenModel(t *testing.T) {
	d, x, _ := tinyDeep(t, gp.SOLVEGP, 1, true, true, rand.New(rand.NewPCG(31, 35)))
	if err := os.MkdirAll(filepath.Dir(goldenModel), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := SaveModel(goldenModel, d, map[string]string{"written by": "TestGoldenModel -update-golden"}); err != nil {
		t.Fatal(err)
	}
	want := goldenPred{Samples: 3, Batch: 2}
	p, err := d.Predict(x, want.Samples, want.Batch)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := x.Dims()
	for i := 0; i < n; i++ {
		want.X = append(want.X, mat.Row(nil, i, x))
		want.Probs = append(want.Probs, mat.Row(nil, i, p))
	}
	js, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goldenPredictions, append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
