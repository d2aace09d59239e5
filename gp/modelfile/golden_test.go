package modelfile

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
	"github.com/solvegp/solvegp/gp/data"
)

// updateGolden rewrites the golden model files and their predictions:
// go test ./gp/modelfile -run TestGolden -update-golden. Do so only to
// add a file: the existing ones stand for the files users already have,
// which must keep loading as they are.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden-*.json")

// goldenPredictions is what a golden model predicted when it was written.
type goldenPredictions struct {
	X                        [][]float64
	FMean, FVar, YMean, YVar [][]float64 `json:",omitempty"`
}

// goldenCases are the golden model files: one of each model kind, with a
// standardizer and metadata, and a non-Gaussian likelihood.
var goldenCases = []struct {
	file string
	kind gp.Kind
	wh   bool
	name string // of the modelCase in cases()
}{
	{"golden-svgp.json", gp.SVGP, false, "gauss-rbf"},
	{"golden-odvgp-whitened.json", gp.ODVGP, true, "gauss-rbf"},
	{"golden-solvegp-sum-product.json", gp.SOLVEGP, false, "sum-product"},
	{"golden-solvegp-bernoulli.json", gp.SOLVEGP, true, "bernoulli"},
}

func rows(a *mat.Dense) [][]float64 {
	if a == nil {
		return nil
	}
	r, _ := a.Dims()
	out := make([][]float64, r)
	for i := range out {
		out[i] = mat.Row(nil, i, a)
	}
	return out
}

// TestGolden loads the committed model files (testdata/golden-*.json) and
// checks that they predict what they predicted when they were written, so
// that a change of the format or the reader keeps existing files working.
// Tolerances allow for a different summation order or fused
// multiply-adds on another architecture, not for a misread parameter.
func TestGolden(t *testing.T) {
	if *updateGolden {
		writeGolden(t)
	}
	for _, g := range goldenCases {
		t.Run(g.file, func(t *testing.T) {
			path := filepath.Join("testdata", g.file)
			b, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if b.Model.Kind() != g.kind || b.Model.Whitened() != g.wh {
				t.Fatalf("kind %v whitened %v, want %v %v", b.Model.Kind(), b.Model.Whitened(), g.kind, g.wh)
			}
			var want goldenPredictions
			js, err := os.ReadFile(path[:len(path)-len(".json")] + ".pred.json")
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(js, &want); err != nil {
				t.Fatal(err)
			}
			x := mat.NewDense(len(want.X), len(want.X[0]), nil)
			for i, r := range want.X {
				x.SetRow(i, r)
			}
			got, err := b.Predict(x)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name string
				got  *mat.Dense
				want [][]float64
			}{{"f_mean", got.FMean, want.FMean}, {"f_var", got.FVar, want.FVar}, {"y_mean", got.YMean, want.YMean}, {"y_var", got.YVar, want.YVar}} {
				g := rows(c.got)
				if len(g) != len(c.want) {
					t.Fatalf("%s: %d rows, want %d", c.name, len(g), len(c.want))
				}
				for i := range g {
					for j := range g[i] {
						if d := math.Abs(g[i][j] - c.want[i][j]); !(d <= 1e-9*math.Max(1, math.Abs(c.want[i][j]))) {
							t.Errorf("%s[%d][%d] = %v, want %v", c.name, i, j, g[i][j], c.want[i][j])
						}
					}
				}
			}
		})
	}
}

// writeGolden writes the golden model files and their predictions.
func writeGolden(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 35))
	for _, g := range goldenCases {
		var c modelCase
		for _, mc := range cases() {
			if mc.kind == g.kind && mc.wh == g.wh && mc.name == g.name {
				c = mc
			}
		}
		if c.kern == nil {
			t.Fatalf("no case %v %v %s", g.kind, g.wh, g.name)
		}
		model := build(t, c, rng)
		std := &data.Standardizer{XMean: []float64{0.25, -1}, XScale: []float64{2, 0.5}, YMean: 0, YScale: 1}
		if g.name != "bernoulli" {
			std.YMean, std.YScale = 3.5, 0.25
		}
		b := &Bundle{Model: model, Standardizer: std,
			Meta: Meta{InputNames: []string{"a", "b"}, TargetName: "y", Info: map[string]string{"written by": "TestGolden -update-golden"}}}
		path := filepath.Join("testdata", g.file)
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := Save(path, b); err != nil {
			t.Fatal(err)
		}
		x := randMatrix(rng, 7, 2)
		p, err := b.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		js, err := json.MarshalIndent(goldenPredictions{X: rows(x), FMean: rows(p.FMean), FVar: rows(p.FVar), YMean: rows(p.YMean), YVar: rows(p.YVar)}, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path[:len(path)-len(".json")]+".pred.json", append(js, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
