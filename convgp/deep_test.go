package convgp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

func tinyDeep(t *testing.T, kind gp.Kind, hidden int, tick, linear bool, rng *rand.Rand) (*Deep, *mat.Dense, []float64) {
	t.Helper()
	return tinyDeepMean(t, kind, hidden, tick, linear, "", rng)
}

// tinyDeepMean is tinyDeep with the output mean outMean (DeepConfig.OutputMean).
func tinyDeepMean(t *testing.T, kind gp.Kind, hidden int, tick, linear bool, outMean string, rng *rand.Rand) (*Deep, *mat.Dense, []float64) {
	t.Helper()
	const H, W, C, n, classes = 7, 6, 2, 5, 3
	x := randDense(rng, 40, H*W*C)
	cfg := DeepConfig{Height: H, Width: W, Channels: C, Classes: classes, Kind: kind,
		Variance: 1.5, Lengthscale: 1.2, LocLengthscale: 1.5, Seed: 3, Threads: 1,
		Init:   InitOptions{Images: 20, PerCentre: 5, Seed: 4},
		Output: Output{PatchHeight: 2, PatchWidth: 2, Stride: 1, M: 4, M2: 3, TICK: tick}, OutputMean: outMean}
	hs := []Hidden{{PatchHeight: 3, PatchWidth: 2, Stride: 1, Channels: 2, M: 3, M2: 2},
		{PatchHeight: 2, PatchWidth: 2, Stride: 2, Channels: 3, M: 3, M2: 2}}
	cfg.Hidden = hs[:hidden]
	if linear {
		cfg.LinearMean, cfg.HiddenVariance, cfg.HiddenInitVar = true, 0.7, 0.01
	}
	d, err := NewDeep(x, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Move q away from the prior so that every gradient term is exercised.
	th := make([]float64, d.NumParams())
	d.Params(th)
	for i, lo := range d.offs[:len(d.offs)-1] {
		m := d.out
		if i < len(d.hidden) {
			m = d.hidden[i].model
		}
		lay := m.Layout()
		// (past the model's own parameters: the linear mean's W)
		for j := lo + lay.MU[0]; j < d.offs[i+1]; j++ {
			th[j] += 0.2 * rng.NormFloat64()
		}
	}
	if err := d.SetParams(th); err != nil {
		t.Fatal(err)
	}
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(i % classes)
	}
	return d, x.Slice(0, n, 0, H*W*C).(*mat.Dense), y
}

// TestDeepGradient checks the gradient of the doubly stochastic ELBO (fixed
// Monte Carlo draws) against central finite differences for every
// parameter, through the output layer's convolutional kernel, the sampled
// feature maps, col2im and the hidden layers.
func TestDeepGradient(t *testing.T) {
	for _, kind := range []gp.Kind{gp.SVGP, gp.SOLVEGP} {
		for _, c := range []struct {
			hidden       int
			tick, linear bool
		}{{0, true, false}, {1, false, false}, {2, true, false}, {1, true, true}, {2, false, true}} {
			hidden, tick := c.hidden, c.tick
			t.Run(fmt.Sprintf("%v/hidden=%d/tick=%v/linear=%v", kind, hidden, tick, c.linear), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(11, uint64(hidden)))
				d, x, y := tinyDeep(t, kind, hidden, tick, c.linear, rng)
				reset := func() { d.rng = rand.New(rand.NewPCG(77, 78)) }
				th := make([]float64, d.NumParams())
				d.Params(th)
				grad := make([]float64, len(th))
				reset()
				if _, err := d.Objective(x, y, 50, grad); err != nil {
					t.Fatal(err)
				}
				// A second evaluation with the same draws gives the same
				// gradient bit for bit: the per-evaluation buffers the
				// model reuses start clean, and grad is overwritten, not
				// added to.
				again := make([]float64, len(th))
				for i := range again {
					again[i] = 1
				}
				reset()
				if _, err := d.Objective(x, y, 50, again); err != nil {
					t.Fatal(err)
				}
				for i := range grad {
					if math.Float64bits(again[i]) != math.Float64bits(grad[i]) {
						t.Fatalf("param %d: gradient %v on the first evaluation, %v on the second", i, grad[i], again[i])
					}
				}
				f := func() float64 {
					if err := d.SetParams(th); err != nil {
						t.Fatal(err)
					}
					reset()
					v, err := d.Objective(x, y, 50, nil)
					if err != nil {
						t.Fatal(err)
					}
					return v
				}
				// Check every parameter of small groups and a random subset of the rest.
				idx := rng.Perm(len(th))
				if len(idx) > 100 {
					idx = idx[:100]
				}
				// Always every linear-mean parameter.
				for i, h := range d.hidden {
					for j := d.offs[i] + h.model.NumParams(); j < d.offs[i+1]; j++ {
						idx = append(idx, j)
					}
				}
				bad := 0
				for _, i := range idx {
					h := 1e-5 * math.Max(1, math.Abs(th[i]))
					num := fd(th, i, h, f)
					if math.Abs(grad[i]-num) > 2e-5*math.Max(1, math.Abs(num)) {
						bad++
						if bad < 10 {
							t.Errorf("param %d: analytic %.10g, finite difference %.10g", i, grad[i], num)
						}
					}
				}
			})
		}
	}
}

// blobs returns n 8×8 images with a bright 2×2 blob at a random position
// and faint noise; the label says whether the blob is in the top or the
// bottom half, which a TICK kernel can learn from locations.
func blobs(rng *rand.Rand, n int) (*mat.Dense, []float64) {
	x := mat.NewDense(n, 64, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		for j := range row {
			row[j] = 0.1 * rng.Float64()
		}
		r, c := rng.IntN(7), rng.IntN(7)
		for dr := 0; dr < 2; dr++ {
			for dc := 0; dc < 2; dc++ {
				row[(r+dr)*8+c+dc] = 1
			}
		}
		if r+1 >= 4 {
			y[i] = 1
		}
	}
	return x, y
}

// TestDeepLearns trains single-layer TICK SVGP and SOLVE-GP classifiers
// with train.Fit and checks that they beat chance by far on held-out images.
func TestDeepLearns(t *testing.T) {
	if testing.Short() {
		t.Skip("training test skipped in -short mode")
	}
	for _, kind := range []gp.Kind{gp.SVGP, gp.SOLVEGP} {
		t.Run(kind.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(21, 22))
			x, y := blobs(rng, 120)
			xt, yt := blobs(rng, 200)
			d, err := NewDeep(x, DeepConfig{Height: 8, Width: 8, Channels: 1, Classes: 2, Kind: kind, Whiten: true,
				Variance: 1, Lengthscale: 1, LocLengthscale: 2, Threads: 1, Init: InitOptions{Seed: 1},
				Output: Output{PatchHeight: 2, PatchWidth: 2, M: 6, M2: 6, TICK: true}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := train.Fit(context.Background(), d, x, y, train.Config{MaxSteps: 100, BatchSize: 40,
				Schedule: train.Constant(0.05), Seed: 3}); err != nil {
				t.Fatal(err)
			}
			acc, ll, err := d.Evaluate(xt, yt, 1, 64)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("test accuracy %.3f, mean log predictive %.3f", acc, ll)
			probs, err := d.Predict(xt, 1, 64)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(yt); i++ {
				if s := mat.Sum(probs.RowView(i)); math.Abs(s-1) > 1e-9 {
					t.Fatalf("class probabilities of image %d sum to %v", i, s)
				}
			}
			if _, _, err := d.Evaluate(xt, make([]float64, 3), 1, 64); err == nil {
				t.Error("label count mismatch accepted")
			}
			if _, _, err := d.Evaluate(xt.Slice(0, 1, 0, 64).(*mat.Dense), []float64{2}, 1, 64); err == nil {
				t.Error("label out of range accepted")
			}
			if acc < 0.9 || ll < math.Log(0.75) {
				t.Errorf("test accuracy %.3f, mean log predictive %.3f: did not learn", acc, ll)
			}
		})
	}
}

// TestDeepTwoLayerLearns trains two-layer SVGP and SOLVE-GP classifiers
// with a linear mean function and near-deterministic initial hidden layers
// on the blob task and checks that they beat chance by far on held-out
// images. (With the paper's zero mean and prior initialization, and the
// paper's kernel variance 5 in the hidden layer, the same training stays at
// chance: the output layer only sees noise.)
func TestDeepTwoLayerLearns(t *testing.T) {
	if testing.Short() {
		t.Skip("training test skipped in -short mode")
	}
	for _, kind := range []gp.Kind{gp.SVGP, gp.SOLVEGP} {
		t.Run(kind.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(31, 32))
			x, y := blobs(rng, 120)
			xt, yt := blobs(rng, 200)
			d, err := NewDeep(x, DeepConfig{Height: 8, Width: 8, Channels: 1, Classes: 2, Kind: kind,
				Variance: 5, Lengthscale: 1, LocLengthscale: 2, Threads: 1, Init: InitOptions{Seed: 1},
				LinearMean: true, HiddenVariance: 0.1, HiddenInitVar: 1e-4,
				Hidden: []Hidden{{PatchHeight: 3, PatchWidth: 3, Stride: 1, Channels: 3, M: 8, M2: 8}},
				Output: Output{PatchHeight: 2, PatchWidth: 2, Stride: 1, M: 6, M2: 6, TICK: true}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := train.Fit(context.Background(), d, x, y, train.Config{MaxSteps: 150, BatchSize: 40,
				Schedule: train.Constant(0.05), Seed: 3}); err != nil {
				t.Fatal(err)
			}
			acc, ll, err := d.Evaluate(xt, yt, 5, 64)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("test accuracy %.3f, mean log predictive %.3f", acc, ll)
			if acc < 0.9 || ll < math.Log(0.75) {
				t.Errorf("test accuracy %.3f, mean log predictive %.3f: did not learn", acc, ll)
			}
		})
	}
}

// TestDeepLayerLengthscale checks that a layer's own Lengthscale
// initializes its patch kernel and that the model's applies elsewhere.
func TestDeepLayerLengthscale(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	x := randDense(rng, 30, 8*8)
	cfg := DeepConfig{Height: 8, Width: 8, Channels: 1, Classes: 3, Kind: gp.SVGP, Lengthscale: 2, Threads: 1,
		Init: InitOptions{Images: 20, PerCentre: 5, Seed: 1},
		Hidden: []Hidden{{PatchHeight: 3, PatchWidth: 3, Channels: 2, M: 3},
			{PatchHeight: 2, PatchWidth: 2, Channels: 2, M: 3, Lengthscale: 4}},
		Output: Output{PatchHeight: 2, PatchWidth: 2, M: 4, Lengthscale: 7}}
	d, err := NewDeep(x, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{2, 4} {
		k, ok := d.Layer(i).Kernel().(*kernel.Stationary)
		if !ok {
			t.Fatalf("hidden layer %d: kernel %T", i, d.Layer(i).Kernel())
		}
		if got := k.Lengthscales()[0]; math.Abs(got-want) > 1e-12*want {
			t.Errorf("hidden layer %d: lengthscale %v, want %v", i, got, want)
		}
	}
	_, k := d.Output()
	if _, got, _ := k.Hyper(); math.Abs(got-7) > 1e-12*7 {
		t.Errorf("output layer: lengthscale %v, want 7", got)
	}
}

// TestNewDeepErrors checks that bad configurations are errors wrapping
// ErrConfig, not panics.
func TestNewDeepErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	x := randDense(rng, 20, 8*8)
	good := func() DeepConfig {
		return DeepConfig{Height: 8, Width: 8, Channels: 1, Classes: 3, Kind: gp.SOLVEGP, Threads: 1,
			Init:   InitOptions{Images: 10, PerCentre: 5, Seed: 1},
			Hidden: []Hidden{{PatchHeight: 3, PatchWidth: 3, Channels: 2, M: 3, M2: 2}},
			Output: Output{PatchHeight: 2, PatchWidth: 2, M: 4, M2: 2}}
	}
	if _, err := NewDeep(x, good()); err != nil {
		t.Fatalf("good configuration: %v", err)
	}
	for name, edit := range map[string]func(*DeepConfig){
		"no classes":               func(c *DeepConfig) { c.Classes = 1 },
		"kind":                     func(c *DeepConfig) { c.Kind = gp.ODVGP },
		"image size":               func(c *DeepConfig) { c.Width = 7 },
		"negative lengthscale":     func(c *DeepConfig) { c.Lengthscale = -1 },
		"NaN variance":             func(c *DeepConfig) { c.Variance = math.NaN() },
		"hidden lengthscale NaN":   func(c *DeepConfig) { c.Hidden[0].Lengthscale = math.NaN() },
		"hidden lengthscale < 0":   func(c *DeepConfig) { c.Hidden[0].Lengthscale = -2 },
		"output lengthscale +Inf":  func(c *DeepConfig) { c.Output.Lengthscale = math.Inf(1) },
		"hidden channels":          func(c *DeepConfig) { c.Hidden[0].Channels = 1 },
		"SOLVE-GP without M2":      func(c *DeepConfig) { c.Output.M2 = 0 },
		"hidden initial variance":  func(c *DeepConfig) { c.HiddenInitVar = -1 },
		"patch larger than images": func(c *DeepConfig) { c.Hidden[0].PatchHeight = 9 },
	} {
		cfg := good()
		edit(&cfg)
		if _, err := NewDeep(x, cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := NewDeep(nil, good()); !errors.Is(err, ErrConfig) {
		t.Errorf("nil images: %v, want ErrConfig", err)
	}
	// Absurd sizes: errors wrapping ErrConfig, where sizes overflowed int
	// or a slice of them could not be made.
	for name, edit := range map[string]func(*DeepConfig){
		"2⁵⁰ classes":                          func(c *DeepConfig) { c.Classes = 1 << 50 },
		"2²⁶ classes":                          func(c *DeepConfig) { c.Classes = 1 << 26 },
		"output M 2⁶¹":                         func(c *DeepConfig) { c.Output.M = 1 << 61 },
		"output M2 MaxInt":                     func(c *DeepConfig) { c.Output.M2 = math.MaxInt },
		"hidden M 2⁶²":                         func(c *DeepConfig) { c.Hidden[0].M = 1 << 62 },
		"hidden channels 2⁴⁰":                  func(c *DeepConfig) { c.Hidden[0].Channels = 1 << 40 },
		"hidden channels 2²⁶":                  func(c *DeepConfig) { c.Hidden[0].Channels = 1 << 26 },
		"hidden channels beyond the softmax's": func(c *DeepConfig) { c.Hidden[0].Channels = likelihood.MaxClasses + 1 },
		"M = MaxInt":                           func(c *DeepConfig) { c.Output.M, c.Output.M2 = math.MaxInt, 1 },
		"output M 2²⁵":                         func(c *DeepConfig) { c.Output.M = 1 << 25 },
		"SVGP M 2⁶¹, M2 MaxInt":                func(c *DeepConfig) { c.Kind, c.Output.M, c.Output.M2 = gp.SVGP, 1<<61, math.MaxInt },
	} {
		cfg := good()
		edit(&cfg)
		if _, err := NewDeep(x, cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	// Huge counts of patches per k-means centre: all the patches are used.
	for _, pc := range []int{1 << 62, math.MaxInt / 2, math.MaxInt} {
		cfg := good()
		cfg.Init.PerCentre = pc
		if _, err := NewDeep(x, cfg); err != nil {
			t.Errorf("PerCentre = %d: %v", pc, err)
		}
	}
	// Lengthscales below gp/kernel's floor: refused up front with ErrConfig
	// (a tiny TICK location lengthscale was accepted, the others failed
	// later in a Cholesky factorization or in package kernel).
	for name, edit := range map[string]func(*DeepConfig){
		"tiny lengthscale":          func(c *DeepConfig) { c.Lengthscale = 1e-300 },
		"tiny hidden lengthscale":   func(c *DeepConfig) { c.Hidden[0].Lengthscale = 1e-200 },
		"tiny output lengthscale":   func(c *DeepConfig) { c.Output.Lengthscale = 1e-160 },
		"tiny location lengthscale": func(c *DeepConfig) { c.Output.TICK = true; c.LocLengthscale = 1e-300 },
	} {
		cfg := good()
		edit(&cfg)
		if _, err := NewDeep(x, cfg); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "at least") {
			t.Errorf("%s: %v, want ErrConfig naming the floor", name, err)
		}
	}
}

// TestDeepSetParamsAtomic checks that a SetParams the output layer refuses
// (its patch-kernel variance underflows to zero) leaves every layer,
// hidden ones included, with its earlier parameters.
func TestDeepSetParamsAtomic(t *testing.T) {
	for _, hidden := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("hidden=%d", hidden), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(61, 62))
			d, _, _ := tinyDeep(t, gp.SOLVEGP, hidden, true, true, rng)
			before := make([]float64, d.NumParams())
			d.Params(before)
			th := make([]float64, len(before))
			for i, v := range before {
				th[i] = v + 0.1*rng.NormFloat64()
			}
			n := len(d.hidden)
			th[d.offs[n]+d.out.Layout().Kernel] = -1000
			if err := d.SetParams(th); !errors.Is(err, ErrConfig) {
				t.Fatalf("SetParams with a zero variance: %v, want ErrConfig", err)
			}
			after := make([]float64, len(before))
			d.Params(after)
			sameBits(t, "parameters after a refused SetParams", after, before)

			// A NaN or Inf anywhere (a layer's gp part, its patch weights,
			// the output layer) is refused, named by its index in the
			// whole vector, and changes nothing.
			var at []int
			for i, h := range d.hidden {
				at = append(at, d.offs[i], d.offs[i]+h.model.NumParams()-1, d.offs[i]+h.model.NumParams(), d.offs[i+1]-1)
			}
			at = append(at, d.offs[n], d.NumParams()-1)
			for _, i := range at {
				for _, bad := range []float64{math.NaN(), math.Inf(-1)} {
					th := slices.Clone(before)
					th[i] = bad
					err := d.SetParams(th)
					if want := fmt.Sprintf("parameter %d is %v", i, bad); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), want) {
						t.Fatalf("SetParams with %v at %d: %v, want ErrConfig naming %q", bad, i, err, want)
					}
					d.Params(after)
					sameBits(t, "parameters after a refused non-finite SetParams", after, before)
				}
			}
		})
	}
}

// TestDeepValidateData checks that bad labels, non-finite pixels and wrong
// shapes stop train.Fit before its first step.
func TestDeepValidateData(t *testing.T) {
	d, x, y := tinyDeep(t, gp.SOLVEGP, 1, true, false, rand.New(rand.NewPCG(8, 1)))
	if err := d.ValidateData(x, y); err != nil {
		t.Fatalf("good data refused: %v", err)
	}
	if _, err := d.Objective(nil, y, 10, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("Objective(nil): %v, want ErrConfig", err)
	}
	for _, tc := range []struct {
		name  string
		spoil func(x *mat.Dense, y []float64) (*mat.Dense, []float64)
	}{
		{"class 3 of 3", func(x *mat.Dense, y []float64) (*mat.Dense, []float64) { y[2] = 3; return x, y }},
		{"label 0.5", func(x *mat.Dense, y []float64) (*mat.Dense, []float64) { y[1] = 0.5; return x, y }},
		{"NaN pixel", func(x *mat.Dense, y []float64) (*mat.Dense, []float64) { x.Set(4, 9, math.NaN()); return x, y }},
		{"short labels", func(x *mat.Dense, y []float64) (*mat.Dense, []float64) { return x, y[:4] }},
		{"narrow images", func(x *mat.Dense, y []float64) (*mat.Dense, []float64) {
			r, c := x.Dims()
			return mat.DenseCopyOf(x.Slice(0, r, 0, c-1)), y
		}},
	} {
		xc, yc := tc.spoil(mat.DenseCopyOf(x), append([]float64(nil), y...))
		if err := d.ValidateData(xc, yc); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: ValidateData = %v, want ErrConfig", tc.name, err)
		}
		res, err := train.Fit(context.Background(), d, xc, yc, train.Config{Epochs: 2, BatchSize: 2})
		if err == nil || res.Steps != 0 || res.Rejected != 0 {
			t.Errorf("%s: Fit = %+v, %v; want an error before any step", tc.name, res, err)
		}
	}
}

// TestDeepRandomState checks that the state RandomState returns brings back
// the hidden layers' samples (the same objective, bit for bit, from the
// same parameters) and that a state that is not one is refused without
// touching the generator.
func TestDeepRandomState(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	d, x, y := tinyDeep(t, gp.SOLVEGP, 1, true, true, rng)
	st := d.RandomState()
	a, err := d.Objective(x, y, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SetRandomState([]byte("no state")); !errors.Is(err, ErrConfig) {
		t.Errorf("a bad state: %v, want ErrConfig", err)
	}
	b, err := d.Objective(x, y, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatal("two draws of the hidden layer gave the same objective: the test cannot see the state")
	}
	if err := d.SetRandomState(st); err != nil {
		t.Fatal(err)
	}
	if c, err := d.Objective(x, y, 100, nil); err != nil || c != a {
		t.Errorf("after SetRandomState the objective is %v (%v), want %v", c, err, a)
	}
}

// TestDeepSetThreads checks that a model moved to one thread with SetThreads
// evaluates exactly as the same model built with one thread, and that its
// configuration says so.
func TestDeepSetThreads(t *testing.T) {
	build := func(threads int) *Deep {
		rng := rand.New(rand.NewPCG(91, 92))
		x := randDense(rng, 30, 7*6*2)
		cfg := DeepConfig{Height: 7, Width: 6, Channels: 2, Classes: 3, Kind: gp.SOLVEGP, Threads: threads, Seed: 3,
			LinearMean: true, HiddenVariance: 0.7, HiddenInitVar: 0.01,
			Init:   InitOptions{Images: 20, PerCentre: 5, Seed: 4},
			Hidden: []Hidden{{PatchHeight: 3, PatchWidth: 2, Stride: 1, Channels: 2, M: 3, M2: 2}},
			Output: Output{PatchHeight: 2, PatchWidth: 2, Stride: 1, M: 4, M2: 3, TICK: true}}
		d, err := NewDeep(x, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	rng := rand.New(rand.NewPCG(93, 94))
	x := randDense(rng, 8, 7*6*2)
	y := []float64{0, 1, 2, 0, 1, 2, 0, 1}
	eval := func(d *Deep) []float64 {
		g := make([]float64, d.NumParams())
		f, err := d.Objective(x, y, 100, g)
		if err != nil {
			t.Fatal(err)
		}
		return append(g, f)
	}
	a := eval(build(1))
	moved := build(3)
	if err := moved.SetThreads(1); err != nil {
		t.Fatal(err)
	}
	if moved.Config().Threads != 1 || moved.kern.workers != 1 || moved.hidden[0].geom.Config().Workers != 1 {
		t.Errorf("after SetThreads(1): Config().Threads %d, output kernel workers %d, hidden im2col workers %d",
			moved.Config().Threads, moved.kern.workers, moved.hidden[0].geom.Config().Workers)
	}
	sameBits(t, "objective and gradient after SetThreads(1)", eval(moved), a)
}

// TestScore checks Score's accuracy (ties go to the first class) and mean
// log probability (floored at 1e-300) on probabilities worked by hand, and
// its errors.
func TestScore(t *testing.T) {
	probs := mat.NewDense(3, 3, []float64{
		0.2, 0.5, 0.3, // predicts 1
		0.4, 0.4, 0.2, // a tie: predicts 0
		0, 0, 1, // label 0 has probability 0
	})
	acc, ll, err := Score(probs, []int{1, 1, 0})
	if err != nil {
		t.Fatal(err)
	}
	if want := (math.Log(0.5) + math.Log(0.4) + math.Log(1e-300)) / 3; acc != 1.0/3 || ll != want {
		t.Errorf("Score = %v, %v; want 1/3, %v", acc, ll, want)
	}
	for name, c := range map[string]struct {
		p      *mat.Dense
		labels []int
	}{
		"nil":             {nil, []int{0}},
		"too few labels":  {probs, []int{0, 1}},
		"label too large": {probs, []int{0, 1, 3}},
		"negative label":  {probs, []int{0, -1, 2}},
	} {
		if _, _, err := Score(c.p, c.labels); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
}

// TestDeepPredictSamplesBatch checks Predict's contract on samples and
// batch: 0 means the defaults (1 sample, DefaultPredictBatch images),
// a negative value is an error wrapping ErrConfig (it was silently the
// default), a call repeats to the bit, and a deep model's probabilities
// depend on the batch size, which its documentation says.
func TestDeepPredictSamplesBatch(t *testing.T) {
	for _, hidden := range []int{0, 1} {
		d, x, y := tinyDeep(t, gp.SOLVEGP, hidden, true, true, rand.New(rand.NewPCG(41, 42)))
		pred := func(samples, batch int) *mat.Dense {
			t.Helper()
			p, err := d.Predict(x, samples, batch)
			if err != nil {
				t.Fatalf("%d hidden: Predict(x, %d, %d): %v", hidden, samples, batch, err)
			}
			return p
		}
		if a, b := pred(0, 0), pred(1, DefaultPredictBatch); !mat.Equal(a, b) {
			t.Errorf("%d hidden: Predict(x, 0, 0) is not Predict(x, 1, %d)", hidden, DefaultPredictBatch)
		}
		if a, b := pred(3, 2), pred(3, 2); !mat.Equal(a, b) {
			t.Errorf("%d hidden: Predict(x, 3, 2) does not repeat", hidden)
		}
		if hidden > 0 && mat.Equal(pred(3, 2), pred(3, 5)) {
			t.Errorf("%d hidden: the probabilities do not depend on the batch size", hidden)
		}
		for _, sb := range [][2]int{{-1, 5}, {1, -1}, {-3, -3}} {
			if _, err := d.Predict(x, sb[0], sb[1]); !errors.Is(err, ErrConfig) {
				t.Errorf("%d hidden: Predict(x, %d, %d): %v, want ErrConfig", hidden, sb[0], sb[1], err)
			}
			if _, _, err := d.Evaluate(x, y, sb[0], sb[1]); !errors.Is(err, ErrConfig) {
				t.Errorf("%d hidden: Evaluate(x, y, %d, %d): %v, want ErrConfig", hidden, sb[0], sb[1], err)
			}
		}
	}
}

// TestDeepLayer checks that Layer indexes the NumLayers layers, the output
// layer last (Layer(NumLayers()-1) panicked with an index out of range),
// and that an index outside them panics with a message naming it.
func TestDeepLayer(t *testing.T) {
	for _, hidden := range []int{0, 2} {
		d, _, _ := tinyDeep(t, gp.SVGP, hidden, false, false, rand.New(rand.NewPCG(43, 44)))
		n := d.NumLayers()
		for i := 0; i < hidden; i++ {
			if d.Layer(i) != d.hidden[i].model {
				t.Errorf("%d hidden: Layer(%d) is not hidden layer %d", hidden, i, i)
			}
		}
		out, _ := d.Output()
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%d hidden: Layer(NumLayers()-1) panicked: %v", hidden, r)
				}
			}()
			if d.Layer(n-1) != out {
				t.Errorf("%d hidden: Layer(%d) is not the output layer", hidden, n-1)
			}
		}()
		for _, i := range []int{-1, n} {
			func() {
				defer func() {
					r := recover()
					if s, _ := r.(string); !strings.Contains(s, fmt.Sprintf("Layer(%d)", i)) {
						t.Errorf("%d hidden: Layer(%d) recovered %v, want a panic naming it", hidden, i, r)
					}
				}()
				d.Layer(i)
			}()
		}
	}
}

// TestNewDeepSizeMessages checks that a configuration of wrong sizes is
// refused with a message that says what is wrong, not only the sizes
// ("output layer: M = 20, M2 = 0, 10 latent functions" left a SOLVE-GP
// user to guess that M2 must be at least 1).
func TestNewDeepSizeMessages(t *testing.T) {
	x := randDense(rand.New(rand.NewPCG(45, 46)), 20, 8*8)
	good := func() DeepConfig {
		return DeepConfig{Height: 8, Width: 8, Channels: 1, Classes: 3, Kind: gp.SOLVEGP, Threads: 1,
			Init:   InitOptions{Images: 10, PerCentre: 5, Seed: 1},
			Hidden: []Hidden{{PatchHeight: 3, PatchWidth: 3, Channels: 2, M: 3, M2: 2}},
			Output: Output{PatchHeight: 2, PatchWidth: 2, M: 4, M2: 2}}
	}
	for _, c := range []struct {
		name string
		edit func(*DeepConfig)
		want []string
	}{
		{"output M2 = 0", func(c *DeepConfig) { c.Output.M2 = 0 }, []string{"output layer", "M2 = 0", "SOLVE-GP needs M2 ≥ 1"}},
		{"hidden M2 = 0", func(c *DeepConfig) { c.Hidden[0].M2 = 0 }, []string{"hidden layer 0", "SOLVE-GP needs M2 ≥ 1"}},
		{"output M = 0", func(c *DeepConfig) { c.Output.M = 0 }, []string{"output layer", "M must be at least 1"}},
		{"hidden channels", func(c *DeepConfig) { c.Hidden[0].Channels = 1 }, []string{"hidden layer 0", "at least 2 channels"}},
	} {
		cfg := good()
		c.edit(&cfg)
		_, err := NewDeep(x, cfg)
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
	}
	// SVGP ignores M2.
	cfg := good()
	cfg.Kind, cfg.Output.M2, cfg.Hidden[0].M2 = gp.SVGP, 0, 0
	if _, err := NewDeep(x, cfg); err != nil {
		t.Errorf("SVGP with M2 = 0: %v", err)
	}
}
