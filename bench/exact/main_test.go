package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeToy writes a small UCI-format data set <dir>/toy.csv.gz.
func writeToy(t *testing.T, dir string, n int) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	fmt.Fprintln(zw, "x1,x2,y")
	for i := 0; i < n; i++ {
		a, b := math.Sin(float64(i)), math.Cos(1.7*float64(i))
		fmt.Fprintf(zw, "%g,%g,%g\n", a, b, 10+3*math.Sin(2*a)+b*b+0.05*math.Sin(37*float64(i)))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "toy.csv.gz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRun runs the program on a small synthetic data set and checks the
// JSON it writes.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	writeToy(t, dir, 120)
	out := filepath.Join(dir, "r.json")
	var stdout, stderr bytes.Buffer
	args := []string{"-data", "toy", "-dir", dir, "-n", "60", "-iters", "20", "-threads", "1", "-out", out}
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if r.NTrain != 60 || r.NTest != 24 || r.Pretrain != nil || r.Kernel != "matern32" || len(r.KernelParams) != 2 || r.Dim != 2 || r.Evaluations < 2 || !(r.SecPerEval > 0) || !(r.SecValueOnly > 0) {
		t.Errorf("bad record %+v", r)
	}
	if !(r.LML > r.LMLInitial) {
		t.Errorf("log marginal %g not above its initial %g", r.LML, r.LMLInitial)
	}
	// The targets vary by about 3 around 10: a fitted GP predicts them to
	// well within their spread, and the standardized and original
	// log-likelihoods differ by log(YScale).
	if !(r.TestRMSE < 0.5) || !(r.TestRMSEStd < 0.3) || math.IsNaN(r.TestLogLik) {
		t.Errorf("test RMSE %g (standardized %g), log-likelihood %g", r.TestRMSE, r.TestRMSEStd, r.TestLogLik)
	}
	if ratio := r.TestRMSE / r.TestRMSEStd; math.Abs(r.TestLogLikStd-r.TestLogLik-math.Log(ratio)) > 1e-9 {
		t.Errorf("log-likelihoods %g (standardized %g) do not differ by log(scale) = %g", r.TestLogLik, r.TestLogLikStd, math.Log(ratio))
	}
}

// TestPretrain runs the program with a pretraining fit on a subsample: the
// full fit starts where the pretraining left off, on all 77 training rows
// of split 1 (120 rows: 24 test, 19 validation).
func TestPretrain(t *testing.T) {
	dir := t.TempDir()
	writeToy(t, dir, 120)
	out := filepath.Join(dir, "r.json")
	var stdout, stderr bytes.Buffer
	args := []string{"-data", "toy", "-dir", dir, "-kernel", "rbf-ard", "-split", "1", "-pretrain", "30", "-pretrain-iters", "15",
		"-iters", "5", "-threads", "1", "-out", out}
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	p := r.Pretrain
	if p == nil || p.N != 30 || p.Iterations < 1 || p.Evaluations < 2 || r.NTrain != 77 || r.Split != 1 || len(r.KernelParams) != 3 {
		t.Fatalf("bad record %+v, pretraining %+v", r, p)
	}
	// The full fit starts at the pretrained hyperparameters: from there its
	// initial value is far above that of the default ones.
	var cold result
	args = []string{"-data", "toy", "-dir", dir, "-kernel", "rbf-ard", "-split", "1", "-iters", "1", "-threads", "1", "-out", out}
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if raw, err = os.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &cold); err != nil {
		t.Fatal(err)
	}
	if !(r.LMLInitial > cold.LMLInitial+10) || !(r.LML >= r.LMLInitial) {
		t.Errorf("initial log marginal after pretraining %g, cold %g; final %g", r.LMLInitial, cold.LMLInitial, r.LML)
	}
}

// TestBadFlags checks the usage errors.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "-1"}, {"-iters", "-1"}, {"-iters", "0"}, {"-pretrain", "-1"}, {"-pretrain-iters", "0"}, {"-split", "-1"}, {"-threads", "-2"}, {"-kernel", "rbf"}, {"-noise", "0"}, {"-lengthscale", "-1"}, {"-variance", "NaN"}, {"-noise", "+Inf"}, {"-out", ""}, {"extra"}, {"-nosuch"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-dir", t.TempDir(), "-out", filepath.Join(t.TempDir(), "r.json")}, &stdout, &stderr); code != 1 {
		t.Errorf("missing data: exit %d, want 1", code)
	}
}

// TestReport checks the report table: the exact GP's row next to the
// sparse models of the same data set and split, and the gap each closes.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	r := result{Data: "toy", Kernel: "matern32", Split: 1, NTrain: 100, Iterations: 3, Pretrain: &pretrain{N: 50, Iterations: 7},
		LML: -12.34, SecPerEval: 2, SecValueOnly: 0.5, TestLogLikStd: 0.5, TestRMSEStd: 0.25}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "toy.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	log := `{"dataset":"toy","model":"SVGP 1024","split":1,"test_log_lik":-0.5}
{"dataset":"toy","model":"SVGP 1024","split":0,"test_log_lik":-9}
{"dataset":"toy","model":"SOLVE-GP 1024+1024","split":1,"test_log_lik":0.25}
{"dataset":"other","model":"SVGP 2048","split":1,"test_log_lik":0}
`
	reg := filepath.Join(dir, "regression.jsonl")
	if err := os.WriteFile(reg, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-report", dir, "-regression", reg}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := "| toy | matern32 | 1 | 100 | 50, 7 + 3 | -12.3 | 2.0 / 0.5 | 0.500 | 0.250 | -0.500 | – | 0.250 (75%) | – |"
	if !strings.Contains(stdout.String(), want) {
		t.Errorf("report\n%s\nwant the row\n%s", stdout.String(), want)
	}
	if code := run(context.Background(), []string{"-report", t.TempDir(), "-regression", reg}, &stdout, &stderr); code != 1 {
		t.Errorf("empty directory: exit %d, want 1", code)
	}
}

// TestStart checks that -lengthscale, -variance and -noise set the fit's
// starting point: the initial log marginal likelihood changes with them.
func TestStart(t *testing.T) {
	dir := t.TempDir()
	writeToy(t, dir, 80)
	initial := func(extra ...string) float64 {
		t.Helper()
		out := filepath.Join(dir, "r.json")
		var stdout, stderr bytes.Buffer
		args := append([]string{"-data", "toy", "-dir", dir, "-iters", "1", "-threads", "1", "-out", out}, extra...)
		if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr.String())
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var r result
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		return r.LMLInitial
	}
	def := initial()
	if same := initial("-lengthscale", "1", "-variance", "1", "-noise", "0.1"); same != def {
		t.Errorf("explicit defaults: initial %g, want %g", same, def)
	}
	for _, extra := range [][]string{{"-lengthscale", "3"}, {"-variance", "2"}, {"-noise", "0.5"}} {
		if v := initial(extra...); v == def {
			t.Errorf("%v: initial log marginal %g unchanged", extra, v)
		}
	}
}
