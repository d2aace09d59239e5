package fuzz

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/mean"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// modelFileBundle returns a small trained-looking model of the given kind
// with a standardizer and the extra model options opts, for seeds and
// prediction checks.
func modelFileBundle(tb testing.TB, kind gp.Kind, lik gp.Likelihood, opts ...gp.Option) *modelfile.Bundle {
	tb.Helper()
	k, err := kernel.NewMatern52(2, 0.8, 1.2, kernel.ARD())
	if err != nil {
		tb.Fatal(err)
	}
	z := mat.NewDense(3, 2, []float64{-1, 0, 0.5, 0.5, 1, -1})
	o := mat.NewDense(2, 2, []float64{0, 1, -0.5, -1})
	var m *gp.Model
	switch kind {
	case gp.SVGP:
		m, err = gp.NewSVGP(k, lik, z, append([]gp.Option{gp.WithWhitening(true)}, opts...)...)
	case gp.ODVGP:
		m, err = gp.NewODVGP(k, lik, z, o, opts...)
	default:
		m, err = gp.NewSOLVEGP(k, lik, z, o, opts...)
	}
	if err != nil {
		tb.Fatal(err)
	}
	p := make([]float64, m.NumParams())
	m.Params(p)
	for i := range p {
		p[i] += 0.01 * float64(i%7-3)
	}
	if err := m.SetParams(p); err != nil {
		tb.Fatal(err)
	}
	std := &data.Standardizer{XMean: []float64{1, -2}, XScale: []float64{2, 0.5}, YMean: 0, YScale: 1}
	if _, ok := lik.(*likelihood.Gaussian); ok {
		std.YMean, std.YScale = 5, 3
	}
	return &modelfile.Bundle{Model: m, Standardizer: std, Meta: modelfile.Meta{TargetName: "y"}}
}

// FuzzModelFile decodes arbitrary bytes as a model file. Decoding must
// return an error wrapping modelfile.ErrFormat or ErrVersion, or a model
// that encodes back to a file that decodes to the same bytes and whose
// predictions are finite or a clear error — never panic.
func FuzzModelFile(f *testing.F) {
	gauss, _ := likelihood.NewGaussian(0.2)
	bern, _ := likelihood.NewBernoulli()
	rmax, _ := likelihood.NewRobustMax(3)
	zero, _ := mean.NewZero(2)
	cst, _ := mean.NewConstant(2, 0.5)
	lin, _ := mean.NewLinear([]float64{1, -1}, 0.2)
	perClass, err := mean.NewPerLatent(zero, cst, lin)
	if err != nil {
		f.Fatal(err)
	}
	rmax2, _ := likelihood.NewRobustMax(3)
	for _, b := range []*modelfile.Bundle{
		modelFileBundle(f, gp.SOLVEGP, gauss),
		modelFileBundle(f, gp.SVGP, bern),
		modelFileBundle(f, gp.ODVGP, rmax),
		modelFileBundle(f, gp.SOLVEGP, rmax2, gp.WithMean(perClass)),
	} {
		buf, err := modelfile.Marshal(b)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(buf)
	}
	gauss2, _ := likelihood.NewGaussian(0.3)
	bern2, _ := likelihood.NewBernoulli()
	sep, err := gp.NewSeparate([]*gp.Model{modelFileBundle(f, gp.SVGP, gauss2).Model, modelFileBundle(f, gp.SOLVEGP, bern2).Model})
	if err != nil {
		f.Fatal(err)
	}
	buf, err := modelfile.Marshal(&modelfile.Bundle{Separate: sep, Meta: modelfile.Meta{TargetNames: []string{"a", "b"}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(buf)
	f.Add([]byte(`{"format":"solvegp-model","version":2}`))
	f.Add([]byte(`{"format":"solvegp-model","version":1,"kind":"svgp","dims":{"input":1,"m":1,"latent":1}}`))
	f.Add([]byte("[1e999]"))
	x := mat.NewDense(4, 2, []float64{0, 0, 1e3, -1e3, 0.3, 0.7, -5, 2})
	f.Fuzz(func(t *testing.T, in []byte) {
		b, err := modelfile.Unmarshal(in)
		if err != nil {
			if !errors.Is(err, modelfile.ErrFormat) && !errors.Is(err, modelfile.ErrVersion) {
				t.Fatalf("error of the wrong class: %v", err)
			}
			return
		}
		out, err := modelfile.Marshal(b)
		if err != nil {
			t.Fatalf("decoded model does not encode: %v", err)
		}
		b2, err := modelfile.Unmarshal(out)
		if err != nil {
			t.Fatalf("re-encoded model does not decode: %v", err)
		}
		out2, err := modelfile.Marshal(b2)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not stable (%v)", err)
		}
		if b.InputDim() != 2 {
			return
		}
		pred, err := b.Predict(x)
		if err != nil {
			return
		}
		for _, m := range []*mat.Dense{pred.FMean, pred.FVar, pred.YMean} {
			for _, v := range m.RawMatrix().Data {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("non-finite prediction %v", v)
				}
			}
		}
	})
}
