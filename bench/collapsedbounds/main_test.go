package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRun runs the comparison on a small synthetic data set and checks
// that it prints one row per bound with finite numbers, the bounds at the
// common start and at each fit's parameters in the order standard ≤
// tighter ≤ blockdiag, and that bad configurations are errors.
func TestRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("a,b,y\n")
	for i := 0; i < 200; i++ {
		x0, x1 := rng.NormFloat64(), rng.NormFloat64()
		fmt.Fprintf(&b, "%g,%g,%g\n", x0, x1, math.Sin(2*x0)+0.5*x1+0.05*rng.NormFloat64())
	}
	path := filepath.Join(t.TempDir(), "d.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	c := config{path: path, testFrac: 0.2, m: 8, iters: 20, evals: 1, blocks: []int{10, 40}, seed: 1, threads: 1}
	if err := run(context.Background(), c, &out); err != nil {
		t.Fatal(err)
	}
	var starts []float64
	cross := 0
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Split(strings.Trim(line, "| "), " | ")
		if len(f) == 5 && f[0] != "parameters of the fit of" {
			// Every bound at one fit's parameters: standard ≤ tighter ≤ blockdiag.
			cross++
			v := make([]float64, 4)
			for i := range v {
				v[i], _ = strconv.ParseFloat(f[i+1], 64)
			}
			if !(v[0] <= v[1] && v[1] <= v[2] && v[1] <= v[3]) {
				t.Errorf("bounds at the parameters of %s: %v", f[0], v)
			}
		}
		if len(f) != 9 || f[0] == "bound" || strings.HasPrefix(f[0], "---") {
			continue
		}
		for _, i := range []int{2, 3, 5, 6, 7} {
			if v, err := strconv.ParseFloat(f[i], 64); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("row %q: column %d is %q", line, i, f[i])
			}
		}
		v, _ := strconv.ParseFloat(f[2], 64)
		starts = append(starts, v)
	}
	if len(starts) != 4 || cross != 4 {
		t.Fatalf("%d rows and %d cross rows, want 4 each:\n%s", len(starts), cross, out.String())
	}
	for i := 1; i < len(starts); i++ {
		if starts[i] < starts[i-1] {
			t.Errorf("bounds at the start %v are not increasing", starts)
		}
	}
	for _, bad := range []config{{path: path, testFrac: 0.2, m: 0, evals: 1}, {path: path, testFrac: 0, m: 4, evals: 1}} {
		if err := run(context.Background(), bad, &out); err == nil {
			t.Errorf("config %+v accepted", bad)
		}
	}
	if _, err := parseBlocks("4,0"); err == nil {
		t.Error("block size 0 accepted")
	}
	if got, err := parseBlocks("64, 128"); err != nil || len(got) != 2 || got[1] != 128 {
		t.Errorf("parseBlocks: %v, %v", got, err)
	}
}
