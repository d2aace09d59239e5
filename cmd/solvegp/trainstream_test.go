package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp/data"
)

// TestTrainStream trains on three shards named by a pattern with -stream,
// predicts into a Parquet file and reads it back, and checks the flags
// -stream refuses.
func TestTrainStream(t *testing.T) {
	dir := t.TempDir()
	for seed := uint64(1); seed <= 3; seed++ {
		writeRegression(t, dir, 60, seed)
	}
	model := filepath.Join(dir, "m.json")
	code, out, errOut := runCmd(t, "train", "-stream", "50", "-epochs", "5", "-batch", "40", "-m", "8", "-m2", "4",
		"-quiet", "-out", model, filepath.Join(dir, "reg*.csv"))
	if code != exitOK || !strings.Contains(out, "180 training rows") {
		t.Fatalf("train -stream: exit %d\n%s%s", code, out, errOut)
	}
	pred := filepath.Join(dir, "pred.parquet")
	if code, _, errOut := runCmd(t, "predict", "-model", model, "-out", pred, filepath.Join(dir, "reg2.csv")); code != exitOK {
		t.Fatalf("predict: exit %d: %s", code, errOut)
	}
	tab, err := data.LoadParquet(pred, data.Options{NoTarget: true})
	if err != nil {
		t.Fatal(err)
	}
	if n, c := tab.X.Dims(); n != 60 || c != 4 || strings.Join(tab.Names, ",") != "f_mean,f_var,y_mean,y_var" {
		t.Fatalf("predictions: %d×%d, columns %v", n, c, tab.Names)
	}
	// A truncated Parquet input is an error naming the file.
	b, _ := os.ReadFile(pred)
	cut := filepath.Join(dir, "cut.parquet")
	os.WriteFile(cut, b[:len(b)/2], 0o644)
	if code, _, errOut := runCmd(t, "predict", "-model", model, cut); code == exitOK || !strings.Contains(errOut, cut) {
		t.Errorf("truncated Parquet input: exit %d: %s", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-stream", "100", "-valid", "0.2"}, "cannot be used with -stream"},
		{[]string{"-stream", "0"}, "at least one row"},
	} {
		args := append(append([]string{"train", "-quiet", "-out", filepath.Join(dir, "x.json")}, c.args...), filepath.Join(dir, "reg1.csv"))
		if code, _, errOut := runCmd(t, args...); code == exitOK || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d: %s", c.args, code, errOut)
		}
	}
}
