package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSVGPWithM2 checks that -m2 with -model svgp is a usage error rather
// than silently ignored, and that svgp without -m2 (or with -m2 0) trains.
func TestSVGPWithM2(t *testing.T) {
	dir := t.TempDir()
	data := writeRegression(t, dir, 40, 3)
	out := filepath.Join(dir, "m.json")
	code, stdout, errOut := runCmd(t, "train", "-quiet", "-model", "svgp", "-m", "3", "-m2", "500", "-epochs", "1", "-out", out, data)
	want := "solvegp train: -m2 500 does not go with -model svgp, which has no orthogonal inducing points (use -model odvgp or solvegp, or leave out -m2)\n"
	if code != exitUsage || stdout != "" || errOut != want {
		t.Errorf("-model svgp -m2 500: exit %d, stdout %q, stderr\n%q, want %d and\n%q", code, stdout, errOut, exitUsage, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a model file was written")
	}
	for _, extra := range [][]string{nil, {"-m2", "0"}, {"-model", "SVGP"}} {
		args := append([]string{"train", "-quiet", "-model", "svgp", "-m", "3", "-epochs", "1", "-out", out}, extra...)
		if code, _, errOut := runCmd(t, append(args, data)...); code != exitOK {
			t.Errorf("%v: exit %d, stderr %q", extra, code, errOut)
		}
	}
}
