package gpbeam

import (
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// TestMultiOutputRefused checks that Eval and the prediction and
// evaluation workers refuse a multi-output model, whose shards hold
// several target columns.
func TestMultiOutputRefused(t *testing.T) {
	k, _ := kernel.NewRBF(1, 1, 1)
	lik, _ := likelihood.NewIndependentGaussian([]float64{0.1, 0.1})
	m, err := gp.NewSVGP(k, lik, mat.NewDense(2, 1, []float64{-1, 1}))
	if err != nil {
		t.Fatal(err)
	}
	buf, err := modelfile.Marshal(&modelfile.Bundle{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	_, s := beam.NewPipelineWithRoot()
	if _, err := Eval(s, buf, nil); err == nil || !strings.Contains(err.Error(), "2 outputs") {
		t.Errorf("Eval: %v", err)
	}
	if err := (&predictFn{Model: buf}).Setup(); err == nil || !strings.Contains(err.Error(), "2 outputs") {
		t.Errorf("predictFn.Setup: %v", err)
	}
	if err := (&evalFn{Model: buf}).Setup(); err == nil || !strings.Contains(err.Error(), "2 outputs") {
		t.Errorf("evalFn.Setup: %v", err)
	}
}
