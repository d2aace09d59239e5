package gpbeam

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// Refit over several shards, CSV and Parquet, gives the q(u) that gp/collapsed computes on
// all the rows at once (its GPModel, unwhitened SVGP with the same
// parameter layout), to 1e-9, and leaves every other parameter alone.
func TestRefitMatchesCollapsed(t *testing.T) {
	lik, _ := likelihood.NewGaussian(0.3)
	b, modelJSON := newBundle(t, lik, gaussStd)
	rng := rand.New(rand.NewPCG(11, 12))
	specs := []shardSpec{
		{rows: rows(rng, 50, regression), cols: []string{"a", "b", "y"}, header: true},
		{rows: rows(rng, 21, regression), cols: []string{"y", "b", "a"}, header: true, gzip: true},
		{rows: rows(rng, 34, regression), cols: []string{"a", "b", "y"}},
		{rows: rows(rng, 40, regression), cols: []string{"b", "a", "y"}, header: true, parquet: true},
	}
	_, shards := writeShards(t, specs)
	out := filepath.Join(t.TempDir(), "refit.json")
	p, s := beam.NewPipelineWithRoot()
	if err := Refit(s, modelJSON, shards, out); err != nil {
		t.Fatal(err)
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	got, err := modelfile.Load(out)
	if err != nil {
		t.Fatal(err)
	}

	var all [][3]float64
	for _, sp := range specs {
		all = append(all, sp.rows...)
	}
	x, y := inputs(all), make([]float64, len(all))
	for i, r := range all {
		y[i] = r[2]
	}
	if err := gaussStd.TransformX(x); err != nil {
		t.Fatal(err)
	}
	gaussStd.TransformY(y)
	k := b.Model.Kernel().(gp.Cloner).Clone().(kernel.Kernel)
	noise := b.Model.Likelihood().(*likelihood.Gaussian).Clone().(*likelihood.Gaussian)
	cm, err := collapsed.New(k, noise, b.Model.Z(), nil, collapsed.Options{FixInducing: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := cm.GPModel(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if got.Model.Whitened() || want.NumParams() != got.Model.NumParams() {
		t.Fatalf("refit model: whitened %v, %d parameters; want unwhitened, %d", got.Model.Whitened(), got.Model.NumParams(), want.NumParams())
	}
	gotP, wantP := make([]float64, want.NumParams()), make([]float64, want.NumParams())
	got.Model.Params(gotP)
	want.Params(wantP)
	for i := range wantP {
		if math.Abs(gotP[i]-wantP[i]) > 1e-9*math.Max(1, math.Abs(wantP[i])) {
			t.Errorf("parameter %d = %.15g, collapsed optimum %.15g", i, gotP[i], wantP[i])
		}
	}
	// The refitted model predicts as gp/collapsed's posterior.
	xs := mat.NewDense(3, 2, []float64{0.1, -0.2, 1, 1, -2, 0.5})
	post, err := cm.Posterior(x, y)
	if err != nil {
		t.Fatal(err)
	}
	mean := make([]float64, 3)
	if err := post.Predict(xs, mean, nil); err != nil {
		t.Fatal(err)
	}
	fm, _, err := got.Model.PredictF(xs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range mean {
		if math.Abs(fm.At(i, 0)-mean[i]) > 1e-9 {
			t.Errorf("refit mean at %d = %.15g, collapsed %.15g", i, fm.At(i, 0), mean[i])
		}
	}
}

// Refit refuses models whose optimal q(u) is not the collapsed one.
func TestRefitRefusesNonGaussian(t *testing.T) {
	lik, _ := likelihood.NewBernoulli()
	_, modelJSON := newBundle(t, lik, nil)
	_, s := beam.NewPipelineWithRoot()
	if err := Refit(s, modelJSON, []Shard{{Path: "x.csv"}}, "out.json"); err == nil {
		t.Error("no error refitting a Bernoulli model")
	}
}
