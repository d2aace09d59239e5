package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// writeTwoOutputs writes n rows with inputs u, v and two targets p, q that
// are scaled, offset copies of one function of u and v, with a header whose
// target columns sit between the inputs.
func writeTwoOutputs(t *testing.T, dir string, n int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 1))
	var b strings.Builder
	b.WriteString("u,p,v,q\n")
	for i := 0; i < n; i++ {
		u, v := 6*rng.Float64()-3, 2*rng.Float64()-1
		g := math.Sin(u) + 0.5*v
		fmt.Fprintf(&b, "%g,%g,%g,%g\n", u, 10+3*g+0.05*rng.NormFloat64(), v, -4-0.5*g+0.02*rng.NormFloat64())
	}
	return writeFile(t, dir, "two.csv", b.String())
}

// TestMultiOutputCLI trains an LMC and independent outputs from the command
// line, predicts (columns per output, in target units) and evaluates, and
// checks that bad combinations of -target and -outputs are usage
// errors.
func TestMultiOutputCLI(t *testing.T) {
	dir := t.TempDir()
	data := writeTwoOutputs(t, dir, 80)
	lmc := filepath.Join(dir, "lmc.json")
	code, _, stderr := runCmd(t, "train", "-quiet", "-model", "solvegp", "-m", "8", "-m2", "4", "-epochs", "300", "-batch", "0", "-lr", "0.05",
		"-target", "p,q", "-outputs", "lmc:1", "-out", lmc, data)
	if code != exitOK {
		t.Fatalf("train lmc: exit %d: %s", code, stderr)
	}
	b, err := modelfile.Load(lmc)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := b.Model.Likelihood().(*likelihood.MultiGaussian)
	if !ok || !g.IsLMC() || g.NumLatent() != 1 || g.NumOutputs() != 2 {
		t.Fatalf("likelihood %T", b.Model.Likelihood())
	}
	if strings.Join(b.Meta.InputNames, ",") != "u,v" || strings.Join(b.Meta.TargetNames, ",") != "p,q" || len(b.Standardizer.YMeans) != 2 {
		t.Fatalf("meta %+v, standardizer %+v", b.Meta, b.Standardizer)
	}
	// The two outputs are anti-correlated: the learned W has opposite signs.
	if w := g.Mixing(); !(w[0]*w[1] < 0) {
		t.Errorf("mixing matrix %v", w)
	}
	code, out, stderr := runCmd(t, "predict", "-model", lmc, data)
	if code != exitOK {
		t.Fatalf("predict: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "f_mean_p,f_var_p,y_mean_p,y_var_p,f_mean_q,f_var_q,y_mean_q,y_var_q" || len(lines) != 81 {
		t.Fatalf("predict: header %q, %d lines", lines[0], len(lines))
	}
	row := strings.Split(lines[1], ",")
	first := strings.Split(strings.Split(readLine(t, data, 1), "\n")[0], ",")
	for k, col := range []int{2, 6} {
		got, _ := strconv.ParseFloat(row[col], 64)
		want, _ := strconv.ParseFloat(first[[]int{1, 3}[k]], 64)
		if math.Abs(got-want) > 0.5 {
			t.Errorf("output %d of row 1: predicted %g, target %g", k, got, want)
		}
	}
	code, out, stderr = runCmd(t, "eval", "-json", "-model", lmc, data)
	if code != exitOK {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	var m metrics
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m.N != 80 || len(m.Outputs) != 2 || m.Outputs[0].Name != "p" || !(m.Outputs[0].RMSE < 0.5) || !(m.Outputs[1].RMSE < 0.1) || m.Bound == nil {
		t.Errorf("eval: %s", out)
	}
	ind := filepath.Join(dir, "ind.json")
	if code, _, stderr := runCmd(t, "train", "-quiet", "-model", "svgp", "-m", "8", "-epochs", "20", "-batch", "0",
		"-target", "2,4", "-out", ind, data); code != exitOK {
		t.Fatalf("train independent: exit %d: %s", code, stderr)
	}
	if b, err := modelfile.Load(ind); err != nil || b.Model.Likelihood().(*likelihood.MultiGaussian).IsLMC() {
		t.Fatalf("independent model: %v", err)
	}
	for _, args := range [][]string{
		{"-target", "p,q", "-outputs", "independent:1"},
		{"-target", "p,q", "-outputs", "lmc:0"},
		{"-target", "p,q", "-outputs", "lmc:x"},
		{"-outputs", "lmc"},
		{"-target", "p,p"},
		{"-target", "p,zz"},
		{"-target", "p,q", "-outputs", "shared"},
		{"-target", "p,q", "-likelihood", "poisson"},
		{"-target", "p,q", "-collapsed"},
		{"-target", "q"},
	} {
		a := append([]string{"train", "-quiet", "-m", "4", "-m2", "2", "-epochs", "1", "-out", filepath.Join(dir, "bad.json")}, args...)
		if code, _, stderr := runCmd(t, append(a, data)...); code != exitUsage {
			t.Errorf("train %v: exit %d, want %d (usage): %s", args, code, exitUsage, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.json")); err == nil {
		t.Error("a refused command wrote its model file")
	}
}

// readLine returns line i (0-based) of the file at path.
func readLine(t *testing.T, path string, i int) string {
	t.Helper()
	buf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(buf), "\n")[i]
}

// TestMultiOutputTargetFlags checks that predict and eval refuse a -target
// list for a single-output model and a single -target column for a
// multi-output one.
func TestMultiOutputTargetFlags(t *testing.T) {
	dir := t.TempDir()
	data := writeTwoOutputs(t, dir, 30)
	multi := filepath.Join(dir, "multi.json")
	if code, _, stderr := runCmd(t, "train", "-quiet", "-model", "svgp", "-m", "4", "-epochs", "2", "-target", "p,q", "-out", multi, data); code != exitOK {
		t.Fatalf("train: exit %d: %s", code, stderr)
	}
	single := filepath.Join(dir, "single.json")
	if code, _, stderr := runCmd(t, "train", "-quiet", "-model", "svgp", "-m", "4", "-epochs", "2", "-out", single, writeRegression(t, dir, 30, 1)); code != exitOK {
		t.Fatalf("train: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "eval", "-model", single, "-target", "a,b", data); code == exitOK || !strings.Contains(stderr, "multi-output model") {
		t.Errorf("eval of a single-output model with a -target list: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "eval", "-model", multi, "-target", "2", data); code == exitOK || !strings.Contains(stderr, "as a list") {
		t.Errorf("eval of a multi-output model with -target 2: exit %d: %s", code, stderr)
	}
	if code, out, stderr := runCmd(t, "eval", "-model", multi, "-target", "2,4", data); code != exitOK || !strings.Contains(out, "output p") {
		t.Errorf("eval with -target 2,4: exit %d: %s%s", code, out, stderr)
	}
}
