package modelfile

import (
	"fmt"
	"math"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/mean"
)

// meanVersion is the first format version with a mean function (the
// "mean" object and layout.mean). Older files have none: their models
// have the zero mean.
const meanVersion = 4

// meanJSON is the model's prior mean function. Its parameters are also the
// last entries of the parameter vector, from layout.mean on; the readable
// values here must agree with them.
type meanJSON struct {
	Type     string    `json:"type"`
	Constant *float64  `json:"constant,omitempty"`
	Weights  []float64 `json:"weights,omitempty"`
	Bias     *float64  `json:"bias,omitempty"`
}

// encodeMean describes m (nil: no mean function).
func encodeMean(m gp.MeanFunction) (*meanJSON, error) {
	switch mt := m.(type) {
	case nil:
		return nil, nil
	case *mean.Zero:
		return &meanJSON{Type: "zero"}, nil
	case *mean.Constant:
		c := mt.Value()
		return &meanJSON{Type: "constant", Constant: &c}, nil
	case *mean.Linear:
		b := mt.Bias()
		return &meanJSON{Type: "linear", Weights: mt.Weights(), Bias: &b}, nil
	}
	return nil, fmt.Errorf("modelfile: mean function %T is not supported by the model-file format", m)
}

// decodeMean builds the mean function of a file of the given version on d
// inputs (nil for none).
func decodeMean(mj *meanJSON, d, version int) (gp.MeanFunction, error) {
	if mj == nil {
		return nil, nil
	}
	if version < meanVersion {
		return nil, bad("a mean function needs format version %d, the file has version %d", meanVersion, version)
	}
	finite := func(p *float64) bool { return p != nil && !math.IsNaN(*p) && !math.IsInf(*p, 0) }
	switch mj.Type {
	case "zero":
		if mj.Constant != nil || mj.Weights != nil || mj.Bias != nil {
			return nil, bad("zero mean with constant, weights or bias")
		}
		return mean.NewZero(d)
	case "constant":
		if !finite(mj.Constant) || mj.Weights != nil || mj.Bias != nil {
			return nil, bad("constant mean needs a finite constant and nothing else")
		}
		return mean.NewConstant(d, *mj.Constant)
	case "linear":
		if len(mj.Weights) != d || !finite(mj.Bias) || mj.Constant != nil {
			return nil, bad("linear mean needs %d weights and a bias, and no constant", d)
		}
		m, err := mean.NewLinear(mj.Weights, *mj.Bias)
		if err != nil {
			return nil, bad("%v", err)
		}
		return m, nil
	}
	return nil, bad("unknown mean type %q (want zero, constant or linear)", mj.Type)
}

// checkMeanValues returns an error if the readable values of mj differ
// from those the model's mean took from the parameter vector.
func checkMeanValues(mj *meanJSON, m gp.MeanFunction) error {
	if mj == nil {
		return nil
	}
	got, err := encodeMean(m)
	if err != nil {
		return err
	}
	same := func(a, b *float64) bool {
		return (a == nil) == (b == nil) && (a == nil || math.Float64bits(*a) == math.Float64bits(*b))
	}
	ok := same(got.Constant, mj.Constant) && same(got.Bias, mj.Bias) && len(got.Weights) == len(mj.Weights)
	for i := 0; ok && i < len(got.Weights); i++ {
		ok = math.Float64bits(got.Weights[i]) == math.Float64bits(mj.Weights[i])
	}
	if !ok {
		return bad("mean values disagree with the parameter vector")
	}
	return nil
}
