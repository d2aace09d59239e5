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

// train -mean constant-per-latent and linear-per-latent give a softmax
// (and robust-max) classifier one mean per class, saved in the model file:
// on unbalanced classes whose labels do not depend on the input the
// majority class gets the largest constant, and eval and predict read the
// model. A per-latent mean with a one-latent likelihood is an error.
func TestTrainPerLatentMean(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("a,b,label\n")
	for i := 0; i < 120; i++ {
		label := 0
		switch i % 20 {
		case 0, 7, 14:
			label = 1
		case 3:
			label = 2
		}
		b.WriteString(ftoa(float64(i%11)-5) + "," + ftoa(float64(i%7)-3) + "," + strconv.Itoa(label) + "\n")
	}
	data := writeFile(t, dir, "unbalanced.csv", b.String())
	for _, c := range []struct{ lik, mean string }{{"softmax", "constant-per-latent"}, {"robustmax", "linear-per-latent"}} {
		out := filepath.Join(dir, c.lik+".json")
		code, _, errOut := runCmd(t, "train", "-quiet", "-likelihood", c.lik, "-mean", c.mean, "-model", "svgp", "-m", "2",
			"-epochs", "60", "-batch", "0", "-lr", "0.05", "-out", out, data)
		if code != exitOK {
			t.Fatalf("%s -mean %s: exit %d: %s", c.lik, c.mean, code, errOut)
		}
		bd, err := modelfile.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		pl, ok := bd.Model.Mean().(*gpmean.PerLatent)
		if !ok || pl.Outputs() != 3 {
			t.Fatalf("%s -mean %s: model has mean %T", c.lik, c.mean, bd.Model.Mean())
		}
		bias := make([]float64, 3)
		for l := range bias {
			switch m := pl.Component(l).(type) {
			case *gpmean.Constant:
				bias[l] = m.Value()
			case *gpmean.Linear:
				bias[l] = m.Bias()
			default:
				t.Fatalf("%s -mean %s: component %d is %T", c.lik, c.mean, l, m)
			}
		}
		if !(bias[0] > bias[1] && bias[0] > bias[2]) {
			t.Errorf("%s -mean %s: class offsets %v, want the majority class 0 largest", c.lik, c.mean, bias)
		}
		if code, out, _ := runCmd(t, "eval", "-model", out, data); code != exitOK {
			t.Errorf("%s eval: exit %d, %s", c.lik, code, out)
		}
		if code, out, _ := runCmd(t, "predict", "-model", out, data); code != exitOK || !strings.HasPrefix(out, "f_mean_0,") {
			t.Errorf("%s predict: exit %d, %.80q", c.lik, code, out)
		}
	}
	code, _, errOut := runCmd(t, "train", "-mean", "constant-per-latent", data)
	if code == exitOK || !strings.Contains(errOut, "several latent functions") {
		t.Errorf("-mean constant-per-latent with the Gaussian likelihood: exit %d, stderr %q", code, errOut)
	}
}
