package modelfile

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// multiCases returns multi-output bundles: independent outputs (SVGP) and
// an LMC of 3 outputs and 2 latent functions (SOLVE-GP, ODVGP), with
// per-output standardization and target names.
func multiCases(t *testing.T, rng *rand.Rand) map[string]*Bundle {
	ind := func() gp.Likelihood { return must(likelihood.NewIndependentGaussian([]float64{0.2, 0.4, 0.1})) }
	lmc := func() gp.Likelihood {
		return must(likelihood.NewLMC(2, []float64{1, 0.5, -0.3, 2, 0.7, 0.1}, []float64{0.2, 0.4, 0.1}, likelihood.NoiseFloor(1e-5)))
	}
	out := map[string]*Bundle{}
	for name, c := range map[string]modelCase{
		"independent-svgp": {"independent", gp.SVGP, true, nil, ind, nil},
		"lmc-solvegp":      {"lmc", gp.SOLVEGP, false, nil, lmc, nil},
		"lmc-odvgp":        {"lmc", gp.ODVGP, true, nil, lmc, nil},
	} {
		c.kern = func(d int) gp.Kernel { return must(kernel.NewRBF(d, 0.7, 1.3)) }
		out[name] = &Bundle{
			Model: build(t, c, rng),
			Standardizer: &data.Standardizer{XMean: []float64{0.5, -1}, XScale: []float64{2, 0.25}, YScale: 1,
				YMeans: []float64{3, -2, 10}, YScales: []float64{0.5, 4, 2}},
			Meta: Meta{InputNames: []string{"a", "b"}, TargetNames: []string{"u", "v", "w"}},
		}
	}
	return out
}

// TestMultiOutputRoundTrip saves and loads multi-output bundles and checks
// that parameters, mixing matrix, standardization, target names,
// predictions and log predictive densities come back, and that the
// predictions are the standardized model's mapped to each target's units.
func TestMultiOutputRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	dir := t.TempDir()
	for name, b := range multiCases(t, rng) {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".json")
			if err := Save(path, b); err != nil {
				t.Fatal(err)
			}
			got, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			p0 := make([]float64, b.Model.NumParams())
			b.Model.Params(p0)
			p1 := make([]float64, got.Model.NumParams())
			got.Model.Params(p1)
			if !equalBits(p0, p1) {
				t.Error("parameters differ")
			}
			g0 := b.Model.Likelihood().(*likelihood.MultiGaussian)
			g1 := got.Model.Likelihood().(*likelihood.MultiGaussian)
			if g0.IsLMC() != g1.IsLMC() || !equalBits(g0.Mixing(), g1.Mixing()) || got.Model.NumOutputs() != 3 {
				t.Error("likelihood differs")
			}
			if !equalBits(got.Standardizer.YScales, b.Standardizer.YScales) || strings.Join(got.Meta.TargetNames, ",") != "u,v,w" {
				t.Errorf("standardizer %+v, meta %+v", got.Standardizer, got.Meta)
			}
			x := randMatrix(rng, 5, 2)
			want, err := b.Predict(x)
			if err != nil {
				t.Fatal(err)
			}
			have, err := got.Predict(x)
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range []*mat.Dense{want.FMean, want.FVar, want.YMean, want.YVar} {
				h := []*mat.Dense{have.FMean, have.FVar, have.YMean, have.YVar}[i]
				if r, c := m.Dims(); r != 5 || c != 3 || !mat.Equal(m, h) {
					t.Errorf("prediction %d: %d×%d or differs after loading", i, r, c)
				}
			}
			// The same point standardized by hand through the model.
			xs := mat.DenseCopyOf(x)
			if err := b.Standardizer.TransformX(xs); err != nil {
				t.Fatal(err)
			}
			pr, _ := b.Model.Predictor(0)
			ym, yv, err := pr.PredictY(xs)
			if err != nil {
				t.Fatal(err)
			}
			for j := 0; j < 3; j++ {
				m, s := b.Standardizer.YMeans[j], b.Standardizer.YScales[j]
				if d := want.YMean.At(1, j) - (ym.At(1, j)*s + m); math.Abs(d) > 1e-12*math.Max(1, math.Abs(m)) {
					t.Errorf("output %d mean off by %g", j, d)
				}
				if d := want.YVar.At(1, j) - yv.At(1, j)*s*s; math.Abs(d) > 1e-12*want.YVar.At(1, j) {
					t.Errorf("output %d variance off by %g", j, d)
				}
				if want.YVar.At(1, j) <= want.FVar.At(1, j) {
					t.Errorf("output %d: predictive variance %g not above the latent %g", j, want.YVar.At(1, j), want.FVar.At(1, j))
				}
			}
			// Log densities in target units: one output observed at
			// point 0, so its density is that of a Gaussian with the
			// predicted mean and variance.
			y := make([]float64, 15)
			for i := range y {
				y[i] = math.NaN()
			}
			y[1] = 0.3
			y[3], y[4], y[5] = 1, 2, 3
			lp, err := got.LogPredictive(x, y)
			if err != nil {
				t.Fatal(err)
			}
			v, r := want.YVar.At(0, 1), 0.3-want.YMean.At(0, 1)
			if w := -0.5*math.Log(2*math.Pi*v) - 0.5*r*r/v; math.Abs(lp[0]-w) > 1e-10*math.Abs(w) {
				t.Errorf("log predictive %g, want %g", lp[0], w)
			}
			if lp[2] != 0 {
				t.Errorf("log predictive of a point with no observed output: %g", lp[2])
			}
			if _, err := got.LogPredictive(x, y[:5]); !errors.Is(err, gp.ErrShape) {
				t.Errorf("5 targets for 5 points of 3 outputs: %v", err)
			}
		})
	}
}

// TestMultiOutputVersionGuard checks that a version-4 file cannot hold
// the multi-output fields, and that a standardizer of the wrong number of
// outputs is refused when saving.
func TestMultiOutputVersionGuard(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	b := multiCases(t, rng)["lmc-solvegp"]
	buf, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	old := bytes.Replace(buf, []byte(fmt.Sprintf(`"version": %d`, Version)), []byte(`"version": 4`), 1)
	if _, err := Unmarshal(old); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "version 5") {
		t.Errorf("version-4 file with an lmc likelihood: %v", err)
	}
	bad := *b
	std := *b.Standardizer
	std.YMeans, std.YScales = []float64{1, 2}, []float64{1, 1}
	bad.Standardizer = &std
	if _, err := Marshal(&bad); err == nil {
		t.Error("standardizer of 2 outputs for a model of 3 saved")
	}
	single := multiCases(t, rng)["independent-svgp"]
	single.Model = build(t, cases()[0], rng)
	if _, err := Marshal(single); err == nil {
		t.Error("per-output standardizer for a single-output model saved")
	}
}

func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestMultiOutputBadFiles checks that edited multi-output fields are
// errors wrapping ErrFormat, not panics.
func TestMultiOutputBadFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	buf, err := Marshal(multiCases(t, rng)["lmc-solvegp"])
	if err != nil {
		t.Fatal(err)
	}
	s := string(buf)
	for name, edit := range map[string][2]string{
		"outputs":         {`"outputs": 3`, `"outputs": 2`},
		"type":            {`"type": "lmc"`, `"type": "independent_gaussian"`},
		"mixing rows":     {`"rows": 3,` + "\n      \"cols\": 2", `"rows": 2,` + "\n      \"cols\": 2"},
		"y_means":         {`"y_means": [`, `"y_means": [1, `},
		"unknown type":    {`"type": "lmc"`, `"type": "lmc2"`},
		"negative output": {`"outputs": 3`, `"outputs": -3`},
	} {
		if !strings.Contains(s, edit[0]) {
			t.Fatalf("%s: the file has no %q", name, edit[0])
		}
		// Re-signed, so that the edit reaches the field's checks.
		_, err := Unmarshal(resign(t, []byte(strings.Replace(s, edit[0], edit[1], 1))))
		if !errors.Is(err, ErrFormat) || strings.Contains(err.Error(), "sha256") {
			t.Errorf("%s: %v, want an error wrapping ErrFormat from the field's check", name, err)
		}
	}
}
