package gp

import (
	"fmt"
	"strings"
	"time"
)

// OpClass is the class of a cubic-cost linear-algebra operation, following
// the rows of Table 3 of the SOLVE-GP paper.
type OpClass int

const (
	// MatMul is a matrix product: a general product (GEMM), a symmetric
	// rank-k update (SYRK) or a triangular product (TRMM).
	MatMul OpClass = iota
	// Cholesky is a Cholesky factorization or, in the backward pass, the
	// adjoint of one (K̄ from the factor's adjoint, a symmetric congruence).
	Cholesky
	// TriSolve is a triangular solve with many right-hand sides (TRSM).
	TriSolve
)

// String returns the name of the class.
func (c OpClass) String() string {
	switch c {
	case MatMul:
		return "matmul"
	case Cholesky:
		return "cholesky"
	case TriSolve:
		return "trisolve"
	}
	return fmt.Sprintf("OpClass(%d)", int(c))
}

// Pass tells whether an operation belongs to the forward computation of the
// bound or to its reverse-mode gradient.
type Pass int

const (
	// Forward marks operations of the bound itself.
	Forward Pass = iota
	// Backward marks operations of the gradient computation.
	Backward
	// Predict marks operations of prediction and posterior snapshots.
	Predict
)

// String returns the name of the pass.
func (p Pass) String() string {
	switch p {
	case Forward:
		return "forward"
	case Backward:
		return "backward"
	case Predict:
		return "predict"
	}
	return fmt.Sprintf("Pass(%d)", int(p))
}

// Op records one cubic-cost operation.
//
// Dims are the operation's sizes: for a product C (m×n) = A (m×k) · B (k×n)
// they are (m, n, k); for a triangular solve or triangular product with an
// order-m triangle and n right-hand sides (m, n, m); for a symmetric
// rank-k update of an n×n matrix (n, n, k); for a Cholesky factorization
// of order n (n, n, n). Flops counts multiplications and additions
// (2mnk for a general product, m²n for triangular solves and products,
// n²k for a rank-k update, n³/3 for a Cholesky factorization, n³ for the
// adjoint of a factorization).
type Op struct {
	Class OpClass
	Pass  Pass
	// Name describes the operation in the notation of Algorithm 1.
	Name  string
	Dims  [3]int
	Flops float64
	// Time is the measured wall time of the operation.
	Time time.Duration
}

// CostProfile is the list of cubic-cost operations performed by one
// evaluation, in execution order.
type CostProfile struct {
	Ops []Op
}

// Count returns the number of operations of class c in pass p.
func (cp CostProfile) Count(c OpClass, p Pass) int {
	n := 0
	for _, op := range cp.Ops {
		if op.Class == c && op.Pass == p {
			n++
		}
	}
	return n
}

// Flops returns the total flop count of the operations in pass p.
func (cp CostProfile) Flops(p Pass) float64 {
	var f float64
	for _, op := range cp.Ops {
		if op.Pass == p {
			f += op.Flops
		}
	}
	return f
}

// TotalFlops returns the flop count of all operations.
func (cp CostProfile) TotalFlops() float64 {
	var f float64
	for _, op := range cp.Ops {
		f += op.Flops
	}
	return f
}

// Time returns the summed measured time of the operations of class c in
// pass p.
func (cp CostProfile) Time(c OpClass, p Pass) time.Duration {
	var t time.Duration
	for _, op := range cp.Ops {
		if op.Class == c && op.Pass == p {
			t += op.Time
		}
	}
	return t
}

// Summary formats, per pass and class, the number of operations, their
// flops and their measured time.
func (cp CostProfile) Summary() string {
	var sb strings.Builder
	for _, p := range []Pass{Forward, Backward, Predict} {
		for _, c := range []OpClass{MatMul, Cholesky, TriSolve} {
			n := cp.Count(c, p)
			if n == 0 {
				continue
			}
			var f float64
			for _, op := range cp.Ops {
				if op.Class == c && op.Pass == p {
					f += op.Flops
				}
			}
			t := cp.Time(c, p)
			rate := 0.0
			if t > 0 {
				rate = f / t.Seconds() / 1e9
			}
			fmt.Fprintf(&sb, "%-8s %-8s ×%-3d %8.3f GFLOP %9.4f s %6.1f GFLOP/s\n", p, c, n, f/1e9, t.Seconds(), rate)
		}
	}
	return sb.String()
}

// String lists every operation.
func (cp CostProfile) String() string {
	var sb strings.Builder
	for _, op := range cp.Ops {
		fmt.Fprintf(&sb, "%-8s %-8s %-28s %5d×%5d×%5d %9.3f GFLOP %8.4f s\n",
			op.Pass, op.Class, op.Name, op.Dims[0], op.Dims[1], op.Dims[2], op.Flops/1e9, op.Time.Seconds())
	}
	return sb.String()
}

// clone returns a deep copy of cp.
func (cp CostProfile) clone() CostProfile {
	return CostProfile{Ops: append([]Op(nil), cp.Ops...)}
}
