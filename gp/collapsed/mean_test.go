package collapsed

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/mean"
)

func testMean(t testing.TB, name string) gp.MeanFunction {
	t.Helper()
	var m gp.MeanFunction
	var err error
	switch name {
	case "zero":
		m, err = mean.NewZero(2)
	case "constant":
		m, err = mean.NewConstant(2, 0.6)
	case "linear":
		m, err = mean.NewLinear([]float64{0.4, -0.7}, 0.25)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The gradient of the collapsed bound with a mean function, with respect to
// every parameter (the mean's included), matches finite differences for
// SGPR (Titsias' and the tight bound) and SOLVE-GP, in one chunk and in
// several.
func TestMeanGradients(t *testing.T) {
	x, y := toyData(30, 6)
	for i := range y {
		y[i] += 2 + x.At(i, 0)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	z := randMat(rng, 4, 2, 1)
	o := randMat(rng, 3, 2, 1)
	for _, c := range []struct {
		name string
		o    *mat.Dense
		opts Options
	}{{"SGPR", nil, Options{}}, {"SGPR chunked", nil, Options{ChunkSize: 8}}, {"SGPR tight", nil, Options{Tight: true}},
		{"SOLVE-GP", o, Options{}}, {"SOLVE-GP chunked", o, Options{ChunkSize: 7}}} {
		for _, mn := range []string{"constant", "linear"} {
			t.Run(c.name+"/"+mn, func(t *testing.T) {
				opts := c.opts
				opts.Mean = testMean(t, mn)
				md, err := New(newKernel(t, 0.9, 1.2), newNoise(t, 0.05), z, c.o, opts)
				if err != nil {
					t.Fatal(err)
				}
				checkGrad(t, md, x, y)
			})
		}
	}
}

// With the zero mean the collapsed bound, its gradient and the predictions
// are bit for bit those without a mean; a constant mean c on y + c gives
// the zero-mean bound on y (same other parameters) and predictions
// shifted by c.
func TestMeanZeroAndShift(t *testing.T) {
	x, y := toyData(25, 8)
	rng := rand.New(rand.NewPCG(9, 9))
	z := randMat(rng, 5, 2, 1)
	o := randMat(rng, 3, 2, 1)
	xs := randMat(rng, 7, 2, 1.5)
	const cst = 0.6 // testMean's constant
	ys := make([]float64, len(y))
	for i := range y {
		ys[i] = y[i] + cst
	}
	for _, oo := range []*mat.Dense{nil, o} {
		build := func(mn string) *Model {
			opts := Options{}
			if mn != "" {
				opts.Mean = testMean(t, mn)
			}
			md, err := New(newKernel(t, 0.9, 1.2), newNoise(t, 0.05), z, oo, opts)
			if err != nil {
				t.Fatal(err)
			}
			return md
		}
		eval := func(md *Model, y []float64) (float64, []float64, []float64) {
			g := make([]float64, md.NumParams())
			f, err := md.BoundGrad(x, y, g)
			if err != nil {
				t.Fatal(err)
			}
			post, err := md.Posterior(x, y)
			if err != nil {
				t.Fatal(err)
			}
			pm := make([]float64, 7)
			if err := post.Predict(xs, pm, nil); err != nil {
				t.Fatal(err)
			}
			return f, g, pm
		}
		f0, g0, p0 := eval(build(""), y)
		fz, gz, pz := eval(build("zero"), y)
		if math.Float64bits(f0) != math.Float64bits(fz) {
			t.Errorf("zero mean: bound %v, without mean %v", fz, f0)
		}
		for i := range g0 {
			if math.Float64bits(g0[i]) != math.Float64bits(gz[i]) {
				t.Errorf("zero mean: gradient %d: %v, without mean %v", i, gz[i], g0[i])
			}
		}
		for i := range p0 {
			if math.Float64bits(p0[i]) != math.Float64bits(pz[i]) {
				t.Errorf("zero mean: prediction %d: %v, without mean %v", i, pz[i], p0[i])
			}
		}
		fc, gc, pc := eval(build("constant"), ys)
		if math.Abs(fc-f0) > 1e-10*math.Max(1, math.Abs(f0)) {
			t.Errorf("constant mean on shifted y: bound %v, zero mean %v", fc, f0)
		}
		for i := range g0 {
			if math.Abs(gc[i]-g0[i]) > 1e-8*math.Max(1, math.Abs(g0[i])) {
				t.Errorf("constant mean on shifted y: gradient %d: %v, zero mean %v", i, gc[i], g0[i])
			}
		}
		for i := range p0 {
			if math.Abs(pc[i]-p0[i]-cst) > 1e-10 {
				t.Errorf("constant mean on shifted y: prediction %d: %v, zero mean %v + %v", i, pc[i], p0[i], cst)
			}
		}
	}
}

// GPModel carries the mean: the gp model's full-data bound equals the
// collapsed bound and its predictions equal Posterior's, to rounding.
func TestMeanGPModel(t *testing.T) {
	x, y := toyData(30, 10)
	for i := range y {
		y[i] += 3 - 2*x.At(i, 1)
	}
	rng := rand.New(rand.NewPCG(11, 11))
	z := randMat(rng, 6, 2, 1)
	o := randMat(rng, 4, 2, 1)
	xs := randMat(rng, 9, 2, 2)
	for _, oo := range []*mat.Dense{nil, o} {
		md, err := New(newKernel(t, 0.9, 1.2), newNoise(t, 0.05), z, oo, Options{Mean: testMean(t, "linear")})
		if err != nil {
			t.Fatal(err)
		}
		mod, err := md.GPModel(x, y)
		if err != nil {
			t.Fatal(err)
		}
		fb, _ := md.Bound(x, y)
		fg, err := mod.Objective(x, y, len(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(fb-fg) > 1e-6*math.Abs(fb) {
			t.Errorf("gp model bound %v, collapsed %v", fg, fb)
		}
		post, _ := md.Posterior(x, y)
		pm, pv := make([]float64, 9), make([]float64, 9)
		if err := post.Predict(xs, pm, pv); err != nil {
			t.Fatal(err)
		}
		gm, gv, err := mod.PredictF(xs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range pm {
			if math.Abs(gm.At(i, 0)-pm[i]) > 1e-6*math.Max(1, math.Abs(pm[i])) || math.Abs(gv.At(i, 0)-pv[i]) > 1e-6 {
				t.Errorf("point %d: gp %v (%v), collapsed %v (%v)", i, gm.At(i, 0), gv.At(i, 0), pm[i], pv[i])
			}
		}
	}
}

func TestMeanErrors(t *testing.T) {
	z := mat.NewDense(2, 2, []float64{0, 0, 1, 1})
	m3, _ := mean.NewConstant(3, 0)
	if _, err := New(newKernel(t, 1, 1), newNoise(t, 0.1), z, nil, Options{Mean: m3}); err == nil {
		t.Error("mean of the wrong dimension accepted")
	}
	two, _ := mean.NewConstantPerLatent(2, []float64{0, 1})
	if _, err := New(newKernel(t, 1, 1), newNoise(t, 0.1), z, nil, Options{Mean: two}); err == nil {
		t.Error("mean with two outputs accepted for one latent function")
	}
	one, _ := mean.NewConstantPerLatent(2, []float64{0.5})
	if _, err := New(newKernel(t, 1, 1), newNoise(t, 0.1), z, nil, Options{Mean: one}); err != nil {
		t.Errorf("per-latent mean with one output: %v", err)
	}
	md, err := New(newKernel(t, 1, 1), newNoise(t, 0.1), z, nil, Options{Mean: testMean(t, "constant")})
	if err != nil {
		t.Fatal(err)
	}
	p := make([]float64, md.NumParams())
	md.Params(p)
	if p[len(p)-1] != 0.6 {
		t.Errorf("last parameter %v, want the constant 0.6", p[len(p)-1])
	}
	if _, err := md.Bound(x2(), []float64{1}); err == nil {
		t.Error("mismatched y accepted")
	}
}

func x2() *mat.Dense { return mat.NewDense(2, 2, nil) }
