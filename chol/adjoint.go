package chol

import (
	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/blas"
)

// congruenceBase is the order at and below which congruence uses two
// triangular solves instead of recursing.
const congruenceBase = 96

// congruenceSerial is the order at and below which congruence runs its
// level-3 calls on one goroutine: the blocks are too small for a second
// goroutine to pay for its start (and its allocations).
const congruenceSerial = 256

// congruenceWork returns the scratch size congruence needs for order n.
func congruenceWork(n int) int {
	if n <= congruenceBase {
		return 0
	}
	return potrfSplit(n) * n
}

// congruence overwrites the lower triangle of the symmetric n×n matrix W
// (only the lower triangle is read) with the lower triangle of the
// symmetric L⁻ᵀ·W·L⁻¹ for the lower-triangular L, by recursion on the 2×2
// block form of Lᵀ·C·L = W:
//
//	C22 = L22⁻ᵀ·W22·L22⁻¹
//	V   = L22⁻ᵀ·W21 − C22·L21,   C21 = V·L11⁻¹
//	C11 = L11⁻ᵀ·(W11 − L21ᵀ·Z − Zᵀ·L21)·L11⁻¹,   Z = V + ½·C22·L21.
//
// Per level it does two triangular solves and two products of half order
// (C22·L21 by Dsymm, which reads C22's lower triangle only), so its cost is
// about n³ flops (two dense triangular solves would cost 2n³). Working on
// one triangle spares the passes that kept both: every strided transposing
// pass over a matrix with rows 8 KiB apart costs about 3 ns per element
// (L1 set conflicts), as much as a few hundred flops. The strict upper
// triangle of W is overwritten only inside the diagonal blocks of order
// congruenceBase or less (scratch of the base case); that of L is not
// referenced. work must hold congruenceWork(n) elements.
func congruence(bi blas.Implementation, n int, l []float64, ldl int, w []float64, ldw int, work []float64) {
	if n <= congruenceSerial {
		bi.Threads = 1
	}
	if n <= congruenceBase {
		if n == 0 {
			return
		}
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				w[j*ldw+i] = w[i*ldw+j]
			}
		}
		bi.Dtrsm(gblas.Left, gblas.Lower, gblas.Trans, gblas.NonUnit, n, n, 1, l, ldl, w, ldw)
		bi.Dtrsm(gblas.Right, gblas.Lower, gblas.NoTrans, gblas.NonUnit, n, n, 1, l, ldl, w, ldw)
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				w[i*ldw+j] = 0.5 * (w[i*ldw+j] + w[j*ldw+i])
			}
		}
		return
	}
	h1 := potrfSplit(n)
	h2 := n - h1
	l21, l22 := l[h1*ldl:], l[h1*ldl+h1:]
	w21, w22 := w[h1*ldw:], w[h1*ldw+h1:]
	congruence(bi, h2, l22, ldl, w22, ldw, work)
	u := work[:h2*h1]
	g := work[h2*h1 : h2*h1+h1*h1]
	bi.Dtrsm(gblas.Left, gblas.Lower, gblas.Trans, gblas.NonUnit, h2, h1, 1, l22, ldl, w21, ldw)
	bi.Dsymm(gblas.Left, gblas.Lower, h2, h1, 1, w22, ldw, l21, ldl, 0, u, h1)
	// V = L22⁻ᵀ·W21 − C22·L21 and Z = V + ½·C22·L21.
	rowPassRun(bi, passVZ, false, h2, h1, w21, ldw, u, h1, 0)
	bi.Dgemm(gblas.Trans, gblas.NoTrans, h1, h1, h2, 1, l21, ldl, u, h1, 0, g, h1)
	// W11 −= G + Gᵀ (lower triangle).
	rowPassRun(bi, passSymUpdate, true, h1, h1, w, ldw, g, h1, 0)
	bi.Dtrsm(gblas.Right, gblas.Lower, gblas.NoTrans, gblas.NonUnit, h2, h1, 1, l, ldl, w21, ldw)
	congruence(bi, h1, l, ldl, w, ldw, work)
}

// adjointFromProductWork returns the scratch size adjointFromProduct needs
// for order n, with any number of goroutines.
func adjointFromProductWork(n int) int {
	return max(congruenceWork(n), congruenceDAGWork(n))
}

// adjointFromProduct overwrites the n×n matrix p, whose lower triangle
// holds Q with Lᵀ·L̄ = alpha·Q on the lower triangle, with the full
// symmetric adjoint
//
//	Ā = (alpha/2)·L⁻ᵀ·(Φ(Q) + Φ(Q)ᵀ)·L⁻¹
//
// (Φ: lower triangle with halved diagonal, so Φ(Q) + Φ(Q)ᵀ is Q's strict
// lower triangle mirrored, with Q's diagonal). work must hold
// adjointFromProductWork(n) elements.
func adjointFromProduct(bi blas.Implementation, n int, l []float64, ldl int, alpha float64, p []float64, ldp int, work []float64) {
	if n == 0 {
		return
	}
	if threads := dagGoroutines(bi, n); threads > 1 {
		congruenceDAG(bi, threads, n, l, ldl, p, ldp, work)
	} else {
		congruence(bi, n, l, ldl, p, ldp, work)
	}
	rowPassRun(bi, passScale, false, n, n, p, ldp, nil, 0, 0.5*alpha)
	mirrorStrictLower(bi, n, p, ldp)
}

// adjointBase is the order at and below which the recursive Cholesky
// adjoint uses its unblocked kernel.
const adjointBase = 32

// adjointLower computes, in place in the lower triangle of g, the adjoint of
// the Cholesky factorization A = L·Lᵀ in the "lower" convention: on entry
// the lower triangle of g holds L̄; on return it holds G with
// dF = Σ_{i≥j} G_ij·dA_ij (each matrix entry counted once, as read by the
// factorization from the lower triangle). The strict upper triangle of g is
// not referenced. work must hold gemmtBase² elements.
//
// It reverses the recursive factorization: with S = A22 − L21·L21ᵀ,
//
//	S̄     = adjoint(L22, L̄22)
//	L̄21  −= (S̄ + S̄ᵀ)·L21          (Dsymm on S̄ with doubled diagonal)
//	Ā21   = L̄21·L11⁻¹              (Dtrsm)
//	L̄11  −= tril(Ā21ᵀ·L21)         (gemmtLower)
//	Ā11   = adjoint(L11, L̄11)
func adjointLower(bi blas.Implementation, n int, l []float64, ldl int, g []float64, ldg int, work []float64) {
	if n <= adjointBase {
		adjoint2Lower(n, l, ldl, g, ldg)
		return
	}
	n1 := potrfSplit(n)
	n2 := n - n1
	l21, l22 := l[n1*ldl:], l[n1*ldl+n1:]
	g21, g22 := g[n1*ldg:], g[n1*ldg+n1:]
	adjointLower(bi, n2, l22, ldl, g22, ldg, work)
	for i := 0; i < n2; i++ {
		g22[i*ldg+i] *= 2
	}
	bi.Dsymm(gblas.Left, gblas.Lower, n2, n1, -1, g22, ldg, l21, ldl, 1, g21, ldg)
	for i := 0; i < n2; i++ {
		g22[i*ldg+i] *= 0.5
	}
	bi.Dtrsm(gblas.Right, gblas.Lower, gblas.NoTrans, gblas.NonUnit, n2, n1, 1, l, ldl, g21, ldg)
	gemmtLower(bi, gblas.Trans, n1, n2, -1, g21, ldg, l21, ldl, g, ldg, work)
	adjointLower(bi, n1, l, ldl, g, ldg, work)
}

// adjoint2Lower is the unblocked kernel of adjointLower. It reverses the
// column-oriented algorithm L_jj = √(A_jj − Σ_{k<j} L_jk²),
// L_ij = (A_ij − Σ_{k<j} L_ik·L_jk)/L_jj, column by column from the last.
func adjoint2Lower(n int, l []float64, ldl int, g []float64, ldg int) {
	for j := n - 1; j >= 0; j-- {
		ljj := l[j*ldl+j]
		lj := l[j*ldl : j*ldl+j]
		gj := g[j*ldg : j*ldg+j]
		gjj := g[j*ldg+j]
		for i := j + 1; i < n; i++ {
			ci := g[i*ldg+j] / ljj
			g[i*ldg+j] = ci
			gjj -= ci * l[i*ldl+j]
			axpy(-ci, lj, g[i*ldg:i*ldg+j])
			axpy(-ci, l[i*ldl:i*ldl+j], gj)
		}
		d := gjj / (2 * ljj)
		g[j*ldg+j] = d
		axpy(-2*d, lj, gj)
	}
}

// checkFactorDiag returns an error if the lower-triangular L has a zero or
// non-finite diagonal entry.
func checkFactorDiag(n int, l []float64, ldl int) error {
	for i := 0; i < n; i++ {
		if d := l[i*ldl+i]; !(d != 0) || d-d != 0 {
			return &NotPositiveDefiniteError{Pivot: i, Value: d}
		}
	}
	return nil
}

// Adjoint computes the reverse-mode adjoint of the Cholesky factorization
// A = L·Lᵀ: given the n×n lower-triangular factor (l, ldl) and
// L̄ = ∂F/∂L in the lower triangle of (lbar, ldlbar), it writes Ā as a full
// symmetric matrix (both triangles) into (abar, ldabar) such that
// dF = Σ_ij Ā_ij·dA_ij for symmetric dA (see the package documentation).
//
// The strict upper triangles of l and lbar are not referenced. abar may be
// the same slice as lbar (with the same stride), but must not overlap l.
// threads bounds the goroutines used (≤ 0 means GOMAXPROCS). An error is
// returned for bad shapes or a zero or non-finite diagonal of L.
func Adjoint(n int, l []float64, ldl int, lbar []float64, ldlbar int, abar []float64, ldabar int, threads int) error {
	if err := checkMat("L", n, n, l, ldl); err != nil {
		return err
	}
	if err := checkMat("Lbar", n, n, lbar, ldlbar); err != nil {
		return err
	}
	if err := checkMat("Abar", n, n, abar, ldabar); err != nil {
		return err
	}
	if err := checkFactorDiag(n, l, ldl); err != nil {
		return err
	}
	work := make([]float64, gemmtBase*gemmtBase)
	adjoint(blas.Implementation{Threads: threads}, n, l, ldl, lbar, ldlbar, abar, ldabar, work)
	return nil
}

// adjoint is Adjoint without argument checks. work must hold gemmtBase²
// elements.
func adjoint(bi blas.Implementation, n int, l []float64, ldl int, lbar []float64, ldlbar int, abar []float64, ldabar int, work []float64) {
	if n == 0 {
		return
	}
	if &lbar[0] != &abar[0] || ldlbar != ldabar {
		copyTriangle(bi, n, lbar, ldlbar, abar, ldabar)
	}
	if threads := dagGoroutines(bi, n); threads > 1 {
		adjointDAG(bi, threads, n, l, ldl, abar, ldabar, work)
	} else {
		adjointLower(bi, n, l, ldl, abar, ldabar, work)
	}
	// From the lower convention to the symmetric one: off-diagonal
	// entries halved and mirrored.
	halveMirrorStrictLower(bi, n, abar, ldabar)
}

// workspace returns c's scratch slice with at least size elements.
func (c *Cholesky) workspace(size int) []float64 {
	if cap(c.work) < size {
		c.work = make([]float64, size)
	}
	return c.work[:size]
}

// Adjoint is the package-level Adjoint for the factor held by c: given
// L̄ = ∂F/∂L in the lower triangle of the n×n (lbar, ldlbar), it writes the
// full symmetric Ā with dF = Σ_ij Ā_ij·dA_ij into (abar, ldabar), which may
// be the same slice as lbar. The matrix A here is the jittered one; for a
// fixed jitter Ā is also the adjoint of the un-jittered input, and
// AddJitterAdjoint adds the part that flows through a jitter proportional
// to mean(diag(A)), as a JitterPolicy's is.
func (c *Cholesky) Adjoint(lbar []float64, ldlbar int, abar []float64, ldabar int) error {
	if !c.valid {
		return ErrNoFactor
	}
	n := c.n
	if err := checkMat("Lbar", n, n, lbar, ldlbar); err != nil {
		return err
	}
	if err := checkMat("Abar", n, n, abar, ldabar); err != nil {
		return err
	}
	adjoint(c.bi(), n, c.l, n, lbar, ldlbar, abar, ldabar, c.workspace(gemmtBase*gemmtBase))
	return nil
}

// AdjointFromProduct is Adjoint for callers that hold the product Lᵀ·L̄
// rather than L̄ itself: on entry the lower triangle of the n×n (q, ldq)
// holds Q with tril(Lᵀ·L̄) = alpha·tril(Q); on return (q, ldq) holds the
// full symmetric Ā of Adjoint, dF = Σ_ij Ā_ij·dA_ij. The strict upper
// triangle of q is not read on entry.
//
// This is the natural form when L̄ arrives as L̄ = −L⁻ᵀ·X (the adjoint of
// L through solves Y = L⁻¹·B, as in variational GPs): then Lᵀ·L̄ = −X and
// AdjointFromProduct(−1, X, ldx) gives Ā directly. It computes the
// symmetric congruence Ā = (alpha/2)·L⁻ᵀ·(Φ(Q) + Φ(Q)ᵀ)·L⁻¹ by recursion on
// 2×2 blocks in about n³ flops, in a few large level-3 calls (the blocks of
// order ≤ 256 on one goroutine). Adjoint would first need L̄ = −L⁻ᵀ·X
// (n³/3 flops) and then about 2n³/3 flops of smaller calls: the same work,
// measured slightly slower with two threads. For a caller that holds L̄,
// Adjoint is the cheaper route (forming Lᵀ·L̄ costs n³/3 more).
func (c *Cholesky) AdjointFromProduct(alpha float64, q []float64, ldq int) error {
	if !c.valid {
		return ErrNoFactor
	}
	n := c.n
	if err := checkMat("Q", n, n, q, ldq); err != nil {
		return err
	}
	adjointFromProduct(c.bi(), n, c.l, n, alpha, q, ldq, c.workspace(adjointFromProductWork(n)))
	return nil
}

// SolveLAdjoint is the adjoint of X = L⁻¹·B (SolveL): given X in
// (x, ldx) and X̄ in (xbar, ldxbar), both n×nrhs, it overwrites xbar with
// B̄ = L⁻ᵀ·X̄ and, if lbar is not nil, accumulates L̄ −= tril(B̄·Xᵀ) into
// the lower triangle of the n×n (lbar, ldlbar) (the strict upper triangle is
// untouched).
func (c *Cholesky) SolveLAdjoint(nrhs int, x []float64, ldx int, xbar []float64, ldxbar int, lbar []float64, ldlbar int) error {
	if err := c.checkSolveAdjoint(nrhs, x, ldx, namedMat{"Xbar", xbar, ldxbar}, namedMat{"Lbar", lbar, ldlbar}); err != nil {
		return err
	}
	if c.n == 0 || nrhs == 0 {
		return nil
	}
	bi := c.bi()
	bi.Dtrsm(gblas.Left, gblas.Lower, gblas.Trans, gblas.NonUnit, c.n, nrhs, 1, c.l, c.n, xbar, ldxbar)
	if lbar != nil {
		gemmtLower(bi, gblas.NoTrans, c.n, nrhs, -1, xbar, ldxbar, x, ldx, lbar, ldlbar, c.workspace(gemmtBase*gemmtBase))
	}
	return nil
}

// SolveLTAdjoint is the adjoint of Y = L⁻ᵀ·B (SolveLT): given Y in
// (y, ldy) and Ȳ in (ybar, ldybar), both n×nrhs, it overwrites ybar with
// B̄ = L⁻¹·Ȳ and, if lbar is not nil, accumulates L̄ −= tril(Y·B̄ᵀ) into the
// lower triangle of the n×n (lbar, ldlbar).
func (c *Cholesky) SolveLTAdjoint(nrhs int, y []float64, ldy int, ybar []float64, ldybar int, lbar []float64, ldlbar int) error {
	if err := c.checkSolveAdjoint(nrhs, y, ldy, namedMat{"Ybar", ybar, ldybar}, namedMat{"Lbar", lbar, ldlbar}); err != nil {
		return err
	}
	if c.n == 0 || nrhs == 0 {
		return nil
	}
	bi := c.bi()
	bi.Dtrsm(gblas.Left, gblas.Lower, gblas.NoTrans, gblas.NonUnit, c.n, nrhs, 1, c.l, c.n, ybar, ldybar)
	if lbar != nil {
		gemmtLower(bi, gblas.NoTrans, c.n, nrhs, -1, y, ldy, ybar, ldybar, lbar, ldlbar, c.workspace(gemmtBase*gemmtBase))
	}
	return nil
}

// namedMat is a row-major matrix argument (a, lda) with the name errors
// give it.
type namedMat struct {
	name string
	a    []float64
	lda  int
}

// checkSolveAdjoint validates the arguments of the solve adjoints: the
// n×nrhs solution (x, ldx), its n×nrhs adjoint xbar, and, unless its
// slice is nil, the n×n adjoint mbar of the factor or matrix.
func (c *Cholesky) checkSolveAdjoint(nrhs int, x []float64, ldx int, xbar, mbar namedMat) error {
	if err := c.checkRHS(nrhs, x, ldx); err != nil {
		return err
	}
	if err := checkMat(xbar.name, c.n, nrhs, xbar.a, xbar.lda); err != nil {
		return err
	}
	if mbar.a != nil {
		return checkMat(mbar.name, c.n, c.n, mbar.a, mbar.lda)
	}
	return nil
}

// SolveAdjoint is the adjoint of X = A⁻¹·B (Solve) taken directly with
// respect to A: given X in (x, ldx) and X̄ in (xbar, ldxbar), both n×nrhs,
// it overwrites xbar with B̄ = A⁻¹·X̄ and, if abar is not nil, accumulates
// Ā −= ½·(B̄·Xᵀ + X·B̄ᵀ) into the n×n symmetric (abar, ldabar) in the
// symmetric convention of Adjoint. Only the lower triangle of abar is read;
// both triangles are written (abar is assumed symmetric on entry).
func (c *Cholesky) SolveAdjoint(nrhs int, x []float64, ldx int, xbar []float64, ldxbar int, abar []float64, ldabar int) error {
	if err := c.checkSolveAdjoint(nrhs, x, ldx, namedMat{"Xbar", xbar, ldxbar}, namedMat{"Abar", abar, ldabar}); err != nil {
		return err
	}
	if c.n == 0 || nrhs == 0 {
		return nil
	}
	if err := c.Solve(nrhs, xbar, ldxbar); err != nil {
		return err
	}
	if abar != nil {
		bi := c.bi()
		work := c.workspace(gemmtBase * gemmtBase)
		gemmtLower(bi, gblas.NoTrans, c.n, nrhs, -0.5, xbar, ldxbar, x, ldx, abar, ldabar, work)
		gemmtLower(bi, gblas.NoTrans, c.n, nrhs, -0.5, x, ldx, xbar, ldxbar, abar, ldabar, work)
		mirrorStrictLower(bi, c.n, abar, ldabar)
	}
	return nil
}

// LogDetAdjoint accumulates the adjoint of LogDet = 2·Σ log L_ii with
// upstream gradient g into L̄: L̄_ii += 2·g/L_ii on the diagonal of the n×n
// (lbar, ldlbar). (Directly in terms of A, the adjoint of log det A is
// g·A⁻¹, available through Inverse.)
func (c *Cholesky) LogDetAdjoint(g float64, lbar []float64, ldlbar int) error {
	if !c.valid {
		return ErrNoFactor
	}
	if err := checkMat("Lbar", c.n, c.n, lbar, ldlbar); err != nil {
		return err
	}
	for i := 0; i < c.n; i++ {
		lbar[i*ldlbar+i] += 2 * g / c.l[i*c.n+i]
	}
	return nil
}
