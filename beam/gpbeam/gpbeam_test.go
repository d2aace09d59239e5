package gpbeam

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// TestMain runs the pipelines of the tests on the in-process Prism runner
// (-runner=direct selects the older direct runner).
func TestMain(m *testing.M) { ptest.Main(m) }

// newBundle returns an SVGP on two inputs named a and b (target y) with
// the likelihood lik and perturbed parameters, so that q(u) is not its
// initial value.
func newBundle(t testing.TB, lik gp.Likelihood, std *data.Standardizer) (*modelfile.Bundle, []byte) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	z := mat.NewDense(6, 2, nil)
	for i := 0; i < 6; i++ {
		z.Set(i, 0, rng.NormFloat64())
		z.Set(i, 1, rng.NormFloat64())
	}
	k, err := kernel.NewRBF(2, 1.3, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	m, err := gp.NewSVGP(k, lik, z, gp.WithWhitening(true))
	if err != nil {
		t.Fatal(err)
	}
	params := make([]float64, m.NumParams())
	m.Params(params)
	for i := range params {
		params[i] += 0.2 * rng.NormFloat64()
	}
	if err := m.SetParams(params); err != nil {
		t.Fatal(err)
	}
	b := &modelfile.Bundle{Model: m, Standardizer: std, Meta: modelfile.Meta{InputNames: []string{"a", "b"}, TargetName: "y"}}
	buf, err := modelfile.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	b, err = modelfile.Unmarshal(buf)
	if err != nil {
		t.Fatal(err)
	}
	return b, buf
}

// rows draws n rows (a, b, y) in raw units; label gives y from a and b.
func rows(rng *rand.Rand, n int, label func(a, b float64) float64) [][3]float64 {
	out := make([][3]float64, n)
	for i := range out {
		a, b := 1+2*rng.NormFloat64(), -2+0.5*rng.NormFloat64()
		out[i] = [3]float64{a, b, label(a, b)}
	}
	return out
}

// shardSpec is a test shard: its rows and the columns it writes, by name
// (a, b, y) in file order, with or without a header line, gzipped or not.
type shardSpec struct {
	rows    [][3]float64
	cols    []string
	header  bool
	gzip    bool
	parquet bool // a Parquet file (whose columns are stored sorted by name)
}

// write writes the shard to path.
func (s shardSpec) write(t *testing.T, path string) {
	t.Helper()
	var buf bytes.Buffer
	if s.parquet {
		cols := make([][]float64, len(s.cols))
		for j, c := range s.cols {
			for _, r := range s.rows {
				cols[j] = append(cols[j], r[strings.Index("aby", c)])
			}
		}
		if err := data.WriteParquet(&buf, s.cols, cols, 16); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if s.header {
		buf.WriteString(strings.Join(s.cols, ",") + "\n")
	}
	for _, r := range s.rows {
		for j, c := range s.cols {
			if j > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(strconv.FormatFloat(r[strings.Index("aby", c)], 'g', -1, 64))
		}
		buf.WriteByte('\n')
	}
	out := buf.Bytes()
	if s.gzip {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(out)
		w.Close()
		out = z.Bytes()
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// inputs returns the model inputs (a, b) of rows.
func inputs(rows [][3]float64) *mat.Dense {
	x := mat.NewDense(len(rows), 2, nil)
	for i, r := range rows {
		x.Set(i, 0, r[0])
		x.Set(i, 1, r[1])
	}
	return x
}

var gaussStd = &data.Standardizer{XMean: []float64{1, -2}, XScale: []float64{2, 0.5}, YMean: 3, YScale: 1.5}

func regression(a, b float64) float64 { return 3 + 1.5*math.Sin(a) + b/2 }

// writeShards writes specs as part-<i>.csv[.gz] in a new directory and
// returns its glob and the shards in the order MatchShards gives them.
func writeShards(t *testing.T, specs []shardSpec) (string, []Shard) {
	dir := t.TempDir()
	for i, s := range specs {
		name := fmt.Sprintf("part-%d.csv", i)
		if s.gzip {
			name += ".gz"
		}
		if s.parquet {
			name = fmt.Sprintf("part-%d.parquet", i)
		}
		s.write(t, filepath.Join(dir, name))
	}
	glob := filepath.Join(dir, "part-*")
	shards, err := MatchShards(t.Context(), glob)
	if err != nil {
		t.Fatal(err)
	}
	if len(shards) != len(specs) {
		t.Fatalf("%d shards matched, want %d", len(shards), len(specs))
	}
	return glob, shards
}

func close12(got, want float64) bool {
	return got == want || math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want))
}

// Predict writes, for every shard, its rows followed by Bundle.Predict's
// prediction of each row, whatever the shard's column order, header,
// compression or format (CSV or Parquet).
func TestPredictMatchesBundle(t *testing.T) {
	lik, _ := likelihood.NewGaussian(0.3)
	b, modelJSON := newBundle(t, lik, gaussStd)
	rng := rand.New(rand.NewPCG(3, 4))
	specs := []shardSpec{
		{rows: rows(rng, 37, regression), cols: []string{"a", "b", "y"}, header: true},
		{rows: rows(rng, 20, regression), cols: []string{"b", "a"}, header: true},
		{rows: rows(rng, 11, regression), cols: []string{"a", "b"}},
		{rows: rows(rng, 25, regression), cols: []string{"y", "b", "a"}, header: true, gzip: true},
		{rows: rows(rng, 40, regression), cols: []string{"a", "b", "y"}, header: true, parquet: true},
	}
	_, shards := writeShards(t, specs)
	prefix := filepath.Join(t.TempDir(), "pred")
	p, s := beam.NewPipelineWithRoot()
	Predict(s, modelJSON, shards, prefix)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	for i, spec := range specs {
		want, err := b.Predict(inputs(spec.rows))
		if err != nil {
			t.Fatal(err)
		}
		checkPredictions(t, OutputPath(prefix, i, len(specs)), spec, want)
	}
}

// checkPredictions compares the output shard at path with the rows of spec
// and the predictions want.
func checkPredictions(t *testing.T, path string, spec shardSpec, want *modelfile.Prediction) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := append([]string(nil), spec.cols...)
	if !spec.header {
		for j := range spec.cols {
			header[j] = fmt.Sprintf("column_%d", j+1)
		}
	}
	header = append(header, PredictionColumns(1)...)
	if got := strings.Join(recs[0], ","); got != strings.Join(header, ",") {
		t.Fatalf("%s: header %q, want %q", path, got, strings.Join(header, ","))
	}
	if len(recs)-1 != len(spec.rows) {
		t.Fatalf("%s: %d rows, want %d", path, len(recs)-1, len(spec.rows))
	}
	for i, rec := range recs[1:] {
		var wantRow []float64
		for _, c := range spec.cols {
			wantRow = append(wantRow, spec.rows[i][strings.Index("aby", c)])
		}
		wantRow = append(wantRow, want.FMean.At(i, 0), want.FVar.At(i, 0), want.YMean.At(i, 0), want.YVar.At(i, 0))
		for j, field := range rec {
			v, err := strconv.ParseFloat(field, 64)
			if err != nil || !close12(v, wantRow[j]) {
				t.Fatalf("%s: row %d column %q = %s, want %v", path, i+1, header[j], field, wantRow[j])
			}
		}
	}
}

// Eval's metrics equal those computed in one process over all the rows:
// RMSE and mean log predictive density in raw and standardized units.
func TestEvalMatchesSingleProcess(t *testing.T) {
	lik, _ := likelihood.NewGaussian(0.3)
	b, modelJSON := newBundle(t, lik, gaussStd)
	rng := rand.New(rand.NewPCG(5, 6))
	specs := []shardSpec{
		{rows: rows(rng, 40, regression), cols: []string{"a", "b", "y"}, header: true},
		{rows: rows(rng, 13, regression), cols: []string{"y", "a", "b"}, header: true, gzip: true},
		{rows: rows(rng, 29, regression), cols: []string{"a", "b", "y"}},
		{rows: rows(rng, 35, regression), cols: []string{"y", "b", "a"}, header: true, parquet: true},
	}
	_, shards := writeShards(t, specs)
	got := runEval(t, modelJSON, shards)

	var all [][3]float64
	for _, s := range specs {
		all = append(all, s.rows...)
	}
	x, y := inputs(all), make([]float64, len(all))
	for i, r := range all {
		y[i] = r[2]
	}
	pred, err := b.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := b.LogPredictive(x, y)
	if err != nil {
		t.Fatal(err)
	}
	var se, ll float64
	for i := range y {
		r := y[i] - pred.YMean.At(i, 0)
		se += r * r
		ll += lp[i]
	}
	n := float64(len(y))
	rmse, meanLL := math.Sqrt(se/n), ll/n
	if got.N != int64(len(y)) || !got.HasRMSE || got.HasAccuracy || !got.HasStandard {
		t.Fatalf("metrics %+v: wrong count or kind", got)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"RMSE", got.RMSE, rmse},
		{"log-lik", got.LogLik, meanLL},
		{"standardized RMSE", got.RMSEStandard, rmse / gaussStd.YScale},
		{"standardized log-lik", got.LogLikStandard, meanLL - gaussStd.LogDensityOffset()},
	} {
		if !close12(c.got, c.want) {
			t.Errorf("%s = %.17g, single process %.17g", c.name, c.got, c.want)
		}
	}
}

// runEval runs Eval over shards and returns the metrics it writes.
func runEval(t *testing.T, modelJSON []byte, shards []Shard) Metrics {
	t.Helper()
	out := filepath.Join(t.TempDir(), "metrics.json")
	p, s := beam.NewPipelineWithRoot()
	metrics, err := Eval(s, modelJSON, shards)
	if err != nil {
		t.Fatal(err)
	}
	WriteMetrics(s, metrics, out)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	m, err := ReadMetrics(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A Bernoulli classifier's accuracy counts the rows whose p > 0.5 agrees
// with label 1, over all shards.
func TestEvalClassifier(t *testing.T) {
	lik, _ := likelihood.NewBernoulli()
	b, modelJSON := newBundle(t, lik, &data.Standardizer{XMean: []float64{1, -2}, XScale: []float64{2, 0.5}, YScale: 1})
	rng := rand.New(rand.NewPCG(7, 8))
	label := func(a, b float64) float64 {
		if a+rng.NormFloat64() > 1 {
			return 1
		}
		return 0
	}
	specs := []shardSpec{
		{rows: rows(rng, 31, label), cols: []string{"a", "b", "y"}, header: true},
		{rows: rows(rng, 17, label), cols: []string{"b", "y", "a"}, header: true},
	}
	_, shards := writeShards(t, specs)
	got := runEval(t, modelJSON, shards)
	var correct, n int
	var ll float64
	for _, s := range specs {
		x, y := inputs(s.rows), make([]float64, len(s.rows))
		for i, r := range s.rows {
			y[i] = r[2]
		}
		pred, err := b.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		lp, err := b.LogPredictive(x, y)
		if err != nil {
			t.Fatal(err)
		}
		for i := range y {
			if (pred.YMean.At(i, 0) > 0.5) == (y[i] == 1) {
				correct++
			}
			ll += lp[i]
			n++
		}
	}
	if !got.HasAccuracy || got.HasRMSE || got.Accuracy != float64(correct)/float64(n) || !close12(got.LogLik, ll/float64(n)) {
		t.Errorf("metrics %+v, want accuracy %d/%d and log-lik %g", got, correct, n, ll/float64(n))
	}
	if correct == 0 || correct == n {
		t.Errorf("accuracy %d/%d does not test the count", correct, n)
	}
}

// A shard that does not parse, or whose columns are not the model's
// inputs, fails the pipeline with an error that names the file.
func TestBadShardFailsWithFileName(t *testing.T) {
	lik, _ := likelihood.NewGaussian(0.3)
	_, modelJSON := newBundle(t, lik, gaussStd)
	for _, bad := range []string{"a,b\n1,zz\n", "a,c\n1,2\n", "1,2,3,4\n"} {
		dir := t.TempDir()
		good := shardSpec{rows: rows(rand.New(rand.NewPCG(1, 1)), 5, regression), cols: []string{"a", "b"}, header: true}
		good.write(t, filepath.Join(dir, "part-0.csv"))
		badPath := filepath.Join(dir, "part-1.csv")
		if err := os.WriteFile(badPath, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		shards, err := MatchShards(t.Context(), filepath.Join(dir, "part-*.csv"))
		if err != nil {
			t.Fatal(err)
		}
		p, s := beam.NewPipelineWithRoot()
		Predict(s, modelJSON, shards, filepath.Join(dir, "out"))
		err = ptest.Run(p)
		if err == nil || !strings.Contains(err.Error(), badPath) {
			t.Errorf("shard %q: error %v, want one naming %s", bad, err, badPath)
		}
	}
}

// MatchShards refuses a glob that matches nothing.
func TestMatchShardsNoMatch(t *testing.T) {
	if _, err := MatchShards(t.Context(), filepath.Join(t.TempDir(), "*.csv")); err == nil {
		t.Error("no error for a glob without matches")
	}
}

// exactSum rounds to the exact sum of its values (computed with big.Float)
// whatever the order of additions and merges, even under cancellation.
func TestExactSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := 0; trial < 50; trial++ {
		var vals []float64
		for i := 0; i < 200; i++ {
			v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
			vals = append(vals, v, -v*(1+1e-15*rng.NormFloat64()))
		}
		exact := new(big.Float).SetPrec(4000)
		for _, v := range vals {
			exact.Add(exact, new(big.Float).SetFloat64(v))
		}
		want, _ := exact.Float64()
		var all exactSum
		for _, v := range vals {
			all = all.add(v)
		}
		rng.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
		var left, right exactSum
		for i, v := range vals {
			if i%3 == 0 {
				left = left.add(v)
			} else {
				right = right.add(v)
			}
		}
		if got := all.round(); got != want {
			t.Fatalf("trial %d: sum %.17g, exact %.17g", trial, got, want)
		}
		if got := right.merge(left).round(); got != want {
			t.Fatalf("trial %d: merged sum %.17g, exact %.17g", trial, got, want)
		}
	}
}

// Predict writes Parquet shards for a prefix ending in .parquet: the input
// columns by name, then the prediction columns, each value that of
// Bundle.Predict. A truncated Parquet input fails the pipeline with an
// error naming it, and leaves no file for it, whole or partial, beside the
// others' complete outputs.
func TestPredictParquet(t *testing.T) {
	lik, _ := likelihood.NewGaussian(0.3)
	b, modelJSON := newBundle(t, lik, gaussStd)
	rng := rand.New(rand.NewPCG(13, 14))
	specs := []shardSpec{
		{rows: rows(rng, 30, regression), cols: []string{"b", "y", "a"}, header: true, parquet: true},
		{rows: rows(rng, 12, regression), cols: []string{"a", "b"}, header: true},
	}
	glob, shards := writeShards(t, specs)
	outDir := t.TempDir()
	prefix := filepath.Join(outDir, "pred.parquet")
	p, s := beam.NewPipelineWithRoot()
	Predict(s, modelJSON, shards, prefix)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	for i, spec := range specs {
		path := OutputPath(prefix, i, len(specs))
		if want := filepath.Join(outDir, fmt.Sprintf("pred-%05d-of-00002.parquet", i)); path != want {
			t.Fatalf("output path %s, want %s", path, want)
		}
		tab, err := data.LoadParquet(path, data.Options{NoTarget: true})
		if err != nil {
			t.Fatal(err)
		}
		want, err := b.Predict(inputs(spec.rows))
		if err != nil {
			t.Fatal(err)
		}
		wantCols := map[string]func(i int) float64{
			"f_mean": func(i int) float64 { return want.FMean.At(i, 0) }, "f_var": func(i int) float64 { return want.FVar.At(i, 0) },
			"y_mean": func(i int) float64 { return want.YMean.At(i, 0) }, "y_var": func(i int) float64 { return want.YVar.At(i, 0) },
		}
		for _, c := range spec.cols {
			k := strings.Index("aby", c)
			wantCols[c] = func(i int) float64 { return spec.rows[i][k] }
		}
		if n, c := tab.X.Dims(); n != len(spec.rows) || c != len(wantCols) {
			t.Fatalf("%s: %d×%d (columns %v), want %d×%d", path, n, c, tab.Names, len(spec.rows), len(wantCols))
		}
		for j, name := range tab.Names {
			f, ok := wantCols[name]
			if !ok {
				t.Fatalf("%s: column %q", path, name)
			}
			for r := range spec.rows {
				if got := tab.X.At(r, j); got != f(r) {
					t.Fatalf("%s: row %d column %q = %v, want %v", path, r+1, name, got, f(r))
				}
			}
		}
	}

	// Truncate the Parquet input: predict and eval fail naming it.
	bad := strings.TrimSuffix(glob, "part-*") + "part-0.parquet"
	full, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, full[:len(full)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	outDir2 := t.TempDir()
	prefix2 := filepath.Join(outDir2, "pred.parquet")
	p, s = beam.NewPipelineWithRoot()
	Predict(s, modelJSON, shards, prefix2)
	if err := ptest.Run(p); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("predict over a truncated Parquet shard: error %v, want one naming %s", err, bad)
	}
	left, err := os.ReadDir(outDir2)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		if e.Name() != filepath.Base(OutputPath(prefix2, 1, 2)) {
			t.Errorf("left in the output directory: %s", e.Name())
			continue
		}
		if _, err := data.LoadParquet(filepath.Join(outDir2, e.Name()), data.Options{NoTarget: true}); err != nil {
			t.Errorf("the good shard's output: %v", err)
		}
	}
	p, s = beam.NewPipelineWithRoot()
	if _, err := Eval(s, modelJSON, shards); err != nil {
		t.Fatal(err)
	}
	if err := ptest.Run(p); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("eval over a truncated Parquet shard: error %v, want one naming %s", err, bad)
	}
}
