package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// TestTrainCollapsed trains SGPR and collapsed SOLVE-GP models from the
// command line and checks the summary, the progress lines, the model file
// and its predictions; the bound of the saved model (SVGP or SOLVE-GP at
// the optimal q) must equal the collapsed bound L-BFGS reached. Any of the
// ways L-BFGS stops at an optimum will do: which one it takes depends on
// rounding (a line search that finds no more progress ends about one data
// set in ten here, and FMA contraction on arm64 changes the rounding).
func TestTrainCollapsed(t *testing.T) {
	dir := t.TempDir()
	trainCSV := writeRegression(t, dir, 300, 1)
	testCSV := writeRegression(t, dir, 100, 2)
	lastLine := regexp.MustCompile(`L-BFGS iteration (\d+) \(at most 1000\)  bound (\S+)  elapsed`)
	for _, c := range []struct{ model, kind string }{{"svgp", "SVGP"}, {"solvegp", "SOLVE-GP"}} {
		model := filepath.Join(dir, c.model+".json")
		var m2 []string // -m2 is a usage error with -model svgp
		if c.model != "svgp" {
			m2 = []string{"-m2", "12"}
		}
		args := append([]string{"train", "-collapsed", "-model", c.model, "-m", "12", "-kernel", "matern32", "-valid", "0.2", "-out", model, "-json"}, m2...)
		code, out, errOut := runCmd(t, append(args, trainCSV)...)
		if code != exitOK {
			t.Fatalf("%s: exit %d, stderr %s", c.model, code, errOut)
		}
		var sum trainSummary
		if err := json.Unmarshal([]byte(out), &sum); err != nil {
			t.Fatalf("%s: summary %q: %v", c.model, out, err)
		}
		t.Logf("%s: %d iterations, %d evaluations, stop %s, bound %.6f, validation RMSE %.4f", c.model, sum.Steps, sum.Evaluations, sum.Stop, *sum.Bound, *sum.Valid.RMSE)
		if sum.Optimizer != "lbfgs" || sum.Kind != c.kind || sum.NTrain != 240 || sum.NValid != 60 || sum.Steps < 2 ||
			sum.Evaluations < sum.Steps || sum.Interrupted || sum.Bound == nil || sum.Valid == nil || len(sum.History) != 0 ||
			sum.Stop != "gradient" && sum.Stop != "function" && sum.Stop != "linesearch" {
			t.Fatalf("%s: summary %+v", c.model, sum)
		}
		m := lastLine.FindAllStringSubmatch(errOut, -1)
		if len(m) < 2 || m[0][1] != "1" || m[len(m)-1][1] != strconv.Itoa(sum.Steps) {
			t.Fatalf("%s: progress lines %q", c.model, errOut)
		}
		if f, err := strconv.ParseFloat(m[len(m)-1][2], 64); err != nil || math.Abs(f-*sum.Bound) > 1e-5*math.Abs(f) {
			t.Fatalf("%s: collapsed bound %s, the saved model's bound %.8g", c.model, m[len(m)-1][2], *sum.Bound)
		}
		b, err := modelfile.Load(model)
		if err != nil {
			t.Fatal(err)
		}
		if b.Model.Kind().String() != c.kind || b.Meta.Info["optimizer"] != "L-BFGS on the standard collapsed bound" || b.CollapsedBound != "standard" ||
			b.Meta.Info["iterations"] != strconv.Itoa(sum.Steps) || b.Meta.TargetName != "target" {
			t.Fatalf("%s: model %v, meta %+v", c.model, b.Model.Kind(), b.Meta)
		}
		code, out, errOut = runCmd(t, "eval", "-model", model, "-json", testCSV)
		if code != exitOK {
			t.Fatalf("%s: eval: exit %d: %s", c.model, code, errOut)
		}
		var ev metrics
		if err := json.Unmarshal([]byte(out), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.RMSEStd == nil || *ev.RMSEStd > 0.1 {
			t.Fatalf("%s: eval %s", c.model, out)
		}
		// The text summary names the optimizer.
		args = append([]string{"train", "-collapsed", "-model", c.model, "-m", "12", "-iters", "3", "-quiet", "-out", model}, m2...)
		code, out, _ = runCmd(t, append(args, trainCSV)...)
		if code != exitOK || !strings.Contains(out, "L-BFGS on the collapsed bound, 3 iterations") || !strings.Contains(out, "stop: iterations") {
			t.Fatalf("%s -iters 3: exit %d, %q", c.model, code, out)
		}
	}
}

// TestTrainCollapsedInterrupt cancels a collapsed fit after its first
// iteration: the model at the best bound so far is saved (exit 130).
func TestTrainCollapsedInterrupt(t *testing.T) {
	dir := t.TempDir()
	path := writeRegression(t, dir, 300, 1)
	model := filepath.Join(dir, "m.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelWriter{marker: "L-BFGS iteration 1 ", cancel: cancel}
	var out bytes.Buffer
	code := run(ctx, []string{"train", "-collapsed", "-m", "12", "-m2", "12", "-json", "-out", model, path}, &out, w)
	errOut := w.buf.String()
	if code != exitInterrupted || !strings.Contains(errOut, "interrupted after 1 L-BFGS iterations") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var sum trainSummary
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("summary %q: %v", out.String(), err)
	}
	if !sum.Interrupted || sum.Steps != 1 || sum.Stop != "canceled" || sum.Bound == nil {
		t.Fatalf("summary %+v", sum)
	}
	if _, err := modelfile.Load(model); err != nil {
		t.Fatal(err)
	}
}

// TestTrainCollapsedFlags checks the flags that do not go with -collapsed
// and the models and likelihoods it has no bound for.
func TestTrainCollapsedFlags(t *testing.T) {
	dir := t.TempDir()
	path := writeRegression(t, dir, 60, 4)
	out := filepath.Join(dir, "out.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-collapsed", "-lr", "0.1"}, "-lr does not go with -collapsed (it is for mini-batch training)"},
		{[]string{"-collapsed", "-epochs", "5"}, "-epochs does not go with -collapsed"},
		{[]string{"-collapsed", "-checkpoint", filepath.Join(dir, "ck")}, "-checkpoint does not go with -collapsed"},
		{[]string{"-collapsed", "-whiten=false"}, "-whiten does not go with -collapsed (the saved model is in the unwhitened parameterization)"},
		{[]string{"-collapsed", "-model", "odvgp"}, "-collapsed has no ODVGP bound"},
		{[]string{"-collapsed", "-likelihood", "bernoulli"}, "-collapsed needs the Gaussian likelihood, not -likelihood bernoulli"},
		{[]string{"-collapsed", "-iters", "0"}, "-iters 0: must be positive"},
		{[]string{"-iters", "10"}, "-iters needs -collapsed"},
		{[]string{"-bound", "tighter", "-likelihood", "studentt"}, "-bound tighter needs the Gaussian, Bernoulli or Poisson likelihood (log p(y|f) concave in f), not -likelihood studentt"},
		{[]string{"-bound", "tight"}, `-bound: "tight" is none of standard, tighter and blockdiag:B`},
		{[]string{"-collapsed", "-bound", "tight"}, `-bound: "tight" is none of standard, tighter and blockdiag:B`},
		{[]string{"-bound", "blockdiag:8"}, "-bound blockdiag needs -collapsed"},
		{[]string{"-collapsed", "-bound", "blockdiag"}, "-bound blockdiag needs a block size, as in blockdiag:128"},
		{[]string{"-collapsed", "-bound", "blockdiag:-4"}, "-bound blockdiag:-4: the block size must be an integer of at least 1"},
		{[]string{"-collapsed", "-bound", "blockdiag:x"}, "-bound blockdiag:x: the block size must be an integer of at least 1"},
		{[]string{"-collapsed", "-bound", "tighter:8"}, "-bound tighter takes no block size"},
		{[]string{"-bound", "bd:8"}, `-bound: "bd:8" is none of standard, tighter and blockdiag:B`},
	} {
		args := append(append([]string{"train", "-quiet", "-m", "5", "-m2", "5", "-out", out}, c.args...), path)
		code, _, errOut := runCmd(t, args...)
		if code != exitError || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
}

// TestTrainCollapsedTighter fits SGPR and collapsed SOLVE-GP with -bound
// standard, tighter and blockdiag: the model file records the bound (and
// the block size), and each bound's optimum is above the one before.
func TestTrainCollapsedTighter(t *testing.T) {
	dir := t.TempDir()
	trainCSV := writeRegression(t, dir, 200, 5)
	for _, c := range []struct{ model, m2 string }{{"svgp", "0"}, {"solvegp", "6"}} {
		var values [3]float64
		for i, bound := range []string{"standard", "tighter", "blockdiag"} {
			model := filepath.Join(dir, c.model+"-"+bound+".json")
			flagValue, size := bound, 0
			if bound == "blockdiag" {
				flagValue, size = "blockdiag:16", 16
			}
			args := []string{"train", "-collapsed", "-bound", flagValue, "-model", c.model, "-m", "8", "-quiet", "-out", model}
			if c.model != "svgp" {
				args = append(args, "-m2", c.m2)
			}
			if code, _, errOut := runCmd(t, append(args, trainCSV)...); code != exitOK {
				t.Fatalf("%s -bound %s: exit %d, %s", c.model, bound, code, errOut)
			}
			b, err := modelfile.Load(model)
			if err != nil {
				t.Fatal(err)
			}
			v, err := strconv.ParseFloat(b.Meta.Info["collapsed_bound_value"], 64)
			if err != nil || b.CollapsedBound != bound || b.CollapsedBlockSize != size ||
				b.Meta.Info["optimizer"] != "L-BFGS on the "+bound+" collapsed bound" {
				t.Fatalf("%s -bound %s: collapsed bound %q (block size %d), meta %+v", c.model, bound, b.CollapsedBound, b.CollapsedBlockSize, b.Meta.Info)
			}
			values[i] = v
		}
		t.Logf("%s: standard %.6f, tighter %.6f, blockdiag %.6f", c.model, values[0], values[1], values[2])
		if !(values[1] > values[0] && values[2] > values[1]) {
			t.Errorf("%s: optima standard %v, tighter %v, blockdiag %v not increasing", c.model, values[0], values[1], values[2])
		}
	}
}

// TestTrainMiniBatchTighter trains SVGP, ODVGP and SOLVE-GP by mini-batches
// with -bound tighter: the model file records the bound, the loaded model
// evaluates it, and predict reads the file.
func TestTrainMiniBatchTighter(t *testing.T) {
	dir := t.TempDir()
	trainCSV := writeRegression(t, dir, 120, 3)
	for _, kind := range []string{"svgp", "odvgp", "solvegp"} {
		model := filepath.Join(dir, kind+".json")
		args := []string{"train", "-bound", "tighter", "-model", kind, "-m", "6", "-epochs", "3", "-batch", "40", "-quiet", "-out", model}
		if kind != "svgp" {
			args = append(args, "-m2", "4")
		}
		if code, _, errOut := runCmd(t, append(args, trainCSV)...); code != exitOK {
			t.Fatalf("%s: exit %d, %s", kind, code, errOut)
		}
		b, err := modelfile.Load(model)
		if err != nil {
			t.Fatal(err)
		}
		if b.Model.Bound() != gp.TighterBound {
			t.Errorf("%s: loaded model has bound %v", kind, b.Model.Bound())
		}
		if code, _, errOut := runCmd(t, "predict", "-model", model, trainCSV); code != exitOK {
			t.Errorf("%s: predict: exit %d, %s", kind, code, errOut)
		}
	}
}

// TestTrainMiniBatchTighterBernoulli trains a Bernoulli classifier by
// mini-batches with -bound tighter (the per-point scales of a concave
// likelihood) for each model: the model file records the bound and eval
// reads the file.
func TestTrainMiniBatchTighterBernoulli(t *testing.T) {
	dir := t.TempDir()
	var cls strings.Builder
	for i := 0; i < 120; i++ {
		x1, x2 := float64(i%11)/5-1, float64(i%7)/3-1
		label := 0
		if math.Sin(3*x1)+x2 > 0 {
			label = 1
		}
		fmt.Fprintf(&cls, "%g,%g,%d\n", x1, x2, label)
	}
	trainCSV := writeFile(t, dir, "cls.csv", cls.String())
	for _, kind := range []string{"svgp", "odvgp", "solvegp"} {
		model := filepath.Join(dir, kind+".json")
		args := []string{"train", "-likelihood", "bernoulli", "-bound", "tighter", "-model", kind, "-m", "6", "-epochs", "3", "-batch", "40", "-quiet", "-out", model}
		if kind != "svgp" {
			args = append(args, "-m2", "4")
		}
		if code, _, errOut := runCmd(t, append(args, trainCSV)...); code != exitOK {
			t.Fatalf("%s: exit %d, %s", kind, code, errOut)
		}
		b, err := modelfile.Load(model)
		if err != nil {
			t.Fatal(err)
		}
		if b.Model.Bound() != gp.TighterBound {
			t.Errorf("%s: loaded model has bound %v", kind, b.Model.Bound())
		}
		if code, out, errOut := runCmd(t, "eval", "-model", model, trainCSV); code != exitOK || !strings.Contains(out, "accuracy") {
			t.Errorf("%s: eval: exit %d, %s%s", kind, code, out, errOut)
		}
	}
}
