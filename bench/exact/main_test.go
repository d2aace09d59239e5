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
	if r.NTrain != 60 || r.NTest != 24 || r.Pretrain != nil || r.Dim != 2 || r.Evaluations < 2 || !(r.SecPerEval > 0) || !(r.SecValueOnly > 0) {
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
	args := []string{"-data", "toy", "-dir", dir, "-split", "1", "-pretrain", "30", "-pretrain-iters", "15",
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
	if p == nil || p.N != 30 || p.Iterations < 1 || p.Evaluations < 2 || r.NTrain != 77 || r.Split != 1 {
		t.Fatalf("bad record %+v, pretraining %+v", r, p)
	}
	// The full fit starts at the pretrained hyperparameters: from there its
	// initial value is far above that of the default ones.
	var cold result
	args = []string{"-data", "toy", "-dir", dir, "-split", "1", "-iters", "1", "-threads", "1", "-out", out}
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
		{"-n", "-1"}, {"-iters", "-1"}, {"-iters", "0"}, {"-pretrain", "-1"}, {"-pretrain-iters", "0"}, {"-split", "-1"}, {"-threads", "-2"}, {"-out", ""}, {"extra"}, {"-nosuch"},
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
