package train

import (
	"fmt"
	"math"
)

// Schedule gives the learning rate for each optimization step (counted
// from 0). Fit checks that every rate it receives is finite and positive.
type Schedule interface {
	Rate(step int) float64
}

// Constant is a fixed learning rate.
type Constant float64

// Rate returns c for every step.
func (c Constant) Rate(int) float64 { return float64(c) }

// StepDecay multiplies the learning rate by Factor every Every steps:
// the rate at step s is Initial·Factor^⌊s/Every⌋. The paper's
// convolutional experiments use StepDecay{0.003, 0.25, 50000}.
type StepDecay struct {
	Initial float64
	Factor  float64
	Every   int
}

// Rate returns the decayed rate at step. A non-positive Every disables the
// decay.
func (s StepDecay) Rate(step int) float64 {
	if s.Every <= 0 || step < s.Every {
		return s.Initial
	}
	return s.Initial * math.Pow(s.Factor, float64(step/s.Every))
}

// Adam is the Adam optimizer (Kingma & Ba, 2015) in the form of their
// Section 2 "efficient version", which is also TensorFlow's: the bias
// correction is folded into the step size,
//
//	m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²,
//	α_t = α·√(1−β2^t)/(1−β1^t),  θ ← θ + α_t·m/(√v + ε),
//
// with the sign chosen for maximization (θ moves up the gradient g).
type Adam struct {
	// Beta1, Beta2 and Epsilon are the usual constants; NewAdam sets them
	// to 0.9, 0.999 and 1e-8.
	Beta1, Beta2, Epsilon float64

	m, v []float64
	t    int
}

// NewAdam returns an Adam optimizer for n parameters with the default
// constants. It panics if n is negative.
func NewAdam(n int) *Adam {
	if n < 0 {
		panic(fmt.Sprintf("train: NewAdam: negative size %d", n))
	}
	return &Adam{Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8, m: make([]float64, n), v: make([]float64, n)}
}

// Steps returns the number of updates taken so far.
func (a *Adam) Steps() int { return a.t }

// AdamState is a copy of an Adam optimizer's state: the first and second
// moment estimates and the number of updates taken, which sets the bias
// correction. A zero T with zero moments is a fresh optimizer.
type AdamState struct {
	M, V []float64
	T    int
}

// State returns a copy of the optimizer's state.
func (a *Adam) State() AdamState {
	return AdamState{M: append([]float64(nil), a.m...), V: append([]float64(nil), a.v...), T: a.t}
}

// SetState restores a state returned by State (the constants Beta1, Beta2
// and Epsilon are not part of it). It returns an error, leaving the
// optimizer unchanged, if the lengths differ from the optimizer's size, T
// is negative, or the moments are not finite or a second moment is
// negative.
func (a *Adam) SetState(s AdamState) error {
	if len(s.M) != len(a.m) || len(s.V) != len(a.v) {
		return fmt.Errorf("train: Adam.SetState: moments of lengths %d and %d, want %d", len(s.M), len(s.V), len(a.m))
	}
	if s.T < 0 {
		return fmt.Errorf("train: Adam.SetState: negative step count %d", s.T)
	}
	for i := range s.M {
		if mi, vi := s.M[i], s.V[i]; math.IsNaN(mi) || math.IsInf(mi, 0) || !(vi >= 0) || math.IsInf(vi, 0) {
			return fmt.Errorf("train: Adam.SetState: moment entry %d is (%v, %v)", i, mi, vi)
		}
	}
	copy(a.m, s.M)
	copy(a.v, s.V)
	a.t = s.T
	return nil
}

// Ascend updates params in place by one Adam step of learning rate rate
// along grad, increasing the objective whose gradient grad is. Entries
// whose gradient is always exactly zero do not move. The step count
// saturates at math.MaxInt.
//
// Ascend panics, like a gonum BLAS routine given bad dimensions, if the
// lengths of params and grad differ from the optimizer's size, or if its
// step would not be finite whatever the gradient: for Beta1 or Beta2
// outside [0, 1), an Epsilon that is not finite and positive (the zero
// Adam has none: use NewAdam), or a rate that is not finite or so large
// that the bias-corrected rate α_t overflows.
func (a *Adam) Ascend(params, grad []float64, rate float64) {
	if !(a.Beta1 >= 0 && a.Beta1 < 1 && a.Beta2 >= 0 && a.Beta2 < 1) || !(a.Epsilon > 0) || math.IsInf(a.Epsilon, 0) {
		panic(fmt.Sprintf("train: Adam.Ascend: Beta1 %v, Beta2 %v (both must be in [0, 1)) or Epsilon %v (must be finite and positive)",
			a.Beta1, a.Beta2, a.Epsilon))
	}
	if at := a.stepSize(rate, a.next()); math.IsNaN(at) || math.IsInf(at, 0) {
		panic(fmt.Sprintf("train: Adam.Ascend: learning rate %v gives the step size %v", rate, at))
	}
	a.ascendTo(params, params, grad, rate)
}

// next returns the step count after one more step, saturated.
func (a *Adam) next() int {
	if a.t == math.MaxInt {
		return a.t
	}
	return a.t + 1
}

// stepSize returns the bias-corrected learning rate α_t of step t.
func (a *Adam) stepSize(rate float64, t int) float64 {
	return rate * math.Sqrt(1-math.Pow(a.Beta2, float64(t))) / (1 - math.Pow(a.Beta1, float64(t)))
}

// ascendTo is Ascend writing src + step into dst (dst may be src),
// without the checks of the constants and the rate: Fit has checked the
// constants, and it rejects a step made non-finite by a huge rate.
func (a *Adam) ascendTo(dst, src, grad []float64, rate float64) {
	if len(dst) != len(a.m) || len(src) != len(a.m) || len(grad) != len(a.m) {
		panic("train: Adam.Ascend: length mismatch")
	}
	a.t = a.next()
	b1, b2 := a.Beta1, a.Beta2
	at := a.stepSize(rate, a.t)
	eps := a.Epsilon
	m, v := a.m[:len(grad)], a.v[:len(grad)]
	src, dst = src[:len(grad)], dst[:len(grad)]
	for i, g := range grad {
		mi := b1*m[i] + (1-b1)*g
		vi := b2*v[i] + (1-b2)*g*g
		m[i], v[i] = mi, vi
		dst[i] = src[i] + at*mi/(math.Sqrt(vi)+eps)
	}
}

// retake redoes the most recent step, which started at src with gradient
// grad, as if the first moment had been zero before it: m = (1−β1)·grad,
// dst = src + α_t·m/(√v + ε) with the learning rate rate. The second
// moment and step count, which already include grad, are unchanged, so
// retake may be repeated.
func (a *Adam) retake(dst, src, grad []float64, rate float64) {
	if a.t == 0 {
		copy(dst, src) // no step was taken from src
		return
	}
	b1 := a.Beta1
	at := a.stepSize(rate, a.t)
	for i, g := range grad {
		mi := (1 - b1) * g
		a.m[i] = mi
		dst[i] = src[i] + at*mi/(math.Sqrt(a.v[i])+a.Epsilon)
	}
}
