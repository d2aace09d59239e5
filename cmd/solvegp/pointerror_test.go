package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalNamesLine checks that eval names a test point whose log density
// is not finite by the file and line it was read from (it said "test point
// 5", counted from 0 among the data rows, which a user cannot find).
func TestEvalNamesLine(t *testing.T) {
	dir := t.TempDir()
	train := writeRegression(t, dir, 40, 5)
	model := filepath.Join(dir, "m.json")
	if code, _, errOut := runCmd(t, "train", "-quiet", "-m", "3", "-m2", "2", "-epochs", "2", "-out", model, train); code != exitOK {
		t.Fatalf("train: exit %d, %s", code, errOut)
	}
	// Header, five rows, a blank line, then a target too far out for its
	// log density to be finite: the sixth data row, on line 8.
	test := writeFile(t, dir, "test.csv", "a,b,target\n0.1,0,10\n0.2,0,10\n0.3,0,10\n0.4,0,10\n0.5,0,10\n\n0.6,0,1e300\n0.7,0,10\n")
	code, out, errOut := runCmd(t, "eval", "-model", model, test)
	want := "solvegp eval: " + test + ":8: log predictive prediction is -Inf"
	if code != exitError || out != "" || !strings.HasPrefix(errOut, want) {
		t.Errorf("eval: exit %d, stdout %q, stderr %q, want %d and %q", code, out, errOut, exitError, want)
	}
}
