package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// The three subcommands run end to end on the in-process runner: predict
// writes one output shard per input shard, eval prints the metrics as
// solvegp eval does, refit writes a model that loads; a shard that does
// not parse fails the command with its file name.
func TestCommands(t *testing.T) {
	dir := t.TempDir()
	lik, _ := likelihood.NewGaussian(0.2)
	k, _ := kernel.NewRBF(1, 1, 1)
	mod, err := gp.NewSVGP(k, lik, mat.NewDense(4, 1, []float64{-1.5, -0.5, 0.5, 1.5}))
	if err != nil {
		t.Fatal(err)
	}
	modelPath := filepath.Join(dir, "m.json")
	b := &modelfile.Bundle{Model: mod, Standardizer: &data.Standardizer{XMean: []float64{0}, XScale: []float64{1}, YScale: 1},
		Meta: modelfile.Meta{InputNames: []string{"x"}, TargetName: "y"}}
	if err := modelfile.Save(modelPath, b); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for s := 0; s < 3; s++ {
		var buf bytes.Buffer
		buf.WriteString("x,y\n")
		for i := 0; i < 10; i++ {
			fmt.Fprintf(&buf, "%g,%g\n", 2*rng.NormFloat64(), rng.NormFloat64())
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.csv", s)), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	glob := filepath.Join(dir, "part-*.csv")
	ctx := context.Background()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"predict", "-model", modelPath, "-input", glob, "-output", filepath.Join(dir, "pred")}, &stdout, &stderr); code != 0 {
		t.Fatalf("predict: exit %d: %s", code, stderr.String())
	}
	for s := 0; s < 3; s++ {
		f, err := os.Open(filepath.Join(dir, fmt.Sprintf("pred-%05d-of-00003.csv", s)))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil || len(recs) != 11 || strings.Join(recs[0], ",") != "x,y,f_mean,f_var,y_mean,y_var" {
			t.Fatalf("output shard %d: %d records, header %v, err %v", s, len(recs), recs[0], err)
		}
	}
	stdout.Reset()
	if code := run(ctx, []string{"eval", "-model", modelPath, "-input", glob}, &stdout, &stderr); code != 0 {
		t.Fatalf("eval: exit %d: %s", code, stderr.String())
	}
	if out := stdout.String(); !strings.HasPrefix(out, "n          30\nRMSE       ") || !strings.Contains(out, "log-lik    ") {
		t.Errorf("eval printed %q", out)
	}
	refit := filepath.Join(dir, "refit.json")
	if code := run(ctx, []string{"refit", "-model", modelPath, "-input", glob, "-output", refit}, &stdout, &stderr); code != 0 {
		t.Fatalf("refit: exit %d: %s", code, stderr.String())
	}
	if _, err := modelfile.Load(refit); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "part-9.csv")
	if err := os.WriteFile(bad, []byte("x,y\n1,oops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run(ctx, []string{"eval", "-model", modelPath, "-input", glob}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), bad) {
		t.Errorf("eval with a bad shard: exit %d, stderr %q; want 1 and the file name", code, stderr.String())
	}
}
