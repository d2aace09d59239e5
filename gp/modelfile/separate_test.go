package modelfile

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/mean"
)

// separateBundle returns a model of three separate outputs of different
// kinds, kernels and likelihoods (the second with a constant mean), with
// per-output target standardization and names.
func separateBundle(t *testing.T, rng *rand.Rand) *Bundle {
	t.Helper()
	cs := []modelCase{
		{"gauss", gp.SVGP, true, func(d int) gp.Kernel { return must(kernel.NewRBF(d, 0.7, 1.3)) },
			func() gp.Likelihood { return must(likelihood.NewGaussian(0.2)) }, nil},
		{"gauss", gp.SOLVEGP, false, func(d int) gp.Kernel { return must(kernel.NewMatern52(d, 1.1, 0.8)) },
			func() gp.Likelihood { return must(likelihood.NewGaussian(0.05)) }, nil},
		{"studentt", gp.ODVGP, true, func(d int) gp.Kernel { return must(kernel.NewMatern32(d, 0.9, 1.5, kernel.ARD())) },
			func() gp.Likelihood { return must(likelihood.NewStudentT(0.3, 4)) }, nil},
	}
	models := make([]*gp.Model, len(cs))
	for p, c := range cs {
		var extra []gp.Option
		if p == 1 {
			extra = append(extra, gp.WithMean(must(mean.NewConstant(2, 0.4))))
		}
		models[p] = build(t, c, rng, extra...)
	}
	s, err := gp.NewSeparate(models)
	if err != nil {
		t.Fatal(err)
	}
	return &Bundle{
		Separate: s,
		Standardizer: &data.Standardizer{XMean: []float64{0.5, -1}, XScale: []float64{2, 0.25}, YScale: 1,
			YMeans: []float64{3, -2, 10}, YScales: []float64{0.5, 4, 2}},
		Meta: Meta{InputNames: []string{"a", "b"}, TargetNames: []string{"u", "v", "w"}},
	}
}

// TestSeparateRoundTrip saves and loads a model of separate outputs and
// checks that every output's parameters come back bit for bit, that the
// predictions are column p of output p's single-output bundle (its model
// with the input standardization and its target's), and that the log
// predictive density of a row is the sum over its observed outputs.
func TestSeparateRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	b := separateBundle(t, rng)
	path := filepath.Join(t.TempDir(), "sep.json")
	if err := Save(path, b); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Separate == nil || got.Model != nil || got.NumOutputs() != 3 || got.InputDim() != 2 {
		t.Fatalf("loaded bundle: Separate %v, Model %v, %d outputs, %d inputs", got.Separate != nil, got.Model != nil, got.NumOutputs(), got.InputDim())
	}
	w, g := make([]float64, b.Separate.NumParams()), make([]float64, got.Separate.NumParams())
	b.Separate.Params(w)
	got.Separate.Params(g)
	if !equalBits(w, g) {
		t.Fatal("parameters differ after the round trip")
	}
	if strings.Join(got.Meta.TargetNames, ",") != "u,v,w" || got.Standardizer.YMeans[2] != 10 {
		t.Fatalf("meta %+v, standardizer %+v", got.Meta, got.Standardizer)
	}
	x := randMatrix(rng, 6, 2)
	pred, err := got.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, 6*3)
	for i := range y {
		y[i] = 3 * rng.NormFloat64()
		if i%4 == 1 {
			y[i] = math.NaN()
		}
	}
	lp, err := got.LogPredictive(x, y)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 6)
	for p := 0; p < 3; p++ {
		ob := &Bundle{Model: b.Separate.Output(p), Standardizer: &data.Standardizer{XMean: []float64{0.5, -1}, XScale: []float64{2, 0.25},
			YMean: b.Standardizer.YMeans[p], YScale: b.Standardizer.YScales[p]}}
		wp, err := ob.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 6; i++ {
			for k, pair := range [][2]*mat.Dense{{pred.FMean, wp.FMean}, {pred.FVar, wp.FVar}, {pred.YMean, wp.YMean}, {pred.YVar, wp.YVar}} {
				if pair[0].At(i, p) != pair[1].At(i, 0) {
					t.Fatalf("output %d row %d column %d: %v, its bundle %v", p, i, k, pair[0].At(i, p), pair[1].At(i, 0))
				}
			}
			if v := y[i*3+p]; !math.IsNaN(v) {
				l, err := ob.LogPredictive(x.Slice(i, i+1, 0, 2), []float64{v})
				if err != nil {
					t.Fatal(err)
				}
				want[i] += l[0]
			}
		}
	}
	for i := range want {
		if math.Abs(lp[i]-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
			t.Errorf("row %d: log predictive %v, sum of the outputs' %v", i, lp[i], want[i])
		}
	}
	// Saving the loaded bundle gives the same file.
	b1, _ := Marshal(b)
	b2, _ := Marshal(got)
	if !bytes.Equal(b1, b2) {
		t.Error("the loaded bundle saves to a different file")
	}
}

// resignTop recomputes the top-level model_sha256 of a separate file (the
// last one in the document; the outputs' own come first).
func resignTop(t *testing.T, file []byte) []byte {
	t.Helper()
	sum, err := modelDigest(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`"model_sha256": "[0-9a-f]*"`)
	locs := re.FindAllIndex(file, -1)
	if len(locs) == 0 {
		t.Fatal("no model_sha256")
	}
	l := locs[len(locs)-1]
	return append(append(append([]byte(nil), file[:l[0]]...), []byte(`"model_sha256": "`+sum+`"`)...), file[l[1]:]...)
}

// TestSeparateBadFiles checks that edited or inconsistent files of
// separate outputs, and bundles Marshal cannot write, are errors.
func TestSeparateBadFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	b := separateBundle(t, rng)
	buf, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Unmarshal(buf); err != nil {
		t.Fatal(err)
	}
	edits := map[string]func([]byte) []byte{
		"version 5": func(f []byte) []byte {
			return resignTop(t, bytes.Replace(f, []byte(fmt.Sprintf(`"version": %d`, Version)), []byte(`"version": 5`), 1))
		},
		"unsigned edit": func(f []byte) []byte {
			return bytes.Replace(f, []byte("0.5, 4, 2"), []byte("0.25, 4, 2"), 1)
		},
		"three target means, two scales": func(f []byte) []byte {
			return resignTop(t, bytes.Replace(f, []byte("0.5, 4, 2"), []byte("4, 2"), 1))
		},
		"y_scale not 1": func(f []byte) []byte {
			return resignTop(t, bytes.Replace(f, []byte(`"y_scale": 1`), []byte(`"y_scale": 2`), 1))
		},
		"no outputs": func(f []byte) []byte {
			re := regexp.MustCompile(`(?s)"outputs": \[.*\],\n  "standardizer"`)
			return resignTop(t, re.ReplaceAll(f, []byte(`"outputs": [],`+"\n"+`  "standardizer"`)))
		},
		"unknown field": func(f []byte) []byte {
			return resignTop(t, bytes.Replace(f, []byte(`"kind": "separate"`), []byte(`"kind": "separate", "extra": 1`), 1))
		},
	}
	for name, edit := range edits {
		if _, err := Unmarshal(edit(buf)); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// An output with a standardizer of its own.
	sub, _ := Marshal(&Bundle{Model: b.Separate.Output(0), Standardizer: &data.Standardizer{XMean: []float64{0, 0}, XScale: []float64{1, 1}, YScale: 1}})
	if _, err := unmarshalOutput(sub, Version); !errors.Is(err, ErrFormat) {
		t.Errorf("output with its own standardizer: %v", err)
	}
	// Bundles Marshal refuses.
	both := *b
	both.Model = b.Separate.Output(0)
	if _, err := Marshal(&both); err == nil {
		t.Error("bundle with both Model and Separate saved")
	}
	if _, err := both.Predictor(0); err == nil {
		t.Error("predictor of a bundle with both Model and Separate")
	}
	col := *b
	col.CollapsedBound = "standard"
	if _, err := Marshal(&col); err == nil {
		t.Error("separate bundle with a collapsed bound saved")
	}
	st := *b.Standardizer
	st.YMean = 1
	ym := *b
	ym.Standardizer = &st
	if _, err := Marshal(&ym); err == nil {
		t.Error("separate bundle with a single target mean saved")
	}
	bern, _ := gp.NewSVGP(must(kernel.NewRBF(2, 1, 1)), must(likelihood.NewBernoulli()), randMatrix(rng, 3, 2))
	s2, _ := gp.NewSeparate([]*gp.Model{b.Separate.Output(0), bern})
	lab := &Bundle{Separate: s2, Standardizer: &data.Standardizer{XMean: []float64{0, 0}, XScale: []float64{1, 1}, YScale: 1,
		YMeans: []float64{1, 1}, YScales: []float64{1, 1}}}
	if _, err := Marshal(lab); err == nil {
		t.Error("standardized Bernoulli labels saved")
	}
}
