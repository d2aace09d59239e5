package chol

import (
	"fmt"
	"math"
)

// Update replaces the factor with that of A + x·xᵀ (a rank-one update) in
// O(n²) operations, where A is the matrix currently factored (including its
// jitter) and x has length n. x is not modified. If the update overflows
// float64 (x of magnitude near the square root of the largest float, or
// beyond), Update returns an error wrapping ErrOverflow and leaves the
// factor unchanged.
func (c *Cholesky) Update(x []float64) error {
	if err := c.checkVector(x); err != nil {
		return err
	}
	n := c.n
	ws := c.workspace(n + n*n)
	w, keep := ws[:n], ws[n:]
	copy(w, x)
	l := c.l
	copy(keep, l)
	for k := 0; k < n; k++ {
		lkk := l[k*n+k]
		r := math.Hypot(lkk, w[k])
		cs, sn := r/lkk, w[k]/lkk
		l[k*n+k] = r
		for i := k + 1; i < n; i++ {
			lik := (l[i*n+k] + sn*w[i]) / cs
			l[i*n+k] = lik
			w[i] = cs*w[i] - sn*lik
		}
	}
	for k := 0; k < n; k++ {
		for _, v := range l[k*n : k*n+k+1] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				copy(l, keep)
				return fmt.Errorf("%w: rank-one update at row %d", ErrOverflow, k)
			}
		}
	}
	return nil
}

// Downdate replaces the factor with that of A − x·xᵀ (a rank-one
// downdate) in O(n²) operations, where A is the matrix currently factored
// (including its jitter) and x has length n. x is not modified.
//
// If A − x·xᵀ is not positive definite, or a pivot of its factor would
// fall below the floor of the jitter policy the factor was computed with
// (JitterPolicy.MinPivot: the downdated matrix would be numerically
// singular, and Factor would have jittered it), Downdate returns a
// *NotPositiveDefiniteError naming the first such pivot and leaves the
// factor unchanged. (Should rounding make a pivot fail during
// the downdate itself despite the check, the factor is invalidated and the
// same error type is returned.)
func (c *Cholesky) Downdate(x []float64) error {
	if err := c.checkVector(x); err != nil {
		return err
	}
	n := c.n
	w := c.workspace(n)
	copy(w, x)
	l := c.l
	// Feasibility: with p = L⁻¹x, pivot k of A − x·xᵀ is
	// L_kk²·(1 − Σ_{i≤k} p_i²)/(1 − Σ_{i<k} p_i²), positive while Σ p_i² < 1.
	var s float64
	for k := 0; k < n; k++ {
		pk := (w[k] - dot(l[k*n:k*n+k], w[:k])) / l[k*n+k]
		w[k] = pk
		prev := 1 - s
		s += pk * pk
		d := l[k*n+k] * l[k*n+k] * (1 - s) / prev
		if !(s < 1) {
			return &NotPositiveDefiniteError{Pivot: k, Value: d, Jitter: c.jitter}
		}
		if d < c.floor {
			return &NotPositiveDefiniteError{Pivot: k, Value: d, Jitter: c.jitter, Floor: c.floor}
		}
	}
	copy(w, x)
	for k := 0; k < n; k++ {
		lkk := l[k*n+k]
		d := (lkk - w[k]) * (lkk + w[k])
		if !goodPivot(d) {
			c.valid = false
			return &NotPositiveDefiniteError{Pivot: k, Value: d, Jitter: c.jitter}
		}
		r := math.Sqrt(d)
		cs, sn := r/lkk, w[k]/lkk
		l[k*n+k] = r
		for i := k + 1; i < n; i++ {
			lik := (l[i*n+k] - sn*w[i]) / cs
			l[i*n+k] = lik
			w[i] = cs*w[i] - sn*lik
		}
	}
	return nil
}

// checkVector validates a length-n update vector against c.
func (c *Cholesky) checkVector(x []float64) error {
	if !c.valid {
		return ErrNoFactor
	}
	if len(x) != c.n {
		return shapeErr("x has length %d, want %d", len(x), c.n)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return &NonFiniteError{Row: i, Col: 0, Value: v}
		}
	}
	return nil
}
