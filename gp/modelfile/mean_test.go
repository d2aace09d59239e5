package modelfile

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/mean"
)

// meanCases are the model cases with a mean function: every kind, whitened
// and not, and each mean type.
func meanCases() (out []struct {
	c    modelCase
	mean func() gp.MeanFunction
	name string
}) {
	means := []struct {
		name string
		f    func() gp.MeanFunction
	}{
		{"zero", func() gp.MeanFunction { return must(mean.NewZero(2)) }},
		{"constant", func() gp.MeanFunction { return must(mean.NewConstant(2, 1.5)) }},
		{"linear", func() gp.MeanFunction { return must(mean.NewLinear([]float64{0.8, -2}, 0.5)) }},
	}
	for _, c := range cases()[:6] { // the Gaussian RBF cases of every kind
		for _, mn := range means {
			out = append(out, struct {
				c    modelCase
				mean func() gp.MeanFunction
				name string
			}{c, mn.f, fmt.Sprintf("%v-white=%v-%s", c.kind, c.wh, mn.name)})
		}
	}
	return out
}

// A model with a mean function survives Save and Load: same parameters,
// same mean type, and bit-identical predictions.
func TestMeanRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, mc := range meanCases() {
		t.Run(mc.name, func(t *testing.T) {
			model := build(t, mc.c, rng, gp.WithMean(mc.mean()))
			var buf bytes.Buffer
			if err := Write(&buf, &Bundle{Model: model}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), `"mean": {`) {
				t.Fatal("no mean in the file")
			}
			b, err := Read(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%T", b.Model.Mean()) != fmt.Sprintf("%T", model.Mean()) {
				t.Fatalf("mean %T loaded as %T", model.Mean(), b.Model.Mean())
			}
			p0, p1 := make([]float64, model.NumParams()), make([]float64, b.Model.NumParams())
			model.Params(p0)
			b.Model.Params(p1)
			if len(p0) != len(p1) {
				t.Fatalf("%d parameters loaded as %d", len(p0), len(p1))
			}
			for i := range p0 {
				if math.Float64bits(p0[i]) != math.Float64bits(p1[i]) {
					t.Fatalf("parameter %d: %v loaded as %v", i, p0[i], p1[i])
				}
			}
			x := randMatrix(rng, 9, 2)
			m0, v0, err := model.PredictF(x)
			if err != nil {
				t.Fatal(err)
			}
			m1, v1, err := b.Model.PredictF(x)
			if err != nil {
				t.Fatal(err)
			}
			if !bitsEqual(m0, m1) || !bitsEqual(v0, v1) {
				t.Error("predictions of the loaded model differ")
			}
		})
	}
}

func bitsEqual(a, b *mat.Dense) bool {
	ra, rb := a.RawMatrix().Data, b.RawMatrix().Data
	if len(ra) != len(rb) {
		return false
	}
	for i := range ra {
		if math.Float64bits(ra[i]) != math.Float64bits(rb[i]) {
			return false
		}
	}
	return true
}

// Files with inconsistent or premature mean fields are rejected with
// ErrFormat.
func TestMeanFileErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	model := build(t, cases()[5], rng, gp.WithMean(must(mean.NewLinear([]float64{0.8, -2}, 0.5))))
	out, err := Marshal(&Bundle{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	edit := func(old, new string) string {
		if !strings.Contains(s, old) {
			t.Fatalf("the file has no %q", old)
		}
		return strings.Replace(s, old, new, 1)
	}
	for _, tc := range []struct{ name, file, msg string }{
		{"version 3", edit(`"version": 5`, `"version": 3`), "format version 4"},
		{"unknown type", edit(`"type": "linear"`, `"type": "quadratic"`), "unknown mean type"},
		{"bias edited", regexp.MustCompile(`"bias": [-0-9.e]+`).ReplaceAllString(s, `"bias": 123`), "mean values disagree"},
		{"no layout.mean", regexp.MustCompile(`\s*"mean": [0-9]+,`).ReplaceAllString(s, ``), "layout"},
		{"constant with weights", edit(`"type": "linear"`, `"type": "constant"`), "constant mean needs"},
	} {
		_, err := Unmarshal([]byte(tc.file))
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want ErrFormat containing %q", tc.name, err, tc.msg)
		}
	}
}

// meanReaderFixtures are TestPythonReader's files with mean functions.
func meanReaderFixtures(t *testing.T, rng *rand.Rand) []readerFixture {
	t.Helper()
	var out []readerFixture
	for _, mc := range meanCases() {
		out = append(out, readerFixture{name: "mean-" + mc.name, b: &Bundle{Model: build(t, mc.c, rng, gp.WithMean(mc.mean()))}})
	}
	return out
}
