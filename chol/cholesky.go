package chol

import (
	"math"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/blas"
)

// Cholesky holds the lower Cholesky factor L of a symmetric positive-definite
// matrix A (plus any jitter), A + jitter·I = L·Lᵀ. The zero value holds no
// factor; Factor fills it. The storage grows to the largest order seen and
// is reused by later factorizations, so refactoring a same-size matrix does
// not allocate.
//
// A Cholesky must not be used by several goroutines at once; its methods
// parallelize internally over the thread budget given to Factor.
//
// The solves (Solve, SolveL, SolveRight, ...) are triangular solves, as
// LAPACK's DPOTRS: they do not check their results. A solution beyond the
// float64 range (a right-hand side of 1 for a factor of A = 1e-310·I, say)
// comes out as ±Inf or NaN without an error, as do NaN or Inf entries of B
// carried through; a caller that cannot rule this out checks the result.
// The pivot floor of DefaultJitter is relative to A's mean diagonal, so it
// does not catch a matrix that is tiny as a whole.
type Cholesky struct {
	n       int
	l       []float64 // n×n row-major, stride n, strict upper triangle zero
	jitter  float64
	floor   float64 // the policy's pivot floor MinPivot·scale at Factor (0: none), which Downdate keeps
	threads int
	valid   bool
	work    []float64 // scratch for adjoints and inverses
}

// Factor computes the Cholesky factor of the n×n symmetric matrix A whose
// lower triangle is given in (a, lda); the strict upper triangle of a is not
// referenced and a is not modified. (A gonum mat.SymDense keeps only its
// upper triangle, so its RawSymmetric().Data is not such an a: factor it
// through Implementation.Dpotrf, which gonum's mat.Cholesky calls after
// lapack64.Use, or copy it into a full matrix first.) The jitter policy p is applied as
// described in the package documentation, and threads bounds the goroutines
// used by this and later calls on c (≤ 0 means GOMAXPROCS).
//
// It returns the jitter finally added to the diagonal (0 if none). On error
// c holds no factor; the error is a *NotPositiveDefiniteError, a
// *NonFiniteError, or wraps ErrShape or ErrPolicy. The input a must not
// overlap the storage returned by c.RawL.
func (c *Cholesky) Factor(n int, a []float64, lda int, p JitterPolicy, threads int) (jitter float64, err error) {
	c.valid = false
	if err := checkMat("A", n, n, a, lda); err != nil {
		return 0, err
	}
	if err := p.Validate(); err != nil {
		return 0, err
	}
	if n == 0 {
		c.n, c.jitter, c.floor, c.threads, c.valid = 0, 0, 0, threads, true
		c.l = c.l[:0]
		return 0, nil
	}
	if cap(c.l) < n*n {
		c.l = make([]float64, n*n)
	}
	c.l = c.l[:n*n]
	c.n = n
	c.threads = threads
	l := c.l

	// Copy the lower triangle, zero the upper one, check finiteness and
	// accumulate the diagonal for the jitter scale.
	bi := blas.Implementation{Threads: threads}
	if bad := copyLower(bi, n, a, lda, l, n); bad.found {
		return 0, &NonFiniteError{Row: bad.row, Col: bad.col, Value: bad.value}
	}
	scale := 0.0
	if p.MinPivot > 0 || p.MaxTries > 0 {
		scale = MeanDiag(n, a, lda)
		if !(scale > 0) || math.IsInf(scale, 0) {
			scale = 1
		}
	}
	floor := p.MinPivot * scale
	piv, val := potrfLower(bi, n, l, n)
	if piv < 0 {
		if piv, val = belowFloor(n, l, floor); piv < 0 {
			c.jitter, c.floor, c.valid = 0, floor, true
			return 0, nil
		}
	}
	if p.MaxTries == 0 {
		return 0, notPD(piv, val, 0, floor)
	}
	jit := p.Start * scale
	for t := 1; t <= p.MaxTries; t++ {
		for i := 0; i < n; i++ {
			copy(l[i*n:i*n+i+1], a[i*lda:i*lda+i+1])
			clear(l[i*n+i+1 : i*n+n])
			l[i*n+i] += jit
		}
		piv, val = potrfLower(bi, n, l, n)
		if piv < 0 {
			if piv, val = belowFloor(n, l, floor); piv < 0 {
				c.jitter, c.floor, c.valid = jit, floor, true
				return jit, nil
			}
		}
		if t < p.MaxTries {
			jit *= p.growth()
		}
	}
	return 0, notPD(piv, val, jit, floor)
}

// belowFloor returns the first pivot of the factor (l, n) whose square is
// below floor, and that square, or −1 if there is none.
func belowFloor(n int, l []float64, floor float64) (int, float64) {
	if floor > 0 {
		for i := 0; i < n; i++ {
			if d := l[i*n+i]; d*d < floor {
				return i, d * d
			}
		}
	}
	return -1, 0
}

// notPD is the error of a failed factorization at pivot piv, whose Schur
// complement diagonal is val: positive finite val means it was below
// floor (+Inf, from a diagonal that overflowed with its jitter, is not).
func notPD(piv int, val, jitter, floor float64) error {
	e := &NotPositiveDefiniteError{Pivot: piv, Value: val, Jitter: jitter}
	if goodPivot(val) {
		e.Floor = floor
	}
	return e
}

// SetThreads changes the goroutine budget used by later calls on c
// (≤ 0 means GOMAXPROCS).
func (c *Cholesky) SetThreads(threads int) { c.threads = threads }

// N returns the order of the factored matrix (0 if c holds no factor).
func (c *Cholesky) N() int {
	if !c.valid {
		return 0
	}
	return c.n
}

// Valid reports whether c holds a factor.
func (c *Cholesky) Valid() bool { return c.valid }

// Jitter returns the diagonal jitter included in the factor.
func (c *Cholesky) Jitter() float64 { return c.jitter }

// RawL returns the factor L as an n×n row-major slice with stride n whose
// strict upper triangle is zero. The slice aliases c's storage: it is valid
// until the next Factor and must not be modified. It is nil if c holds no
// factor.
func (c *Cholesky) RawL() []float64 {
	if !c.valid {
		return nil
	}
	return c.l[:c.n*c.n]
}

// LTo copies L into the n×n row-major matrix (dst, ldd), zeroing its
// strict upper triangle.
func (c *Cholesky) LTo(dst []float64, ldd int) error {
	if !c.valid {
		return ErrNoFactor
	}
	n := c.n
	if err := checkMat("dst", n, n, dst, ldd); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		copy(dst[i*ldd:i*ldd+n], c.l[i*n:i*n+n])
	}
	return nil
}

// LogDet returns log det(A + jitter·I) = 2·Σ log L_ii (NaN if c holds no
// factor).
func (c *Cholesky) LogDet() float64 {
	if !c.valid {
		return math.NaN()
	}
	n := c.n
	var s float64
	for i := 0; i < n; i++ {
		s += math.Log(c.l[i*n+i])
	}
	return 2 * s
}

// bi returns the blas implementation for c's thread budget.
func (c *Cholesky) bi() blas.Implementation { return blas.Implementation{Threads: c.threads} }

// checkRHS validates an n×nrhs right-hand side against c.
func (c *Cholesky) checkRHS(nrhs int, b []float64, ldb int) error {
	if !c.valid {
		return ErrNoFactor
	}
	return checkMat("B", c.n, nrhs, b, ldb)
}

// checkLHS validates an m×n right-side operand against c.
func (c *Cholesky) checkLHS(m int, b []float64, ldb int) error {
	if !c.valid {
		return ErrNoFactor
	}
	return checkMat("B", m, c.n, b, ldb)
}

// SolveL overwrites the n×nrhs matrix B with L⁻¹·B.
func (c *Cholesky) SolveL(nrhs int, b []float64, ldb int) error {
	if err := c.checkRHS(nrhs, b, ldb); err != nil {
		return err
	}
	if c.n == 0 || nrhs == 0 {
		return nil
	}
	c.bi().Dtrsm(gblas.Left, gblas.Lower, gblas.NoTrans, gblas.NonUnit, c.n, nrhs, 1, c.l, c.n, b, ldb)
	return nil
}

// SolveLT overwrites the n×nrhs matrix B with L⁻ᵀ·B.
func (c *Cholesky) SolveLT(nrhs int, b []float64, ldb int) error {
	if err := c.checkRHS(nrhs, b, ldb); err != nil {
		return err
	}
	if c.n == 0 || nrhs == 0 {
		return nil
	}
	c.bi().Dtrsm(gblas.Left, gblas.Lower, gblas.Trans, gblas.NonUnit, c.n, nrhs, 1, c.l, c.n, b, ldb)
	return nil
}

// Solve overwrites the n×nrhs matrix B with A⁻¹·B = L⁻ᵀ·L⁻¹·B.
func (c *Cholesky) Solve(nrhs int, b []float64, ldb int) error {
	if err := c.checkRHS(nrhs, b, ldb); err != nil {
		return err
	}
	if c.n == 0 || nrhs == 0 {
		return nil
	}
	bi := c.bi()
	bi.Dtrsm(gblas.Left, gblas.Lower, gblas.NoTrans, gblas.NonUnit, c.n, nrhs, 1, c.l, c.n, b, ldb)
	bi.Dtrsm(gblas.Left, gblas.Lower, gblas.Trans, gblas.NonUnit, c.n, nrhs, 1, c.l, c.n, b, ldb)
	return nil
}

// SolveLRight overwrites the m×n matrix B with B·L⁻¹.
func (c *Cholesky) SolveLRight(m int, b []float64, ldb int) error {
	if err := c.checkLHS(m, b, ldb); err != nil {
		return err
	}
	if c.n == 0 || m == 0 {
		return nil
	}
	c.bi().Dtrsm(gblas.Right, gblas.Lower, gblas.NoTrans, gblas.NonUnit, m, c.n, 1, c.l, c.n, b, ldb)
	return nil
}

// SolveLTRight overwrites the m×n matrix B with B·L⁻ᵀ, i.e. each row b of B
// with (L⁻¹·bᵀ)ᵀ. This is the natural solve for row-major data whose rows
// are the right-hand sides.
func (c *Cholesky) SolveLTRight(m int, b []float64, ldb int) error {
	if err := c.checkLHS(m, b, ldb); err != nil {
		return err
	}
	if c.n == 0 || m == 0 {
		return nil
	}
	c.bi().Dtrsm(gblas.Right, gblas.Lower, gblas.Trans, gblas.NonUnit, m, c.n, 1, c.l, c.n, b, ldb)
	return nil
}

// SolveRight overwrites the m×n matrix B with B·A⁻¹.
func (c *Cholesky) SolveRight(m int, b []float64, ldb int) error {
	if err := c.checkLHS(m, b, ldb); err != nil {
		return err
	}
	if c.n == 0 || m == 0 {
		return nil
	}
	bi := c.bi()
	bi.Dtrsm(gblas.Right, gblas.Lower, gblas.Trans, gblas.NonUnit, m, c.n, 1, c.l, c.n, b, ldb)
	bi.Dtrsm(gblas.Right, gblas.Lower, gblas.NoTrans, gblas.NonUnit, m, c.n, 1, c.l, c.n, b, ldb)
	return nil
}

// Inverse writes A⁻¹ = (L·Lᵀ)⁻¹ as a full symmetric n×n matrix (both
// triangles) into (dst, ldd).
func (c *Cholesky) Inverse(dst []float64, ldd int) error {
	if !c.valid {
		return ErrNoFactor
	}
	n := c.n
	if err := checkMat("dst", n, n, dst, ldd); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	bi := c.bi()
	copyTriangle(bi, n, c.l, n, dst, ldd)
	trtriLower(bi, n, dst, ldd, false)
	lauumLower(bi, n, dst, ldd)
	mirrorStrictLower(bi, n, dst, ldd)
	return nil
}
