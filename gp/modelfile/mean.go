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

// perLatentMeanVersion is the first format version with a mean per latent
// function (mean type "per_latent" and its "components").
const perLatentMeanVersion = 5

// meanJSON is the model's prior mean function. Its parameters are also the
// last entries of the parameter vector, from layout.mean on; the readable
// values here must agree with them.
type meanJSON struct {
	Type     string    `json:"type"`
	Constant *float64  `json:"constant,omitempty"`
	Weights  []float64 `json:"weights,omitempty"`
	Bias     *float64  `json:"bias,omitempty"`
	// Components are the means of latent functions 0, 1, … of a
	// "per_latent" mean (format version 5, perLatentMeanVersion), each a
	// zero, constant or linear mean.
	Components []meanJSON `json:"components,omitempty"`
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
	case *mean.PerLatent:
		mj := &meanJSON{Type: "per_latent", Components: make([]meanJSON, mt.Outputs())}
		for l := range mj.Components {
			cj, err := encodeMean(mt.Component(l))
			if err != nil {
				return nil, err
			}
			mj.Components[l] = *cj
		}
		return mj, nil
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
	if mj.Type == "per_latent" {
		return decodePerLatent(mj, d, version)
	}
	if mj.Components != nil {
		return nil, bad("%s mean with components", mj.Type)
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
	return nil, bad("unknown mean type %q (want zero, constant, linear or per_latent)", mj.Type)
}

// decodePerLatent builds a "per_latent" mean: one zero, constant or linear
// component per latent function.
func decodePerLatent(mj *meanJSON, d, version int) (gp.MeanFunction, error) {
	if version < perLatentMeanVersion {
		return nil, bad("a per_latent mean needs format version %d, the file has version %d", perLatentMeanVersion, version)
	}
	if len(mj.Components) == 0 || mj.Constant != nil || mj.Weights != nil || mj.Bias != nil {
		return nil, bad("per_latent mean needs components and nothing else")
	}
	comps := make([]mean.Func, len(mj.Components))
	for l := range mj.Components {
		cj := &mj.Components[l]
		if cj.Type == "per_latent" {
			return nil, bad("per_latent mean component %d is itself per_latent", l)
		}
		c, err := decodeMean(cj, d, version)
		if err != nil {
			return nil, fmt.Errorf("per_latent mean component %d: %w", l, err)
		}
		comps[l] = c
	}
	m, err := mean.NewPerLatent(comps...)
	if err != nil {
		return nil, bad("%v", err)
	}
	return m, nil
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
	if !sameMeanValues(got, mj) {
		return bad("mean values disagree with the parameter vector")
	}
	return nil
}

// sameMeanValues reports whether a and b hold the same values, bit for
// bit, components included.
func sameMeanValues(a, b *meanJSON) bool {
	same := func(a, b *float64) bool {
		return (a == nil) == (b == nil) && (a == nil || math.Float64bits(*a) == math.Float64bits(*b))
	}
	ok := same(a.Constant, b.Constant) && same(a.Bias, b.Bias) && len(a.Weights) == len(b.Weights) &&
		len(a.Components) == len(b.Components)
	for i := 0; ok && i < len(a.Weights); i++ {
		ok = math.Float64bits(a.Weights[i]) == math.Float64bits(b.Weights[i])
	}
	for l := 0; ok && l < len(a.Components); l++ {
		ok = sameMeanValues(&a.Components[l], &b.Components[l])
	}
	return ok
}
