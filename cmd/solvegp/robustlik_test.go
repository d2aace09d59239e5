package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// TestStudentTAndHeteroscedastic trains, evaluates and predicts with
// -likelihood studentt and heteroscedastic on a sine whose noise grows
// with x (standardized targets for both), and checks the output columns.
func TestStudentTAndHeteroscedastic(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 5))
	var b strings.Builder
	b.WriteString("x,y\n")
	for i := 0; i < 200; i++ {
		x := 5 * rng.Float64()
		fmt.Fprintf(&b, "%g,%g\n", x, 3+math.Sin(x)+(0.05+0.3*x)*rng.NormFloat64())
	}
	path := writeFile(t, dir, "het.csv", b.String())
	for _, c := range []struct{ lik, header string }{
		{"studentt", "f_mean,f_var,y_mean,y_var\n"},
		{"heteroscedastic", "f_mean_0,f_mean_1,f_var_0,f_var_1,y_mean,y_var,noise_mean,noise_var\n"},
	} {
		model := filepath.Join(dir, c.lik+".json")
		code, _, errOut := runCmd(t, "train", "-likelihood", c.lik, "-model", "solvegp", "-m", "8", "-m2", "8", "-epochs", "60", "-batch", "50", "-lr", "0.05", "-quiet", "-out", model, path)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.lik, code, errOut)
		}
		code, out, _ := runCmd(t, "eval", "-model", model, "-json", path)
		var m metrics
		if code != exitOK || json.Unmarshal([]byte(out), &m) != nil || m.RMSE == nil || *m.RMSE > 1.5 || m.Accuracy != nil || m.RMSEStd == nil {
			t.Fatalf("%s eval: exit %d, %s", c.lik, code, out)
		}
		code, out, _ = runCmd(t, "predict", "-model", model, path)
		if code != exitOK || !strings.HasPrefix(out, c.header) || strings.Count(out, "\n") != 201 {
			t.Fatalf("%s predict: exit %d, %.120q", c.lik, code, out)
		}
		// The predictive mean is in the original units (about 3 + sin x).
		row := strings.Split(strings.Split(out, "\n")[1], ",")
		col := 2
		if c.lik == "heteroscedastic" {
			col = 4
		}
		var ym float64
		if _, err := fmt.Sscanf(row[col], "%g", &ym); err != nil || ym < 1 || ym > 5 {
			t.Errorf("%s: y_mean %q", c.lik, row[col])
		}
	}
}
