package convgp

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp"
)

// TestOutputMeanGradient checks the gradient of the ELBO with an output
// mean per class (constant or linear in the output layer's input) against
// central finite differences: every mean parameter and a random subset of
// the others, single-layer and with a hidden layer (whose feature maps the
// linear mean's slope reaches).
func TestOutputMeanGradient(t *testing.T) {
	for _, kind := range []gp.Kind{gp.SVGP, gp.SOLVEGP} {
		for _, hidden := range []int{0, 1} {
			for _, om := range []string{"constant", "linear"} {
				t.Run(fmt.Sprintf("%v/hidden=%d/%s", kind, hidden, om), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(13, uint64(hidden)))
					d, x, y := tinyDeepMean(t, kind, hidden, hidden == 0, false, om, rng)
					nm := d.out.Mean().NumParams()
					if want := map[string]int{"constant": 3, "linear": 3 * (d.outIn + 1)}[om]; nm != want {
						t.Fatalf("%d output-mean parameters, want %d", nm, want)
					}
					reset := func() { d.rng = rand.New(rand.NewPCG(77, 78)) }
					th := make([]float64, d.NumParams())
					d.Params(th)
					grad := make([]float64, len(th))
					reset()
					if _, err := d.Objective(x, y, 50, grad); err != nil {
						t.Fatal(err)
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
					idx := rng.Perm(len(th) - nm)
					if len(idx) > 60 {
						idx = idx[:60]
					}
					for j := len(th) - nm; j < len(th); j++ { // the mean's: last
						idx = append(idx, j)
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
}

// TestOutputMeanZeroBitIdentical checks that an output mean whose
// parameters are all 0 gives bit for bit the bound, the gradient of every
// other parameter and the predictions of the model without one.
func TestOutputMeanZeroBitIdentical(t *testing.T) {
	for _, om := range []string{"constant", "linear"} {
		a, x, y := tinyDeepMean(t, gp.SOLVEGP, 1, true, true, "", rand.New(rand.NewPCG(17, 18)))
		b, _, _ := tinyDeepMean(t, gp.SOLVEGP, 1, true, true, om, rand.New(rand.NewPCG(17, 18)))
		th := make([]float64, b.NumParams())
		b.Params(th)
		clear(th[a.NumParams():]) // the mean's, last
		if err := b.SetParams(th); err != nil {
			t.Fatal(err)
		}
		pa := make([]float64, a.NumParams())
		a.Params(pa)
		sameBits(t, om+": shared parameters", th[:len(pa)], pa)
		ga, gb := make([]float64, len(pa)), make([]float64, len(th))
		a.rng, b.rng = rand.New(rand.NewPCG(5, 6)), rand.New(rand.NewPCG(5, 6))
		fa, err1 := a.Objective(x, y, 50, ga)
		fb, err2 := b.Objective(x, y, 50, gb)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if math.Float64bits(fa) != math.Float64bits(fb) {
			t.Errorf("%s: bound %v with the zero output mean, %v without", om, fb, fa)
		}
		sameBits(t, om+": gradient", gb[:len(ga)], ga)
		pra, err1 := a.Predict(x, 3, 2)
		prb, err2 := b.Predict(x, 3, 2)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		sameBits(t, om+": predictions", prb.RawMatrix().Data, pra.RawMatrix().Data)
	}
}

// TestOutputMeanModelFile checks that a model with an output mean survives
// WriteModel and ReadModel bit for bit, that a version-1 file may not have
// one, and that an unknown output mean is refused.
func TestOutputMeanModelFile(t *testing.T) {
	for _, om := range []string{"constant", "linear"} {
		d, x, _ := tinyDeepMean(t, gp.SVGP, 1, false, true, om, rand.New(rand.NewPCG(19, 20)))
		var buf bytes.Buffer
		if err := WriteModel(&buf, d, nil); err != nil {
			t.Fatal(err)
		}
		file := append([]byte(nil), buf.Bytes()...)
		back, _, err := ReadModel(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Config(), d.Config()) || back.Config().OutputMean != om {
			t.Errorf("configuration %+v, saved %+v", back.Config(), d.Config())
		}
		p, q := make([]float64, d.NumParams()), make([]float64, back.NumParams())
		d.Params(p)
		back.Params(q)
		sameBits(t, "parameters", q, p)
		a, err1 := d.Predict(x, 3, 2)
		b, err2 := back.Predict(x, 3, 2)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		sameBits(t, "predictions", b.RawMatrix().Data, a.RawMatrix().Data)

		v1 := withHeader(t, file, func(h map[string]any) { h["version"] = 1 })
		if _, _, err := ReadModel(bytes.NewReader(v1)); !errors.Is(err, ErrModelFile) || !strings.Contains(err.Error(), "needs version 2") {
			t.Errorf("%s in a version-1 file: %v", om, err)
		}
		bad := withHeader(t, file, func(h map[string]any) { h["config"].(map[string]any)["OutputMean"] = "quadratic" })
		if _, _, err := ReadModel(bytes.NewReader(bad)); !errors.Is(err, ErrModelFile) || !strings.Contains(err.Error(), "output mean") {
			t.Errorf("unknown output mean: %v", err)
		}
	}
	x := randDense(rand.New(rand.NewPCG(1, 2)), 30, 36)
	cfg := DeepConfig{Height: 6, Width: 6, Channels: 1, Classes: 3, Kind: gp.SVGP, Threads: 1, OutputMean: "cubic",
		Init: InitOptions{Images: 20, PerCentre: 3, Seed: 4}, Output: Output{PatchHeight: 2, PatchWidth: 2, M: 3}}
	if _, err := NewDeep(x, cfg); !errors.Is(err, ErrConfig) {
		t.Errorf("NewDeep with OutputMean %q: %v", cfg.OutputMean, err)
	}
}
