package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp/data"
)

// withStdin runs f with os.Stdin reading content.
func withStdin(t *testing.T, content string, f func()) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stdin")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	old := os.Stdin
	os.Stdin = in
	defer func() { os.Stdin = old }()
	f()
}

// TestSplitMask splits a file by a mask in the UCI format (header
// split0,...; one row of 0/1 per data row) and a split index.
func TestSplitMask(t *testing.T) {
	dir := t.TempDir()
	dataPath := writeFile(t, dir, "d.csv", "a,b,y\n1,2,3\n4,5,6\n7,8,9\n10,11,12\n")
	mask := writeFile(t, dir, "mask.csv", "split0,split1,split2\n1,0,0\n0,1,0\n0,0,1\n0,1,0\n")
	trainOut, testOut := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	code, _, errOut := runCmd(t, "split", "-mask", mask, "-split", "1", "-train", trainOut, "-test", testOut, dataPath)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "2 training rows") || !strings.Contains(errOut, "2 test rows") {
		t.Errorf("summary %q", errOut)
	}
	for path, want := range map[string]string{trainOut: "a,b,y\n1,2,3\n7,8,9\n", testOut: "a,b,y\n4,5,6\n10,11,12\n"} {
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("%s = %q (%v), want %q", path, got, err, want)
		}
	}
	// Mask from standard input, test part to standard output.
	withStdin(t, "0\n0\n1\n0\n", func() {
		code, out, errOut := runCmd(t, "split", "-mask", "-", "-train", trainOut, "-test", "-", dataPath)
		if code != exitOK || out != "a,b,y\n7,8,9\n" {
			t.Fatalf("exit %d, out %q, stderr %s", code, out, errOut)
		}
	})
}

func TestSplitRandomAndStdin(t *testing.T) {
	dir := t.TempDir()
	dataPath := writeRegression(t, dir, 50, 3)
	content, _ := os.ReadFile(dataPath)
	trainOut, testOut := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	withStdin(t, string(content), func() {
		code, _, errOut := runCmd(t, "split", "-test-frac", "0.2", "-seed", "5", "-train", trainOut, "-test", testOut, "-")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	})
	train, err := data.LoadCSV(trainOut, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	test, err := data.LoadCSV(testOut, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(train.Y) != 40 || len(test.Y) != 10 || train.Names[2] != "target" {
		t.Fatalf("%d train, %d test rows, names %v", len(train.Y), len(test.Y), train.Names)
	}
	// The test part of a run with the same seed is the same.
	again := filepath.Join(dir, "again.csv")
	if code, _, errOut := runCmd(t, "split", "-test-frac", "0.2", "-seed", "5", "-train", filepath.Join(dir, "t2.csv"), "-test", again, dataPath); code != exitOK {
		t.Fatal(errOut)
	}
	a, _ := os.ReadFile(testOut)
	b, _ := os.ReadFile(again)
	if string(a) != string(b) {
		t.Fatal("same seed, different test rows")
	}
}

func TestSplitBadArgs(t *testing.T) {
	dir := t.TempDir()
	dataPath := writeFile(t, dir, "d.csv", "a,y\n1,2\n3,4\n")
	mask := writeFile(t, dir, "m.csv", "split0\n1\n1\n1\n")
	o := []string{"-train", filepath.Join(dir, "tr.csv"), "-test", filepath.Join(dir, "te.csv")}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{append([]string{"split"}, o...), exitUsage, "need exactly one data file"},
		{append(append([]string{"split"}, o...), dataPath), exitError, "either -mask"},
		{append(append([]string{"split", "-mask", mask, "-test-frac", "0.5"}, o...), dataPath), exitError, "either -mask"},
		{append(append([]string{"split", "-mask", mask, "-seed", "3"}, o...), dataPath), exitError, "-seed applies to -test-frac"},
		{append(append([]string{"split", "-test-frac", "0.5", "-split", "2"}, o...), dataPath), exitError, "-split applies to -mask"},
		{append(append([]string{"split", "-test-frac", "1"}, o...), dataPath), exitError, "strictly between 0 and 1"},
		{append(append([]string{"split", "-mask", mask, "-split", "-1"}, o...), dataPath), exitError, "numbered from 0"},
		{[]string{"split", "-test-frac", "0.5", "-train", "x.csv", dataPath}, exitError, "both -train and -test"},
		{[]string{"split", "-test-frac", "0.5", "-train", "-", "-test", "-", dataPath}, exitError, "both be standard output"},
		{[]string{"split", "-mask", "-", "-test-frac", "0.5", "-train", "a", "-test", "b", "-"}, exitError, "either -mask"},
		{[]string{"split", "-mask", "-", "-train", "a", "-test", "b", "-"}, exitError, "both be standard input"},
		{[]string{"split", "-test-frac", "0.5", "-train", dataPath, "-test", "b", dataPath}, exitError, "same file"},
		{append(append([]string{"split", "-mask", mask}, o...), dataPath), exitError, "m.csv: 3 mask rows, but the data have 2 rows"},
		{append(append([]string{"split", "-mask", mask, "-split", "1"}, o...), dataPath), exitError, "split 1 out of range"},
	} {
		code, _, errOut := runCmd(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tr.csv")); err == nil {
		t.Error("a refused split wrote its output")
	}
}

// TestDataFromStdin: "-" is standard input for the data files of train,
// predict and eval.
func TestDataFromStdin(t *testing.T) {
	dir := t.TempDir()
	trainCSV := writeRegression(t, dir, 80, 1)
	content, _ := os.ReadFile(trainCSV)
	model := filepath.Join(dir, "m.json")
	withStdin(t, string(content), func() {
		code, _, errOut := runCmd(t, "train", "-model", "svgp", "-m", "5", "-epochs", "2", "-batch", "40", "-quiet", "-out", model, "-")
		if code != exitOK {
			t.Fatalf("train: exit %d: %s", code, errOut)
		}
	})
	withStdin(t, string(content), func() {
		code, out, errOut := runCmd(t, "predict", "-model", model, "-")
		if code != exitOK || strings.Count(out, "\n") != 81 {
			t.Fatalf("predict: exit %d, %d lines: %s", code, strings.Count(out, "\n"), errOut)
		}
	})
	withStdin(t, string(content), func() {
		code, _, errOut := runCmd(t, "eval", "-model", model, "-")
		if code != exitOK {
			t.Fatalf("eval: exit %d: %s", code, errOut)
		}
	})
	withStdin(t, "a,a,y\n1,2,3\n", func() {
		code, _, errOut := runCmd(t, "predict", "-model", model, "-")
		if code != exitError || !strings.Contains(errOut, `stdin:1:2: duplicate column name "a"`) {
			t.Fatalf("predict: exit %d: %s", code, errOut)
		}
	})
}

// FuzzSplitArgs: any command line is parsed into a consistent
// configuration or refused, never a panic.
func FuzzSplitArgs(f *testing.F) {
	for _, s := range []string{
		"-mask m.csv -split 3 -train a -test b d.csv",
		"-test-frac 0.1 -seed 7 -train - -test b -",
		"-mask - -train a -test b -", "-split -1", "-test-frac NaN -train a -test b d", "-h", "d.csv -mask x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var stderr strings.Builder
		cfg, done, code := parseSplitArgs(strings.Fields(line), &stderr)
		if done {
			if code == exitOK && !strings.Contains(stderr.String(), "Usage") {
				t.Fatalf("done with exit 0 without help: %q", stderr.String())
			}
			return
		}
		if (cfg.maskPath == "") == (cfg.testFrac == 0) || cfg.split < 0 || cfg.trainPath == "" || cfg.testPath == "" ||
			cfg.maskPath == "" && !(cfg.testFrac > 0 && cfg.testFrac < 1) || cfg.trainPath == "-" && cfg.testPath == "-" {
			t.Fatalf("inconsistent config %+v from %q", cfg, line)
		}
	})
}
