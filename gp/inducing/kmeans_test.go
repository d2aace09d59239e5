package inducing

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestKMeansSeparatedBlobs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	centres := [][]float64{{0, 0}, {10, 0}, {0, 10}, {10, 10}}
	const per = 50
	x := mat.NewDense(4*per, 2, nil)
	means := make([][]float64, 4)
	for b, c := range centres {
		means[b] = make([]float64, 2)
		for i := 0; i < per; i++ {
			for j := 0; j < 2; j++ {
				v := c[j] + 0.5*rng.NormFloat64()
				x.Set(b*per+i, j, v)
				means[b][j] += v / per
			}
		}
	}
	got, err := KMeans(x, 4, KMeansOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Each found centre is the sample mean of one blob.
	used := make([]bool, 4)
	for i := 0; i < 4; i++ {
		r := got.RawRowView(i)
		match := -1
		for b, m := range means {
			if math.Hypot(r[0]-m[0], r[1]-m[1]) < 1e-9 {
				match = b
			}
		}
		if match < 0 || used[match] {
			t.Fatalf("centre %v matches no blob mean uniquely (means %v)", r, means)
		}
		used[match] = true
	}
}

func TestAssignMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	n, k, d := 3000, 37, 5 // n spans several GEMM row blocks for some k
	x := randDense(rng, n, d)
	c := randDense(rng, k, d)
	label := make([]int, n)
	dist := make([]float64, n)
	assign(x, c, label, dist, 1)
	for i := 0; i < n; i++ {
		best, bj := math.Inf(1), -1
		for j := 0; j < k; j++ {
			if v := sqDist(x.RawRowView(i), c.RawRowView(j)); v < best {
				best, bj = v, j
			}
		}
		if math.Abs(dist[i]-best) > 1e-12*math.Max(1, best) {
			t.Fatalf("row %d: distance %v, brute force %v", i, dist[i], best)
		}
		if label[i] != bj && math.Abs(sqDist(x.RawRowView(i), c.RawRowView(label[i]))-best) > 1e-12 {
			t.Fatalf("row %d: label %d, brute force %d", i, label[i], bj)
		}
	}
}

func randDense(rng *rand.Rand, r, c int) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := range m.RawMatrix().Data {
		m.RawMatrix().Data[i] = rng.NormFloat64()
	}
	return m
}

func distinctRows(t *testing.T, c *mat.Dense) {
	t.Helper()
	k, _ := c.Dims()
	seen := map[string]bool{}
	for i := 0; i < k; i++ {
		key := fmt.Sprint(c.RawRowView(i))
		if seen[key] {
			t.Fatalf("duplicate centre %s", key)
		}
		seen[key] = true
		for _, v := range c.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite centre %v", c.RawRowView(i))
			}
		}
	}
}

func TestKMeansDuplicatesAndSmallN(t *testing.T) {
	// Three distinct points, each repeated; five centres requested.
	pts := [][]float64{{1, 2}, {3, -1}, {0, 0}}
	x := mat.NewDense(30, 2, nil)
	for i := 0; i < 30; i++ {
		x.SetRow(i, pts[i%3])
	}
	c, err := KMeans(x, 5, KMeansOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	distinctRows(t, c)
	// Every centre is at or within jitter of one of the points, and each
	// point has a centre exactly on it.
	exact := 0
	for i := 0; i < 5; i++ {
		r := c.RawRowView(i)
		near := false
		for _, p := range pts {
			dd := math.Hypot(r[0]-p[0], r[1]-p[1])
			if dd == 0 {
				exact++
			}
			near = near || dd < 0.05
		}
		if !near {
			t.Errorf("centre %v is not near a data point", r)
		}
	}
	if exact != 3 {
		t.Errorf("%d centres exactly on data points, want 3: %v", exact, mat.Formatted(c))
	}
	// k > n, including a single point and a constant column.
	x1 := mat.NewDense(2, 2, []float64{5, 0, 5, 1})
	c, err = KMeans(x1, 4, KMeansOptions{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	distinctRows(t, c)
	c, err = KMeans(mat.NewDense(1, 1, []float64{0}), 3, KMeansOptions{})
	if err != nil {
		t.Fatal(err)
	}
	distinctRows(t, c)
}

func TestKMeansReproducibleAndSubsample(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := randDense(rng, 2000, 3)
	opts := KMeansOptions{Seed: 9, Subsample: 500, Threads: 1}
	a, err := KMeans(x, 20, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := KMeans(x, 20, opts)
	if !mat.Equal(a, b) {
		t.Error("same seed, different centres")
	}
	opts.Seed = 10
	c, _ := KMeans(x, 20, opts)
	if mat.Equal(a, c) {
		t.Error("different seeds, same centres")
	}
	// Lloyd iterations improve on the k-means++ seeding.
	full, _ := KMeans(x, 20, KMeansOptions{Seed: 9, Threads: 1})
	seedOnly, _ := KMeans(x, 20, KMeansOptions{Seed: 9, Threads: 1, MaxIter: 1})
	if inertia(x, full) >= inertia(x, seedOnly) {
		t.Errorf("Lloyd did not improve: %v vs %v", inertia(x, full), inertia(x, seedOnly))
	}
}

func inertia(x, c *mat.Dense) float64 {
	n, _ := x.Dims()
	label := make([]int, n)
	dist := make([]float64, n)
	assign(x, c, label, dist, 1)
	var s float64
	for _, v := range dist {
		s += v
	}
	return s
}

func TestInit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := randDense(rng, 300, 2)
	z, o, err := Init(x, 5, 7, KMeansOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r, c := z.Dims(); r != 5 || c != 2 {
		t.Errorf("Z %d×%d", r, c)
	}
	if r, c := o.Dims(); r != 7 || c != 2 {
		t.Errorf("O %d×%d", r, c)
	}
	all := mat.NewDense(12, 2, nil)
	all.Stack(z, o)
	distinctRows(t, all)
	// The split is the first m and next m2 of the same k-means run.
	c, _ := KMeans(x, 12, KMeansOptions{Seed: 1})
	if !mat.Equal(all, c) {
		t.Error("Z, O are not the first m and next m2 centres")
	}
	z, o, err = Init(x, 4, 0, KMeansOptions{})
	if err != nil || o != nil || z.RawMatrix().Rows != 4 {
		t.Errorf("m2 = 0: %v %v", err, o)
	}
	for _, c := range [][2]int{{0, 1}, {1, -1}} {
		if _, _, err := Init(x, c[0], c[1], KMeansOptions{}); err == nil {
			t.Errorf("Init(m=%d, m2=%d) accepted", c[0], c[1])
		}
	}
	bad := mat.DenseCopyOf(x)
	bad.Set(3, 1, math.NaN())
	if _, err := KMeans(bad, 2, KMeansOptions{}); err == nil {
		t.Error("NaN accepted")
	}
	if _, err := KMeans(x, 2, KMeansOptions{Tol: math.NaN()}); err == nil {
		t.Error("NaN tolerance accepted")
	}
	if _, err := KMeans(nil, 2, KMeansOptions{}); err == nil {
		t.Error("nil accepted")
	}
	if _, err := KMeans(&mat.Dense{}, 2, KMeansOptions{}); err == nil {
		t.Error("empty data accepted")
	}
}

// BenchmarkKMeans times k-means with the regression benchmarks' sizes
// (kin40k training set, M + M2 = 1024 + 1024 centres), 10 Lloyd
// iterations. With -short it uses a small problem.
func BenchmarkKMeans(b *testing.B) {
	sizes := []struct{ n, d, k int }{{25600, 8, 2048}, {10000, 18, 512}}
	if testing.Short() {
		sizes = []struct{ n, d, k int }{{2000, 8, 64}}
	}
	for _, s := range sizes {
		b.Run(fmt.Sprintf("n=%d,d=%d,k=%d", s.n, s.d, s.k), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			x := randDense(rng, s.n, s.d)
			for i := 0; i < b.N; i++ {
				if _, err := KMeans(x, s.k, KMeansOptions{Seed: 1, MaxIter: 10, Subsample: s.n}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestKMeansExtremes checks k-means at the edges of float64: duplicates
// among values whose float spacing exceeds the jitter are still made
// distinct (this looped forever), values whose squares overflow and an
// absurd k are errors rather than infinite centres or a fatal
// out-of-memory.
func TestKMeansExtremes(t *testing.T) {
	x := mat.NewDense(2, 1, []float64{1e16, 1e16 + 2})
	c, err := KMeans(x, 3, KMeansOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[float64]bool{}
	for i := 0; i < 3; i++ {
		v := c.At(i, 0)
		if seen[v] || math.IsInf(v, 0) || math.IsNaN(v) {
			t.Fatalf("centres %v not distinct and finite", c.RawMatrix().Data)
		}
		seen[v] = true
	}
	if _, err := KMeans(mat.NewDense(2, 1, []float64{1e306, -1e306}), 2, KMeansOptions{}); err == nil {
		t.Error("values near the float64 limit accepted")
	}
	if _, err := KMeans(mat.NewDense(2, 3, nil), 1<<40, KMeansOptions{}); err == nil {
		t.Error("k = 2⁴⁰ accepted")
	}
}

// TestKMeansFarFromOrigin: k-means does not depend on where the data sit.
// With the distances expanded as ‖x‖² + ‖c‖² − 2·x·cᵀ on the raw data, an
// offset of 1e8 on a unit spread (or of 1 on a spread of 1e-8) made every
// distance wrong by about its own size, and the clustering was far worse
// than that of the same data at the origin.
func TestKMeansFarFromOrigin(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, k = 2000, 20
	base := randDense(rng, n, 2)
	for i := range base.RawMatrix().Data {
		base.RawMatrix().Data[i] = 6*rng.Float64() - 3
	}
	// objective is the mean squared distance of the rows of base to the
	// nearest of the centres c, mapped back by (c − off)/scale.
	objective := func(c *mat.Dense, off, scale float64) float64 {
		var s float64
		for i := 0; i < n; i++ {
			best := math.Inf(1)
			for j := 0; j < k; j++ {
				var d2 float64
				for t, v := range c.RawRowView(j) {
					e := (v-off)/scale - base.At(i, t)
					d2 += e * e
				}
				best = math.Min(best, d2)
			}
			s += best
		}
		return s / n
	}
	c, err := KMeans(base, k, KMeansOptions{Seed: 3, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := objective(c, 0, 1)
	for _, tr := range []struct{ off, scale float64 }{{1e8, 1}, {1, 1e-8}} {
		x := mat.NewDense(n, 2, nil)
		for i, v := range base.RawMatrix().Data {
			x.RawMatrix().Data[i] = tr.off + tr.scale*v
		}
		c, err := KMeans(x, k, KMeansOptions{Seed: 3, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := objective(c, tr.off, tr.scale); got > 1.05*want {
			t.Errorf("data at %g with spread %g: mean squared distance %.4g (in units of the spread), at the origin %.4g", tr.off, tr.scale, got, want)
		}
	}
}

// TestKMeansCentredNotShifted checks that standardized data (means zero up
// to rounding) are not shifted, so that they are clustered exactly as
// before the shift existed, and that data at an offset are.
func TestKMeansCentredNotShifted(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	x := randDense(rng, 500, 3)
	means := make([]float64, 3)
	for i := 0; i < 500; i++ {
		for j, v := range x.RawRowView(i) {
			means[j] += v / 500
		}
	}
	for i := 0; i < 500; i++ {
		for j := range 3 {
			x.Set(i, j, x.At(i, j)-means[j])
		}
	}
	if xc, shift := centredForDistances(x); xc != x || shift != nil {
		t.Errorf("centred data shifted by %v", shift)
	}
	for i := 0; i < 500; i++ {
		x.Set(i, 1, x.At(i, 1)+100)
	}
	if xc, shift := centredForDistances(x); xc == x || shift == nil || math.Abs(shift[1]-100) > 1e-9 {
		t.Errorf("data at an offset of 100: shift %v", shift)
	}
}
