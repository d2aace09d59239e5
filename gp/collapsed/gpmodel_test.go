package collapsed_test

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
	"github.com/solvegp/solvegp/gp/train"
	"github.com/solvegp/solvegp/internal/floats"
)

// gpCase is a collapsed model, trained briefly on planeData, for the
// GPModel tests.
type gpCase struct {
	name string
	cm   *collapsed.Model
	x    *mat.Dense
	y    []float64
	xs   *mat.Dense // test inputs
}

// gpCases returns SGPR and SOLVE-GP models with a shared-lengthscale RBF
// kernel and with a sum of an ARD Matérn 5/2 and an RBF kernel, each
// fitted by a few L-BFGS iterations (hyperparameters and inducing inputs).
func gpCases(t *testing.T) []gpCase {
	t.Helper()
	var cases []gpCase
	for _, kc := range []string{"RBF", "ARD Matérn52 + RBF"} {
		for _, withO := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(91, 91))
			x, y, z, o := planeData(rng, 60, 6, 5)
			xs := mat.NewDense(25, 2, nil)
			for i := range xs.RawMatrix().Data {
				xs.RawMatrix().Data[i] = 1.5 * rng.NormFloat64()
			}
			var k kernel.Kernel
			if kc == "RBF" {
				k, _ = kernel.NewRBF(2, 0.9, 1.2)
			} else {
				k1, _ := kernel.NewMatern52(2, 1, 0.8, kernel.Lengthscales([]float64{0.8, 1.5}))
				k2, _ := kernel.NewRBF(2, 2, 0.3)
				var err error
				if k, err = kernel.NewSum(k1, k2); err != nil {
					t.Fatal(err)
				}
			}
			lik, _ := likelihood.NewGaussian(0.05)
			name := kc + "/SGPR"
			if withO {
				name = kc + "/SOLVE-GP"
			} else {
				o = nil
			}
			cm, err := collapsed.New(k, lik, z, o, collapsed.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cm.Fit(context.Background(), x, y, train.LBFGSOptions{MaxIter: 20}); err != nil {
				t.Fatal(err)
			}
			cases = append(cases, gpCase{name, cm, x, y, xs})
		}
	}
	return cases
}

func maxRelDiff(a, b []float64) float64 {
	var d float64
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i])/math.Max(1, math.Abs(b[i])))
	}
	return d
}

// TestGPModelBound checks the structure of the model GPModel returns and
// that its uncollapsed bound on the whole data set equals the collapsed
// bound.
func TestGPModelBound(t *testing.T) {
	for _, c := range gpCases(t) {
		t.Run(c.name, func(t *testing.T) {
			cm := c.cm
			mod, err := cm.GPModel(c.x, c.y)
			if err != nil {
				t.Fatal(err)
			}
			d, m, m2, nl := mod.Dims()
			cz, co := cm.Z(), cm.O()
			wantKind, wantM2 := gp.SVGP, 0
			if co != nil {
				wantKind, wantM2 = gp.SOLVEGP, co.RawMatrix().Rows
			}
			if mod.Kind() != wantKind || mod.Whitened() || d != 2 || m != cz.RawMatrix().Rows || m2 != wantM2 || nl != 1 {
				t.Fatalf("model %v whitened=%v dims %d %d %d %d", mod.Kind(), mod.Whitened(), d, m, m2, nl)
			}
			if !mat.Equal(mod.Z(), cz) || (co != nil && !mat.Equal(mod.O(), co)) {
				t.Error("Z or O differ")
			}
			// The kernel is a new object of the same type with the same
			// parameters, bit for bit; likewise the likelihood.
			if any(mod.Kernel()) == any(cm.Kernel()) {
				t.Error("kernel shared")
			}
			if got, want := kparams(mod.Kernel()), kparams(cm.Kernel()); !floats.EqualBits(got, want) {
				t.Errorf("kernel parameters %v, want %v", got, want)
			}
			if _, ok := cm.Kernel().(*kernel.Sum); ok {
				ks, ok := mod.Kernel().(*kernel.Sum)
				if !ok {
					t.Fatalf("kernel %T, want *kernel.Sum", mod.Kernel())
				}
				if p := ks.Parts(); !p[0].(*kernel.Stationary).IsARD() || p[0].(*kernel.Stationary).Family() != kernel.Matern52 {
					t.Error("sum parts not copied with their family and ARD")
				}
			}
			g, ok := mod.Likelihood().(*likelihood.Gaussian)
			if !ok || g == cm.Likelihood() || g.NoiseVariance() != cm.Likelihood().NoiseVariance() || g.NoiseFloor() != cm.Likelihood().NoiseFloor() {
				t.Errorf("likelihood %#v, collapsed %#v", mod.Likelihood(), cm.Likelihood())
			}

			n := len(c.y)
			cb, err := cm.Bound(c.x, c.y)
			if err != nil {
				t.Fatal(err)
			}
			ub, err := mod.Objective(c.x, c.y, n, nil)
			if err != nil {
				t.Fatal(err)
			}
			rel := math.Abs(ub-cb) / math.Abs(cb)
			t.Logf("collapsed %.12f, uncollapsed %.12f, relative difference %.2g", cb, ub, rel)
			if rel > 1e-8 {
				t.Errorf("uncollapsed bound %v, collapsed %v (relative difference %g)", ub, cb, rel)
			}
			// At the optimum the gradient with respect to q vanishes.
			grad := make([]float64, mod.NumParams())
			if _, err := mod.Objective(c.x, c.y, n, grad); err != nil {
				t.Fatal(err)
			}
			var gq float64
			for _, v := range grad[mod.Layout().MU[0]:] {
				gq = math.Max(gq, math.Abs(v))
			}
			if gq > 1e-6*math.Abs(cb) {
				t.Errorf("largest gradient entry with respect to q: %g", gq)
			}
		})
	}
}

// TestGPModelTight: for a model with the tighter bound, GPModel gives the
// SVGP model at Titsias' optimum, whose bound is Titsias' bound.
func TestGPModelTight(t *testing.T) {
	rng := rand.New(rand.NewPCG(92, 92))
	x, y, z, _ := planeData(rng, 40, 5, 1)
	k, _ := kernel.NewRBF(2, 0.9, 1.2)
	lik, _ := likelihood.NewGaussian(0.05)
	cm, err := collapsed.New(k, lik, z, nil, collapsed.Options{Tight: true})
	if err != nil {
		t.Fatal(err)
	}
	tight, _ := cm.Bound(x, y)
	titsias, err := collapsed.New(k, lik, z, nil, collapsed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := titsias.Bound(x, y)
	mod, err := cm.GPModel(x, y)
	if err != nil {
		t.Fatal(err)
	}
	got, err := mod.Objective(x, y, len(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 1e-8*math.Abs(want) || !(got < tight) {
		t.Errorf("uncollapsed %v, Titsias %v, tight %v", got, want, tight)
	}
}

// TestGPModelTighter: the Tighter bound has the Standard bound's optimal
// q(u) and q*(v⊥), so GPModel gives the same parameters and predictions as
// for the Standard bound, in a gp model that evaluates the uncollapsed
// tighter bound, which equals the collapsed Tighter bound, for SGPR and
// SOLVE-GP.
func TestGPModelTighter(t *testing.T) {
	rng := rand.New(rand.NewPCG(93, 93))
	x, y, z, o := planeData(rng, 40, 5, 3)
	xs, _, _, _ := planeData(rng, 12, 1, 1)
	for _, oo := range []*mat.Dense{nil, o} {
		k, _ := kernel.NewRBF(2, 0.9, 1.2)
		lik, _ := likelihood.NewGaussian(0.05)
		cm, err := collapsed.New(k, lik, z, oo, collapsed.Options{Bound: collapsed.Tighter})
		if err != nil {
			t.Fatal(err)
		}
		tighter, _ := cm.Bound(x, y)
		std, err := collapsed.New(k, lik, z, oo, collapsed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := std.Bound(x, y)
		mod, err := cm.GPModel(x, y)
		if err != nil {
			t.Fatal(err)
		}
		got, err := mod.Objective(x, y, len(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tighter) > 1e-8*math.Abs(tighter) || !(want < tighter) || mod.Bound() != gp.TighterBound {
			t.Errorf("O %v: uncollapsed %v (bound %v), Standard %v, Tighter %v", oo != nil, got, mod.Bound(), want, tighter)
		}
		smod, err := std.GPModel(x, y)
		if err != nil {
			t.Fatal(err)
		}
		if d := maxRelDiff(gpParams(mod), gpParams(smod)); d != 0 {
			t.Errorf("O %v: gp models differ by %g", oo != nil, d)
		}
		if dm, dv := comparePredictions(t, cm, mod, x, y, xs); dm > 1e-8 || dv > 1e-8 {
			t.Errorf("O %v: predictions differ by %g (mean) and %g (variance)", oo != nil, dm, dv)
		}
	}
}

// TestGPModelPredictions: the gp model predicts the latent function as the
// collapsed posterior does.
func TestGPModelPredictions(t *testing.T) {
	for _, c := range gpCases(t) {
		t.Run(c.name, func(t *testing.T) {
			mod, err := c.cm.GPModel(c.x, c.y)
			if err != nil {
				t.Fatal(err)
			}
			dm, dv := comparePredictions(t, c.cm, mod, c.x, c.y, c.xs)
			t.Logf("largest relative differences: mean %.2g, variance %.2g", dm, dv)
			if dm > 1e-8 || dv > 1e-8 {
				t.Errorf("predictions differ by %g (mean) and %g (variance)", dm, dv)
			}
		})
	}
}

// comparePredictions returns the largest relative differences between the
// latent means and variances of mod and of the collapsed posterior at xs
// (also at the training inputs).
func comparePredictions(t *testing.T, cm *collapsed.Model, mod *gp.Model, x *mat.Dense, y []float64, xs *mat.Dense) (dm, dv float64) {
	t.Helper()
	post, err := cm.Posterior(x, y)
	if err != nil {
		t.Fatal(err)
	}
	pred, err := mod.Predictor(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, pts := range []*mat.Dense{xs, x} {
		n, _ := pts.Dims()
		mean, variance := make([]float64, n), make([]float64, n)
		if err := post.Predict(pts, mean, variance); err != nil {
			t.Fatal(err)
		}
		gm, gv, err := pred.PredictF(pts)
		if err != nil {
			t.Fatal(err)
		}
		dm = math.Max(dm, maxRelDiff(gm.RawMatrix().Data, mean))
		dv = math.Max(dv, maxRelDiff(gv.RawMatrix().Data, variance))
	}
	return dm, dv
}

// TestGPModelIndependent: changing the collapsed model (its parameters,
// a further fit) after GPModel leaves the gp model unchanged, and the
// other way round.
func TestGPModelIndependent(t *testing.T) {
	for _, c := range gpCases(t) {
		t.Run(c.name, func(t *testing.T) {
			cm := c.cm
			mod, err := cm.GPModel(c.x, c.y)
			if err != nil {
				t.Fatal(err)
			}
			gp0 := gpParams(mod)
			n := len(c.y)
			b0, _ := mod.Objective(c.x, c.y, n, nil)
			m0, v0, _ := mod.PredictF(c.xs)
			c0 := make([]float64, cm.NumParams())
			cm.Params(c0)

			// Perturb every collapsed parameter, then fit further.
			p := append([]float64(nil), c0...)
			for i := range p {
				p[i] += 0.1 * float64(i%3+1)
			}
			if err := cm.SetParams(p); err != nil {
				t.Fatal(err)
			}
			if _, err := cm.Fit(context.Background(), c.x, c.y, train.LBFGSOptions{MaxIter: 5}); err != nil {
				t.Fatal(err)
			}
			if !floats.EqualBits(gpParams(mod), gp0) {
				t.Error("gp model parameters changed with the collapsed model's")
			}
			b1, _ := mod.Objective(c.x, c.y, n, nil)
			m1, v1, _ := mod.PredictF(c.xs)
			if b1 != b0 || !mat.Equal(m0, m1) || !mat.Equal(v0, v1) {
				t.Errorf("gp model changed: bound %v → %v", b0, b1)
			}

			// Changing the gp model leaves the collapsed one alone.
			cm.Params(c0) // its parameters after the fit
			q := gpParams(mod)
			for i := range q {
				q[i] -= 0.05
			}
			if err := mod.SetParams(q); err != nil {
				t.Fatal(err)
			}
			c1 := make([]float64, cm.NumParams())
			cm.Params(c1)
			if !floats.EqualBits(c0, c1) {
				t.Error("collapsed model changed with the gp model's parameters")
			}
		})
	}
}

// TestGPModelModelfile saves the gp model with package modelfile, loads
// it back, and compares predictions: bit for bit with the saved model,
// and to rounding with the collapsed posterior.
func TestGPModelModelfile(t *testing.T) {
	dir := t.TempDir()
	for i, c := range gpCases(t) {
		t.Run(c.name, func(t *testing.T) {
			mod, err := c.cm.GPModel(c.x, c.y)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, string(rune('a'+i))+".json")
			if err := modelfile.Save(path, &modelfile.Bundle{Model: mod}); err != nil {
				t.Fatal(err)
			}
			b, err := modelfile.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			got := b.Model
			if got.Kind() != mod.Kind() || got.Whitened() || !floats.EqualBits(gpParams(got), gpParams(mod)) {
				t.Fatalf("loaded %v model (whitened %v) with other parameters", got.Kind(), got.Whitened())
			}
			wm, wv, err := mod.PredictF(c.xs)
			if err != nil {
				t.Fatal(err)
			}
			gm, gv, err := got.PredictF(c.xs)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(gm, wm) || !mat.Equal(gv, wv) {
				t.Error("loaded model predicts differently")
			}
			dm, dv := comparePredictions(t, c.cm, got, c.x, c.y, c.xs)
			if dm > 1e-8 || dv > 1e-8 {
				t.Errorf("loaded model and collapsed posterior differ by %g (mean) and %g (variance)", dm, dv)
			}
			bound, err := got.Objective(c.x, c.y, len(c.y), nil)
			if err != nil {
				t.Fatal(err)
			}
			if cb, _ := c.cm.Bound(c.x, c.y); math.Abs(bound-cb) > 1e-8*math.Abs(cb) {
				t.Errorf("loaded model's bound %v, collapsed %v", bound, cb)
			}
		})
	}
}

// wrapped is a kernel GPModel does not know how to copy.
type wrapped struct{ *kernel.Stationary }

// TestGPModelErrors: bad data and kernels GPModel cannot copy are errors,
// not panics, and leave the collapsed model unchanged.
func TestGPModelErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(93, 93))
	x, y, z, o := planeData(rng, 20, 4, 3)
	k, _ := kernel.NewRBF(2, 0.9, 1.2)
	lik, _ := likelihood.NewGaussian(0.05)
	cm, err := collapsed.New(k, lik, z, o, collapsed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := make([]float64, cm.NumParams())
	cm.Params(before)
	nanX := mat.DenseCopyOf(x)
	nanX.Set(3, 1, math.NaN())
	infY := append([]float64(nil), y...)
	infY[5] = math.Inf(1)
	for _, c := range []struct {
		name string
		x    *mat.Dense
		y    []float64
	}{
		{"nil x", nil, y},
		{"nil y", x, nil},
		{"short y", x, y[:10]},
		{"three columns", mat.NewDense(20, 3, nil), y},
		{"NaN in x", nanX, y},
		{"Inf in y", x, infY},
	} {
		if mod, err := cm.GPModel(c.x, c.y); err == nil || mod != nil {
			t.Errorf("%s: model %v, error %v", c.name, mod, err)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
	after := make([]float64, cm.NumParams())
	cm.Params(after)
	if !floats.EqualBits(before, after) {
		t.Error("collapsed model changed")
	}

	var nilModel *collapsed.Model
	if _, err := nilModel.GPModel(x, y); err == nil {
		t.Error("nil model: no error")
	}

	wk, err := collapsed.New(wrapped{k}, lik, z, o, collapsed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wk.GPModel(x, y); err == nil {
		t.Error("uncopyable kernel: no error")
	} else {
		t.Logf("uncopyable kernel: %v", err)
	}
	inner, _ := kernel.NewRBF(2, 1, 1)
	prod, err := kernel.NewProduct(inner, wrapped{k})
	if err != nil {
		t.Fatal(err)
	}
	pk, err := collapsed.New(prod, lik, z, nil, collapsed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pk.GPModel(x, y); err == nil {
		t.Error("product with an uncopyable part: no error")
	}
	// A Clone that returns its receiver copies nothing: the gp model
	// would share the kernel with md.
	sr, _ := kernel.NewRBF(2, 0.9, 1.2)
	sk, err := collapsed.New(&selfClone{sr}, lik, z, o, collapsed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sk.GPModel(x, y); err == nil {
		t.Error("kernel whose Clone returns itself: no error")
	}
}

// selfClone is a kernel whose Clone returns its receiver: no copy.
type selfClone struct{ *kernel.Stationary }

func (k *selfClone) Clone() any { return k }

func kparams(k interface {
	NumParams() int
	Params([]float64)
}) []float64 {
	p := make([]float64, k.NumParams())
	k.Params(p)
	return p
}

func gpParams(mod *gp.Model) []float64 {
	p := make([]float64, mod.NumParams())
	mod.Params(p)
	return p
}

// unitRBF is the fixed kernel fixedRBF evaluates.
var unitRBF, _ = kernel.NewRBF(2, 1, 1)

// fixedRBF is a kernel of a user's with no parameters and no state: a
// zero-size type, whose copies Go may place at the receiver's address.
type fixedRBF struct{}

func (fixedRBF) Dim() int                               { return 2 }
func (fixedRBF) NumParams() int                         { return 0 }
func (fixedRBF) Params([]float64)                       {}
func (fixedRBF) SetParams([]float64) error              { return nil }
func (fixedRBF) Matrix(dst *mat.Dense, x, z mat.Matrix) { unitRBF.Matrix(dst, x, z) }
func (fixedRBF) Diag(dst []float64, x mat.Matrix)       { unitRBF.Diag(dst, x) }
func (fixedRBF) MatrixGrad(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, _ []float64) {
	unitRBF.MatrixGrad(dK, K, x, z, dx, dz, nil)
}
func (fixedRBF) DiagGrad(dDiag []float64, x mat.Matrix, dx *mat.Dense, _ []float64) {
	unitRBF.DiagGrad(dDiag, x, dx, nil)
}
func (*fixedRBF) Clone() any { return &fixedRBF{} }

// TestGPModelZeroSizeKernel: a kernel of a zero-size type with a Clone
// method is copied, alone or as a part of a sum, although Go may give its
// copy the receiver's address (it holds nothing to share).
func TestGPModelZeroSizeKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(95, 95))
	x, y, z, _ := planeData(rng, 20, 4, 3)
	other, _ := kernel.NewRBF(2, 0.7, 0.5)
	sum, err := kernel.NewSum(&fixedRBF{}, other)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Clone() == nil {
		t.Error("Sum.Clone with a zero-size part = nil")
	}
	for _, k := range []kernel.Kernel{&fixedRBF{}, sum} {
		lik, _ := likelihood.NewGaussian(0.05)
		cm, err := collapsed.New(k, lik, z, nil, collapsed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cm.GPModel(x, y); err != nil {
			t.Errorf("%T: %v", k, err)
		}
	}
}
