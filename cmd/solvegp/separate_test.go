package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// TestSeparateOutputsCLI trains a model of separate outputs from the
// command line, checks that each output's parameters are those of a
// single-target run on its column with the same flags (the outputs share
// nothing, and train standardizes each target on its own), then predicts
// and evaluates with the saved model.
func TestSeparateOutputsCLI(t *testing.T) {
	dir := t.TempDir()
	data := writeTwoOutputs(t, dir, 60)
	flags := []string{"-quiet", "-model", "solvegp", "-m", "6", "-m2", "3", "-epochs", "15", "-batch", "20", "-lr", "0.03", "-seed", "4", "-mean", "linear"}
	sep := filepath.Join(dir, "sep.json")
	code, out, stderr := runCmd(t, append(append([]string{"train"}, flags...), "-target", "p,q", "-outputs", "separate", "-out", sep, data)...)
	if code != exitOK {
		t.Fatalf("train separate: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "60 training rows") {
		t.Errorf("train summary: %s", out)
	}
	b, err := modelfile.Load(sep)
	if err != nil {
		t.Fatal(err)
	}
	if b.Separate == nil || b.Separate.NumOutputs() != 2 || strings.Join(b.Meta.TargetNames, ",") != "p,q" ||
		strings.Join(b.Meta.InputNames, ",") != "u,v" || len(b.Standardizer.YMeans) != 2 {
		t.Fatalf("bundle: separate %v, meta %+v", b.Separate != nil, b.Meta)
	}
	if b.Separate.Output(0).Mean() == nil || b.Separate.Output(1).Mean() == nil {
		t.Fatal("-mean linear: an output without its mean function")
	}
	// Each output equals a single-target run on a file of the inputs and
	// that target.
	lines := strings.Split(strings.TrimSpace(readFileString(t, data)), "\n")
	for p, col := range []int{1, 3} {
		var sb strings.Builder
		for _, l := range lines {
			f := strings.Split(l, ",")
			sb.WriteString(f[0] + "," + f[2] + "," + f[col] + "\n")
		}
		single := filepath.Join(dir, "single.json")
		in := writeFile(t, dir, "single.csv", sb.String())
		if code, _, stderr := runCmd(t, append(append([]string{"train"}, flags...), "-out", single, in)...); code != exitOK {
			t.Fatalf("train single: exit %d: %s", code, stderr)
		}
		sb1, err := modelfile.Load(single)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, sb1.Model.NumParams())
		sb1.Model.Params(want)
		got := make([]float64, b.Separate.Output(p).NumParams())
		b.Separate.Output(p).Params(got)
		if len(got) != len(want) {
			t.Fatalf("output %d: %d parameters, single run %d", p, len(got), len(want))
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-9*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("output %d parameter %d: separate %v, single run %v", p, i, got[i], want[i])
			}
		}
		if s := sb1.Standardizer; math.Abs(s.YMean-b.Standardizer.YMeans[p]) > 1e-12*math.Abs(s.YMean) {
			t.Errorf("output %d: target mean %v, single run %v", p, b.Standardizer.YMeans[p], s.YMean)
		}
	}
	code, out, stderr = runCmd(t, "predict", "-model", sep, data)
	if code != exitOK {
		t.Fatalf("predict: exit %d: %s", code, stderr)
	}
	pl := strings.Split(strings.TrimSpace(out), "\n")
	if pl[0] != "f_mean_p,f_var_p,y_mean_p,y_var_p,f_mean_q,f_var_q,y_mean_q,y_var_q" || len(pl) != 61 {
		t.Fatalf("predict: header %q, %d lines", pl[0], len(pl))
	}
	code, out, stderr = runCmd(t, "eval", "-json", "-model", sep, data)
	if code != exitOK {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	var m metrics
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m.N != 60 || len(m.Outputs) != 2 || m.Outputs[1].Name != "q" || !(m.Outputs[0].RMSE < 1) || !(m.Outputs[1].RMSE < 0.3) || m.Bound == nil {
		t.Errorf("eval: %s", out)
	}
}

// readFileString returns the contents of the file at path.
func readFileString(t *testing.T, path string) string {
	t.Helper()
	buf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf)
}

// TestMissingTargetsCLI trains two-output models on a CSV file whose
// target columns have a few empty, NA and NaN cells: they load as missing
// values, eval counts each output's observed values, and an empty input
// cell, a row without any target and a missing single target are errors
// naming their line.
func TestMissingTargetsCLI(t *testing.T) {
	dir := t.TempDir()
	lines := strings.Split(strings.TrimSpace(readFileString(t, writeTwoOutputs(t, dir, 50))), "\n")
	missing := map[int]int{3: 1, 10: 1, 17: 3, 24: 3, 31: 1} // line (0 the header) -> field
	marks := []string{"", "NA", "NaN", " ", "na"}
	k := 0
	for i, f := range missing {
		fields := strings.Split(lines[i], ",")
		fields[f] = marks[k%len(marks)]
		k++
		lines[i] = strings.Join(fields, ",")
	}
	csvPath := writeFile(t, dir, "missing.csv", strings.Join(lines, "\n")+"\n")
	for _, mode := range []string{"separate", "independent"} {
		out := filepath.Join(dir, mode+".json")
		if code, _, stderr := runCmd(t, "train", "-quiet", "-model", "svgp", "-m", "6", "-epochs", "5", "-target", "p,q", "-outputs", mode, "-out", out, csvPath); code != exitOK {
			t.Fatalf("train %s: exit %d: %s", mode, code, stderr)
		}
		code, js, stderr := runCmd(t, "eval", "-json", "-model", out, csvPath)
		if code != exitOK {
			t.Fatalf("eval %s: exit %d: %s", mode, code, stderr)
		}
		var m metrics
		if err := json.Unmarshal([]byte(js), &m); err != nil {
			t.Fatal(err)
		}
		if m.N != 50 || len(m.Outputs) != 2 || m.Outputs[0].N != 47 || m.Outputs[1].N != 48 {
			t.Errorf("eval %s: %s", mode, js)
		}
	}
	// The same rows as Parquet, the missing targets as NaN values.
	cols := make([][]float64, 4)
	for _, l := range lines[1:] {
		for j, f := range strings.Split(l, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				v = math.NaN()
			}
			cols[j] = append(cols[j], v)
		}
	}
	var pq bytes.Buffer
	if err := data.WriteParquet(&pq, []string{"u", "p", "v", "q"}, cols, 0); err != nil {
		t.Fatal(err)
	}
	pqPath := filepath.Join(dir, "missing.parquet")
	if err := os.WriteFile(pqPath, pq.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, "train", "-quiet", "-model", "svgp", "-m", "6", "-epochs", "5", "-target", "p,q", "-outputs", "separate",
		"-out", filepath.Join(dir, "pq.json"), pqPath); code != exitOK {
		t.Fatalf("train on Parquet: exit %d: %s", code, stderr)
	}
	// Both files hold the same values and missing targets: the same model.
	var params [2][]float64
	for k, file := range []string{filepath.Join(dir, "separate.json"), filepath.Join(dir, "pq.json")} {
		b, err := modelfile.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		params[k] = make([]float64, b.Separate.NumParams())
		b.Separate.Params(params[k])
	}
	for i := range params[0] {
		if params[0][i] != params[1][i] {
			t.Fatalf("parameter %d: %v trained on CSV, %v on Parquet", i, params[0][i], params[1][i])
		}
	}
	bad := map[string]string{
		"an empty input": "u,p,v,q\n1,2,,4\n2,3,4,5\n",
		"every target":   "u,p,v,q\n1,2,3,4\n2,,4,NA\n",
	}
	want := map[string]string{"an empty input": "bad.csv:2:3:", "every target": "bad.csv:3: every target of the row is missing"}
	for name, content := range bad {
		in := writeFile(t, dir, "bad.csv", content)
		code, _, stderr := runCmd(t, "train", "-quiet", "-m", "1", "-epochs", "1", "-target", "p,q", "-out", filepath.Join(dir, "bad.json"), in)
		if code == exitOK || !strings.Contains(stderr, want[name]) {
			t.Errorf("%s: exit %d: %s", name, code, stderr)
		}
	}
	in := writeFile(t, dir, "single.csv", "u,v,y\n1,2,3\n2,3,\n3,4,5\n")
	code, _, stderr := runCmd(t, "train", "-quiet", "-m", "1", "-epochs", "1", "-out", filepath.Join(dir, "bad.json"), in)
	if code == exitOK || !strings.Contains(stderr, "single.csv:3:3:") || !strings.Contains(stderr, "missing value") {
		t.Errorf("missing single target: exit %d: %s", code, stderr)
	}
}
