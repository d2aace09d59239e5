package main

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	gpmean "github.com/solvegp/solvegp/gp/mean"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// writeTrend writes n rows of y = 3x + sin(3x) with x in [lo, hi).
func writeTrend(t *testing.T, path string, n int, lo, hi float64) {
	t.Helper()
	var b strings.Builder
	b.WriteString("x,y\n")
	for i := 0; i < n; i++ {
		x := lo + (hi-lo)*float64(i)/float64(n)
		b.WriteString(ftoa(x) + "," + ftoa(3*x+math.Sin(3*x)) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// train -mean linear, mini-batch and collapsed, saves a model with a
// linear mean that follows the trend beyond the training inputs; -mean
// zero saves none; an unknown -mean is an error.
func TestTrainMean(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "trend.csv")
	writeTrend(t, data, 80, 0, 4)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"svgp", []string{"-model", "svgp", "-m", "8", "-epochs", "300", "-batch", "0", "-lr", "0.05"}},
		{"collapsed", []string{"-collapsed", "-model", "solvegp", "-m", "6", "-m2", "4"}},
	} {
		for _, mn := range []string{"zero", "linear"} {
			out := filepath.Join(dir, c.name+"-"+mn+".json")
			args := append(append([]string{"train", "-quiet", "-mean", mn, "-out", out}, c.args...), data)
			if code, _, errOut := runCmd(t, args...); code != exitOK {
				t.Fatalf("%s -mean %s: exit %d: %s", c.name, mn, code, errOut)
			}
			b, err := modelfile.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if mn == "zero" {
				if b.Model.Mean() != nil {
					t.Errorf("%s -mean zero: model has mean %T", c.name, b.Model.Mean())
				}
				continue
			}
			if _, ok := b.Model.Mean().(*gpmean.Linear); !ok {
				t.Fatalf("%s -mean linear: model has mean %T", c.name, b.Model.Mean())
			}
			pred, err := b.Predict(mat.NewDense(1, 1, []float64{8}))
			if err != nil {
				t.Fatal(err)
			}
			if got := pred.YMean.At(0, 0); math.Abs(got-24) > 3 {
				t.Errorf("%s -mean linear: prediction at x = 8 is %g, trend 24", c.name, got)
			}
		}
	}
	code, _, errOut := runCmd(t, "train", "-mean", "quadratic", data)
	if code == exitOK || !strings.Contains(errOut, "-mean") {
		t.Errorf("-mean quadratic: exit %d, stderr %q", code, errOut)
	}
}
