package chol

import (
	"errors"
	"fmt"
	"math"
)

// ErrShape is wrapped by the errors returned for inconsistent sizes, leading
// dimensions or slice lengths.
var ErrShape = errors.New("chol: bad shape")

// ErrPolicy is wrapped by the errors returned for an invalid JitterPolicy.
var ErrPolicy = errors.New("chol: invalid jitter policy")

// ErrOverflow is wrapped by the errors returned when a result would
// overflow float64; the factor is then left as it was.
var ErrOverflow = errors.New("chol: result overflows float64")

// ErrNoFactor is returned by the methods of a Cholesky that holds no valid
// factor (never factored, or the last Factor failed).
var ErrNoFactor = errors.New("chol: no valid factor")

// NotPositiveDefiniteError reports that the matrix is not (numerically)
// positive definite: the Schur-complement diagonal entry at 0-based pivot
// index Pivot was Value, which is not positive, or not finite, or, under a
// jitter policy with a pivot floor (JitterPolicy.MinPivot), positive but
// below Floor.
//
// When a jitter policy was in effect the error describes the last attempt,
// made with diagonal jitter Jitter (0 if no jitter was tried).
type NotPositiveDefiniteError struct {
	Pivot  int
	Value  float64
	Jitter float64
	// Floor is the policy's MinPivot·scale when the pivot was positive
	// but below it (Value < Floor), else 0.
	Floor float64
}

// Error implements the error interface.
func (e *NotPositiveDefiniteError) Error() string {
	what := "not positive definite"
	floor := ""
	if e.Floor > 0 {
		what = "numerically singular"
		floor = fmt.Sprintf(", below the floor %g", e.Floor)
	}
	if e.Jitter != 0 {
		return fmt.Sprintf("chol: matrix %s: pivot %d is %g%s (with jitter %g)", what, e.Pivot, e.Value, floor, e.Jitter)
	}
	return fmt.Sprintf("chol: matrix %s: pivot %d is %g%s", what, e.Pivot, e.Value, floor)
}

// NonFiniteError reports a NaN or ±Inf entry at (Row, Col) of an input
// matrix. Inputs with such entries never produce a factor.
type NonFiniteError struct {
	Row, Col int
	Value    float64
}

// Error implements the error interface.
func (e *NonFiniteError) Error() string {
	return fmt.Sprintf("chol: non-finite input entry %g at (%d, %d)", e.Value, e.Row, e.Col)
}

// shapeErr returns an error wrapping ErrShape.
func shapeErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrShape}, args...)...)
}

// checkMat validates an r×c row-major matrix argument named name.
func checkMat(name string, r, c int, a []float64, lda int) error {
	switch {
	case r < 0 || c < 0:
		return shapeErr("%s has negative size %d×%d", name, r, c)
	case lda < max(1, c):
		return shapeErr("%s has leading dimension %d < max(1, %d)", name, lda, c)
	case r > 0 && c > 0 && r-1 > (math.MaxInt-c)/lda:
		return shapeErr("%s of %d×%d with stride %d is larger than any slice", name, r, c, lda)
	case r > 0 && c > 0 && len(a) < (r-1)*lda+c:
		return shapeErr("%s has length %d < %d for a %d×%d matrix with stride %d", name, len(a), (r-1)*lda+c, r, c, lda)
	}
	return nil
}
