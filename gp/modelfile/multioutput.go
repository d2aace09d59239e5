package modelfile

import (
	"fmt"
	"math"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// multiOutputVersion is the first format version with multi-output models:
// the likelihood types independent_gaussian and lmc (fields outputs,
// noise_variances, mixing), the standardizer's y_means and y_scales, and
// meta.target_names.
const multiOutputVersion = 5

// Names of the multi-output likelihood types in the file.
const (
	likIndependent = "independent_gaussian"
	likLMC         = "lmc"
)

// encodeMultiLik encodes a likelihood.MultiGaussian; ok is false for other
// likelihoods.
func encodeMultiLik(l gp.Likelihood) (lj *likJSON, ok bool) {
	g, ok := l.(*likelihood.MultiGaussian)
	if !ok {
		return nil, false
	}
	lj = &likJSON{Type: likIndependent, Outputs: g.NumOutputs(), NoiseVariances: g.NoiseVariances(), NoiseFloor: g.NoiseFloor()}
	if g.IsLMC() {
		lj.Type = likLMC
		lj.Mixing = &matrixJSON{Rows: g.NumOutputs(), Cols: g.NumLatent(), Data: g.Mixing()}
	}
	return lj, true
}

// isMultiLik reports whether the named likelihood type has several outputs.
func isMultiLik(t string) bool { return t == likIndependent || t == likLMC }

// checkMultiVersion rejects, in a file of a version before
// multiOutputVersion, the types and fields that version introduced.
func checkMultiVersion(f *file) error {
	if f.Version >= multiOutputVersion {
		return nil
	}
	if lj := f.Likelihood; lj != nil && (isMultiLik(lj.Type) || lj.Outputs != 0 || lj.NoiseVariances != nil || lj.Mixing != nil) {
		return bad("likelihood type %q or fields outputs, noise_variances, mixing need format version %d, the file has version %d",
			lj.Type, multiOutputVersion, f.Version)
	}
	if s := f.Standardizer; s != nil && (s.YMeans != nil || s.YScales != nil) {
		return bad("standardizer y_means and y_scales need format version %d, the file has version %d", multiOutputVersion, f.Version)
	}
	if f.Meta != nil && f.Meta.TargetNames != nil {
		return bad("meta.target_names needs format version %d, the file has version %d", multiOutputVersion, f.Version)
	}
	return nil
}

// decodeMultiLik builds a likelihood.MultiGaussian from lj; ok is false for
// other types; its errors are wrapped by decodeLik. The noise variances
// and W are starting values: the
// parameter vector sets them, and checkMultiLikValues compares them with it.
func decodeMultiLik(lj *likJSON) (l gp.Likelihood, ok bool, err error) {
	if !isMultiLik(lj.Type) {
		return nil, false, nil
	}
	p := lj.Outputs
	if p < 1 || p > likelihood.MaxOutputs || len(lj.NoiseVariances) != p {
		return nil, true, fmt.Errorf("%s likelihood with %d outputs and %d noise_variances", lj.Type, p, len(lj.NoiseVariances))
	}
	noise := make([]float64, p)
	for i, v := range lj.NoiseVariances {
		// A trained noise may sit at its floor, which the constructors
		// refuse as a starting value (see the Gaussian's decoding).
		if !(v >= lj.NoiseFloor) || math.IsInf(v, 1) {
			return nil, true, fmt.Errorf("%s noise_variances[%d] = %g below its floor %g or not finite", lj.Type, i, v, lj.NoiseFloor)
		}
		noise[i] = v
		if v == lj.NoiseFloor {
			noise[i] = lj.NoiseFloor + 1
		}
	}
	floor := likelihood.NoiseFloor(lj.NoiseFloor)
	if lj.Type == likIndependent {
		if lj.Mixing != nil {
			return nil, true, fmt.Errorf("independent_gaussian likelihood with a mixing matrix")
		}
		l, err = likelihood.NewIndependentGaussian(noise, floor)
		return l, true, err
	}
	if lj.Mixing == nil || lj.Mixing.Rows != p || lj.Mixing.Cols < 1 || lj.Mixing.Cols > likelihood.MaxOutputs {
		return nil, true, fmt.Errorf("lmc likelihood needs a mixing matrix of %d rows", p)
	}
	if len(lj.Mixing.Data) != p*lj.Mixing.Cols {
		return nil, true, fmt.Errorf("lmc mixing matrix of %d×%d with %d values", p, lj.Mixing.Cols, len(lj.Mixing.Data))
	}
	l, err = likelihood.NewLMC(lj.Mixing.Cols, lj.Mixing.Data, noise, floor)
	return l, true, err
}

// checkMultiLikValues returns an error if the noise variances or the mixing
// matrix of lj disagree with g as set from the parameter vector.
func checkMultiLikValues(lj *likJSON, g *likelihood.MultiGaussian) error {
	for i, v := range g.NoiseVariances() {
		if !approxEqual(v, lj.NoiseVariances[i]) {
			return bad("likelihood noise_variances[%d] = %g disagrees with the parameter vector (%g)", i, lj.NoiseVariances[i], v)
		}
	}
	if g.IsLMC() {
		for i, v := range g.Mixing() {
			if math.Float64bits(v) != math.Float64bits(lj.Mixing.Data[i]) {
				return bad("likelihood mixing[%d] = %g disagrees with the parameter vector (%g)", i, lj.Mixing.Data[i], v)
			}
		}
	}
	return nil
}

// checkOutputStandardizer checks the per-output target statistics of s
// against a likelihood of the named type with p outputs: there must be
// none for a single-output likelihood, and none or p for a multi-output
// one (whose single YMean and YScale must then be 0 and 1).
func checkOutputStandardizer(s *data.Standardizer, lik string, p int) error {
	if len(s.YMeans) == 0 && len(s.YScales) == 0 {
		return nil
	}
	if !isMultiLik(lik) {
		return bad("per-output target statistics for a %s likelihood", lik)
	}
	if len(s.YMeans) != p || len(s.YScales) != p {
		return bad("standardizer has %d target means and %d scales for %d outputs", len(s.YMeans), len(s.YScales), p)
	}
	if err := s.Validate(); err != nil {
		return bad("%v", err)
	}
	return nil
}
