package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHugeValuesRoundTrip checks that whatever train saves, predict and
// eval accept: a target or input of 1e308 (which trained, and then made
// predict fail with "a prediction is +Inf") is refused by train with its
// file:line:column, and values at the limit train, predict and evaluate.
func TestHugeValuesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rows := func(at, value string) string {
		var b strings.Builder
		b.WriteString("a,b,y\n")
		for i := 0; i < 30; i++ {
			row := fmt.Sprintf("%g,%g,%g", float64(i%7)/7, float64(i%5)/5, float64(i%3))
			if i == 4 {
				row = strings.Replace(at, "V", value, 1)
			}
			b.WriteString(row + "\n")
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, row, value, want string
	}{
		{"target", "0.5,0.5,V", "1e308", ":6:3: target 1e+308 is beyond the limit of 1e+100"},
		{"negative target", "0.5,0.5,V", "-1e101", ":6:3: target -1e+101 is beyond the limit of 1e+100"},
		{"input", "0.5,V,1", "1e308", ":6:2: input 1e+308 is beyond the limit of 1e+100"},
	} {
		path := writeFile(t, dir, strings.ReplaceAll(tc.name, " ", "-")+".csv", rows(tc.row, tc.value))
		out := filepath.Join(dir, "refused.json")
		code, stdout, errOut := runCmd(t, "train", "-quiet", "-m", "3", "-m2", "2", "-epochs", "2", "-out", out, path)
		if code != exitError || stdout != "" || !strings.HasPrefix(errOut, "solvegp train: "+path+tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want %d and %q", tc.name, code, errOut, exitError, path+tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: a model was saved", tc.name)
		}
	}
	for _, row := range []string{"0.5,0.5,V", "0.5,V,1"} {
		path := writeFile(t, dir, "limit.csv", rows(row, "1e100"))
		model := filepath.Join(dir, "limit.json")
		if code, _, errOut := runCmd(t, "train", "-quiet", "-m", "3", "-m2", "2", "-epochs", "2", "-out", model, path); code != exitOK {
			t.Fatalf("%s: train: exit %d, %s", row, code, errOut)
		}
		for _, cmd := range []string{"predict", "eval"} {
			if code, out, errOut := runCmd(t, cmd, "-model", model, path); code != exitOK || strings.Contains(out, "Inf") || strings.Contains(out, "NaN") {
				t.Errorf("%s: %s: exit %d, stderr %q, stdout %.200q", row, cmd, code, errOut, out)
			}
		}
	}
}
