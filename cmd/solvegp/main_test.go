package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// runCmd runs the command line and returns its exit code, stdout and stderr.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCtx(t, context.Background(), nil, args...)
}

func runCtx(t *testing.T, ctx context.Context, stderr *bytes.Buffer, args ...string) (int, string, string) {
	t.Helper()
	var out bytes.Buffer
	if stderr == nil {
		stderr = new(bytes.Buffer)
	}
	code := run(ctx, args, &out, stderr)
	return code, out.String(), stderr.String()
}

// writeRegression writes n rows of a 2-input regression problem with a
// header and an offset target (so that standardization matters).
func writeRegression(t *testing.T, dir string, n int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("a,b,target\n")
	for i := 0; i < n; i++ {
		a, c := 6*rng.Float64()-3, 6*rng.Float64()-3
		fmt.Fprintf(&b, "%g,%g,%g\n", a, c, 10+3*math.Sin(a)+c+0.1*rng.NormFloat64())
	}
	path := filepath.Join(dir, fmt.Sprintf("reg%d.csv", seed))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUsage(t *testing.T) {
	if code, _, errOut := runCmd(t); code != exitUsage || !strings.Contains(errOut, "Commands:") {
		t.Fatalf("no arguments: exit %d, stderr %q", code, errOut)
	}
	if code, out, _ := runCmd(t, "-h"); code != exitOK || !strings.Contains(out, "demo") {
		t.Fatalf("-h: exit %d, stdout %q", code, out)
	}
	if code, _, errOut := runCmd(t, "fit"); code != exitUsage || !strings.Contains(errOut, `unknown command "fit"`) {
		t.Fatalf("unknown command: exit %d, stderr %q", code, errOut)
	}
	for _, c := range commands() {
		code, _, errOut := runCmd(t, c.name, "-h")
		if code != exitOK || !strings.Contains(errOut, "Usage: solvegp "+c.name) || !strings.Contains(errOut, "Flags:") {
			t.Errorf("%s -h: exit %d, stderr %q", c.name, code, errOut)
		}
		if code, _, _ := runCmd(t, c.name, "-no-such-flag"); code != exitUsage {
			t.Errorf("%s with a bad flag: exit %d", c.name, code)
		}
	}
	if code, _, errOut := runCmd(t, "train"); code != exitUsage || !strings.Contains(errOut, "one data file") {
		t.Fatalf("train without a file: exit %d, %q", code, errOut)
	}
}

func TestTrainPredictEval(t *testing.T) {
	dir := t.TempDir()
	trainCSV := writeRegression(t, dir, 300, 1)
	testCSV := writeRegression(t, dir, 100, 2)
	model := filepath.Join(dir, "m.json")
	curves := filepath.Join(dir, "curves.png")
	code, out, errOut := runCmd(t, "train", "-m", "12", "-m2", "12", "-kernel", "matern32", "-epochs", "40", "-batch", "50",
		"-valid", "0.2", "-patience", "50", "-plot", curves, "-out", model, "-json", trainCSV)
	if code != exitOK {
		t.Fatalf("train: exit %d, stderr %s", code, errOut)
	}
	var sum trainSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("train -json output %q: %v", out, err)
	}
	if sum.NTrain != 240 || sum.NValid != 60 || sum.Epochs != 40 || len(sum.History) != 40 || sum.Valid == nil || sum.Bound == nil {
		t.Fatalf("summary %+v", sum)
	}
	if h := sum.History; h[0].Bound == nil || h[len(h)-1].Bound == nil || !(*h[len(h)-1].Bound > *h[0].Bound) || h[0].ValidLL == nil {
		t.Fatalf("bound did not improve or no validation: %+v", h)
	}
	if !strings.Contains(errOut, "step ") || !strings.Contains(errOut, "ETA") || !strings.Contains(errOut, "bound") {
		t.Fatalf("no progress bar on stderr: %q", errOut)
	}
	if png, err := os.ReadFile(curves); err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("curves PNG: %v", err)
	}
	b, err := modelfile.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if b.Meta.TargetName != "target" || b.Standardizer == nil || b.Standardizer.YMean < 5 {
		t.Fatalf("model meta %+v, standardizer %+v", b.Meta, b.Standardizer)
	}

	// eval: a trained model predicts the held-out file well.
	code, out, errOut = runCmd(t, "eval", "-model", model, "-json", testCSV)
	if code != exitOK {
		t.Fatalf("eval: exit %d: %s", code, errOut)
	}
	var m metrics
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m.N != 100 || m.RMSE == nil || *m.RMSE > 1 || *m.RMSEStd > 0.4 || m.Bound == nil || m.LogLikStd == nil {
		t.Fatalf("eval metrics %s", out)
	}
	if code, out, _ := runCmd(t, "eval", "-model", model, testCSV); code != exitOK || !strings.Contains(out, "RMSE") {
		t.Fatalf("eval text: %d %q", code, out)
	}

	// predict: the CSV holds exactly what the loaded model predicts, for
	// a file with and without the target column.
	tab, err := data.LoadCSV(testCSV, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := b.Predict(tab.X)
	if err != nil {
		t.Fatal(err)
	}
	var inputsOnly strings.Builder
	inputsOnly.WriteString("a,b\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&inputsOnly, "%s,%s\n", strconv.FormatFloat(tab.X.At(i, 0), 'g', -1, 64), strconv.FormatFloat(tab.X.At(i, 1), 'g', -1, 64))
	}
	xOnly := writeFile(t, dir, "x.csv", inputsOnly.String())
	for _, in := range []string{testCSV, xOnly} {
		predOut := filepath.Join(dir, "pred.csv")
		if code, _, errOut := runCmd(t, "predict", "-model", model, "-out", predOut, in); code != exitOK {
			t.Fatalf("predict %s: exit %d: %s", in, code, errOut)
		}
		got, err := data.LoadCSV(predOut, data.Options{NoTarget: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Names[0] != "f_mean" || got.Names[3] != "y_var" {
			t.Fatalf("header %v", got.Names)
		}
		for i := 0; i < 100; i++ {
			if got.X.At(i, 0) != want.FMean.At(i, 0) || got.X.At(i, 1) != want.FVar.At(i, 0) ||
				got.X.At(i, 2) != want.YMean.At(i, 0) || got.X.At(i, 3) != want.YVar.At(i, 0) {
				t.Fatalf("row %d of the predictions differs", i)
			}
		}
	}
	// To standard output.
	if code, out, _ := runCmd(t, "predict", "-model", model, xOnly); code != exitOK || strings.Count(out, "\n") != 101 {
		t.Fatalf("predict to stdout: exit %d, %d lines", code, strings.Count(out, "\n"))
	}
}

func TestClassification(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 3))
	var b strings.Builder
	for i := 0; i < 240; i++ {
		a, c := 4*rng.Float64()-2, 4*rng.Float64()-2
		label := 0
		switch {
		case a > 0.5:
			label = 2
		case c > 0:
			label = 1
		}
		fmt.Fprintf(&b, "%g,%g,%d\n", a, c, label)
	}
	path := writeFile(t, dir, "cls.csv", b.String())
	model := filepath.Join(dir, "cls.json")
	for _, lik := range []string{"robustmax", "softmax"} {
		code, _, errOut := runCmd(t, "train", "-likelihood", lik, "-model", "svgp", "-m", "16", "-epochs", "40", "-batch", "60", "-lr", "0.05", "-quiet", "-out", model, path)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", lik, code, errOut)
		}
		code, out, _ := runCmd(t, "eval", "-model", model, "-json", path)
		var m metrics
		if code != exitOK || json.Unmarshal([]byte(out), &m) != nil || m.Accuracy == nil || *m.Accuracy < 0.8 || m.RMSE != nil {
			t.Fatalf("%s eval: exit %d, %s", lik, code, out)
		}
		// The softmax bound is a Monte Carlo estimate, and says so.
		if sampled := lik == "softmax"; m.Bound == nil || m.BoundMC != sampled {
			t.Errorf("%s eval: bound %v, Monte Carlo %v", lik, m.Bound, m.BoundMC)
		}
		_, text, _ := runCmd(t, "eval", "-model", model, path)
		if sampled := lik == "softmax"; strings.Contains(text, "a Monte Carlo estimate") != sampled {
			t.Errorf("%s eval: %q", lik, text)
		}
		code, out, _ = runCmd(t, "predict", "-model", model, path)
		if code != exitOK || !strings.HasPrefix(out, "f_mean_0,f_mean_1,f_mean_2,f_var_0") {
			t.Fatalf("%s predict: exit %d, %.80q", lik, code, out)
		}
	}
}

// TestBadInputs checks that malformed training files fail with the file,
// line and column of the fault, leave an earlier model file untouched and
// write no plot.
func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	cases := []struct {
		name, content string
		extra         []string
		want          string // the whole message after "solvegp train: <dir>/"
	}{
		{"ragged", "a,b,y\n1,2,3\n4,5\n", nil, "ragged.csv:3:3: ragged row: 2 fields, want 3 as on the first line"},
		{"long", "a,b,y\n1,2,3,4\n", nil, "long.csv:2:4: ragged row: 4 fields, want 3 as on the first line"},
		{"nonnumber", "a,b,y\n1,2,3\n4,x5,6\n", nil, `nonnumber.csv:3:2: not a number: "x5"`},
		{"nan", "1,2,3\n4,NaN,6\n", nil, `nan.csv:2:2: non-finite value "NaN"`},
		{"inf", "1,2,3\n4,5,+Inf\n", nil, `inf.csv:2:3: non-finite value "+Inf"`},
		{"overflow", "1,2,3\n4,5,1e400\n", nil, `overflow.csv:2:3: number out of float64 range: "1e400"`},
		{"quote", "a,b\"c,y\n1,2,3\n", nil, `quote.csv:1:2: malformed CSV: bare " in non-quoted-field`},
		{"empty", "", nil, "empty.csv: empty file"},
		{"headeronly", "a,b,y\n", nil, "headeronly.csv: no data rows after the header"},
		{"target", "a,b,y\n1,2,3\n", []string{"-target", "7"}, "target.csv: target column 7 out of range: the file has 3 columns"},
		{"fewrows", "1,2,3\n4,5,6\n7,8,9\n", nil,
			"fewrows.csv: 3 training rows (of 3, after holding out 0 for validation), fewer than the 200 inducing points asked for (-m 100, -m2 100)"},
		{"fewvalid", "1,2,3\n4,5,6\n7,8,9\n10,11,12\n", []string{"-m", "2", "-m2", "1", "-valid", "0.5"},
			"fewvalid.csv: 2 training rows (of 4, after holding out 2 for validation), fewer than the 3 inducing points asked for (-m 2, -m2 1)"},
		{"labels", "1,2,0\n4,5,1\n7,8,2\n", []string{"-likelihood", "bernoulli", "-m", "2", "-m2", "1"},
			"labels.csv:3:3: target 2: Bernoulli labels must be 0 or 1"},
		// The line counts the header and blank lines.
		{"labelsheader", "a,b,y\n1,2,0\n\n4,5,1\n7,8,0.5\n", []string{"-likelihood", "bernoulli", "-m", "2", "-m2", "1"},
			"labelsheader.csv:5:3: target 0.5: Bernoulli labels must be 0 or 1"},
		{"poisson", "y,a\n1,2\n-1,5\n", []string{"-likelihood", "poisson", "-target", "1", "-m", "1", "-m2", "1"},
			"poisson.csv:3:1: target -1: Poisson targets must be non-negative integers"},
		{"classes", "1,2,0\n4,5,1\n7,8,2\n", []string{"-likelihood", "softmax", "-classes", "2", "-m", "2", "-m2", "1"},
			"classes.csv:3:3: target 2: class labels must be integers in [0, 2)"},
	}
	for _, tc := range cases {
		path := writeFile(t, dir, tc.name+".csv", tc.content)
		if err := os.WriteFile(out, []byte("earlier model"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"train", "-quiet", "-out", out, "-plot", out + ".png"}, tc.extra...)
		code, stdout, errOut := runCmd(t, append(args, path)...)
		if code != exitError {
			t.Errorf("%s: exit %d, want %d (stderr %q)", tc.name, code, exitError, errOut)
		}
		if want := "solvegp train: " + filepath.Join(dir, tc.want) + "\n"; errOut != want {
			t.Errorf("%s: stderr\n%q, want\n%q", tc.name, errOut, want)
		}
		if stdout != "" {
			t.Errorf("%s: stdout %q", tc.name, stdout)
		}
		if b, _ := os.ReadFile(out); string(b) != "earlier model" {
			t.Errorf("%s: the earlier model file was changed", tc.name)
		}
		if _, err := os.Stat(out + ".png"); err == nil {
			t.Errorf("%s: a plot was written", tc.name)
		}
	}
	checkNoTempFiles(t, dir)
}

// TestBadTrainFlags checks that bad flag values and unusable outputs fail
// before training, and that a run in which no step succeeds writes no
// model.
func TestBadTrainFlags(t *testing.T) {
	dir := t.TempDir()
	good := writeRegression(t, dir, 60, 4)
	out := filepath.Join(dir, "out.json")
	// Bad flag values.
	for _, args := range [][]string{
		{"-model", "gpr"}, {"-m", "0"}, {"-kernel", "cosine"}, {"-likelihood", "student"}, {"-lr", "-1"},
		{"-valid", "1.5"}, {"-header", "maybe"}, {"-noise", "NaN"}, {"-patience", "3"}, {"-decay", "2"}, {"-decay-every", "-1"},
		{"-natural", "1.5"}, {"-natural", "-0.5"}, {"-natural", "NaN"}, {"-natural-fresh"},
	} {
		code, _, errOut := runCmd(t, append(append([]string{"train", "-quiet", "-out", out}, args...), good)...)
		if code != exitError || !strings.Contains(errOut, args[0]) {
			t.Errorf("train %v: exit %d, stderr %q", args, code, errOut)
		}
	}
	if code, _, errOut := runCmd(t, "train", "-quiet", "-out", out, filepath.Join(dir, "missing.csv")); code != exitError || !strings.Contains(errOut, "missing.csv") {
		t.Errorf("missing file: exit %d, %q", code, errOut)
	}
	// Checked before any training (the 100000 epochs asked for would
	// outlast the test's time limit): outputs in a missing directory, a
	// validation fraction that holds out nothing, too many classes, a
	// negative thread count (an invalid value, exit 1).
	missing := filepath.Join(dir, "no-such-dir", "m.json")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-out", missing}, exitError, "-out " + missing + ": cannot write in"},
		{[]string{"-plot", missing + ".png"}, exitError, "-plot " + missing + ".png: cannot write in"},
		{[]string{"-checkpoint", missing + ".ckpt"}, exitError, "-checkpoint " + missing + ".ckpt: cannot write in"},
		{[]string{"-out", dir}, exitError, "-out " + dir + " is a directory"},
		{[]string{"-out", "-", "-plot", "-"}, exitError, "-out and -plot are the same file"},
		{[]string{"-valid", "0.001"}, exitError, "-valid 0.001 holds out no row of 60"},
		{[]string{"-likelihood", "softmax", "-classes", "100000"}, exitError, "-classes 100000: need 2 to 65536"},
		{[]string{"-classes", "3"}, exitError, "-classes 3: only for -likelihood robustmax or softmax, not gaussian"},
		{[]string{"-threads", "-3"}, exitError, "-threads -3: must be ≥ 0"},
	} {
		args := append(append([]string{"train", "-quiet", "-m", "5", "-m2", "5", "-epochs", "100000", "-out", out}, c.args...), good)
		code, _, errOut := runCmd(t, args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("train %v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
	// A run in which no step succeeds writes no model and fails.
	if err := os.WriteFile(out, []byte("earlier model"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCmd(t, "train", "-quiet", "-m", "5", "-m2", "5", "-epochs", "2", "-variance", "1e308", "-out", out, good)
	if code != exitError || !strings.Contains(errOut, "no training step succeeded") {
		t.Errorf("all steps rejected: exit %d, stderr %q", code, errOut)
	}
	if b, _ := os.ReadFile(out); string(b) != "earlier model" {
		t.Error("all steps rejected: the earlier model file was changed")
	}
	checkNoTempFiles(t, dir)
}

// TestBadPredictEvalInputs checks predict and eval against corrupt or
// newer model files and malformed, mismatched or out-of-range inputs: each
// fails with the file and position of the fault and writes no output.
func TestBadPredictEvalInputs(t *testing.T) {
	dir := t.TempDir()
	good := writeRegression(t, dir, 60, 4)
	model := filepath.Join(dir, "m.json")
	if code, _, errOut := runCmd(t, "train", "-quiet", "-m", "5", "-m2", "5", "-epochs", "2", "-batch", "20", "-out", model, good); code != exitOK {
		t.Fatalf("train: %d %s", code, errOut)
	}
	// A Bernoulli model for label errors in eval.
	var cls strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&cls, "%d,%d,%d\n", i%7, i%5, i%2)
	}
	clsModel := filepath.Join(dir, "cls.json")
	if code, _, errOut := runCmd(t, "train", "-quiet", "-likelihood", "bernoulli", "-m", "3", "-m2", "2", "-epochs", "1", "-out", clsModel,
		writeFile(t, dir, "cls.csv", cls.String())); code != exitOK {
		t.Fatalf("train a classifier: %d %s", code, errOut)
	}
	corrupt := writeFile(t, dir, "corrupt.json", `{"format": "solvegp-model", "version": 1, "kind": }`)
	newer := writeFile(t, dir, "newer.json", `{"format": "solvegp-model", "version": 99}`)
	wide := writeFile(t, dir, "wide.csv", "1,2,3,4\n")
	ragged := writeFile(t, dir, "r.csv", "1,2\n3\n")
	nonnum := writeFile(t, dir, "nonnum.csv", "a,b\n1,2\n3,four\n")
	nan := writeFile(t, dir, "nan.csv", "1,2,3\nNaN,2,3\n")
	empty := writeFile(t, dir, "empty.csv", "")
	// Inputs beyond modelfile.MaxInput standard deviations: the line counts
	// the header and the blank line, the column the target column.
	hugeX := writeFile(t, dir, "hugex.csv", "a,b\n1,2\n\n3,1e200\n")
	hugeFirst := writeFile(t, dir, "hugefirst.csv", "y,a,b\n3,1,2\n3,-1e200,4\n")
	hugeMid := writeFile(t, dir, "hugemid.csv", "a,y,b\n1,0,2\n1,0,1e200\n")
	badLabel := writeFile(t, dir, "badlabel.csv", "a,b,y\n1,2,0\n\n3,4,2\n")
	pred := filepath.Join(dir, "pred.csv")
	for _, tc := range []struct {
		args []string
		want string // the whole message is "solvegp <command>: " + want
	}{
		{[]string{"predict", "-model", corrupt, good}, corrupt + ": modelfile: invalid model file: line 1, column 51"},
		{[]string{"predict", "-model", newer, good}, "version 99"},
		{[]string{"predict", "-model", filepath.Join(dir, "none.json"), good}, "none.json"},
		{[]string{"predict", "-model", model, "-out", pred, wide}, wide + ": 4 columns, the model takes 2 inputs"},
		{[]string{"predict", "-model", model, "-out", pred, ragged}, ragged + ":2:2: ragged row: 1 fields, want 2 as on the first line"},
		{[]string{"predict", "-model", model, "-out", pred, nonnum}, nonnum + `:3:2: not a number: "four"`},
		{[]string{"predict", "-model", model, "-out", pred, nan}, nan + `:2:1: non-finite value "NaN"`},
		{[]string{"predict", "-model", model, "-out", pred, empty}, empty + ": empty file"},
		{[]string{"predict", "-model", model, "-out", pred, hugeX}, hugeX + ":4:2: input 1e+200 is "},
		{[]string{"predict", "-model", model, "-out", pred, "-target", "1", hugeFirst}, hugeFirst + ":3:2: input -1e+200 is "},
		{[]string{"predict", "-model", model, "-out", pred, "-target", "2", hugeMid}, hugeMid + ":3:3: input 1e+200 is "},
		{[]string{"eval", "-model", model, wide}, wide + ": 3 input columns besides the target, the model was trained on 2"},
		{[]string{"eval", "-model", model, ragged}, ragged + ":2:2: ragged row"},
		{[]string{"eval", "-model", model, nonnum}, nonnum + `:3:2: not a number: "four"`},
		{[]string{"eval", "-model", model, nan}, nan + `:2:1: non-finite value "NaN"`},
		{[]string{"eval", "-model", model, empty}, empty + ": empty file"},
		{[]string{"eval", "-model", model, "-target", "7", good}, good + ": target column 7 out of range: the file has 3 columns"},
		{[]string{"eval", "-model", model, "-target", "1", hugeFirst}, hugeFirst + ":3:2: input -1e+200 is "},
		{[]string{"eval", "-model", model, "-target", "2", hugeMid}, hugeMid + ":3:3: input 1e+200 is "},
		{[]string{"eval", "-model", clsModel, badLabel}, badLabel + ":4:3: target 2: Bernoulli labels must be 0 or 1"},
		{[]string{"eval", "-model", corrupt, good}, corrupt + ": modelfile: invalid model file"},
	} {
		code, _, errOut := runCmd(t, tc.args...)
		if code != exitError || !strings.HasPrefix(errOut, "solvegp "+tc.args[0]+": ") || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
		if strings.Contains(errOut, ": input ") && !strings.Contains(errOut, "training standard deviations from the mean, beyond the limit of 1e+100\n") {
			t.Errorf("%v: stderr %q", tc.args, errOut)
		}
		if _, err := os.Stat(pred); err == nil {
			t.Errorf("%v: wrote an output file", tc.args)
		}
	}
	checkNoTempFiles(t, dir)
}

// checkNoTempFiles reports temporary files of safe writes left in dir.
func checkNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// cancelWriter cancels a context once something containing marker is
// written to it.
type cancelWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(p, []byte(w.marker)) {
		w.cancel()
	}
	return w.buf.Write(p)
}

// TestInterrupt checks that cancelling (Ctrl-C) during the first epoch
// stops training, saves the latest (only) parameters as a usable model,
// skips the -plot with a warning, prints the summary and exits with 130.
func TestInterrupt(t *testing.T) {
	dir := t.TempDir()
	path := writeRegression(t, dir, 200, 5)
	model := filepath.Join(dir, "m.json")
	curves := filepath.Join(dir, "curves.png")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelWriter{marker: "step 1/", cancel: cancel}
	var out bytes.Buffer
	code := run(ctx, []string{"train", "-m", "8", "-m2", "8", "-epochs", "1000", "-batch", "10", "-valid", "0.1", "-plot", curves, "-json", "-out", model, path}, &out, w)
	errOut := w.buf.String()
	if code != exitInterrupted {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var sum trainSummary
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("summary %q: %v", out.String(), err)
	}
	if !sum.Interrupted || sum.Steps != 1 || sum.Stop != "canceled" || len(sum.History) != 0 || sum.BestEpoch != nil || sum.Plot != "" {
		t.Fatalf("summary %+v", sum)
	}
	for _, want := range []string{
		"solvegp train: warning: interrupted during the first epoch; no training curves to plot, " + curves + " not written\n",
		"solvegp train: interrupted after 1 steps; saved the latest model to " + model + "\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q does not say %q", errOut, want)
		}
	}
	if _, err := os.Stat(curves); err == nil {
		t.Errorf("a plot was written")
	}
	if code, _, errOut := runCmd(t, "eval", "-model", model, path); code != exitOK {
		t.Fatalf("the saved model does not evaluate: %s", errOut)
	}
}

// TestInterruptKeepsBest interrupts training after six validated epochs
// on data whose validation rows follow the opposite function to the
// training rows, so that validation gets worse as training goes on: the
// model file must hold the best validated parameters, not the latest.
func TestInterruptKeepsBest(t *testing.T) {
	dir := t.TempDir()
	const n, valid = 200, 0.5
	split, err := data.RandomSplit(n, 0, valid, 1) // the split train makes with -seed 1
	if err != nil {
		t.Fatal(err)
	}
	isValid := make([]bool, n)
	for _, i := range split.Valid {
		isValid[i] = true
	}
	rng := rand.New(rand.NewPCG(8, 8))
	var b strings.Builder
	b.WriteString("a,b,y\n")
	for i := 0; i < n; i++ {
		a, c := 6*rng.Float64()-3, 6*rng.Float64()-3
		y := 3*math.Sin(a) + 0.1*rng.NormFloat64()
		if isValid[i] {
			y = -y
		}
		fmt.Fprintf(&b, "%g,%g,%g\n", a, c, y)
	}
	path := writeFile(t, dir, "flip.csv", b.String())
	model := filepath.Join(dir, "m.json")
	curves := filepath.Join(dir, "curves.png")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// 10 steps per epoch and 10 epochs: the progress log (every tenth of
	// the run) writes "step 61/100" right after the sixth validation.
	w := &cancelWriter{marker: "step 61/", cancel: cancel}
	var out bytes.Buffer
	code := run(ctx, []string{"train", "-seed", "1", "-m", "10", "-m2", "10", "-epochs", "10", "-batch", "10", "-lr", "0.05",
		"-valid", fmt.Sprint(valid), "-plot", curves, "-json", "-out", model, path}, &out, w)
	errOut := w.buf.String()
	if code != exitInterrupted {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var sum trainSummary
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("summary %q: %v", out.String(), err)
	}
	if !sum.Interrupted || sum.Steps != 61 || len(sum.History) != 6 || sum.BestEpoch == nil || sum.Plot != curves {
		t.Fatalf("summary %+v", sum)
	}
	best, last := sum.History[*sum.BestEpoch-1], sum.History[5]
	for _, h := range sum.History {
		t.Logf("epoch %d: validation log-lik %.4f", h.Epoch, *h.ValidLL)
	}
	for _, h := range sum.History {
		if *h.ValidLL > *best.ValidLL {
			t.Fatalf("best epoch %d (%g) is not the best of %+v", *sum.BestEpoch, *best.ValidLL, sum.History)
		}
	}
	if !(*last.ValidLL < *best.ValidLL-1e-3) {
		t.Fatalf("validation did not get worse after the best epoch %d: the test cannot tell the best model from the latest", *sum.BestEpoch)
	}
	want := fmt.Sprintf("solvegp train: interrupted after 61 steps; saved the best validated (epoch %d) model to %s\n", *sum.BestEpoch, model)
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr %q does not say %q", errOut, want)
	}
	if png, err := os.ReadFile(curves); err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("curves PNG: %v", err)
	}

	// The saved file scores the best epoch's validation log-likelihood.
	saved, err := modelfile.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := data.LoadCSV(path, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	xv, yv, err := data.Rows(tab.X, tab.Y, split.Valid)
	if err != nil {
		t.Fatal(err)
	}
	m, err := evaluate(saved, xv, yv, false)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(m.LogLik - *best.ValidLL); d > 1e-9*math.Abs(*best.ValidLL) {
		t.Errorf("saved model: validation log-lik %.12g; best epoch %d had %.12g, the last %.12g",
			m.LogLik, *sum.BestEpoch, *best.ValidLL, *last.ValidLL)
	}
}

// TestInterruptBeforeTraining checks that a Ctrl-C before the first
// training step (while loading, placing the inducing points, or just
// before Fit) exits with 130 and leaves an existing -out file alone.
func TestInterruptBeforeTraining(t *testing.T) {
	dir := t.TempDir()
	path := writeRegression(t, dir, 100, 6)
	out := filepath.Join(dir, "m.json")
	curves := filepath.Join(dir, "curves.png")
	args := []string{"train", "-m", "5", "-m2", "5", "-epochs", "2", "-plot", curves, "-out", out, path}
	check := func(name string, ctx context.Context, earlier bool, when string) {
		t.Helper()
		if earlier {
			if err := os.WriteFile(out, []byte("earlier model"), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			os.Remove(out)
		}
		code, stdout, errOut := runCtx(t, ctx, nil, args...)
		kept := "no model file was written"
		if earlier {
			kept = "the existing " + out + " is untouched"
		}
		want := "solvegp train: interrupted " + when + "; nothing was trained, so nothing was saved (" + kept + ")\n"
		if code != exitInterrupted || stdout != "" || errOut != want {
			t.Errorf("%s: exit %d, stdout %q, stderr\n%q, want\n%q", name, code, stdout, errOut, want)
		}
		got, err := os.ReadFile(out)
		switch {
		case earlier && string(got) != "earlier model":
			t.Errorf("%s: the earlier model file was changed", name)
		case !earlier && err == nil:
			t.Errorf("%s: a model file was written", name)
		}
		if _, err := os.Stat(curves); err == nil {
			t.Errorf("%s: a plot was written", name)
		}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	check("cancelled at the start", cancelled, true, "while reading "+path)
	check("cancelled at the start, no earlier file", cancelled, false, "while reading "+path)

	// Cancelled after the model is built: Fit returns after 0 steps.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	testHookBeforeFit = cancel
	defer func() { testHookBeforeFit = nil }()
	check("cancelled before the first step", ctx, true, "before the first training step")
}

// TestInterruptible checks that interruptible returns as soon as the
// context is done, without waiting for the function.
func TestInterruptible(t *testing.T) {
	if err := interruptible(context.Background(), func() error { return errors.New("boom") }); err == nil || err.Error() != "boom" {
		t.Fatalf("error %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	go cancel()
	if err := interruptible(ctx, func() error { <-release; return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
}

// mainEnv makes the test binary run main() instead of the tests, so that
// TestSignal can run the real command with its signal handling.
const mainEnv = "SOLVEGP_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestSignal runs "solvegp train" in a child process (this test binary
// running main), sends it a real SIGINT, or SIGTERM, once training has
// started, and checks the exit code, the messages and the saved model.
func TestSignal(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT on Windows")
	}
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { testSignal(t, sig) })
	}
}

// testSignal sends sig to a training child after its first step: it must
// stop cleanly, save the model and exit with 130.
func testSignal(t *testing.T, sig os.Signal) {
	dir := t.TempDir()
	path := writeRegression(t, dir, 200, 7)
	model := filepath.Join(dir, "m.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "train", "-m", "8", "-m2", "8", "-epochs", "100000", "-batch", "10",
		"-valid", "0.1", "-json", "-out", model, path)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, syscall.ENOEXEC) {
			// The test binary is for another architecture and runs under
			// an emulator (go test -exec qemu-aarch64), which the kernel
			// cannot start by itself.
			t.Skipf("cannot re-run the test binary as the CLI: %v", err)
		}
		t.Fatal(err)
	}
	// Wait for the first progress line, then interrupt; keep reading so
	// that the child never blocks on a full pipe.
	var stderr strings.Builder
	sc := bufio.NewScanner(pipe)
	signalled := false
	for sc.Scan() {
		stderr.WriteString(sc.Text() + "\n")
		if !signalled && strings.Contains(sc.Text(), "step 1/") {
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			signalled = true
		}
	}
	err = cmd.Wait()
	errOut := stderr.String()
	if !signalled {
		t.Fatalf("no progress line before the child ended (%v): %s", err, errOut)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("child: %v, want exit %d; stderr:\n%s", err, exitInterrupted, errOut)
	}
	var sum trainSummary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("summary %q: %v", stdout.String(), err)
	}
	if !sum.Interrupted || sum.Steps < 1 || sum.Stop != "canceled" {
		t.Fatalf("summary %+v", sum)
	}
	if !regexp.MustCompile(`solvegp train: interrupted after \d+ steps; saved the (latest|best validated \(epoch \d+\)) model to ` + regexp.QuoteMeta(model) + "\n").MatchString(errOut) {
		t.Fatalf("stderr does not report the interruption:\n%s", errOut)
	}
	if _, err := modelfile.Load(model); err != nil {
		t.Fatalf("saved model: %v", err)
	}
	t.Logf("child stderr:\n%s", errOut)
}

func TestDemoShort(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "demo.png")
	code, out, errOut := runCmd(t, "demo", "-short", "-quiet", "-json", "-png", png)
	if code != exitOK {
		t.Fatalf("demo: exit %d: %s", code, errOut)
	}
	var res struct {
		Steps  int
		Models []demoModel
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Steps != demoShortIters || len(res.Models) != 4 {
		t.Fatalf("demo output %s", out)
	}
	svgp5, solve := res.Models[0].Res, res.Models[2].Res
	if res.Models[2].M != 5 || res.Models[2].M2 != 5 || res.Models[1].M2 != 100 || res.Models[3].M != 10 {
		t.Fatalf("models %+v", res.Models)
	}
	for _, m := range res.Models {
		if m.Res.Steps != demoShortIters || math.IsNaN(m.Res.Bound) || !(m.Res.TestRMSE > 0 && m.Res.TestRMSE < 1.5) {
			t.Fatalf("model %+v", m)
		}
	}
	if !(solve.Bound > svgp5.Bound) {
		t.Fatalf("SOLVE-GP 5+5 bound %g not above SVGP 5's %g", solve.Bound, svgp5.Bound)
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("demo PNG: %v", err)
	}
	// The text table.
	code, out, _ = runCmd(t, "demo", "-iters", "20", "-quiet", "-png", "")
	if code != exitOK || !strings.Contains(out, "SOLVE-GP 5 + 5") || !strings.Contains(out, "test log-lik") {
		t.Fatalf("demo table: exit %d, %s", code, out)
	}
	if code, _, _ := runCmd(t, "demo", "-full", "-short"); code != exitError {
		t.Fatalf("-full -short: exit %d", code)
	}
}

func TestBench(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "cost.png")
	code, out, errOut := runCmd(t, "bench", "-m", "12", "-m2", "9", "-n", "15", "-d", "2", "-reps", "2", "-odvgp", "-json", "-png", png)
	if code != exitOK {
		t.Fatalf("bench: exit %d: %s", code, errOut)
	}
	var res struct {
		Models []benchModel
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Models) != 4 {
		t.Fatalf("%d models", len(res.Models))
	}
	for _, bm := range res.Models {
		for _, c := range bm.Classes {
			if c.PaperCount != nil && *c.PaperCount != c.Count {
				t.Errorf("%s %s: %d forward operations, Table 3 says %d", bm.Name, c.Class, c.Count, *c.PaperCount)
			}
		}
		if bm.StepMS <= 0 {
			t.Errorf("%s: step time %g", bm.Name, bm.StepMS)
		}
	}
	// SVGP with M + M2 points: its Cholesky is (M+M2)³/M³ times the cost.
	if f := *res.Models[1].Classes[1].Factor; math.Abs(f-math.Pow(21.0/12, 3)) > 1e-9 {
		t.Errorf("SVGP (M+M2) Cholesky factor %g", f)
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("cost PNG: %v", err)
	}
	code, out, _ = runCmd(t, "bench", "-m", "6", "-m2", "6", "-n", "6", "-reps", "1")
	if code != exitOK || !strings.Contains(out, "| SOLVE-GP (M, M2) | cholesky | 2 | 2 |") {
		t.Fatalf("bench table: exit %d\n%s", code, out)
	}
	// With N = M every operation is one M×M operation, as in the paper's
	// Figure 7 (SVGP: 1 product, 1 Cholesky, 3 solves), triangular
	// products included (they counted ½ when the unit was a general
	// product's flops).
	for _, c := range []struct{ row, factor string }{
		{"| SVGP (M) | matmul | 1 | 1 |", "1.00"}, {"| SVGP (M) | cholesky | 1 | 1 |", "1.00"}, {"| SVGP (M) | trisolve | 3 | 3 |", "3.00"},
	} {
		i := strings.Index(out, c.row)
		if i < 0 {
			t.Fatalf("bench table lacks %q", c.row)
		}
		if line := strings.SplitN(out[i:], "\n", 2)[0]; !strings.HasSuffix(line, "| "+c.factor+" |") {
			t.Errorf("row %q: want the factor %s", line, c.factor)
		}
	}
	if code, _, _ := runCmd(t, "bench", "-m", "0"); code != exitError {
		t.Fatalf("bench -m 0: exit %d", code)
	}
	// Sizes whose inputs or kernel matrices would not fit are refused
	// before anything is allocated.
	for _, args := range [][]string{{"-d", "10000000000000"}, {"-n", "1000000"}, {"-n", "200000", "-m", "1024", "-m2", "1024"}} {
		if code, _, errOut := runCmd(t, append([]string{"bench"}, args...)...); code != exitError || !strings.Contains(errOut, "-n ") {
			t.Errorf("bench %v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// TestGzipNoHeader trains on a gzip file without a header line, with the
// target in the first column.
func TestGzipNoHeader(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(6, 6))
	var plain bytes.Buffer
	for i := 0; i < 80; i++ {
		a := 4*rng.Float64() - 2
		fmt.Fprintf(&plain, "%g,%g\n", math.Cos(a), a)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain.Bytes())
	zw.Close()
	path := writeFile(t, dir, "data.csv.gz", gz.String())
	model := filepath.Join(dir, "m.json")
	code, out, errOut := runCmd(t, "train", "-quiet", "-json", "-target", "1", "-header", "no", "-m", "6", "-m2", "4", "-epochs", "3", "-decay", "0.5", "-decay-every", "2", "-batch", "40", "-out", model, path)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var sum trainSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.NTrain != 80 || sum.Steps != 6 {
		t.Fatalf("summary %s (%v)", out, err)
	}
	b, err := modelfile.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if d, m, m2, _ := b.Model.Dims(); d != 1 || m != 6 || m2 != 4 || !b.Model.Whitened() || b.Meta.TargetName != "" {
		t.Fatalf("model d %d, m %d, m2 %d, whitened %v, meta %+v", d, m, m2, b.Model.Whitened(), b.Meta)
	}
	// Whitening is the default (above); -whiten=false selects the
	// unwhitened parameterization.
	if code, _, errOut := runCmd(t, "train", "-quiet", "-target", "1", "-m", "6", "-m2", "4", "-whiten=false", "-epochs", "1", "-out", model+".u", path); code != exitOK {
		t.Fatalf("-whiten=false: exit %d: %s", code, errOut)
	}
	if u, err := modelfile.Load(model + ".u"); err != nil || u.Model.Whitened() {
		t.Fatalf("-whiten=false: %v, whitened %v", err, err == nil && u.Model.Whitened())
	}
	// The target column is dropped from a file that has one.
	if code, out, errOut := runCmd(t, "predict", "-model", model, "-target", "1", "-header", "no", path); code != exitOK || strings.Count(out, "\n") != 81 {
		t.Fatalf("predict: exit %d, %q", code, errOut)
	}
}

func TestSchedule(t *testing.T) {
	if r := schedule(0.1, 0.5, 10).Rate(25); r != 0.025 {
		t.Fatalf("step decay rate %g", r)
	}
	if r := schedule(0.1, 1, 10).Rate(25); r != 0.1 {
		t.Fatalf("constant rate %g", r)
	}
}

// TestTrainNatural: with a Gaussian likelihood and full batches, -natural 1
// puts q at its optimum from the first step, so a few epochs reach a far
// better bound than Adam does in the same number; -natural-fresh (two
// evaluations per step) does as well; the summary records the step size.
func TestTrainNatural(t *testing.T) {
	dir := t.TempDir()
	trainCSV := writeRegression(t, dir, 200, 5)
	bound := func(extra ...string) trainSummary {
		t.Helper()
		args := append([]string{"train", "-quiet", "-m", "10", "-m2", "10", "-epochs", "5", "-batch", "0", "-json",
			"-out", filepath.Join(dir, "m.json")}, extra...)
		code, out, errOut := runCmd(t, append(args, trainCSV)...)
		if code != exitOK {
			t.Fatalf("train %v: exit %d: %s", extra, code, errOut)
		}
		var sum trainSummary
		if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Bound == nil {
			t.Fatalf("train %v: summary %q: %v", extra, out, err)
		}
		return sum
	}
	adam := bound()
	ng := bound("-natural", "1")
	fresh := bound("-natural", "1", "-natural-fresh")
	t.Logf("bound after 5 full-batch steps: Adam %.2f, natural %.2f, natural with fresh gradients %.2f", *adam.Bound, *ng.Bound, *fresh.Bound)
	if ng.Natural != 1 || adam.Natural != 0 {
		t.Errorf("natural step in the summaries: %v, %v", ng.Natural, adam.Natural)
	}
	if !(*ng.Bound > *adam.Bound+10) || !(*fresh.Bound > *adam.Bound+10) {
		t.Errorf("bound after 5 full-batch steps: Adam %v, natural gradients %v, with fresh gradients %v", *adam.Bound, *ng.Bound, *fresh.Bound)
	}
	if code, out, _ := runCmd(t, "train", "-quiet", "-m", "5", "-m2", "5", "-epochs", "1", "-natural", "0.5", "-out", filepath.Join(dir, "m2.json"), trainCSV); code != exitOK ||
		!strings.Contains(out, "natural-gradient step 0.5") {
		t.Errorf("text summary: exit %d, %q", code, out)
	}
}

// TestCheckpointResume interrupts a run with -checkpoint in the middle of
// an epoch (and, with full batches, at an epoch's last batch), runs the same
// command again and checks that it continues from the checkpoint to the
// model file, summary and curves of the uninterrupted run, bit for bit
// (with validation, so the kept best parameters carry over too), that the
// checkpoint is removed at the end, and that a checkpoint from other flags,
// or a damaged one, is refused.
func TestCheckpointResume(t *testing.T) {
	for _, c := range []struct {
		name, batch, epochs, marker string
		stopped                     int
	}{
		// 10 steps per epoch: the progress log writes "step 51/100" after
		// the first step of the sixth epoch.
		{"mid-epoch", "16", "10", "step 51/", 51},
		// One step per epoch, logged every second step.
		{"full-batch", "0", "20", "step 5/", 5},
	} {
		t.Run(c.name, func(t *testing.T) { testCheckpointResume(t, c.batch, c.epochs, c.marker, c.stopped) })
	}
}

func testCheckpointResume(t *testing.T, batch, epochs, marker string, stopped int) {
	dir := t.TempDir()
	path := writeRegression(t, dir, 200, 7)
	ck := filepath.Join(dir, "run.ckpt")
	args := func(out string, extra ...string) []string {
		a := []string{"train", "-m", "8", "-m2", "8", "-epochs", epochs, "-batch", batch, "-valid", "0.2", "-lr", "0.05",
			"-threads", "1", "-json", "-plot", out + ".png", "-out", out}
		return append(append(a, extra...), path)
	}
	params := func(file string) []float64 {
		t.Helper()
		b, err := modelfile.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		p := make([]float64, b.Model.NumParams())
		b.Model.Params(p)
		return p
	}
	summary := func(s string) trainSummary {
		t.Helper()
		var sum trainSummary
		if err := json.Unmarshal([]byte(s), &sum); err != nil {
			t.Fatalf("summary %q: %v", s, err)
		}
		return sum
	}

	full := filepath.Join(dir, "full.json")
	code, out, errOut := runCmd(t, args(full)...)
	if code != exitOK {
		t.Fatalf("uninterrupted run: exit %d: %s", code, errOut)
	}
	want, wantSum := params(full), summary(out)

	part := filepath.Join(dir, "part.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelWriter{marker: marker, cancel: cancel}
	var buf bytes.Buffer
	code = run(ctx, args(part, "-checkpoint", ck), &buf, w)
	if code != exitInterrupted {
		t.Fatalf("interrupted run: exit %d: %s", code, w.buf.String())
	}
	if s := summary(buf.String()); !s.Interrupted || s.Steps != stopped || s.Stop != "canceled" {
		t.Fatalf("interrupted run's summary %+v", s)
	}
	if !strings.Contains(w.buf.String(), "training state in "+ck+": run the same command to continue") {
		t.Errorf("stderr %q does not point at the checkpoint", w.buf.String())
	}

	// Other training flags: refused, and the checkpoint is kept.
	a := args(part, "-checkpoint", ck)
	for i := range a {
		if a[i] == "0.05" {
			a[i] = "0.02"
		}
	}
	if code, _, errOut := runCmd(t, a...); code != exitError || !strings.Contains(errOut, "other training flags (-lr was 0.05, is 0.02)") {
		t.Fatalf("checkpoint with another -lr: exit %d: %s", code, errOut)
	}

	code, out, errOut = runCmd(t, args(part, "-checkpoint", ck, "-threads", "1")...)
	if code != exitOK {
		t.Fatalf("resumed run: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, fmt.Sprintf("resuming from %s after %d steps", ck, stopped)) {
		t.Errorf("stderr %q does not say it resumed", errOut)
	}
	got, gotSum := params(part), summary(out)
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("parameter %d: resumed %v, uninterrupted %v", i, got[i], want[i])
		}
	}
	bestOf := func(p *int) int {
		if p == nil {
			return -1
		}
		return *p
	}
	if gotSum.Steps != wantSum.Steps || gotSum.Epochs != wantSum.Epochs || len(gotSum.History) != len(wantSum.History) ||
		bestOf(gotSum.BestEpoch) != bestOf(wantSum.BestEpoch) {
		t.Fatalf("resumed summary %+v, uninterrupted %+v", gotSum, wantSum)
	}
	for i, h := range gotSum.History {
		if h.Epoch != wantSum.History[i].Epoch || h.Steps != wantSum.History[i].Steps || *h.ValidLL != *wantSum.History[i].ValidLL ||
			*h.Bound != *wantSum.History[i].Bound {
			t.Fatalf("history %d: resumed %+v, uninterrupted %+v", i, h, wantSum.History[i])
		}
	}
	if _, err := os.Stat(ck); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("checkpoint not removed after a finished run (%v)", err)
	}
	if gotSum.Plot == "" {
		t.Error("no curves plotted after the resume")
	}

	// A damaged checkpoint is an error that names it.
	if err := os.WriteFile(ck, []byte("solvegp-train-checkpoint\ngarbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCmd(t, args(part, "-checkpoint", ck)...); code != exitError || !strings.Contains(errOut, ck+": damaged checkpoint") {
		t.Fatalf("damaged checkpoint: exit %d: %s", code, errOut)
	}
}

// TestSameFileRefused checks that train and predict refuse to write an
// output over their input or over another output, leaving every file as
// it was, instead of reporting success with the model or the data lost.
func TestSameFileRefused(t *testing.T) {
	dir := t.TempDir()
	data := writeRegression(t, dir, 60, 3)
	model := filepath.Join(dir, "m.json")
	if code, _, stderr := runCmd(t, "train", "-quiet", "-m", "5", "-m2", "3", "-epochs", "2", "-threads", "1", "-out", model, data); code != exitOK {
		t.Fatalf("train: %d %s", code, stderr)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(mustGetwd(t), model)
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	dataBefore, modelBefore := read(data), read(model)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "-out", model, "-checkpoint", model, data}, "-out and -checkpoint"},
		{[]string{"train", "-out", data, data}, "the data file and -out"},
		{[]string{"train", "-out", link, data}, "the data file and -out"},
		{[]string{"train", "-out", model, "-plot", rel, data}, "-out and -plot"},
		{[]string{"train", "-out", filepath.Join(dir, "new.json"), "-checkpoint", data, data}, "the data file and -checkpoint"},
		{[]string{"predict", "-model", model, "-out", data, data}, "the input file and -out"},
		{[]string{"predict", "-model", model, "-out", model, data}, "-model and -out"},
	} {
		args := tc.args
		if args[0] == "train" {
			args = append([]string{"train", "-quiet", "-threads", "1", "-m", "5", "-m2", "3", "-epochs", "2"}, args[1:]...)
		}
		code, _, stderr := runCmd(t, args...)
		if code != exitError || !strings.Contains(stderr, tc.want+" are the same file") {
			t.Errorf("%v: exit %d, stderr %q; want an error naming %s", tc.args, code, stderr, tc.want)
		}
		if read(data) != dataBefore || read(model) != modelBefore {
			t.Fatalf("%v: a file was changed", tc.args)
		}
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// TestDemoInterruptKeepsPlot checks that an interrupted demo leaves an
// earlier figure alone instead of replacing it with fewer panels.
func TestDemoInterruptKeepsPlot(t *testing.T) {
	png := filepath.Join(t.TempDir(), "demo.png")
	if err := os.WriteFile(png, []byte("earlier figure"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code, out, errOut := runCtx(t, ctx, nil, "demo", "-quiet", "-iters", "1000000", "-png", png)
	if code != exitInterrupted || !strings.Contains(errOut, png+" not written") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if strings.Contains(out, "Figure 3") {
		t.Errorf("an interrupted demo draws the paper's conclusion: %q", out)
	}
	if b, _ := os.ReadFile(png); string(b) != "earlier figure" {
		t.Error("the earlier figure was replaced")
	}
}

// TestFlagsAfterFile: a flag after the file arguments, which the flag
// package takes for another file, is reported as such (bad usage), before
// any file is read.
func TestFlagsAfterFile(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "data.csv", "-m", "5"}, `solvegp train: flags must come before the data file: "-m" follows data.csv`},
		{[]string{"train", "-quiet", "data.csv", "-epochs=3"}, `"-epochs=3" follows data.csv`},
		{[]string{"predict", "-model", "m.json", "x.csv", "-out", "p.csv"}, `solvegp predict: flags must come before the input file: "-out" follows x.csv`},
		{[]string{"eval", "test.csv", "-model", "m.json"}, `solvegp eval: flags must come before the data file: "-model" follows test.csv`},
		{[]string{"classify", "-model", "m.cgp", "images.idx", "-labels", "labels.idx"}, `solvegp classify: flags must come before the image files: "-labels" follows images.idx`},
		{[]string{"classify", "-format", "cifar10", "a.bin", "b.bin", "--json"}, `"--json" follows b.bin`},
		{[]string{"classify", "-model", "m.cgp", "a.idx", "--", "-b.idx"}, `solvegp classify: "--" must come before the first file, not after a.idx`},
	} {
		code, out, errOut := runCmd(t, tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "no such file") {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, exitUsage, tc.want)
		}
	}
	// After "--" every argument is a file name (train takes several).
	code, _, errOut := runCmd(t, "train", "--", "data.csv", "-m")
	if code != exitError || strings.Contains(errOut, "flags must come before") || !strings.Contains(errOut, "data.csv") {
		t.Errorf("train -- data.csv -m: exit %d, stderr %q", code, errOut)
	}
}

// TestInputsByName: predict and eval match the columns of a file with a
// header to the model's input names (train records them), whatever their
// order, take the column named as the model's target for the target, and
// refuse a header that does not name the inputs; without a header the
// columns are taken by position.
func TestInputsByName(t *testing.T) {
	dir := t.TempDir()
	trainCSV := writeRegression(t, dir, 120, 11) // a,b,target
	model := filepath.Join(dir, "m.json")
	if code, _, errOut := runCmd(t, "train", "-quiet", "-m", "6", "-m2", "4", "-epochs", "5", "-batch", "40", "-out", model, trainCSV); code != exitOK {
		t.Fatalf("train: %d %s", code, errOut)
	}
	// Rows of (a, b, target), written in the order of the named columns.
	rows := [][3]float64{{-1.5, 2, 9}, {0.25, -0.5, 10.5}, {2.75, 1, 13}, {-0.1, -2.9, 6}}
	write := func(name string, header []string, order []int) string {
		var s strings.Builder
		if header != nil {
			s.WriteString(strings.Join(header, ",") + "\n")
		}
		for _, r := range rows {
			for j, k := range order {
				if j > 0 {
					s.WriteString(",")
				}
				fmt.Fprintf(&s, "%g", r[k])
			}
			s.WriteString("\n")
		}
		return writeFile(t, dir, name, s.String())
	}
	run := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCmd(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		return out
	}
	want := run("predict", "-model", model, write("ab.csv", []string{"a", "b"}, []int{0, 1}))
	if got := run("predict", "-model", model, write("plain.csv", nil, []int{0, 1})); got != want {
		t.Errorf("no header: predictions differ from the named columns'")
	}
	for _, tc := range []struct {
		file   string
		header []string
		order  []int
		extra  []string
	}{
		{"ba.csv", []string{"b", "a"}, []int{1, 0}, nil},
		{"abt.csv", []string{"a", "b", "target"}, []int{0, 1, 2}, nil},
		{"bat.csv", []string{"b", "a", "target"}, []int{1, 0, 2}, nil},
		{"tba.csv", []string{"target", "b", "a"}, []int{2, 1, 0}, nil},                 // the target found by its name
		{"bta.csv", []string{"b", "y", "a"}, []int{1, 2, 0}, []string{"-target", "2"}}, // or given
	} {
		path := write(tc.file, tc.header, tc.order)
		if got := run(append(append([]string{"predict", "-model", model}, tc.extra...), path)...); got != want {
			t.Errorf("%s: predictions\n%s\nwant (as for a,b)\n%s", tc.file, got, want)
		}
	}
	// eval: the same numbers however the columns are ordered.
	evalWant := run("eval", "-model", model, "-json", filepath.Join(dir, "abt.csv"))
	for _, args := range [][]string{{"bat.csv"}, {"tba.csv"}, {"-target", "2", "bta.csv"}} {
		args[len(args)-1] = filepath.Join(dir, args[len(args)-1])
		if got := run(append([]string{"eval", "-model", model, "-json"}, args...)...); got != evalWant {
			t.Errorf("eval %v:\n%s\nwant\n%s", args, got, evalWant)
		}
	}
	// Headers that do not name the inputs are refused; an input the model
	// refuses is reported at its column in the file.
	for _, tc := range []struct {
		args []string
		want string // after "solvegp <command>: <dir>/"
	}{
		{[]string{"predict", writeFile(t, dir, "ac.csv", "a,c\n1,2\n")},
			`ac.csv: the header does not name the model's inputs a, b: no column "b"; column 2 ("c") is not an input (rename the columns, or remove the header line to take them by position)`},
		{[]string{"predict", writeFile(t, dir, "abc.csv", "a,b,c,target\n1,2,3,4\n")},
			`abc.csv: the header does not name the model's inputs a, b: column 3 ("c") is not an input (rename the columns, or remove the header line to take them by position)`},
		{[]string{"predict", writeFile(t, dir, "aa.csv", "a,a\n1,2\n")}, `aa.csv:1:2: duplicate column name "a" (columns 1 and 2)`},
		{[]string{"eval", filepath.Join(dir, "ba.csv")},
			`ba.csv: column 2 ("a"), taken for the target as the last column, is one of the model's inputs (-target chooses the target column)`},
		{[]string{"eval", writeFile(t, dir, "xyt.csv", "x,y,target\n1,2,3\n")},
			`xyt.csv: the header does not name the model's inputs a, b: no column "a" or "b"; columns 1 ("x") and 2 ("y") are not inputs (rename the columns, or remove the header line to take them by position)`},
		{[]string{"eval", "-target", "1", filepath.Join(dir, "abt.csv")},
			`abt.csv: column 1 ("a"), the target by -target 1, is one of the model's inputs`},
		{[]string{"predict", writeFile(t, dir, "hugeba.csv", "b,a\n1,2\n\n3,1e200\n")}, "hugeba.csv:4:2: input 1e+200 is "},
		{[]string{"eval", writeFile(t, dir, "hugetba.csv", "target,b,a\n1,2,3\n1,-1e200,3\n")}, "hugetba.csv:3:2: input -1e+200 is "},
	} {
		args := append([]string{tc.args[0], "-model", model}, tc.args[1:]...)
		code, out, errOut := runCmd(t, args...)
		if want := "solvegp " + tc.args[0] + ": " + filepath.Join(dir, tc.want); code != exitError || out != "" || !strings.HasPrefix(errOut, want) {
			t.Errorf("%v: exit %d, stderr\n%q, want %d and\n%q", args, code, errOut, exitError, want)
		}
	}
}
