package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp/data/snelson"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var o, e bytes.Buffer
	code := run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

func readReport(t *testing.T, dir string) Report {
	t.Helper()
	buf, err := os.ReadFile(filepath.Join(dir, "snelson.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal(buf, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestShortRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "a")
	code, stdout, stderr := runCLI(t, "-iters", "40", "-out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	rep := readReport(t, out)
	if rep.NTrain != 100 || rep.NTest != 100 || rep.Iters != 40 || len(rep.Results) != 4 {
		t.Fatalf("report %+v", rep)
	}
	want := []string{"SVGP 5", "ODVGP 5 + 100", "SOLVE-GP 5 + 5", "SVGP 10"}
	for i, r := range rep.Results {
		if r.Model != want[i] || r.Steps != 40 {
			t.Errorf("result %d: %s, %d steps", i, r.Model, r.Steps)
		}
		for _, v := range []float64{r.Bound, r.TestRMSE, r.TestLogLik, r.Noise, r.Lengthscale, r.Variance} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%s: non-finite value in %+v", r.Model, r)
			}
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "snelson.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range want {
		if !strings.Contains(string(md), "| "+m+" | ") {
			t.Errorf("markdown lacks row %q", m)
		}
	}
	png, err := os.ReadFile(filepath.Join(out, "snelson.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("snelson.png: %v", err)
	}

	// The same data from a CSV file gives the same split and results.
	x, y, _ := snelson.Load()
	var b strings.Builder
	b.WriteString("x,y\n")
	for i, v := range y {
		fmt.Fprintf(&b, "%s,%s\n", strconv.FormatFloat(x.At(i, 0), 'g', -1, 64), strconv.FormatFloat(v, 'g', -1, 64))
	}
	csv := filepath.Join(dir, "snelson.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(dir, "b")
	if code, _, stderr := runCLI(t, "-iters", "40", "-data", csv, "-out", out2); code != 0 {
		t.Fatalf("-data: exit %d %s", code, stderr)
	}
	rep2 := readReport(t, out2)
	for i := range rep.Results {
		a, c := rep.Results[i], rep2.Results[i]
		if a.Bound != c.Bound || a.TestRMSE != c.TestRMSE || a.TestLogLik != c.TestLogLik {
			t.Errorf("%s: embedded %+v, file %+v", a.Model, a, c)
		}
	}
}

func TestFlagErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("x1,x2,y\n1,2,3\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-iters", "0"}, 2, "-iters"},
		{[]string{"-threads", "-2"}, 2, "-threads"},
		{[]string{"-out", ""}, 2, "-out"},
		{[]string{"stray"}, 2, "unexpected argument"},
		{[]string{"-bogus"}, 2, "not defined"},
		{[]string{"-data", filepath.Join(dir, "missing.csv"), "-out", dir}, 1, "missing.csv"},
		{[]string{"-data", bad, "-out", dir}, 1, "want 1"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// TestCanceled checks that an interrupted run exits 130 and writes nothing.
func TestCanceled(t *testing.T) {
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var o, e bytes.Buffer
	if code := run(ctx, []string{"-iters", "100000", "-out", out}, &o, &e); code != 130 {
		t.Errorf("exit %d, stderr %q; want 130", code, e.String())
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("an interrupted run wrote %v", entries)
	}
}
