package benchutil

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
)

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{1, 2, 3, math.NaN(), math.Inf(1)})
	if s.N != 3 || s.Mean != 2 || math.Abs(s.SE-1/math.Sqrt(3)) > 1e-15 {
		t.Fatalf("Summarize = %+v, want n 3, mean 2, se 1/√3", s)
	}
	if got := s.Format(3); got != "2.000 ± 0.577" {
		t.Errorf("Format = %q", got)
	}
	if got := Summarize([]float64{-0.5}).Format(3); got != "-0.500 (n=1)" {
		t.Errorf("one value: %q", got)
	}
	if got := Summarize(nil).Format(3); got != "—" {
		t.Errorf("no value: %q", got)
	}
	js, err := json.Marshal(Summarize([]float64{4}))
	if err != nil {
		t.Fatal(err)
	}
	if string(js) != `{"n":1,"mean":4,"se":null}` {
		t.Errorf("JSON = %s", js)
	}
}

type rec struct {
	A int     `json:"a"`
	B float64 `json:"b"`
}

func TestJSONL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if recs, skipped, err := ReadJSONL[rec](path); err != nil || len(recs) != 0 || skipped != 0 {
		t.Fatalf("missing file: %v %d %v", recs, skipped, err)
	}
	for i := 0; i < 3; i++ {
		if err := AppendJSONL(path, rec{i, float64(i) / 3}); err != nil {
			t.Fatal(err)
		}
	}
	// A write cut short by a crash leaves a partial last line.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"a":9,"b`)
	f.Close()
	recs, skipped, err := ReadJSONL[rec](path)
	if err != nil || skipped != 1 || len(recs) != 3 {
		t.Fatalf("partial line: %v skipped %d err %v", recs, skipped, err)
	}
	for i, r := range recs {
		if r.A != i || r.B != float64(i)/3 {
			t.Errorf("record %d = %+v", i, r)
		}
	}
	// The next append drops the incomplete record.
	if err := AppendJSONL(path, rec{3, 1}); err != nil {
		t.Fatal(err)
	}
	recs, skipped, err = ReadJSONL[rec](path)
	if err != nil || skipped != 0 || len(recs) != 4 || recs[3] != (rec{3, 1}) {
		t.Fatalf("after repair: %v skipped %d err %v", recs, skipped, err)
	}
	// A complete malformed line is an error naming it.
	f, err = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{oops}\n")
	f.Close()
	if err := AppendJSONL(path, rec{5, 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadJSONL[rec](path); err == nil || !strings.Contains(err.Error(), ":5:") {
		t.Fatalf("malformed middle line: err = %v, want one naming line 5", err)
	}
}

func toyModel(t *testing.T) (*gp.Model, *mat.Dense, []float64) {
	t.Helper()
	n := 37
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		v := float64(i) / 6
		x.Set(i, 0, v)
		y[i] = math.Sin(v) + 0.1*math.Cos(7*v)
	}
	z := mat.NewDense(4, 1, []float64{0.5, 2, 3.5, 5})
	k, err := kernel.NewRBF(1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	lik, err := likelihood.NewGaussian(0.1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := gp.NewSVGP(k, lik, z)
	if err != nil {
		t.Fatal(err)
	}
	return m, x, y
}

func TestEvaluate(t *testing.T) {
	m, x, y := toyModel(t)
	met, err := Evaluate(m, x, y, 7)
	if err != nil {
		t.Fatal(err)
	}
	mean, fvar, err := m.PredictF(x)
	if err != nil {
		t.Fatal(err)
	}
	noise := m.Likelihood().(*likelihood.Gaussian).NoiseVariance()
	var se, ll float64
	for i, v := range y {
		mu, s2 := mean.At(i, 0), fvar.At(i, 0)+noise
		se += (v - mu) * (v - mu)
		ll += -0.5*math.Log(2*math.Pi*s2) - 0.5*(v-mu)*(v-mu)/s2
	}
	n := float64(len(y))
	if want := math.Sqrt(se / n); math.Abs(met.RMSE-want) > 1e-12 {
		t.Errorf("RMSE %v, want %v", met.RMSE, want)
	}
	if want := ll / n; math.Abs(met.LogLik-want) > 1e-12 {
		t.Errorf("log-lik %v, want %v", met.LogLik, want)
	}
}
