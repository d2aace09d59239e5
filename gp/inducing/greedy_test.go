package inducing_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
)

func randData(n, d int, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, 2*rng.NormFloat64())
		}
	}
	return x
}

func rbf(t *testing.T, d int, ls float64) kernel.Kernel {
	t.Helper()
	k, err := kernel.NewRBF(d, ls, 1.3)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// denseTrace returns Σᵢ k(xᵢ, xᵢ) − k(xᵢ, z)·K_zz⁻¹·k(z, xᵢ), by a dense
// Cholesky solve of gonum.
func denseTrace(t *testing.T, k kernel.Kernel, x, z *mat.Dense) float64 {
	t.Helper()
	n, _ := x.Dims()
	diag := make([]float64, n)
	k.Diag(diag, x)
	var tr float64
	for _, v := range diag {
		tr += v
	}
	if z == nil {
		return tr
	}
	m, _ := z.Dims()
	kzz := mat.NewDense(m, m, nil)
	k.Matrix(kzz, z, z)
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(m, kzz.RawMatrix().Data)) {
		t.Fatalf("K_zz (%d points) is not positive definite", m)
	}
	kzx := mat.NewDense(m, n, nil)
	k.Matrix(kzx, z, x)
	var sol mat.Dense
	if err := ch.SolveTo(&sol, kzx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		for l := 0; l < m; l++ {
			tr -= kzx.At(l, i) * sol.At(l, i)
		}
	}
	return tr
}

func stack(a, b *mat.Dense) *mat.Dense {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	ra, d := a.Dims()
	rb, _ := b.Dims()
	s := mat.NewDense(ra+rb, d, nil)
	s.Slice(0, ra, 0, d).(*mat.Dense).Copy(a)
	s.Slice(ra, ra+rb, 0, d).(*mat.Dense).Copy(b)
	return s
}

// checkTrace compares every entry of sel.Trace with the dense residual
// trace given z and the first j chosen points, and checks that it never
// increases.
func checkTrace(t *testing.T, k kernel.Kernel, x, z *mat.Dense, sel *inducing.GreedySelection) {
	t.Helper()
	m, d := sel.Points.Dims()
	if len(sel.Trace) != m+1 {
		t.Fatalf("len(Trace) = %d, want %d", len(sel.Trace), m+1)
	}
	scale := denseTrace(t, k, x, nil)
	for j := 0; j <= m; j++ {
		var zj *mat.Dense
		if j > 0 {
			zj = mat.DenseCopyOf(sel.Points.Slice(0, j, 0, d))
		}
		want := denseTrace(t, k, x, stack(z, zj))
		if got := sel.Trace[j]; math.Abs(got-want) > 1e-9*scale {
			t.Errorf("Trace[%d] = %.15g, dense recomputation %.15g", j, got, want)
		}
		if j > 0 && !(sel.Trace[j] < sel.Trace[j-1]) {
			t.Errorf("Trace[%d] = %g does not decrease from Trace[%d] = %g", j, sel.Trace[j], j-1, sel.Trace[j-1])
		}
	}
	for j, r := range sel.Index {
		if !slices.Equal(sel.Points.RawRowView(j), x.RawRowView(r)) {
			t.Errorf("point %d is not row %d of x", j, r)
		}
	}
}

func TestGreedyTraceMatchesDense(t *testing.T) {
	x := randData(300, 2, 1)
	k := rbf(t, 2, 0.7)
	sel, err := inducing.Greedy(k, x, 30, inducing.GreedyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkTrace(t, k, x, nil, sel)
	// The first point is one of largest prior variance: for the RBF kernel
	// all are equal, so it is row 0.
	if sel.Index[0] != 0 {
		t.Errorf("first point is row %d, want 0 (ties go to the lower row)", sel.Index[0])
	}
}

func TestGreedyGivenTraceMatchesDense(t *testing.T) {
	x := randData(250, 2, 2)
	k := rbf(t, 2, 0.8)
	z, err := inducing.KMeans(x, 12, inducing.KMeansOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	sel, err := inducing.GreedyGiven(k, x, z, 15, inducing.GreedyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkTrace(t, k, x, z, sel)
}

// The points GreedyGiven chooses given the first m points of Greedy are
// the next points of Greedy, with or without a subsample.
func TestGreedyGivenContinuesGreedy(t *testing.T) {
	x := randData(400, 3, 4)
	k := rbf(t, 3, 1.1)
	for _, opts := range []inducing.GreedyOptions{{}, {Subsample: 150, Seed: 9}} {
		const m, m2 = 10, 14
		all, err := inducing.Greedy(k, x, m+m2, opts)
		if err != nil {
			t.Fatal(err)
		}
		z, o, err := inducing.GreedyInit(k, x, m, m2, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(z, all.Points.Slice(0, m, 0, 3)) || !mat.Equal(o, all.Points.Slice(m, m+m2, 0, 3)) {
			t.Errorf("%+v: GreedyInit does not split Greedy's points", opts)
		}
		next, err := inducing.GreedyGiven(k, x, z, m2, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(next.Index, all.Index[m:]) {
			t.Errorf("%+v: GreedyGiven chose rows %v, Greedy continued with %v", opts, next.Index, all.Index[m:])
		}
		if !mat.Equal(next.Points, o) {
			t.Errorf("%+v: GreedyGiven's points differ from GreedyInit's O", opts)
		}
		if tz, tg := all.Trace[m], next.Trace[0]; math.Abs(tz-tg) > 1e-9*all.Trace[0] {
			t.Errorf("%+v: residual trace given Z %g by continuing, %g by conditioning", opts, tz, tg)
		}
	}
}

func TestGreedySubsampleDeterministic(t *testing.T) {
	x := randData(500, 2, 5)
	k := rbf(t, 2, 0.5)
	opts := inducing.GreedyOptions{Subsample: 100, Seed: 11}
	a, err := inducing.Greedy(k, x, 20, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := inducing.Greedy(k, x, 20, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Index, b.Index) || !mat.Equal(a.Points, b.Points) {
		t.Error("two runs with the same seed differ")
	}
	opts.Seed = 12
	c, err := inducing.Greedy(k, x, 20, opts)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a.Index, c.Index) {
		t.Error("another seed gave the same subsample's points")
	}
	// The trace is over the 100 candidates: before any point it is their
	// prior trace, 100 times the RBF variance.
	if math.Abs(a.Trace[0]-100*1.3) > 1e-12*130 {
		t.Errorf("Trace[0] = %g, want the prior trace %g of 100 candidates", a.Trace[0], 100*1.3)
	}
}

// clustered returns n points in d dimensions: a fraction dense of them
// uniform in the box [0, wd]ᵈ and the rest spread thinly over the adjacent
// box [wd, wd + ws]ᵈ, with targets from a smooth function plus noise.
func clustered(n, d int, dense, wd, ws float64, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		var s float64
		for j := range row {
			if float64(i) < dense*float64(n) {
				row[j] = wd * rng.Float64()
			} else {
				row[j] = wd + ws*rng.Float64()
			}
			s += math.Sin(1.5 * row[j])
		}
		y[i] = s + 0.1*rng.NormFloat64()
	}
	return x, y
}

func collapsedBound(t *testing.T, k kernel.Kernel, x *mat.Dense, y []float64, z *mat.Dense) float64 {
	t.Helper()
	lik, err := likelihood.NewGaussian(0.01)
	if err != nil {
		t.Fatal(err)
	}
	md, err := collapsed.New(k, lik, z, nil, collapsed.Options{FixInducing: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := md.Bound(x, y)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// On data whose density varies greatly, k-means spends most centres on
// the dense cluster and leaves much of the sparse region unexplained; the
// greedy points cover it, and the collapsed SGPR bound at the same
// hyperparameters is higher than that of the best of four k-means seeds.
// This holds once M suffices to cover the inputs at the kernel's
// lengthscale (here 12 of 1500 points in 1-D, 40 in 2-D); with fewer points
// greedy selection spends them on the sparse region's outskirts and k-means
// does better.
func TestGreedyBeatsKMeansOnClusters(t *testing.T) {
	for _, c := range []struct {
		d      int
		wd, ws float64
		m      int
	}{{1, 3, 6, 12}, {2, 1, 3, 40}} {
		x, y := clustered(1500, c.d, 0.9, c.wd, c.ws, uint64(c.d))
		k := rbf(t, c.d, 0.8)
		sel, err := inducing.Greedy(k, x, c.m, inducing.GreedyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		bg := collapsedBound(t, k, x, y, sel.Points)
		bk, tk := math.Inf(-1), math.Inf(1)
		for seed := uint64(1); seed <= 4; seed++ {
			km, err := inducing.KMeans(x, c.m, inducing.KMeansOptions{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			bk = math.Max(bk, collapsedBound(t, k, x, y, km))
			tk = math.Min(tk, denseTrace(t, k, x, km))
		}
		t.Logf("d = %d, M = %d: collapsed bound greedy %.2f, best k-means %.2f; residual trace greedy %.3g, best k-means %.3g",
			c.d, c.m, bg, bk, sel.Trace[c.m], tk)
		if !(bg > bk) {
			t.Errorf("d = %d, M = %d: greedy bound %g is not above the k-means bound %g", c.d, c.m, bg, bk)
		}
	}
}

func TestGreedyErrors(t *testing.T) {
	x := randData(20, 2, 6)
	k := rbf(t, 2, 1)
	nan := mat.DenseCopyOf(x)
	nan.Set(3, 1, math.NaN())
	inf := mat.DenseCopyOf(x)
	inf.Set(0, 0, math.Inf(-1))
	dup := mat.NewDense(20, 2, nil) // three distinct points
	for i := 0; i < 20; i++ {
		dup.Set(i, 0, float64(i%3))
	}
	for _, c := range []struct {
		name string
		k    kernel.Kernel
		x    *mat.Dense
		m    int
		opts inducing.GreedyOptions
		want string
	}{
		{"nil kernel", nil, x, 3, inducing.GreedyOptions{}, "nil kernel"},
		{"nil data", k, nil, 3, inducing.GreedyOptions{}, "nil data"},
		{"m = 0", k, x, 0, inducing.GreedyOptions{}, "m = 0"},
		{"m > n", k, x, 21, inducing.GreedyOptions{}, "m = 21"},
		{"m > subsample", k, x, 6, inducing.GreedyOptions{Subsample: 5}, "m = 6"},
		{"negative subsample", k, x, 3, inducing.GreedyOptions{Subsample: -1}, "bad options"},
		{"NaN tol", k, x, 3, inducing.GreedyOptions{Tol: math.NaN()}, "bad options"},
		{"NaN data", k, nan, 3, inducing.GreedyOptions{}, "x[3][1] = NaN"},
		{"Inf data", k, inf, 3, inducing.GreedyOptions{}, "not finite"},
		{"dimension", rbf(t, 3, 1), x, 3, inducing.GreedyOptions{}, "kernel takes 3"},
		{"exhausted", k, dup, 4, inducing.GreedyOptions{}, "only 3 of the 4"},
	} {
		_, err := inducing.Greedy(c.k, c.x, c.m, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
	z := mat.NewDense(2, 2, []float64{0, 0, math.NaN(), 1})
	if _, err := inducing.GreedyGiven(k, x, z, 2, inducing.GreedyOptions{}); err == nil || !strings.Contains(err.Error(), "z[1][0]") {
		t.Errorf("NaN z: err = %v", err)
	}
	if _, err := inducing.GreedyGiven(k, x, nil, 2, inducing.GreedyOptions{}); err == nil {
		t.Error("nil z: no error")
	}
	if _, err := inducing.GreedyGiven(k, x, mat.NewDense(2, 3, nil), 2, inducing.GreedyOptions{}); err == nil {
		t.Error("z with 3 columns: no error")
	}
	if _, _, err := inducing.GreedyInit(k, x, 0, 2, inducing.GreedyOptions{}); err == nil {
		t.Error("GreedyInit m = 0: no error")
	}
	if _, _, err := inducing.GreedyInit(k, x, 2, -1, inducing.GreedyOptions{}); err == nil {
		t.Error("GreedyInit m2 = -1: no error")
	}
}
