package train

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
)

// blrFactor is the BLR test model's q(w) as a gp.GaussianFactor.
func blrFactor(d int) gp.GaussianFactor {
	return gp.GaussianFactor{Mean: 0, Chol: d, N: d, LogDiag: true}
}

func TestNaturalGradientStepOneIsOptimal(t *testing.T) {
	x, y := blrData(60, 21)
	b := newBLR(3)
	// Start away from the prior.
	p := make([]float64, b.NumParams())
	b.Params(p)
	for i := range p[:9] {
		p[i] += 0.3 * float64(i%3-1)
	}
	b.SetParams(p)
	ng := &gp.NaturalGradient{ObjectiveModel: b, Factors: []gp.GaussianFactor{blrFactor(3)}}
	if err := ng.NaturalStep(x, y, 60, 1); err != nil {
		t.Fatal(err)
	}
	mean, cov := b.posterior(x, y, b.s)
	var s mat.SymDense
	s.SymOuterK(1, b.l)
	for i := 0; i < 3; i++ {
		if math.Abs(b.m[i]-mean.AtVec(i)) > 1e-10 {
			t.Errorf("mean %v, posterior %v", b.m, mean.RawVector().Data)
			break
		}
		for j := 0; j < 3; j++ {
			if math.Abs(s.At(i, j)-cov.At(i, j)) > 1e-10*math.Max(1, math.Abs(cov.At(i, j))) {
				t.Errorf("covariance %v, posterior %v", mat.Formatted(&s), mat.Formatted(cov))
				i = 3
				break
			}
		}
	}
	mask := make([]bool, b.NumParams())
	ng.VariationalParams(mask)
	for i, v := range mask {
		if v != (i < 9) {
			t.Errorf("mask %v", mask)
			break
		}
	}
}

// TestNaturalGradientMatchesInterpolation compares a step of size γ on a
// mini-batch with the BLR model's own closed-form natural-parameter
// interpolation (exact for this conjugate model).
func TestNaturalGradientMatchesInterpolation(t *testing.T) {
	x, y := blrData(80, 22)
	xb := mat.DenseCopyOf(x.Slice(0, 20, 0, 3))
	a, b := newBLR(3), newBLR(3)
	ng := &gp.NaturalGradient{ObjectiveModel: a, Factors: []gp.GaussianFactor{blrFactor(3)}}
	for _, gamma := range []float64{0.1, 0.5} {
		if err := ng.NaturalStep(xb, y[:20], 80, gamma); err != nil {
			t.Fatal(err)
		}
		if err := b.NaturalStep(xb, y[:20], 80, gamma); err != nil {
			t.Fatal(err)
		}
		pa, pb := make([]float64, a.NumParams()), make([]float64, b.NumParams())
		a.Params(pa)
		b.Params(pb)
		for i := range pa {
			if math.Abs(pa[i]-pb[i]) > 1e-9*math.Max(1, math.Abs(pb[i])) {
				t.Errorf("γ = %v: adapter %v, closed form %v", gamma, pa, pb)
				break
			}
		}
	}
}

func TestNaturalGradientInFit(t *testing.T) {
	x, y := blrData(100, 23)
	b := newBLR(3)
	_, lmlOpt := b.optimalLogML(x, y)
	ng := &gp.NaturalGradient{ObjectiveModel: b, Factors: []gp.GaussianFactor{blrFactor(3)}}
	res, err := Fit(context.Background(), ng, x, y, Config{MaxSteps: 800, NaturalStep: 1, Schedule: StepDecay{0.05, 0.3, 300}})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := b.Objective(x, y, 100, make([]float64, b.NumParams()))
	if gap := lmlOpt - f; gap > 1e-4 || gap < -1e-9 {
		t.Errorf("ELBO %v, optimum %v (%d steps)", f, lmlOpt, res.Steps)
	}
	// A step that breaks positive definiteness is an error.
	bad := &gp.NaturalGradient{ObjectiveModel: newBLR(3), Factors: []gp.GaussianFactor{{Mean: 0, Chol: 3, N: 3, LogDiag: true}}}
	if err := bad.NaturalStep(x, y, 100, 2); err == nil {
		t.Error("step size 2 accepted")
	}
	if err := (&gp.NaturalGradient{ObjectiveModel: newBLR(3), Factors: []gp.GaussianFactor{{Mean: 0, Chol: 9, N: 3}}}).NaturalStep(x, y, 100, 1); err == nil {
		t.Error("out-of-range factor accepted")
	}
}

// TestNaturalGradientBadLayout checks that factors that do not fit in the
// model's parameters (out of range, negative, or so large that their sums
// overflow) and a nil Model are errors of NaturalStep, NaturalUpdate and
// Fit, and that VariationalParams marks nothing for them instead of
// indexing out of range: Fit called it before the factors were checked.
func TestNaturalGradientBadLayout(t *testing.T) {
	x, y := blrData(20, 24)
	b := newBLR(3)
	p := b.NumParams()
	p0 := make([]float64, p)
	b.Params(p0)
	for _, fs := range [][]gp.GaussianFactor{
		nil,
		{{Mean: 1000, Chol: 2000, N: 3}},
		{{Mean: -1, Chol: -5, N: 3}},
		{{Mean: 0, Chol: 3, N: 0}},
		{{Mean: math.MaxInt, Chol: 3, N: 1}},
		{{Mean: 0, Chol: math.MaxInt, N: 1}},
		{{Mean: 0, Chol: 0, N: 1 << 32}}, // N(N+1)/2 overflows to a negative int
		{{Mean: 0, Chol: 0, N: math.MaxInt}},
		{blrFactor(3), {Mean: 0, Chol: 10, N: 2}},
	} {
		ng := &gp.NaturalGradient{ObjectiveModel: b, Factors: fs}
		mask := make([]bool, p)
		ng.VariationalParams(mask)
		for i, v := range mask {
			if v {
				t.Errorf("factors %+v: VariationalParams marked entry %d", fs, i)
				break
			}
		}
		if err := ng.NaturalStep(x, y, 20, 1); err == nil {
			t.Errorf("factors %+v: NaturalStep accepted them", fs)
		}
		if err := ng.NaturalUpdate(p0, make([]float64, p), make([]float64, p), 1); err == nil {
			t.Errorf("factors %+v: NaturalUpdate accepted them", fs)
		}
		for _, shared := range []bool{false, true} {
			res, err := Fit(context.Background(), ng, x, y, Config{Epochs: 1, NaturalStep: 1, NaturalSharedGradient: shared})
			if err == nil || !strings.Contains(err.Error(), "NaturalGradient") || res.Steps != 0 || res.Rejected != 0 {
				t.Errorf("factors %+v, shared gradient %v: Fit = %+v, %v", fs, shared, res, err)
			}
		}
	}
	got := make([]float64, p)
	if b.Params(got); fmt.Sprint(got) != fmt.Sprint(p0) {
		t.Errorf("refused layouts changed the model: %v, was %v", got, p0)
	}
	// A fitting layout is marked; a mask of the wrong length is not.
	ng := &gp.NaturalGradient{ObjectiveModel: b, Factors: []gp.GaussianFactor{blrFactor(3)}}
	mask := make([]bool, p)
	ng.VariationalParams(mask)
	if !mask[0] || !mask[3] || !mask[8] || mask[9] {
		t.Errorf("mask %v", mask)
	}
	ng.VariationalParams(make([]bool, 5))
	// Without a model: errors, not nil dereferences.
	nilModel := &gp.NaturalGradient{Factors: []gp.GaussianFactor{blrFactor(3)}}
	if err := nilModel.NaturalStep(x, y, 20, 1); err == nil {
		t.Error("NaturalStep without a model accepted")
	}
	if err := nilModel.NaturalUpdate(p0, make([]float64, p), make([]float64, p), 1); err == nil {
		t.Error("NaturalUpdate without a model accepted")
	}
	for _, step := range []float64{1, 0} { // natural steps or Adam alone
		if _, err := Fit(context.Background(), nilModel, x, y, Config{Epochs: 1, NaturalStep: step}); err == nil || !strings.Contains(err.Error(), "nil Model") {
			t.Errorf("Fit (NaturalStep %v) of a NaturalGradient without a model: %v", step, err)
		}
	}
	// Factors that do not fit matter only to natural steps: Adam alone
	// trains the wrapped model.
	bad := &gp.NaturalGradient{ObjectiveModel: newBLR(3), Factors: []gp.GaussianFactor{{Mean: 1000, Chol: 2000, N: 3}}}
	if res, err := Fit(context.Background(), bad, x, y, Config{Epochs: 1}); err != nil || res.Steps != 1 {
		t.Errorf("Fit with Adam alone of a NaturalGradient with unused bad factors: %+v, %v", res, err)
	}
}

// zeroGrad is a model whose objective is flat, so a natural step keeps q
// where it is: it times the O(N³) linear algebra of NaturalStep alone.
type zeroGrad struct{ p []float64 }

func (m *zeroGrad) NumParams() int                { return len(m.p) }
func (m *zeroGrad) Params(dst []float64)          { copy(dst, m.p) }
func (m *zeroGrad) SetParams(src []float64) error { copy(m.p, src); return nil }
func (m *zeroGrad) Objective(x *mat.Dense, y []float64, n int, grad []float64) (float64, error) {
	clear(grad)
	return 0, nil
}

// BenchmarkNaturalStep times one natural-gradient step on one Gaussian
// factor of size M (excluding the model's objective). With -short, M = 32.
func BenchmarkNaturalStep(b *testing.B) {
	sizes := []int{256, 1024}
	if testing.Short() {
		sizes = []int{32}
	}
	for _, m := range sizes {
		b.Run("M="+strconv.Itoa(m), func(b *testing.B) {
			model := &zeroGrad{p: make([]float64, m+m*(m+1)/2)}
			for i := 0; i < m; i++ {
				model.p[m+i*(i+1)/2+i] = 0.5 // softplus⁻¹ of the diagonal
			}
			ng := &gp.NaturalGradient{ObjectiveModel: model, Factors: []gp.GaussianFactor{{Mean: 0, Chol: m, N: m}}}
			x := mat.NewDense(1, 1, nil)
			for i := 0; i < b.N; i++ {
				if err := ng.NaturalStep(x, []float64{0}, 1, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
