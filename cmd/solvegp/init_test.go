package main

import (
	"flag"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestInitGreedy checks that -init greedy places Z and O on training rows,
// distinct ones, while -init kmeans places centres, and that both train.
func TestInitGreedy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	x := mat.NewDense(200, 2, nil)
	for i := 0; i < 200; i++ {
		x.Set(i, 0, rng.NormFloat64())
		x.Set(i, 1, rng.NormFloat64())
	}
	isRow := func(p []float64) int {
		for i := 0; i < 200; i++ {
			if slices.Equal(p, x.RawRowView(i)) {
				return i
			}
		}
		return -1
	}
	for _, init := range []string{"greedy", "kmeans", "Greedy"} {
		s := modelSpec{kind: "solvegp", m: 6, m2: 4, kernel: "rbf", lengthscale: 1, variance: 1, lik: "gaussian", noise: 0.1, seed: 1, init: init}
		if err := s.check(); err != nil {
			t.Fatal(err)
		}
		_, z, o, err := s.prior(x)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[int]bool{}
		for _, pts := range []*mat.Dense{z, o} {
			r, _ := pts.Dims()
			for j := 0; j < r; j++ {
				i := isRow(pts.RawRowView(j))
				if s.init == "greedy" && (i < 0 || rows[i]) {
					t.Errorf("-init %s: point %v is not a new training row", init, pts.RawRowView(j))
				}
				rows[i] = true
			}
		}
		if s.init == "kmeans" && len(rows) > 5 {
			t.Errorf("-init kmeans: %d of 10 points are training rows", len(rows))
		}
	}

	dir := t.TempDir()
	data := writeRegression(t, dir, 60, 4)
	out := filepath.Join(dir, "m.json")
	for _, extra := range [][]string{{"-epochs", "1"}, {"-collapsed", "-iters", "3"}} {
		args := append([]string{"train", "-quiet", "-init", "greedy", "-m", "5", "-m2", "3", "-out", out}, extra...)
		if code, _, errOut := runCmd(t, append(args, data)...); code != exitOK {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	code, _, errOut := runCmd(t, "train", "-quiet", "-init", "random", "-out", out, data)
	if code == exitOK || !strings.Contains(errOut, `-init "random": want kmeans or greedy`) {
		t.Errorf("-init random: exit %d, stderr %q", code, errOut)
	}
}

// TestInitFingerprint checks that -init kmeans, the default, leaves the run
// fingerprint's flags as they were before -init existed, and that -init
// greedy enters them.
func TestInitFingerprint(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{{nil, false}, {[]string{"-init", "kmeans"}, false}, {[]string{"-init", "KMeans"}, false}, {[]string{"-init", "greedy"}, true}} {
		fs := flag.NewFlagSet("train", flag.ContinueOnError)
		var spec modelSpec
		spec.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if err := spec.check(); err != nil {
			t.Fatal(err)
		}
		flags := trainingFlags(fs)
		if got := slices.Contains(flags, "init=greedy"); got != c.want || (!c.want && slices.ContainsFunc(flags, func(s string) bool { return strings.HasPrefix(s, "init=") })) {
			t.Errorf("%v: training flags %v", c.args, flags)
		}
	}
}
