package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp/modelfile"
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

// TestVersion1ModelWarning checks that predict and eval use a model file of
// format version 1, whose checksum covers the parameters only, with a
// warning that its standardization is unchecked.
func TestVersion1ModelWarning(t *testing.T) {
	dir := t.TempDir()
	train := writeRegression(t, dir, 40, 6)
	model := filepath.Join(dir, "m.json")
	if code, _, errOut := runCmd(t, "train", "-quiet", "-m", "3", "-m2", "2", "-epochs", "2", "-out", model, train); code != exitOK {
		t.Fatalf("train: exit %d, %s", code, errOut)
	}
	buf, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	v1 := regexp.MustCompile(`,\s*"model_sha256": "[0-9a-f]*"`).ReplaceAllString(strings.Replace(string(buf), fmt.Sprintf(`"version": %d`, modelfile.Version), `"version": 1`, 1), "")
	old := writeFile(t, dir, "v1.json", v1)
	for _, cmd := range []string{"predict", "eval"} {
		code, _, errOut := runCmd(t, cmd, "-model", old, train)
		want := "solvegp " + cmd + ": warning: " + old + ": format version 1: its checksum covers the parameters only, so the standardization"
		if code != exitOK || !strings.HasPrefix(errOut, want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", cmd, code, errOut, want)
		}
		if code, _, errOut := runCmd(t, cmd, "-model", model, train); code != exitOK || errOut != "" {
			t.Errorf("%s of a current file: exit %d, stderr %q", cmd, code, errOut)
		}
	}
}

// TestValidationLineUnits checks that train's validation line says its
// metrics are in the original units of the target (the bound line above
// it is on standardized data, and nothing told the two apart).
func TestValidationLineUnits(t *testing.T) {
	dir := t.TempDir()
	data := writeRegression(t, dir, 50, 8)
	code, out, errOut := runCmd(t, "train", "-quiet", "-m", "3", "-m2", "2", "-epochs", "2", "-valid", "0.2", "-out", filepath.Join(dir, "m.json"), data)
	if code != exitOK || !strings.Contains(out, "\nvalidation (original units) log-lik ") || !strings.Contains(out, "  RMSE ") {
		t.Errorf("train: exit %d, stderr %q, stdout\n%s", code, errOut, out)
	}
}
