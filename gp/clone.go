package gp

import (
	"errors"
	"math"

	"github.com/solvegp/solvegp/internal/nilcheck"
)

// Cloner is implemented by kernels and likelihoods that can copy
// themselves; Model.Predictor snapshots such a kernel or likelihood by
// copying it. Every kernel and likelihood of packages gp/kernel,
// gp/likelihood and convgp implements it (a kernel.Sum or kernel.Product
// only when all its parts do).
//
// Clone returns a copy of the receiver, of the same type and with the same
// parameters and settings, that shares no mutable state with it: setting
// the parameters (or the goroutine budget) of either leaves the other
// unchanged, and the two may be used concurrently. A copy of another type
// than the receiver's is not taken for one: a type that embeds a Cloner
// must define its own Clone, or it is treated as having none, and so is a
// Clone that returns its receiver (the same pointer). The result has type any
// so that a package can implement Cloner without importing gp; a kernel's
// copy must be a Kernel and a likelihood's a Likelihood. Clone returns nil
// when the value cannot be copied.
type Cloner interface {
	Clone() any
}

// ErrStale is returned by the methods of a Predictor that shares its
// model's kernel or likelihood, because that kernel or likelihood has no
// Clone method that makes a copy (see Cloner), while the parameters of the shared kernel or
// likelihood differ from those at the snapshot (after Model.SetParams or
// training, for instance): the predictions would mix old and new
// parameters. Make a new Predictor.
var ErrStale = errors.New("gp: the model's kernel or likelihood, which the Predictor shares (it has no Clone method that makes a copy), has changed since the Predictor was made")

// cloneOf returns v's copy by its Clone method, or false if v is not a
// Cloner or its Clone returns nil, v itself (a pointer to the same value,
// no copy) or a value that is not a T of v's own dynamic type. The last check matters for a type that embeds a Cloner
// (a wrapper around a *kernel.Stationary that overrides Matrix, say): it
// has the embedded Clone method, whose copy is of the embedded type and
// would drop the wrapper's behaviour.
func cloneOf[T any](v T) (T, bool) {
	var zero T
	c, ok := any(v).(Cloner)
	if !ok {
		return zero, false
	}
	cp, ok := c.Clone().(T)
	if !ok || !nilcheck.IsCopy(cp, v) {
		return zero, false
	}
	return cp, true
}

// sharedParams records the parameters of a kernel or likelihood that a
// Predictor shares with its model, to tell when they change.
type sharedParams struct {
	params interface{ Params([]float64) }
	at     []float64 // the parameters when the Predictor was made
}

func newSharedParams(v interface {
	NumParams() int
	Params([]float64)
}) *sharedParams {
	s := &sharedParams{params: v, at: make([]float64, v.NumParams())}
	v.Params(s.at)
	return s
}

// changed reports whether the parameters differ (in bits) from those
// recorded.
func (s *sharedParams) changed() bool {
	if s == nil {
		return false
	}
	now := make([]float64, len(s.at))
	s.params.Params(now)
	for i, v := range now {
		if math.Float64bits(v) != math.Float64bits(s.at[i]) {
			return true
		}
	}
	return false
}
