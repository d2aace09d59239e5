package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/solvegp/solvegp/bench/internal/benchutil"
	"github.com/solvegp/solvegp/gp"
)

// writeToy writes a small synthetic data set <dir>/toy.csv.gz in the layout
// of the shared data folder: a header line and the target last.
func writeToy(t *testing.T, dir string, n int) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("x1,x2,x3,y\n")
	for i := 0; i < n; i++ {
		a, c := math.Sin(float64(i)*0.37), math.Cos(float64(i)*0.11)
		fmt.Fprintf(&b, "%g,%g,%g,%g\n", a, c, 5.0, 3*a-c*c+0.1*math.Sin(float64(i)*1.7))
	}
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(b.Bytes())
	w.Close()
	if err := os.WriteFile(filepath.Join(dir, "toy.csv.gz"), z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	buf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(buf), "\n"), "\n")
}

func TestResume(t *testing.T) {
	dir := t.TempDir()
	writeToy(t, dir, 300)
	out := filepath.Join(dir, "out")
	args := []string{"-data-dir", dir, "-datasets", "toy", "-models", "svgp8,solvegp8+8,odvgp8+16",
		"-colsample", "4", "-epochs", "2", "-batch", "64", "-threads", "1", "-quiet", "-out", out}
	code, stdout, stderr := runCLI(t, append(args, "-splits", "2")...)
	if code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", code, stdout, stderr)
	}
	first := lines(t, filepath.Join(out, "regression.jsonl"))
	if len(first) != 6 {
		t.Fatalf("first run wrote %d records, want 6:\n%s", len(first), strings.Join(first, "\n"))
	}
	if strings.Contains(stdout, "skip") {
		t.Errorf("first run skipped something:\n%s", stdout)
	}
	recs, _, err := benchutil.ReadJSONL[Record](filepath.Join(out, "regression.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.NTrain != 192 || r.NValid != 48 || r.NTest != 60 || r.D != 3 {
			t.Errorf("%s split %d: sizes %d/%d/%d d %d, want 192/48/60 d 3", r.Model, r.Split, r.NTrain, r.NValid, r.NTest, r.D)
		}
		if r.Steps != 2*3 || !(r.SecPerIter > 0) || math.IsNaN(r.TestLogLik) || !(r.TestRMSE > 0) {
			t.Errorf("%s split %d: steps %d, s/iter %v, LL %v, RMSE %v", r.Model, r.Split, r.Steps, r.SecPerIter, r.TestLogLik, r.TestRMSE)
		}
	}

	// A second run with the same settings skips everything.
	code, stdout, stderr = runCLI(t, append(args, "-splits", "2")...)
	if code != 0 {
		t.Fatalf("second run: exit %d\n%s%s", code, stdout, stderr)
	}
	if got := strings.Count(stdout, "skip "); got != 6 {
		t.Errorf("second run skipped %d runs, want 6:\n%s", got, stdout)
	}
	if again := lines(t, filepath.Join(out, "regression.jsonl")); len(again) != 6 {
		t.Fatalf("second run changed the log to %d records", len(again))
	}

	// An interrupted write leaves a partial line; more splits run only the
	// new ones, and the earlier records are kept as they were.
	f, err := os.OpenFile(filepath.Join(out, "regression.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"dataset":"toy","mod`)
	f.Close()
	code, stdout, stderr = runCLI(t, append(args, "-splits", "3")...)
	if code != 0 {
		t.Fatalf("third run: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "incomplete last line") {
		t.Errorf("third run did not report the partial line:\n%s", stderr)
	}
	if got := strings.Count(stdout, "skip "); got != 6 {
		t.Errorf("third run skipped %d runs, want 6", got)
	}
	third := lines(t, filepath.Join(out, "regression.jsonl"))
	if _, skipped, err := benchutil.ReadJSONL[Record](filepath.Join(out, "regression.jsonl")); len(third) != 9 || skipped != 0 || err != nil {
		t.Fatalf("third run: %d lines, want 6 old + 3 new (partial line dropped)", len(third))
	}
	for i := range first {
		if third[i] != first[i] {
			t.Errorf("record %d changed", i)
		}
	}

	// A different setup (epochs) is a different run.
	code, stdout, _ = runCLI(t, "-data-dir", dir, "-datasets", "toy", "-models", "svgp8",
		"-colsample", "4", "-epochs", "1", "-batch", "64", "-threads", "1", "-quiet", "-out", out, "-splits", "1")
	if code != 0 || strings.Contains(stdout, "skip") {
		t.Errorf("new setup: exit %d\n%s", code, stdout)
	}

	// -report regenerates the tables from the log alone.
	os.Remove(filepath.Join(out, "regression.md"))
	code, stdout, stderr = runCLI(t, "-report", "-out", out)
	if code != 0 {
		t.Fatalf("-report: exit %d %s", code, stderr)
	}
	md, err := os.ReadFile(filepath.Join(out, "regression.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(md) != stdout {
		t.Error("-report printed something else than it wrote")
	}
	for _, want := range []string{"## 2 epochs", "## 1 epochs", "| SOLVE-GP | 8+8 |", "| ODVGP | 8+16 |", "| SVGP | 8 |", " ± "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestReportFormat(t *testing.T) {
	s := Setup{Epochs: 100, Batch: 1024, LR: 0.01, Seed: 1, ColSample: 1024}
	var recs []Record
	add := func(ds, model string, split int, ll, rmse, spi float64) {
		recs = append(recs, Record{Dataset: ds, Model: model, Split: split, Setup: s, NTrain: 10623, D: 18,
			TestLogLik: ll, TestRMSE: rmse, SecPerIter: spi})
	}
	add("elevators", "SVGP 1024", 0, -0.52, 0.40, 1)
	add("elevators", "SOLVE-GP 1024+1024", 0, -0.50, 0.39, 2)
	add("elevators", "SOLVE-GP 1024+1024", 1, -0.52, 0.41, 4)
	add("elevators", "SOLVE-GP 1024+1024", 2, -0.51, 0.40, 3)
	add("elevators", "SOLVE-GP 1024+1024", 1, 9, 9, 9) // duplicate split: ignored
	add("bike", "SOLVE-GP 1024+1024", 0, -0.30, 0.30, 1)
	rep := buildReport(recs)
	if len(rep.Tables) != 1 {
		t.Fatalf("%d tables", len(rep.Tables))
	}
	tab := rep.Tables[0]
	if strings.Join(tab.Datasets, ",") != "elevators,bike" || strings.Join(tab.Models, ",") != "SVGP 1024,SOLVE-GP 1024+1024" {
		t.Errorf("order: %v %v", tab.Datasets, tab.Models)
	}
	c := tab.cell("elevators", "SOLVE-GP 1024+1024")
	if c == nil || c.TestLogLik.N != 3 || math.Abs(c.TestLogLik.Mean+0.51) > 1e-12 {
		t.Fatalf("cell %+v", c)
	}
	md := markdown(rep)
	// mean −0.51, sd 0.01, se 0.01/√3 = 0.00577.
	for _, want := range []string{
		"| SOLVE-GP | 1024+1024 | -0.510 ± 0.006 | -0.300 (n=1) |",
		"| SVGP | 1024 | -0.520 (n=1) | — |",
		"| SOLVE-GP | 1024+1024 | 0.400 ± 0.006 | 0.300 (n=1) |",
		"| SOLVE-GP | 1024+1024 | 3.000 ± 0.577 | 1.000 (n=1) |",
		"| | N (train) | 10623 | 10623 |",
		"| | N (paper) | 10623 | 11122 |",
		// paper −0.509 ± 0.007: |−0.510 + 0.509| < 2·√(0.007² + 0.00577²).
		"| elevators | SOLVE-GP 1024+1024 | 3 | -0.510 ± 0.006 | -0.509 ± 0.007 | ok |",
		// bike: −0.300 is below −0.189 − 2·0.006.
		"| bike | SOLVE-GP 1024+1024 | 1 | -0.300 (n=1) | -0.189 ± 0.006 | **outside** | 0.300 (n=1) | 0.272 ± 0.003 | **outside** |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if got := markdown(buildReport(nil)); !strings.Contains(got, "No finished runs yet") {
		t.Errorf("empty report:\n%s", got)
	}
}

func TestWithin(t *testing.T) {
	one := benchutil.Summarize([]float64{0.5})
	p := paperValue{0.52, 0.01}
	if !within(one, p, true) || within(one, paperValue{0.53, 0.01}, true) {
		t.Error("higher-is-better threshold at two paper standard errors")
	}
	if !within(benchutil.Summarize([]float64{0.6}), p, true) {
		t.Error("better than the paper must count")
	}
	if within(benchutil.Summarize([]float64{0.6}), p, false) || !within(benchutil.Summarize([]float64{0.1}), p, false) {
		t.Error("lower-is-better")
	}
}

func TestParseModel(t *testing.T) {
	for name, want := range map[string]modelSpec{
		"svgp1024":                 {Kind: gp.SVGP, M: 1024},
		"ODVGP1024+8096":           {Kind: gp.ODVGP, M: 1024, M2: 8096},
		"solvegp1024+1024":         {Kind: gp.SOLVEGP, M: 1024, M2: 1024},
		"svgp2048/tighter":         {Kind: gp.SVGP, M: 2048, Tighter: true},
		"SOLVEGP1024+1024/Tighter": {Kind: gp.SOLVEGP, M: 1024, M2: 1024, Tighter: true},
	} {
		got, err := parseModel(name)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v", name, got, err)
		}
	}
	if l := (modelSpec{Kind: gp.SOLVEGP, M: 1024, M2: 1024}).Label(); l != "SOLVE-GP 1024+1024" {
		t.Errorf("label %q", l)
	}
	if l := (modelSpec{Kind: gp.SVGP, M: 1024, Natural: 0.1}).Label(); l != "SVGP+NG(0.1) 1024" {
		t.Errorf("natural-gradient label %q", l)
	}
	if l := (modelSpec{Kind: gp.SOLVEGP, M: 1024, M2: 1024, Natural: 0.1, Tighter: true}).Label(); l != "SOLVE-GP+NG(0.1)/tighter 1024+1024" {
		t.Errorf("tighter label %q", l)
	}
	rows := []string{"SOLVE-GP/tighter 1024+1024", "SVGP 2048", "weird", "SOLVE-GP 128+128", "SVGP+NG(1) 128", "SVGP 1536", "SVGP+NG(0.1) 1024", "SOLVE-GP+NG(0.1) 128+128",
		"SVGP 128", "SVGP+NG(0.01) 128", "SOLVE-GP 1024+1024", "SVGP 1024"}
	sort.SliceStable(rows, func(i, j int) bool { return modelLess(rows[i], rows[j]) })
	want := []string{"SVGP 1024", "SVGP+NG(0.1) 1024", "SVGP 1536", "SOLVE-GP 1024+1024", "SOLVE-GP/tighter 1024+1024", "SVGP 2048", "SVGP 128", "SVGP+NG(0.01) 128",
		"SVGP+NG(1) 128", "SOLVE-GP 128+128", "SOLVE-GP+NG(0.1) 128+128", "weird"}
	if strings.Join(rows, ", ") != strings.Join(want, ", ") {
		t.Errorf("row order\n%q\nwant\n%q", rows, want)
	}
	for _, bad := range []string{"svgp", "svgp0", "svgp10+10", "odvgp10", "solvegp10+0", "gp10", "solvegp-1+2", "svgp10/tight", "svgp10/tighter/tighter"} {
		if _, err := parseModel(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-splits", "0"}, "-splits"},
		{[]string{"-first-split", "-1"}, "-first-split"},
		{[]string{"-epochs", "0"}, "-epochs"},
		{[]string{"-batch", "-5"}, "-batch"},
		{[]string{"-lr", "0"}, "-lr"},
		{[]string{"-lr", "NaN"}, "-lr"},
		{[]string{"-threads", "-1"}, "-threads"},
		{[]string{"-m", "-1"}, "-m"},
		{[]string{"-m2", "-1"}, "-m2"},
		{[]string{"-colsample", "-1"}, "-colsample"},
		{[]string{"-natural", "1.5"}, "-natural"},
		{[]string{"-natural", "-0.1"}, "-natural"},
		{[]string{"-natural", "NaN"}, "-natural"},
		{[]string{"-models", "svgp"}, "-models"},
		{[]string{"-models", ","}, "no model"},
		{[]string{"-datasets", ""}, "no data set"},
		{[]string{"-datasets", "../etc/x"}, "path"},
		{[]string{"-data-dir", ""}, "-data-dir"},
		{[]string{"-out", ""}, "-out"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"-nosuchflag"}, "not defined"},
	} {
		args := append([]string{"-data-dir", dir, "-out", filepath.Join(dir, "o")}, tc.args...)
		code, _, stderr := runCLI(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	// A data set that does not exist is a run-time error (exit 1) naming it.
	code, _, stderr := runCLI(t, "-data-dir", dir, "-out", filepath.Join(dir, "o"), "-datasets", "nope", "-models", "svgp4")
	if code != 1 || !strings.Contains(stderr, "nope") {
		t.Errorf("missing data set: exit %d %q", code, stderr)
	}
}

func TestCanceled(t *testing.T) {
	dir := t.TempDir()
	writeToy(t, dir, 200)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var o, e bytes.Buffer
	code := run(ctx, []string{"-data-dir", dir, "-datasets", "toy", "-models", "svgp4", "-epochs", "1", "-quiet", "-out", filepath.Join(dir, "o")}, &o, &e)
	if code != 130 {
		t.Errorf("canceled: exit %d, %s", code, e.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "o", "regression.jsonl")); !os.IsNotExist(err) {
		t.Errorf("canceled run was logged: %v", err)
	}
}

// TestMissingDataSet checks that a misspelt data set stops the program
// before it trains on the ones listed before it.
func TestMissingDataSet(t *testing.T) {
	dir := t.TempDir()
	writeToy(t, dir, 200)
	out := filepath.Join(dir, "o")
	code, _, stderr := runCLI(t, "-data-dir", dir, "-datasets", "toy,tyo", "-models", "svgp4", "-epochs", "1", "-quiet", "-out", out)
	if code != 1 || !strings.Contains(stderr, "data set tyo") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "regression.jsonl")); !os.IsNotExist(err) {
		t.Errorf("the data set before the misspelt one was trained: %v", err)
	}
	// A data set whose runs are all done is not needed any more.
	args := []string{"-data-dir", dir, "-datasets", "toy", "-models", "svgp4", "-splits", "1", "-epochs", "1", "-quiet", "-out", out}
	if code, _, stderr := runCLI(t, args...); code != 0 {
		t.Fatalf("toy: exit %d, %s", code, stderr)
	}
	if err := os.Remove(filepath.Join(dir, "toy.csv.gz")); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCLI(t, args...); code != 0 || !strings.Contains(stdout, "skip") {
		t.Errorf("rerun of finished runs without their data: exit %d, %s%s", code, stdout, stderr)
	}
}

func TestCheckpointResume(t *testing.T) {
	dir := t.TempDir()
	writeToy(t, dir, 300)
	out := filepath.Join(dir, "out")
	args := []string{"-data-dir", dir, "-datasets", "toy", "-models", "solvegp6+6", "-epochs", "3", "-batch", "64", "-splits", "1",
		"-threads", "1", "-quiet", "-out", out}
	o, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	o.checkpointEvery = 0
	ctx, cancel := context.WithCancel(context.Background())
	o.onCheckpoint = func(epochs int) {
		if epochs == 1 {
			cancel() // stopped during epoch 2
		}
	}
	if err := runAll(ctx, o, io.Discard, io.Discard); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	cks, _ := filepath.Glob(filepath.Join(out, "checkpoints", "*.gob"))
	if len(cks) != 1 {
		t.Fatalf("checkpoints %v, want one", cks)
	}
	if recs, _, _ := benchutil.ReadJSONL[Record](filepath.Join(out, "regression.jsonl")); len(recs) != 0 {
		t.Fatalf("interrupted run was logged: %+v", recs)
	}
	o.onCheckpoint = nil
	var stderr bytes.Buffer
	o.quiet = false
	if err := runAll(context.Background(), o, io.Discard, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "resuming after epoch 1") || strings.Contains(stderr.String(), "epoch   1 ") {
		t.Errorf("resumed run log:\n%s", stderr.String())
	}
	recs, _, err := benchutil.ReadJSONL[Record](filepath.Join(out, "regression.jsonl"))
	if err != nil || len(recs) != 1 {
		t.Fatalf("records %v, %v", recs, err)
	}
	if r := recs[0]; r.Steps != 3*3 || len(r.Resumed) != 0 || len(r.ResumedExact) != 1 || r.ResumedExact[0] != 1 || !(r.TrainSeconds > 0) {
		t.Errorf("record: steps %d resumed %v / %v train seconds %v", r.Steps, r.Resumed, r.ResumedExact, r.TrainSeconds)
	}
	// Resuming equals not stopping: the same run without interruption
	// ends at the same parameters, bit for bit (one thread).
	o2 := *o
	o2.out = filepath.Join(dir, "out2")
	o2.quiet = true
	if err := runAll(context.Background(), &o2, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	recs2, _, err := benchutil.ReadJSONL[Record](filepath.Join(o2.out, "regression.jsonl"))
	if err != nil || len(recs2) != 1 {
		t.Fatalf("records %v, %v", recs2, err)
	}
	if a, b := recs[0], recs2[0]; a.TestLogLik != b.TestLogLik || a.TestRMSE != b.TestRMSE || a.Noise != b.Noise ||
		a.Lengthscale != b.Lengthscale || a.FinalObjective != b.FinalObjective || a.Steps != b.Steps {
		t.Errorf("resumed run differs from an uninterrupted one:\n%+v\n%+v", a, b)
	}
	if cks, _ := filepath.Glob(filepath.Join(out, "checkpoints", "*.gob")); len(cks) != 0 {
		t.Errorf("checkpoint left behind: %v", cks)
	}
	// A corrupt checkpoint is an error that says what to do.
	os.MkdirAll(filepath.Join(out, "checkpoints"), 0o755)
	o.splits, o.firstSplit = 1, 1
	key := runKey("toy", "SOLVE-GP 6+6", 1, o.setup())
	os.WriteFile(checkpointPath(out, key), []byte("garbage"), 0o644)
	if err := runAll(context.Background(), o, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "delete it") {
		t.Errorf("corrupt checkpoint: %v", err)
	}
}

// TestNaturalRuns: -natural trains with natural-gradient steps; the record
// and the tables name the rows "+NG(γ)" next to the Adam rows, and the
// natural-gradient run is a different run (its own key) from the Adam one.
func TestNaturalRuns(t *testing.T) {
	dir := t.TempDir()
	writeToy(t, dir, 200)
	out := filepath.Join(dir, "out")
	base := []string{"-data-dir", dir, "-datasets", "toy", "-models", "svgp6,solvegp6+6", "-epochs", "2", "-batch", "64", "-splits", "1",
		"-threads", "1", "-quiet", "-out", out}
	for _, extra := range [][]string{nil, {"-natural", "0.5"}} {
		if code, _, stderr := runCLI(t, append(append([]string(nil), base...), extra...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
	}
	recs, _, err := benchutil.ReadJSONL[Record](filepath.Join(out, "regression.jsonl"))
	if err != nil || len(recs) != 4 {
		t.Fatalf("records %d, %v", len(recs), err)
	}
	models := map[string]Record{}
	for _, r := range recs {
		models[r.Model] = r
	}
	ng, ok := models["SOLVE-GP+NG(0.5) 6+6"]
	if !ok || ng.Natural != 0.5 || models["SOLVE-GP 6+6"].Natural != 0 {
		t.Fatalf("records %v", models)
	}
	if ng.TestRMSE == models["SOLVE-GP 6+6"].TestRMSE {
		t.Error("natural-gradient run equals the Adam run")
	}
	md, err := os.ReadFile(filepath.Join(out, "regression.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| SVGP+NG(0.5) | 6 |") || !strings.Contains(string(md), "| SOLVE-GP+NG(0.5) | 6+6 |") {
		t.Errorf("tables lack the natural-gradient rows:\n%s", md)
	}
}

// TestLegacyCheckpoint: a checkpoint written before checkpoints held the
// training loop's state resumes with a fresh Adam state, which the record
// notes in Resumed.
func TestLegacyCheckpoint(t *testing.T) {
	dir := t.TempDir()
	writeToy(t, dir, 300)
	out := filepath.Join(dir, "out")
	o, err := parseFlags([]string{"-data-dir", dir, "-datasets", "toy", "-models", "svgp6", "-epochs", "3", "-batch", "64", "-splits", "1",
		"-threads", "1", "-quiet", "-out", out}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	o.checkpointEvery = 0
	ctx, cancel := context.WithCancel(context.Background())
	o.onCheckpoint = func(epochs int) { cancel() }
	if err := runAll(ctx, o, io.Discard, io.Discard); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	path := checkpointPath(out, runKey("toy", "SVGP 6", 0, o.setup()))
	ck, err := loadCheckpoint(path, runKey("toy", "SVGP 6", 0, o.setup()), 0)
	if err == nil || ck != nil {
		t.Fatalf("checkpoint with a wrong parameter count: %v", err)
	}
	buf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c checkpoint
	if err := decodeCheckpoint(buf, &c); err != nil || c.Train == nil {
		t.Fatalf("checkpoint %+v, %v", c, err)
	}
	c.Train = nil
	if err := saveCheckpoint(path, &c); err != nil {
		t.Fatal(err)
	}
	o.onCheckpoint = nil
	if err := runAll(context.Background(), o, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	recs, _, err := benchutil.ReadJSONL[Record](filepath.Join(out, "regression.jsonl"))
	if err != nil || len(recs) != 1 {
		t.Fatalf("records %v, %v", recs, err)
	}
	if r := recs[0]; r.Steps != 3*3 || len(r.Resumed) != 1 || r.Resumed[0] != 1 || len(r.ResumedExact) != 0 {
		t.Errorf("record: steps %d, resumed %v / %v", r.Steps, r.Resumed, r.ResumedExact)
	}
}

// TestStatus: -status lists each checkpointed run with its progress and an
// estimate of the time left, and says so when there is none.
func TestStatus(t *testing.T) {
	out := t.TempDir()
	if code, stdout, stderr := runCLI(t, "-status", "-out", out); code != 0 || !strings.Contains(stdout, "no unfinished runs") {
		t.Fatalf("empty: exit %d, %q, %q", code, stdout, stderr)
	}
	s := Setup{Epochs: 10, Batch: 64, LR: 0.01, Seed: 1}
	key := runKey("toy", "SOLVE-GP 6+6", 2, s)
	c := &checkpoint{Key: key, Epochs: 4, Steps: 40, TrainSeconds: 120, Params: []float64{1}}
	if err := saveCheckpoint(checkpointPath(out, key), c); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "-status", "-out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// 120 s over 4 epochs: 6 epochs left take 180 s; 3 s per step.
	for _, want := range []string{"toy", "SOLVE-GP 6+6", "4/10", "40", "2m0s", "3.000", "3m0s"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, stdout)
		}
	}
	// A file that is not a checkpoint is an error naming it.
	bad := filepath.Join(out, "checkpoints", "bad.gob")
	os.WriteFile(bad, []byte("garbage"), 0o644)
	if code, _, stderr := runCLI(t, "-status", "-out", out); code == 0 || !strings.Contains(stderr, "bad.gob") {
		t.Errorf("corrupt checkpoint: exit %d, %q", code, stderr)
	}
}

// TestColumnStreamCheckpoint: an ODVGP that samples columns resumes
// exactly from a checkpoint that holds its random stream (equal to an
// uninterrupted run, and noted in ResumedExact); from one written before
// checkpoints held it the stream restarts from its seed, which the record
// notes in ResumedRandomRestarted, not as an exact resume.
func TestColumnStreamCheckpoint(t *testing.T) {
	dir := t.TempDir()
	writeToy(t, dir, 300)
	run := func(out string, stop, dropRandom bool) Record {
		t.Helper()
		o, err := parseFlags([]string{"-data-dir", dir, "-datasets", "toy", "-models", "odvgp6+24", "-colsample", "8", "-epochs", "3",
			"-batch", "64", "-splits", "1", "-threads", "1", "-quiet", "-out", out}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		o.checkpointEvery = 0
		if stop {
			ctx, cancel := context.WithCancel(context.Background())
			o.onCheckpoint = func(epochs int) { cancel() }
			if err := runAll(ctx, o, io.Discard, io.Discard); !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: %v", err)
			}
			o.onCheckpoint = nil
			if dropRandom {
				key := runKey("toy", "ODVGP 6+24", 0, o.setup())
				path := checkpointPath(out, key)
				buf, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				var c checkpoint
				if err := decodeCheckpoint(buf, &c); err != nil || c.Train == nil || c.Train.Random == nil {
					t.Fatalf("checkpoint without the column stream: %+v, %v", c.Train, err)
				}
				c.Train.Random = nil
				if err := saveCheckpoint(path, &c); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := runAll(context.Background(), o, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		recs, _, err := benchutil.ReadJSONL[Record](filepath.Join(out, "regression.jsonl"))
		if err != nil || len(recs) != 1 {
			t.Fatalf("records %v, %v", recs, err)
		}
		return recs[0]
	}
	whole := run(filepath.Join(dir, "whole"), false, false)
	exact := run(filepath.Join(dir, "exact"), true, false)
	restarted := run(filepath.Join(dir, "restarted"), true, true)
	if len(whole.ResumedExact)+len(whole.ResumedRandomRestarted) != 0 {
		t.Errorf("uninterrupted run: %v / %v", whole.ResumedExact, whole.ResumedRandomRestarted)
	}
	if fmt.Sprint(exact.ResumedExact) != "[1]" || len(exact.ResumedRandomRestarted) != 0 || exact.TestLogLik != whole.TestLogLik || exact.Noise != whole.Noise {
		t.Errorf("resumed with the stream: %v / %v, log-lik %v against %v", exact.ResumedExact, exact.ResumedRandomRestarted, exact.TestLogLik, whole.TestLogLik)
	}
	if fmt.Sprint(restarted.ResumedRandomRestarted) != "[1]" || len(restarted.ResumedExact) != 0 || restarted.TestLogLik == whole.TestLogLik {
		t.Errorf("resumed without the stream: %v / %v, log-lik %v against %v", restarted.ResumedExact, restarted.ResumedRandomRestarted, restarted.TestLogLik, whole.TestLogLik)
	}
}

// TestInterruptMidEpoch: a signal (the context's cancellation) between two
// steps saves a checkpoint of the state after the last step, wherever it
// falls in an epoch (in the first epoch, in the middle of one, after an
// epoch's last mini-batch but before its end, after the run's last step),
// and the run resumed from it, again and again, records what an
// uninterrupted run records, bit for bit: parameters, metrics, steps,
// objective (only the timings and the resume notes differ).
func TestInterruptMidEpoch(t *testing.T) {
	dir := t.TempDir()
	writeToy(t, dir, 300) // 192 training rows: 3 mini-batches of 64 per epoch
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"solvegp", []string{"-models", "solvegp6+6"}},
		{"odvgp-colsample", []string{"-models", "odvgp6+24", "-colsample", "8"}},
		{"svgp-keepbest", []string{"-models", "svgp6", "-keep-best"}},
		{"svgp-natural", []string{"-models", "svgp6", "-natural", "0.5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := func(out string) *options {
				t.Helper()
				args := append([]string{"-data-dir", dir, "-datasets", "toy", "-epochs", "3", "-batch", "64", "-splits", "1",
					"-threads", "1", "-quiet", "-out", out}, tc.extra...)
				o, err := parseFlags(args, io.Discard)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(out, 0o755); err != nil {
					t.Fatal(err)
				}
				return o
			}
			read := func(out string) []Record {
				t.Helper()
				recs, _, err := benchutil.ReadJSONL[Record](filepath.Join(out, "regression.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				return recs
			}
			whole := filepath.Join(dir, tc.name+"-whole")
			if err := runAll(context.Background(), opts(whole), io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			stopped := filepath.Join(dir, tc.name+"-stopped")
			// Step 2: in the first epoch (no epoch finished yet); step 4:
			// in the middle of the second; step 6: after the second
			// epoch's last mini-batch, before its end; step 9: the run's
			// last step.
			for _, at := range []int{2, 4, 6, 9} {
				o := opts(stopped)
				ctx, cancel := context.WithCancel(context.Background())
				o.onStep = func(step int) {
					if step == at {
						cancel()
					}
				}
				err := runAll(ctx, o, io.Discard, io.Discard)
				cancel()
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("interrupted at step %d: %v", at, err)
				}
				if recs := read(stopped); len(recs) != 0 {
					t.Fatalf("interrupted at step %d but a record was written", at)
				}
				key := runKey("toy", o.models[0].Label(), 0, o.setup())
				buf, err := os.ReadFile(checkpointPath(stopped, key))
				if err != nil {
					t.Fatalf("interrupted at step %d: no checkpoint: %v", at, err)
				}
				var c checkpoint
				if err := decodeCheckpoint(buf, &c); err != nil || c.Train == nil {
					t.Fatalf("checkpoint %+v, %v", c, err)
				}
				if c.Steps != at || c.Train.Steps != at || c.Epochs != (at-1)/3 || c.Train.Batches != (at-1)%3+1 {
					t.Errorf("interrupted at step %d: checkpoint at step %d, epochs %d, batches %d", at, c.Steps, c.Epochs, c.Train.Batches)
				}
			}
			var stderr bytes.Buffer
			o := opts(stopped)
			o.quiet = false
			if err := runAll(context.Background(), o, io.Discard, &stderr); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stderr.String(), "resuming at step 9 ") {
				t.Errorf("resumed run's log:\n%s", stderr.String())
			}
			a, b := read(whole), read(stopped)
			if len(a) != 1 || len(b) != 1 {
				t.Fatalf("%d and %d records", len(a), len(b))
			}
			if fmt.Sprint(b[0].ResumedExactSteps) != "[2 4 6 9]" || len(b[0].ResumedExact)+len(b[0].Resumed)+len(b[0].ResumedRandomRestarted) != 0 {
				t.Errorf("resume notes: exact at steps %v, exact after epochs %v, fresh %v, restarted %v",
					b[0].ResumedExactSteps, b[0].ResumedExact, b[0].Resumed, b[0].ResumedRandomRestarted)
			}
			for _, r := range []*Record{&a[0], &b[0]} {
				r.InitSeconds, r.TrainSeconds, r.SecPerIter, r.Finished = 0, 0, 0, time.Time{}
				r.ResumedExactSteps = nil
			}
			ja, _ := json.Marshal(a[0])
			jb, _ := json.Marshal(b[0])
			if !bytes.Equal(ja, jb) {
				t.Errorf("resumed run differs from the uninterrupted one:\n%s\n%s", jb, ja)
			}
			if cks, _ := filepath.Glob(filepath.Join(stopped, "checkpoints", "*.gob")); len(cks) != 0 {
				t.Errorf("checkpoint left behind: %v", cks)
			}
		})
	}
}

// TestReportUnchanged: a rerun that runs nothing new (every run is in the
// log), or -report on an unchanged log, leaves regression.md and
// regression.json as they were, byte for byte (their timestamp included),
// and says how to rerun for checking; a new record rewrites them.
func TestReportUnchanged(t *testing.T) {
	dir := t.TempDir()
	writeToy(t, dir, 200)
	out := filepath.Join(dir, "out")
	args := []string{"-data-dir", dir, "-datasets", "toy", "-models", "svgp4", "-splits", "1", "-epochs", "1", "-threads", "1", "-quiet", "-out", out}
	if code, _, stderr := runCLI(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	read := func() (md, js []byte) {
		t.Helper()
		md, err := os.ReadFile(filepath.Join(out, "regression.md"))
		if err != nil {
			t.Fatal(err)
		}
		js, err = os.ReadFile(filepath.Join(out, "regression.json"))
		if err != nil {
			t.Fatal(err)
		}
		return md, js
	}
	md0, js0 := read()
	time.Sleep(1100 * time.Millisecond) // past the Markdown's one-second timestamp
	code, stdout, stderr := runCLI(t, args...)
	if code != 0 || !strings.Contains(stdout, "skip ") {
		t.Fatalf("rerun: exit %d: %s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "-out") {
		t.Errorf("a rerun that runs nothing does not say how to rerun for checking:\n%s", stdout)
	}
	if md, js := read(); !bytes.Equal(md, md0) || !bytes.Equal(js, js0) {
		t.Errorf("a rerun that ran nothing rewrote the report:\n%s\n%s", md, js)
	}
	if !strings.HasSuffix(stdout, string(md0)) {
		t.Errorf("the rerun did not print the report as it is on disk:\n%s", stdout)
	}
	code, stdout, stderr = runCLI(t, "-report", "-out", out)
	if code != 0 || stdout != string(md0) {
		t.Fatalf("-report: exit %d: %s%s", code, stdout, stderr)
	}
	if md, js := read(); !bytes.Equal(md, md0) || !bytes.Equal(js, js0) {
		t.Error("-report on an unchanged log rewrote the report")
	}
	// A new run changes the tables, and so the files and their timestamp.
	if code, _, stderr := runCLI(t, append(args, "-first-split", "1")...); code != 0 {
		t.Fatalf("new split: exit %d: %s", code, stderr)
	}
	if md, js := read(); bytes.Equal(md, md0) || bytes.Equal(js, js0) || !strings.Contains(string(md), "± ") {
		t.Errorf("a new run did not rewrite the report:\n%s", md)
	}
	// A report file written by hand (or by an older program) with other
	// content is regenerated.
	os.WriteFile(filepath.Join(out, "regression.md"), []byte("edited\n"), 0o644)
	if code, _, _ := runCLI(t, "-report", "-out", out); code != 0 {
		t.Fatal("-report failed")
	}
	if md, _ := read(); string(md) == "edited\n" {
		t.Error("an edited regression.md was not regenerated")
	}
}

// -init greedy and -lengthscale are recorded in the setup and the run key:
// a greedy run and a k-means run of the same model both finish into one
// log, and bad values are errors.
func TestInitAndLengthscale(t *testing.T) {
	dir := t.TempDir()
	writeToy(t, dir, 200)
	out := filepath.Join(dir, "out")
	base := []string{"-data-dir", dir, "-datasets", "toy", "-models", "solvegp5+3", "-epochs", "2", "-batch", "64", "-splits", "1",
		"-threads", "1", "-quiet", "-out", out}
	for _, extra := range [][]string{{"-init", "greedy", "-lengthscale", "2"}, {}} {
		if code, stdout, stderr := runCLI(t, append(append([]string(nil), base...), extra...)...); code != 0 {
			t.Fatalf("%v: exit %d, %s%s", extra, code, stdout, stderr)
		}
	}
	recs, _, err := benchutil.ReadJSONL[Record](filepath.Join(out, "regression.jsonl"))
	if err != nil || len(recs) != 2 {
		t.Fatalf("records %+v, %v", recs, err)
	}
	if g, k := recs[0].Setup, recs[1].Setup; g.Init != "greedy" || g.Lengthscale != 2 || k.Init != "" || k.Lengthscale != 0 ||
		!strings.Contains(g.String(), "greedy initialization, initial lengthscale 2") || recs[0].key() == recs[1].key() {
		t.Errorf("setups %+v and %+v, keys %q and %q", g, k, recs[0].key(), recs[1].key())
	}
	for _, bad := range [][]string{{"-init", "random"}, {"-lengthscale", "0"}, {"-lengthscale", "-1"}} {
		if _, err := parseFlags(append(append([]string(nil), base...), bad...), io.Discard); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
