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
	return append(out, perLatentMeanCases()...)
}

// perLatentMeanCases are the model cases with a mean per latent function:
// robust-max and softmax on three classes and the heteroscedastic
// likelihood's two latent functions, with a constant per latent function,
// a linear mean per latent function, and (three classes) a zero, a
// constant and a linear component.
func perLatentMeanCases() (out []struct {
	c    modelCase
	mean func() gp.MeanFunction
	name string
}) {
	constants := func(L int) func() gp.MeanFunction {
		return func() gp.MeanFunction { return must(mean.NewConstantPerLatent(2, []float64{1.5, -0.5, 0.25}[:L])) }
	}
	linears := func(L int) func() gp.MeanFunction {
		w := [][]float64{{0.8, -2}, {0.1, 0.3}, {-1, 0.5}}
		return func() gp.MeanFunction { return must(mean.NewLinearPerLatent(w[:L], []float64{0.5, -0.2, 1}[:L])) }
	}
	mixed := func() gp.MeanFunction {
		return must(mean.NewPerLatent(must(mean.NewZero(2)), must(mean.NewConstant(2, 0.7)), must(mean.NewLinear([]float64{0.4, -0.6}, 0.1))))
	}
	for _, c := range cases() {
		L := c.lik().NumLatent()
		if L < 2 {
			continue
		}
		means := []struct {
			name string
			f    func() gp.MeanFunction
		}{{"per-latent-constant", constants(L)}, {"per-latent-linear", linears(L)}}
		if L == 3 {
			means = append(means, struct {
				name string
				f    func() gp.MeanFunction
			}{"per-latent-mixed", mixed})
		}
		for _, mn := range means {
			out = append(out, struct {
				c    modelCase
				mean func() gp.MeanFunction
				name string
			}{c, mn.f, fmt.Sprintf("%v-%s-white=%v-%s", c.kind, c.name, c.wh, mn.name)})
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
		{"version 3", edit(curVersion, `"version": 3`), "format version 4"},
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

// Files with inconsistent or premature per-latent means are rejected with
// ErrFormat.
func TestPerLatentMeanFileErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	pc := perLatentMeanCases()
	var mc = pc[len(pc)-1]
	for _, c := range pc {
		if strings.HasSuffix(c.name, "mixed") {
			mc = c
			break
		}
	}
	model := build(t, mc.c, rng, gp.WithMean(mc.mean()))
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
		{"version 4", edit(fmt.Sprintf(`"version": %d`, Version), `"version": 4`), "format version 5"},
		{"nested", edit(`"type": "zero"`, `"type": "per_latent"`), "itself per_latent"},
		{"components on a constant", edit(`"type": "per_latent"`, `"type": "constant"`), "constant mean with components"},
		{"constant edited", regexp.MustCompile(`"constant": [-0-9.e]+`).ReplaceAllString(s, `"constant": 123`), "mean values disagree"},
	} {
		_, err := Unmarshal([]byte(tc.file))
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want ErrFormat containing %q", tc.name, err, tc.msg)
		}
	}
	// Constants only: the components' array holds no other array.
	model = build(t, mc.c, rng, gp.WithMean(must(mean.NewConstantPerLatent(2, []float64{1, 2, 3}))))
	if out, err = Marshal(&Bundle{Model: model}); err != nil {
		t.Fatal(err)
	}
	noComps := regexp.MustCompile(`"components": \[[^\]]*\]`).ReplaceAllString(string(out), `"components": []`)
	if _, err := Unmarshal([]byte(noComps)); err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "needs components") {
		t.Errorf("no components: error %v", err)
	}
}

// meanReaderFixtures are TestPythonReader's files with mean functions
// (softmax's excepted: the reader's class probabilities are Monte Carlo
// estimates).
func meanReaderFixtures(t *testing.T, rng *rand.Rand) []readerFixture {
	t.Helper()
	var out []readerFixture
	for _, mc := range meanCases() {
		if mc.c.name == "softmax" {
			continue
		}
		out = append(out, readerFixture{name: "mean-" + mc.name, b: &Bundle{Model: build(t, mc.c, rng, gp.WithMean(mc.mean()))}})
	}
	return out
}
