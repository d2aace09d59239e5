package stability

import (
	"context"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// TestCollapsedThroughTrouble fits the collapsed SGPR and SOLVE-GP bounds
// (package collapsed, L-BFGS) from the hostile starting points of
// TestTrainingThroughTrouble. Fit may fail only with an error; when it
// succeeds the model must hold finite parameters whose bound and gradient
// are finite and that are no worse than the start, and the posterior must
// predict finite means and non-negative variances.
func TestCollapsedThroughTrouble(t *testing.T) {
	x, y := sinData(150, 12)
	xt, _ := sinData(40, 13)
	for _, withO := range []bool{false, true} {
		for _, tr := range troubles(0) {
			s := tr.s
			k, err := kernel.NewRBF(1, s.lengthscale, s.variance)
			if err != nil {
				t.Fatal(err)
			}
			lik, err := likelihood.NewGaussian(s.noise)
			if err != nil {
				t.Fatal(err)
			}
			var o *mat.Dense
			if withO {
				o = s.o
			}
			what := fmt.Sprintf("collapsed %s (O: %v)", tr.name, withO)
			md, err := collapsed.New(k, lik, s.z, o, collapsed.Options{Threads: 1})
			if err != nil {
				t.Errorf("%s: New: %v", what, err)
				continue
			}
			res, err := md.Fit(context.Background(), x, y, train.LBFGSOptions{MaxIter: 60})
			if err != nil {
				t.Logf("%s: Fit: %v", what, err)
				continue
			}
			p := make([]float64, md.NumParams())
			md.Params(p)
			for i, v := range p {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s: parameter %d is %v", what, i, v)
				}
			}
			grad := make([]float64, md.NumParams())
			f, err := md.BoundGrad(x, y, grad)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < res.Initial-1e-9*math.Abs(res.Initial) {
				t.Errorf("%s: bound %v (err %v), initial %v", what, f, err, res.Initial)
				continue
			}
			for i, g := range grad {
				if math.IsNaN(g) || math.IsInf(g, 0) {
					t.Errorf("%s: gradient entry %d is %v", what, i, g)
				}
			}
			post, err := md.Posterior(x, y)
			if err != nil {
				t.Errorf("%s: Posterior: %v", what, err)
				continue
			}
			mean, variance := make([]float64, 40), make([]float64, 40)
			if err := post.Predict(xt, mean, variance); err != nil {
				t.Errorf("%s: Predict: %v", what, err)
				continue
			}
			for i := range mean {
				if math.IsNaN(mean[i]) || math.IsInf(mean[i], 0) || !(variance[i] >= -1e-9) || math.IsInf(variance[i], 0) {
					t.Errorf("%s: prediction %d is N(%v, %v)", what, i, mean[i], variance[i])
					break
				}
			}
		}
	}
}
