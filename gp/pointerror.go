package gp

import "fmt"

// PointError reports a non-finite prediction or log density at one test
// point, so that a caller that knows where the point came from (a line of
// a file) can say so. It wraps ErrValue.
type PointError struct {
	// Point is the 0-based index of the test point (the row of the inputs).
	Point int
	// What names the quantity, for example "mean prediction" or
	// "log predictive density".
	What string
	// Value is the NaN or infinite value.
	Value float64
	// Hint, if not empty, says what can cause it.
	Hint string
}

func (e *PointError) Error() string {
	s := fmt.Sprintf("%v: %s at test point %d is %g", ErrValue, e.What, e.Point, e.Value)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns ErrValue.
func (e *PointError) Unwrap() error { return ErrValue }
