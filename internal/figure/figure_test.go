package figure

import (
	"os/exec"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestNoModelImports checks that figure depends on no model package:
// imports run from the models to the programs that draw them, not back.
func TestNoModelImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/solvegp/solvegp/") && !strings.HasPrefix(p, "github.com/solvegp/solvegp/internal/") {
			t.Errorf("internal/figure depends on %s", p)
		}
	}
}

// TestPosterior checks that Posterior takes the mean, the square root of
// the variance (clipped at 0) and the inducing inputs from its Model.
func TestPosterior(t *testing.T) {
	grid := mat.NewDense(3, 1, []float64{-1, 0, 1})
	m := Model{
		PredictY: func(x mat.Matrix) (*mat.Dense, *mat.Dense, error) {
			return mat.NewDense(3, 1, []float64{1, 2, 3}), mat.NewDense(3, 1, []float64{4, -1, 9}), nil
		},
		Z: mat.NewDense(2, 1, []float64{0.5, 0.7}),
	}
	p, err := Posterior(m, grid, "t")
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "t" || p.Mean[2] != 3 || p.SD[0] != 2 || p.SD[1] != 0 || p.SD[2] != 3 || len(p.Z) != 2 || p.O != nil || p.ODVGP {
		t.Fatalf("panel %+v", p)
	}
}
