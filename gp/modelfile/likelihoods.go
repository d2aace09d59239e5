package modelfile

import (
	"math"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// likelihoodsVersion is the first format version with the likelihoods of
// this file (studentt, with its fields scale, degrees_of_freedom and
// degrees_of_freedom_floor, and heteroscedastic).
const likelihoodsVersion = 4

// encodeMoreLik encodes the likelihoods added in format version 4; ok is
// false for a likelihood it does not know.
func encodeMoreLik(l gp.Likelihood) (lj *likJSON, ok bool) {
	switch l := l.(type) {
	case *likelihood.StudentT:
		return &likJSON{Type: "studentt", Scale: l.Scale(), DegreesOfFreedom: l.DegreesOfFreedom(), DoFFloor: l.DegreesOfFreedomFloor()}, true
	case *likelihood.Heteroscedastic:
		return &likJSON{Type: "heteroscedastic"}, true
	}
	return nil, false
}

// checkLikVersion rejects, in a file of a version before
// likelihoodsVersion, the likelihood types and fields that version
// introduced.
func checkLikVersion(lj *likJSON, version int) error {
	if lj == nil || version >= likelihoodsVersion {
		return nil
	}
	if lj.Type == "studentt" || lj.Type == "heteroscedastic" {
		return bad("likelihood type %q needs format version %d, the file has version %d", lj.Type, likelihoodsVersion, version)
	}
	if lj.Scale != 0 || lj.DegreesOfFreedom != 0 || lj.DoFFloor != 0 {
		return bad("likelihood fields scale, degrees_of_freedom and degrees_of_freedom_floor need format version %d, the file has version %d", likelihoodsVersion, version)
	}
	return nil
}

// decodeMoreLik builds the likelihoods added in format version 4; ok is
// false for a type it does not know. The Student-t's scale and degrees of
// freedom are starting values: the parameter vector sets them, and
// checkLikValues compares them with it. A trained ν may sit at its floor
// (ν = floor + softplus(u) rounds to the floor once u ≪ 0), which
// NewStudentT refuses as a starting value; floor + 1 starts it then.
func decodeMoreLik(lj *likJSON, quad []likelihood.Option) (l gp.Likelihood, ok bool, err error) {
	switch lj.Type {
	case "studentt":
		if !(lj.Scale > 0) || math.IsInf(lj.Scale, 1) || !(lj.DegreesOfFreedom > 0) || math.IsInf(lj.DegreesOfFreedom, 1) {
			return nil, true, bad("studentt scale %g and degrees_of_freedom %g must be positive and finite", lj.Scale, lj.DegreesOfFreedom)
		}
		if !(lj.DoFFloor >= 0) || math.IsInf(lj.DoFFloor, 1) || lj.DegreesOfFreedom < lj.DoFFloor {
			return nil, true, bad("studentt degrees_of_freedom %g below its floor %g, or the floor negative or not finite", lj.DegreesOfFreedom, lj.DoFFloor)
		}
		nu := lj.DegreesOfFreedom
		if nu == lj.DoFFloor {
			nu = lj.DoFFloor + 1
		}
		l, err = likelihood.NewStudentT(lj.Scale, nu, append(quad, likelihood.DegreesOfFreedomFloor(lj.DoFFloor))...)
		return l, true, err
	case "heteroscedastic":
		l, err = likelihood.NewHeteroscedastic(quad...)
		return l, true, err
	}
	return nil, false, nil
}

// checkLikValues returns an error if the readable likelihood settings of
// lj disagree with the likelihood as set from the parameter vector.
func checkLikValues(lj *likJSON, l gp.Likelihood) error {
	switch l := l.(type) {
	case *likelihood.Gaussian:
		if !approxEqual(l.NoiseVariance(), lj.NoiseVariance) {
			return bad("likelihood noise_variance %g disagrees with the parameter vector (%g)", lj.NoiseVariance, l.NoiseVariance())
		}
	case *likelihood.MultiGaussian:
		return checkMultiLikValues(lj, l)
	case *likelihood.StudentT:
		if !approxEqual(l.Scale(), lj.Scale) || !approxEqual(l.DegreesOfFreedom(), lj.DegreesOfFreedom) {
			return bad("likelihood scale %g and degrees_of_freedom %g disagree with the parameter vector (%g, %g)",
				lj.Scale, lj.DegreesOfFreedom, l.Scale(), l.DegreesOfFreedom())
		}
	}
	return nil
}

// standardizableTarget reports whether a likelihood of the named type
// models a real target in units that standardization rescales (its
// predictions are mapped back by Predict).
func standardizableTarget(lik string) bool {
	switch lik {
	case "gaussian", "studentt", "heteroscedastic", likIndependent, likLMC:
		return true
	}
	return false
}
