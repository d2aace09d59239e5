package fuzz

import (
	"encoding/binary"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// gpFloats decodes the fuzz input as little-endian float64 values, without
// filtering: NaN, ±Inf and huge values reach the model.
func gpFloats(in []byte) []float64 {
	out := make([]float64, len(in)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(in[8*i:]))
	}
	return out
}

// FuzzGPObjective builds a small SVGP, ODVGP or SOLVE-GP model from
// fuzzer-chosen inducing inputs, data and parameter perturbations and
// evaluates its bound, gradient and predictions. Each call must either
// return an error or finite results — never panic.
func FuzzGPObjective(f *testing.F) {
	seed := make([]byte, 8*40)
	for i := 0; i < 40; i++ {
		binary.LittleEndian.PutUint64(seed[8*i:], math.Float64bits(math.Sin(float64(i))))
	}
	f.Add(seed, uint8(0), uint8(3), uint8(2))
	f.Add(seed, uint8(5), uint8(2), uint8(3))
	f.Add(seed[:80], uint8(4), uint8(1), uint8(1))
	nan := append([]byte(nil), seed...)
	binary.LittleEndian.PutUint64(nan[16:], math.Float64bits(math.NaN()))
	f.Add(nan, uint8(2), uint8(2), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, mode, m8, m28 uint8) {
		vals := gpFloats(in)
		const d = 2
		m := int(m8%5) + 1
		m2 := int(m28%4) + 1
		kind := []gp.Kind{gp.SVGP, gp.ODVGP, gp.SOLVEGP}[int(mode)%3]
		whiten := mode&8 != 0
		next := func() float64 {
			if len(vals) == 0 {
				return 0.5
			}
			v := vals[0]
			vals = vals[1:]
			return v
		}
		z := mat.NewDense(m, d, nil)
		o := mat.NewDense(m2, d, nil)
		for i := 0; i < m; i++ {
			for j := 0; j < d; j++ {
				z.Set(i, j, next())
			}
		}
		for i := 0; i < m2; i++ {
			for j := 0; j < d; j++ {
				o.Set(i, j, next())
			}
		}
		k, err := kernel.NewMatern32(d, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		var lik gp.Likelihood
		if mode&16 != 0 {
			lik, err = likelihood.NewBernoulli()
		} else {
			lik, err = likelihood.NewGaussian(0.1)
		}
		if err != nil {
			t.Fatal(err)
		}
		opts := []gp.Option{gp.WithWhitening(whiten), gp.WithThreads(1)}
		var mod *gp.Model
		switch kind {
		case gp.SVGP:
			mod, err = gp.NewSVGP(k, lik, z, opts...)
		case gp.ODVGP:
			if mode&32 != 0 {
				opts = append(opts, gp.WithColumnSample(1))
			}
			mod, err = gp.NewODVGP(k, lik, z, o, opts...)
		default:
			mod, err = gp.NewSOLVEGP(k, lik, z, o, opts...)
		}
		if err != nil {
			return
		}
		th := make([]float64, mod.NumParams())
		mod.Params(th)
		lay := mod.Layout()
		for i := lay.MU[0]; i < len(th) && len(vals) > 0; i += 3 {
			th[i] += next()
		}
		if err := mod.SetParams(th); err != nil {
			return
		}
		n := 3
		x := mat.NewDense(n, d, nil)
		y := make([]float64, n)
		for i := 0; i < n; i++ {
			x.Set(i, 0, next())
			x.Set(i, 1, next())
			if mode&16 != 0 {
				y[i] = float64(i % 2)
			} else {
				y[i] = next()
			}
		}
		grad := make([]float64, mod.NumParams())
		bound, err := mod.Objective(x, y, 10, grad)
		if err != nil {
			return
		}
		if math.IsNaN(bound) || math.IsInf(bound, 0) {
			t.Fatalf("finite-input bound %v returned without error", bound)
		}
		for i, g := range grad {
			if math.IsNaN(g) {
				t.Fatalf("finite bound %v with NaN gradient entry %d", bound, i)
			}
		}
		p, err := mod.Predictor(2)
		if err != nil {
			return
		}
		if _, _, err := p.PredictF(x); err != nil {
			t.Fatalf("PredictF failed on inputs the bound accepted: %v", err)
		}
	})
}
