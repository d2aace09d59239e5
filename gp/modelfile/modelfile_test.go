package modelfile

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/internal/floats"
)

func randMatrix(rng *rand.Rand, r, c int) *mat.Dense {
	a := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			a.Set(i, j, 4*rng.Float64()-2)
		}
	}
	return a
}

type modelCase struct {
	name string
	kind gp.Kind
	wh   bool
	kern func(d int) gp.Kernel
	lik  func() gp.Likelihood
	y    func(rng *rand.Rand) float64
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func cases() []modelCase {
	gauss := func() gp.Likelihood { return must(likelihood.NewGaussian(0.3, likelihood.NoiseFloor(1e-5))) }
	real := func(rng *rand.Rand) float64 { return rng.NormFloat64() }
	rbf := func(d int) gp.Kernel { return must(kernel.NewRBF(d, 0.7, 1.3)) }
	var out []modelCase
	for _, kind := range []gp.Kind{gp.SVGP, gp.ODVGP, gp.SOLVEGP} {
		for _, wh := range []bool{false, true} {
			out = append(out, modelCase{"gauss-rbf", kind, wh, rbf, gauss, real})
		}
	}
	out = append(out,
		modelCase{"ard-matern32", gp.SOLVEGP, true, func(d int) gp.Kernel {
			return must(kernel.NewMatern32(d, 1, 1, kernel.Lengthscales([]float64{0.5, 2})))
		}, gauss, real},
		modelCase{"sum-product", gp.SOLVEGP, false, func(d int) gp.Kernel {
			a := must(kernel.NewMatern12(d, 1, 0.5))
			b := must(kernel.NewMatern52(d, 2, 1, kernel.ARD()))
			c := must(kernel.NewRBF(d, 0.3, 1))
			return must(kernel.NewSum(a, must(kernel.NewProduct(b, c))))
		}, gauss, real},
		modelCase{"bernoulli", gp.SOLVEGP, true, rbf, func() gp.Likelihood { return must(likelihood.NewBernoulli()) },
			func(rng *rand.Rand) float64 { return float64(rng.IntN(2)) }},
		modelCase{"poisson", gp.ODVGP, false, rbf, func() gp.Likelihood { return must(likelihood.NewPoisson()) },
			func(rng *rand.Rand) float64 { return float64(rng.IntN(5)) }},
		modelCase{"robustmax", gp.SOLVEGP, false, rbf, func() gp.Likelihood {
			return must(likelihood.NewRobustMax(3, likelihood.Epsilon(0.01), likelihood.QuadraturePoints(13)))
		}, func(rng *rand.Rand) float64 { return float64(rng.IntN(3)) }},
		modelCase{"softmax", gp.SVGP, true, rbf, func() gp.Likelihood {
			return must(likelihood.NewSoftmax(3, likelihood.Samples(7)))
		}, func(rng *rand.Rand) float64 { return float64(rng.IntN(3)) }},
		modelCase{"studentt", gp.SOLVEGP, true, rbf, func() gp.Likelihood {
			return must(likelihood.NewStudentT(0.4, 3.5, likelihood.QuadraturePoints(17), likelihood.DegreesOfFreedomFloor(1)))
		}, real},
		modelCase{"heteroscedastic", gp.ODVGP, false, rbf, func() gp.Likelihood { return must(likelihood.NewHeteroscedastic()) }, real},
	)
	return append(out, moreKernelCases(gauss, real)...)
}

// build returns a model with random (but valid) parameters.
func build(t *testing.T, c modelCase, rng *rand.Rand, extra ...gp.Option) *gp.Model {
	t.Helper()
	const d, m, m2 = 2, 4, 3
	z := randMatrix(rng, m, d)
	o := randMatrix(rng, m2, d)
	opts := append([]gp.Option{gp.WithWhitening(c.wh)}, extra...)
	var (
		model *gp.Model
		err   error
	)
	switch c.kind {
	case gp.SVGP:
		model, err = gp.NewSVGP(c.kern(d), c.lik(), z, opts...)
	case gp.ODVGP:
		model, err = gp.NewODVGP(c.kern(d), c.lik(), z, o, opts...)
	default:
		model, err = gp.NewSOLVEGP(c.kern(d), c.lik(), z, o, opts...)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Move every parameter a little, so that the round trip is tested on
	// values that are not the constructor's.
	p := make([]float64, model.NumParams())
	model.Params(p)
	for i := range p {
		p[i] += 0.1 * rng.NormFloat64()
	}
	if err := model.SetParams(p); err != nil {
		t.Fatal(err)
	}
	return model
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases() {
		t.Run(c.kind.String()+"-"+c.name, func(t *testing.T) {
			model := build(t, c, rng)
			std := &data.Standardizer{XMean: []float64{0.25, -1}, XScale: []float64{2, 0.5}, YMean: 0, YScale: 1}
			if _, ok := model.Likelihood().(*likelihood.Gaussian); ok {
				std.YMean, std.YScale = 3.5, 0.25
			}
			b := &Bundle{Model: model, Standardizer: std, Meta: Meta{InputNames: []string{"a", "b"}, TargetName: "y", Info: map[string]string{"k": "v"}}}
			path := filepath.Join(t.TempDir(), "m.json")
			if err := Save(path, b); err != nil {
				t.Fatal(err)
			}
			got, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			m2 := got.Model
			if m2.Kind() != model.Kind() || m2.Whitened() != model.Whitened() {
				t.Fatalf("kind/whitening %v/%v, want %v/%v", m2.Kind(), m2.Whitened(), model.Kind(), model.Whitened())
			}
			p1 := make([]float64, model.NumParams())
			p2 := make([]float64, m2.NumParams())
			model.Params(p1)
			m2.Params(p2)
			if !floats.EqualBits(p1, p2) {
				t.Fatalf("parameters differ after the round trip")
			}
			if got.Meta.TargetName != "y" || got.Meta.Info["k"] != "v" || len(got.Meta.InputNames) != 2 {
				t.Fatalf("meta %+v", got.Meta)
			}
			if !floats.EqualBits(got.Standardizer.XScale, std.XScale) || got.Standardizer.YMean != std.YMean {
				t.Fatalf("standardizer %+v", got.Standardizer)
			}
			// Predictions are identical bit for bit.
			xt := randMatrix(rng, 9, 2)
			a, err := b.Predict(xt)
			if err != nil {
				t.Fatal(err)
			}
			bb, err := got.Predict(xt)
			if err != nil {
				t.Fatal(err)
			}
			for _, pair := range [][2]*mat.Dense{{a.FMean, bb.FMean}, {a.FVar, bb.FVar}, {a.YMean, bb.YMean}} {
				if !floats.EqualBits(pair[0].RawMatrix().Data, pair[1].RawMatrix().Data) {
					t.Fatalf("predictions differ after the round trip")
				}
			}
			// Saving the loaded model gives the same bytes.
			b1, _ := Marshal(b)
			b2, err := Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b1, b2) {
				t.Fatalf("re-encoded file differs")
			}
			y := make([]float64, 9)
			for i := range y {
				y[i] = c.y(rng)
			}
			l1, err := b.LogPredictive(xt, y)
			if err != nil {
				t.Fatal(err)
			}
			l2, _ := got.LogPredictive(xt, y)
			if c.name != "softmax" && !floats.EqualBits(l1, l2) {
				t.Fatalf("log predictive differs: %v vs %v", l1, l2)
			}
		})
	}
}

// TestNoiseAtFloorRoundTrip checks that a Gaussian model whose noise an
// optimizer pushed down to its floor (a legal state: σ² = floor +
// softplus(u) for any u) loads again after Save.
func TestNoiseAtFloorRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	model := build(t, cases()[4], rng) // SOLVE-GP, Gaussian
	p := make([]float64, model.NumParams())
	model.Params(p)
	p[model.Layout().Lik] = -100
	if err := model.SetParams(p); err != nil {
		t.Fatal(err)
	}
	g := model.Likelihood().(*likelihood.Gaussian)
	if g.NoiseVariance() != g.NoiseFloor() {
		t.Fatalf("noise %g, want the floor %g", g.NoiseVariance(), g.NoiseFloor())
	}
	path := filepath.Join(t.TempDir(), "m.json")
	if err := Save(path, &Bundle{Model: model}); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p2 := make([]float64, got.Model.NumParams())
	got.Model.Params(p2)
	if !floats.EqualBits(p, p2) {
		t.Fatal("parameters differ after the round trip")
	}
	// A noise_variance below the floor is still refused.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	field := regexp.MustCompile(`"noise_variance": *[^,}\s]+`)
	if len(field.FindAllIndex(b, -1)) != 1 {
		t.Fatalf("noise_variance not found once in the file")
	}
	bad := field.ReplaceAllString(string(b), `"noise_variance": 1e-7`)
	if _, err := Unmarshal([]byte(bad)); err == nil {
		t.Error("noise_variance below the floor accepted")
	}
}

// twoLatent is a likelihood of a user's with two latent functions per
// point (only its shapes matter: the Gaussian's elementwise predictions
// serve for both).
type twoLatent struct{ *likelihood.Gaussian }

func (twoLatent) NumLatent() int { return 2 }

// TestPredictBadStandardizer checks that Predict and LogPredictive refuse a
// caller-made Standardizer that Save would refuse, and report predictions
// that overflow only once the target scale is undone.
func TestPredictBadStandardizer(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 2))
	model := build(t, cases()[4], rng) // SOLVE-GP, Gaussian
	x := randMatrix(rng, 3, 2)
	y := []float64{0.1, 0.2, 0.3}
	good := func() *data.Standardizer {
		return &data.Standardizer{XMean: []float64{0, 1}, XScale: []float64{1, 2}, YMean: 3, YScale: 2}
	}
	if _, err := (&Bundle{Model: model, Standardizer: good()}).Predict(x); err != nil {
		t.Fatal(err)
	}
	var nilX *mat.Dense
	for _, in := range []mat.Matrix{nil, nilX} {
		if _, err := (&Bundle{Model: model}).Predict(in); !errors.Is(err, gp.ErrShape) {
			t.Errorf("Predict(%#v): %v, want gp.ErrShape", in, err)
		}
		if _, err := (&Bundle{Model: model}).LogPredictive(in, nil); !errors.Is(err, gp.ErrShape) {
			t.Errorf("LogPredictive(%#v): %v, want gp.ErrShape", in, err)
		}
	}
	for _, tc := range []struct {
		name  string
		spoil func(s *data.Standardizer)
	}{
		{"NaN target mean", func(s *data.Standardizer) { s.YMean = math.NaN() }},
		{"zero target scale", func(s *data.Standardizer) { s.YScale = 0 }},
		{"one input scale", func(s *data.Standardizer) { s.XScale = s.XScale[:1] }},
		{"negative input scale", func(s *data.Standardizer) { s.XScale[1] = -1 }},
		{"Inf input mean", func(s *data.Standardizer) { s.XMean[0] = math.Inf(1) }},
	} {
		std := good()
		tc.spoil(std)
		b := &Bundle{Model: model, Standardizer: std}
		if _, err := b.Predict(x); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: Predict: %v, want ErrFormat", tc.name, err)
		}
		if _, err := b.LogPredictive(x, y); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: LogPredictive: %v, want ErrFormat", tc.name, err)
		}
	}
	// A likelihood of the caller's own, which Save cannot write, still
	// predicts with a standardizer; a built-in classifier's targets cannot
	// be standardized.
	type ownLik struct{ *likelihood.Gaussian }
	own, err := gp.NewSVGP(must(kernel.NewRBF(2, 1, 1)), ownLik{must(likelihood.NewGaussian(0.2))}, randMatrix(rng, 3, 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Bundle{Model: own, Standardizer: good()}).Predict(x); err != nil {
		t.Errorf("own likelihood with a standardizer: %v", err)
	}
	// One of the caller's with two latent functions (say a mean and a log
	// noise variance) cannot have its columns mapped to target units.
	own2, err := gp.NewSVGP(must(kernel.NewRBF(2, 1, 1)), twoLatent{must(likelihood.NewGaussian(0.2))}, randMatrix(rng, 3, 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Bundle{Model: own2, Standardizer: good()}).Predict(x); !errors.Is(err, ErrFormat) {
		t.Errorf("own likelihood with two latent functions and a standardized target: %v, want ErrFormat", err)
	}
	unit := good()
	unit.YMean, unit.YScale = 0, 1
	if _, err := (&Bundle{Model: own2, Standardizer: unit}).Predict(x); err != nil {
		t.Errorf("own likelihood with two latent functions, target not standardized: %v", err)
	}
	cls, err := gp.NewSVGP(must(kernel.NewRBF(2, 1, 1)), must(likelihood.NewBernoulli()), randMatrix(rng, 3, 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Bundle{Model: cls, Standardizer: good()}).Predict(x); !errors.Is(err, ErrFormat) {
		t.Errorf("Bernoulli with a standardized target: %v, want ErrFormat", err)
	}
	// A finite but vast target scale overflows the variances in target
	// units: an error, not +Inf.
	std := good()
	std.YScale = 1e200
	if _, err := (&Bundle{Model: model, Standardizer: std}).Predict(x); !errors.Is(err, gp.ErrValue) {
		t.Errorf("target scale 1e200: Predict: %v, want gp.ErrValue", err)
	}
}

// TestPredictUnits checks Predict against the model's own predictions
// mapped back by hand.
func TestPredictUnits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	model := build(t, cases()[5], rng)
	std := &data.Standardizer{XMean: []float64{1, 2}, XScale: []float64{3, 4}, YMean: 10, YScale: 2}
	b := &Bundle{Model: model, Standardizer: std}
	x := randMatrix(rng, 5, 2)
	pred, err := b.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	xs := mat.DenseCopyOf(x)
	std.TransformX(xs)
	fm, fv, _ := model.PredictF(xs)
	noise := model.Likelihood().(*likelihood.Gaussian).NoiseVariance()
	for i := 0; i < 5; i++ {
		if d := math.Abs(pred.FMean.At(i, 0) - (fm.At(i, 0)*2 + 10)); d > 1e-12 {
			t.Fatalf("mean %d off by %g", i, d)
		}
		if d := math.Abs(pred.YVar.At(i, 0) - 4*(fv.At(i, 0)+noise)); d > 1e-12 {
			t.Fatalf("variance %d off by %g", i, d)
		}
	}
	if x.At(0, 0) == xs.At(0, 0) {
		t.Fatalf("Predict modified nothing or the caller's x")
	}
	if _, err := b.Predict(randMatrix(rng, 2, 3)); !errors.Is(err, gp.ErrShape) {
		t.Fatalf("wrong width: %v", err)
	}
	x.Set(1, 1, math.NaN())
	if _, err := b.Predict(x); !errors.Is(err, gp.ErrValue) {
		t.Fatalf("NaN input: %v", err)
	}
	// Inputs whose squared distances would overflow in the kernel (found
	// by FuzzCSVPredict: they made every prediction of the batch NaN).
	x.Set(1, 1, 1e200)
	if _, err := b.Predict(x); !errors.Is(err, gp.ErrValue) || !strings.Contains(err.Error(), "beyond") {
		t.Fatalf("huge input: %v", err)
	}
	// The error gives the position and values, for callers that map it
	// back to a file.
	var ie *InputError
	if _, err := b.Predict(x); !errors.As(err, &ie) || ie.Row != 1 || ie.Col != 1 || ie.Value != 1e200 ||
		!(ie.Scaled > MaxInput) || ie.Standardized != (b.Standardizer != nil) {
		t.Fatalf("huge input: %v (%+v)", err, ie)
	}
	x.Set(1, 1, 3e100) // 3e100 − 2 over scale 4 is within MaxInput
	if _, err := b.Predict(x); err != nil {
		t.Fatalf("large input: %v", err)
	}
	if _, err := b.LogPredictive(x, make([]float64, 4)); !errors.Is(err, gp.ErrShape) {
		t.Fatalf("5 rows, 4 targets: %v", err)
	}
}

func validFile(t *testing.T) []byte {
	t.Helper()
	model := build(t, cases()[5], rand.New(rand.NewPCG(5, 6)))
	buf, err := Marshal(&Bundle{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	return buf
}

func TestBadFiles(t *testing.T) {
	good := validFile(t)
	if _, err := Unmarshal(good); err != nil {
		t.Fatal(err)
	}
	s := string(good)
	edit := func(old, new string) []byte {
		if !strings.Contains(s, old) {
			t.Fatalf("file has no %q", old)
		}
		return []byte(strings.Replace(s, old, new, 1))
	}
	firstParam := s[strings.Index(s, `"params": [`)+len(`"params": [`):]
	firstParam = strings.TrimSpace(firstParam[:strings.IndexAny(firstParam, ",]")])
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "unexpected end of JSON"},
		{"truncated", good[:len(good)/2], "unexpected end"},
		{"not json", []byte("hello"), "line 1, column 1"},
		{"syntax line", edit(`"kind": "solvegp"`, `"kind": solvegp`), "line 4"},
		{"other format", edit(`"solvegp-model"`, `"something"`), `format is "something"`},
		{"newer", edit(fmt.Sprintf(`"version": %d`, Version), fmt.Sprintf(`"version": %d`, Version+1)), fmt.Sprintf("version %d", Version+1)},
		{"zero version", edit(fmt.Sprintf(`"version": %d`, Version), `"version": 0`), "version 0"},
		{"kind", edit(`"kind": "solvegp"`, `"kind": "gpr"`), `unknown model kind "gpr"`},
		{"unknown field", edit(`"whitened"`, `"colour": 1, "whitened"`), "unknown field"},
		{"digest", edit(firstParam+",", "0.125,"), "params_sha256"},
		{"kernel type", edit(`"type": "rbf"`, `"type": "cosine"`), `unknown kernel type "cosine"`},
		{"likelihood", edit(`"type": "gaussian"`, `"type": "student"`), `unknown likelihood type "student"`},
		{"dims", edit(`"m": 4`, `"m": 5`), "z is 4×2, dims say 5×2"},
		{"variance", edit(`"variance": `, `"variance": 1e5, "x": `), "unknown field"},
		{"trailing", append(append([]byte(nil), good...), []byte("{}")...), "after top-level value"},
		{"type", edit(`"m": 4`, `"m": "4"`), "line"},
	} {
		_, err := Unmarshal(tc.in)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q does not mention %q", tc.name, err, tc.want)
		}
		if tc.name == "newer" && !errors.Is(err, ErrVersion) || tc.name != "newer" && !errors.Is(err, ErrFormat) {
			t.Errorf("%s: error %v has the wrong class", tc.name, err)
		}
	}
}

// hostileDims is a crafted file whose sizes wrap around in 64-bit
// arithmetic: z is declared 2⁶²×4 (2⁶⁴ values, 0 after wrapping) with no
// data, under a 65536-class likelihood. It once reached gp.NewSVGP with an
// empty 2⁶²×4 matrix and panicked there.
func hostileDims(rows uint64, zdata string) []byte {
	params := []float64{0.5, 0.5}
	return []byte(fmt.Sprintf(`{"format":"solvegp-model","version":1,"kind":"svgp","whitened":true,
"dims":{"input":4,"m":%[1]d,"m2":0,"latent":65536},
"kernel":{"type":"rbf","dim":4,"lengthscales":[0.974],"variance":0.974},
"likelihood":{"type":"robustmax","classes":65536,"epsilon":0.001},
"z":{"rows":%[1]d,"cols":4,"data":[%[2]s]},
"layout":{"kernel":0,"likelihood":2,"z":2,"o":0,"m_u":[0],"l_u":[0],"total":2},
"params":[0.5,0.5],"params_sha256":"%[3]s"}`, rows, zdata, digest(params)))
}

// TestHostileSizes checks that sizes in a file whose products overflow
// are refused with ErrFormat before any model is built.
func TestHostileSizes(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		// 2⁶²·4 wraps to 0, the number of values given.
		{"m·d wraps to 0", hostileDims(1<<62, ""), "z has 0 values, want 4611686018427387904×4"},
		// (2⁶²+1)·4 wraps to 4, the number of values given.
		{"m·d wraps to 4", hostileDims(1<<62+1, "1,2,3,4"), "z has 4 values"},
	} {
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			_, err = Unmarshal(tc.in)
		}()
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrFormat mentioning %q", tc.name, err, tc.want)
		}
	}
	// The parameter count is checked without overflow: sizes whose
	// count wraps around are refused, not compared modulo 2⁶⁴.
	for _, tc := range []struct {
		kind               gp.Kind
		hyper, d, m, m2, c int
	}{
		{gp.SVGP, 2, 4, 1 << 62, 0, 65536},
		{gp.SVGP, 2, 1, 1 << 32, 0, 1},          // tri(m) wraps
		{gp.SVGP, 2, 1, 1 << 30, 0, 65536},      // c·tri(m) wraps
		{gp.SOLVEGP, 2, 1, 1, math.MaxInt, 1},   // m2+1 wraps
		{gp.ODVGP, 2, 1, 1, math.MaxInt / 2, 4}, // c·m2 wraps
		{gp.SVGP, math.MaxInt, 1, 1, 0, 1},      // the sum wraps
		{gp.SVGP, -1, 1, 1, 0, 1},               // negative
	} {
		if n, ok := paramCount(tc.kind, tc.hyper, tc.d, tc.m, tc.m2, tc.c, math.MaxInt); ok {
			t.Errorf("paramCount%+v = %d, want overflow", tc, n)
		}
	}
	// Agreement with the models' own counts, and the limit is exact.
	for _, c := range cases() {
		model := build(t, c, rand.New(rand.NewPCG(1, 1)))
		d, m, m2, lat := model.Dims()
		hyper := model.Kernel().NumParams() + model.Likelihood().NumParams()
		n := model.NumParams()
		if got, ok := paramCount(model.Kind(), hyper, d, m, m2, lat, n); !ok || got != n {
			t.Errorf("%s %v: paramCount = %d, %v; the model has %d", c.name, model.Kind(), got, ok, n)
		}
		if _, ok := paramCount(model.Kind(), hyper, d, m, m2, lat, n-1); ok {
			t.Errorf("%s %v: paramCount within a limit of %d", c.name, model.Kind(), n-1)
		}
	}
}

// TestEditedValues checks that the readable hyperparameters must agree with
// the parameter vector.
func TestEditedValues(t *testing.T) {
	s := string(validFile(t))
	i := strings.Index(s, `"variance": `)
	j := i + strings.IndexAny(s[i:], ",\n}")
	bad := resign(t, []byte(s[:i]+`"variance": 7.5`+s[j:]))
	if _, err := Unmarshal(bad); err == nil || !strings.Contains(err.Error(), "variance is 7.5") {
		t.Fatalf("edited variance: %v", err)
	}
}

func TestSaveAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A model that cannot be encoded leaves the old file alone.
	if err := Save(path, &Bundle{}); err == nil {
		t.Fatal("nil model saved")
	}
	model := build(t, cases()[0], rand.New(rand.NewPCG(7, 8)))
	badStd := &data.Standardizer{XMean: []float64{0}, XScale: []float64{1}, YScale: 1}
	if err := Save(path, &Bundle{Model: model, Standardizer: badStd}); err == nil {
		t.Fatal("bad standardizer saved")
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("old file changed to %q", b)
	}
	// A failing rename (the destination is a non-empty directory) leaves
	// the directory and no temporary file behind.
	target := filepath.Join(dir, "dir")
	os.Mkdir(target, 0o755)
	os.WriteFile(filepath.Join(target, "keep"), []byte("x"), 0o644)
	if err := Save(target, &Bundle{Model: model}); err == nil {
		t.Fatal("saved over a directory")
	}
	if err := Save(filepath.Join(dir, "missing", "m.json"), &Bundle{Model: model}); err == nil {
		t.Fatal("saved into a missing directory")
	}
	if err := Save(path, &Bundle{Model: model}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "dir m.json" {
		t.Fatalf("directory holds %v", names)
	}
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Join(dir, "nope.json")); err == nil {
		t.Fatal("loaded a missing file")
	}
}

// TestParamsChangedOnKernel checks that a model whose kernel or likelihood
// had its parameters set directly, not through Model.SetParams, is not
// saved: the file would hold the hyperparameters of the one and the
// parameter vector of the other, and Load would reject it.
func TestParamsChangedOnKernel(t *testing.T) {
	for _, part := range []string{"kernel", "likelihood"} {
		model := build(t, cases()[0], rand.New(rand.NewPCG(13, 14)))
		if _, err := Marshal(&Bundle{Model: model}); err != nil {
			t.Fatal(err)
		}
		switch part {
		case "kernel":
			if err := model.Kernel().SetParams([]float64{2, 0.5}); err != nil {
				t.Fatal(err)
			}
		case "likelihood":
			if err := model.Likelihood().SetParams([]float64{-1}); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(t.TempDir(), "m.json")
		err := Save(path, &Bundle{Model: model})
		if err == nil {
			_, lerr := Load(path)
			t.Fatalf("%s changed directly: saved a file that Load reads with error %v", part, lerr)
		}
		if !strings.Contains(err.Error(), "Model.SetParams") {
			t.Errorf("%s changed directly: error %q does not say what to do", part, err)
		}
		if _, serr := os.Stat(path); serr == nil {
			t.Errorf("%s changed directly: a file was written", part)
		}
	}
}

func TestNonGaussianTargetsNotStandardized(t *testing.T) {
	model := build(t, cases()[8], rand.New(rand.NewPCG(9, 10)))
	std := &data.Standardizer{XMean: []float64{0, 0}, XScale: []float64{1, 1}, YMean: 0.5, YScale: 1}
	if err := Save(filepath.Join(t.TempDir(), "m.json"), &Bundle{Model: model, Standardizer: std}); err == nil {
		t.Fatal("standardized Bernoulli targets accepted")
	}
}

// TestConcurrentPredict runs predictions from several goroutines on one
// Predictor (run with -race) and checks they equal sequential ones.
func TestConcurrentPredict(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	model := build(t, cases()[5], rng)
	b := &Bundle{Model: model, Standardizer: &data.Standardizer{XMean: []float64{1, 2}, XScale: []float64{3, 4}, YMean: 10, YScale: 2}}
	p, err := b.Predictor(7)
	if err != nil {
		t.Fatal(err)
	}
	x := randMatrix(rng, 40, 2)
	want, err := p.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	// Batches of 7 and of all 40 points agree to rounding.
	all, _ := b.Predict(x)
	for i, v := range all.YMean.RawMatrix().Data {
		if math.Abs(v-want.YMean.RawMatrix().Data[i]) > 1e-9*math.Max(1, math.Abs(v)) {
			t.Fatalf("batched prediction %d: %g vs %g", i, want.YMean.RawMatrix().Data[i], v)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := p.Predict(x)
			if err != nil {
				errs <- err
				return
			}
			if !floats.EqualBits(got.YMean.RawMatrix().Data, want.YMean.RawMatrix().Data) || !floats.EqualBits(got.FVar.RawMatrix().Data, want.FVar.RawMatrix().Data) {
				errs <- errors.New("concurrent prediction differs")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestPredictorSnapshot checks that a Predictor's predictions do not
// change when the bundle's model and Standardizer change afterwards, while
// a new Predictor reflects the new parameters.
func TestPredictorSnapshot(t *testing.T) {
	for i, c := range cases() {
		t.Run(fmt.Sprintf("%d-%s-%v-wh=%v", i, c.name, c.kind, c.wh), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 77))
			model := build(t, c, rng)
			b := &Bundle{Model: model}
			if c.name == "gauss-rbf" {
				b.Standardizer = &data.Standardizer{XMean: []float64{1, 2}, XScale: []float64{3, 4}, YMean: 10, YScale: 2}
			}
			x := randMatrix(rng, 9, 2)
			y := make([]float64, 9)
			for j := range y {
				y[j] = c.y(rng)
			}
			// Softmax predicts observations by Monte Carlo from the
			// Predictor's own stream, so only its latent predictions
			// repeat.
			random := c.name == "softmax"
			outputs := func(p *Predictor) []float64 {
				pr, err := p.Predict(x)
				if err != nil {
					t.Fatal(err)
				}
				out := append(append([]float64(nil), pr.FMean.RawMatrix().Data...), pr.FVar.RawMatrix().Data...)
				if random {
					return out
				}
				lp, err := p.LogPredictive(x, y)
				if err != nil {
					t.Fatal(err)
				}
				out = append(append(out, pr.YMean.RawMatrix().Data...), lp...)
				if pr.YVar != nil {
					out = append(out, pr.YVar.RawMatrix().Data...)
				}
				return out
			}
			p, err := b.Predictor(0)
			if err != nil {
				t.Fatal(err)
			}
			want := outputs(p)

			th := make([]float64, model.NumParams())
			model.Params(th)
			for j := range th {
				th[j] += 0.2 * rng.NormFloat64()
			}
			if err := model.SetParams(th); err != nil {
				t.Fatal(err)
			}
			if s := b.Standardizer; s != nil {
				s.XMean[0] += 0.5
				s.YScale *= 3
			}
			if !floats.EqualBits(outputs(p), want) {
				t.Errorf("changing the bundle changed the predictions of a Predictor made before")
			}
			p2, err := b.Predictor(0)
			if err != nil {
				t.Fatal(err)
			}
			if floats.EqualBits(outputs(p2), want) {
				t.Errorf("a Predictor made after the change gives the old predictions")
			}
		})
	}
}
