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
// that it prints one row per seed and method plus the means, with finite
// numbers, a final bound not below the initial one, and a useful fit.
func TestRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("a,b,y\n")
	for i := 0; i < 300; i++ {
		x0, x1 := rng.NormFloat64(), rng.NormFloat64()
		fmt.Fprintf(&b, "%g,%g,%g\n", x0, x1, math.Sin(2*x0)+0.5*x1+0.05*rng.NormFloat64())
	}
	path := filepath.Join(t.TempDir(), "d.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	c := config{path: path, rows: 250, testFrac: 0.2, m: 10, iters: 40, seeds: 2, refit: true, threads: 1}
	if err := run(context.Background(), c, &out); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Split(line, " | ")
		if len(f) != 8 || strings.HasPrefix(f[0], "| seed") {
			continue
		}
		rows++
		var v [6]float64
		for i, j := range []int{2, 3, 5, 6} {
			x, err := strconv.ParseFloat(f[j], 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("%q: field %d is %q", line, j, f[j])
			}
			v[i] = x
		}
		if v[1] < v[0] {
			t.Errorf("%q: final bound below the initial one", line)
		}
		if v[2] > 0.5 {
			t.Errorf("%q: test RMSE %g on standardized targets", line, v[2])
		}
	}
	if rows != 12 {
		t.Errorf("%d result rows, want 12:\n%s", rows, out.String())
	}
	for _, bad := range []config{{path: path, m: 0, seeds: 1}, {path: path, m: 5, seeds: 0}, {path: filepath.Join(t.TempDir(), "none.csv"), m: 5, seeds: 1}} {
		if err := run(context.Background(), bad, &out); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
