// Package chol implements blocked Cholesky factorization of symmetric
// positive-definite float64 matrices, triangular and full solves with the
// factor, log-determinants, inverses, and the reverse-mode adjoints
// (gradients) of all of these, on the level-3 kernels of package blas.
//
// # Storage conventions
//
// Matrices are dense and row-major with gonum's argument conventions: an
// m×n matrix B is passed as (b []float64, ldb int) with element (i, j) at
// b[i*ldb+j], ldb ≥ max(1, n) and len(b) ≥ (m-1)*ldb+n. Factors are lower
// triangular: A = L·Lᵀ. Only the lower triangle (diagonal included) of an
// input matrix A is read; the strict upper triangle is never referenced.
//
// # Factorization and errors
//
// A Cholesky value holds a factor and is reused across factorizations: once
// it has grown to the largest n it has seen, Factor does not allocate, so a
// training loop can re-factor its kernel matrix into the same memory every
// step:
//
//	var c chol.Cholesky
//	jitter, err := c.Factor(n, a, lda, chol.DefaultJitter(), threads)
//	var npd *chol.NotPositiveDefiniteError
//	switch {
//	case errors.As(err, &npd): // not positive definite even with jitter
//	case err != nil:           // bad shape, NaN/Inf input or bad policy
//	}
//	logDet := c.LogDet()
//	c.Solve(nrhs, b, ldb) // B ← A⁻¹·B in place
//
// Factor returns
//   - *NotPositiveDefiniteError when a pivot is not positive (or not finite)
//     on every allowed attempt; Pivot is the 0-based index of the failing
//     pivot and Value the Schur-complement diagonal value found there;
//   - *NonFiniteError when the lower triangle of A holds a NaN or ±Inf
//     (such input never produces a factor, whatever the jitter policy);
//   - an error wrapping ErrShape for inconsistent sizes, strides or lengths;
//   - an error wrapping ErrPolicy for an invalid JitterPolicy.
//
// After a failed Factor the Cholesky holds no factor and its solve methods
// return ErrNoFactor. Update and Downdate modify a factor by a rank-one
// term ±x·xᵀ in O(n²); a downdate that would lose positive definiteness is
// refused with a *NotPositiveDefiniteError.
//
// # Jitter
//
// Kernel matrices are often numerically singular. A JitterPolicy first tries
// the matrix as given, then, on failure, A + jitter·I with
//
//	jitter = Start · mean(diag(A)) · Growth^(t-1),   t = 1, …, MaxTries,
//
// stopping at the first success and reporting the jitter used (0 when no
// jitter was needed). Growth defaults to 10. If mean(diag(A)) is not
// positive, the scale 1 is used instead. An attempt succeeds when every
// pivot is positive and, if MinPivot is set, every squared pivot L_ii² is
// at least MinPivot·mean(diag(A)): a factor that exists only by rounding
// (a numerically singular A whose pivot happens to round to 1e-16 rather
// than −1e-16) is treated as the failure it nearly was, since solves with
// it amplify rounding by 1/L_ii². NoJitter() (the zero value) never adds
// jitter; DefaultJitter() returns Start = 1e-10, Growth = 10, MaxTries = 7
// (up to 1e-4·mean(diag(A))) and MinPivot = 1e-11. The factor, its LogDet and all
// solves refer to the jittered matrix A + jitter·I. The jitter moves with
// mean(diag(A)) (MeanDiag), so a gradient through a jittered factor needs
// AddJitterAdjoint besides Adjoint.
//
// # Adjoints (reverse mode)
//
// For a scalar loss F, Adjoint maps L̄ = ∂F/∂L (lower triangular; the
// strict upper triangle is ignored) to Ā, returned as a FULL SYMMETRIC
// matrix (both triangles written) such that
//
//	dF = Σ_ij Ā_ij · dA_ij   for every symmetric perturbation dA.
//
// Equivalently Ā = ½·(G + Gᵀ) where G is any matrix with dF = tr(Gᵀ dA);
// Ā = L⁻ᵀ·Φ(Lᵀ·L̄)·L⁻¹ symmetrized, where Φ takes the lower triangle and
// halves the diagonal (Murray 2016, "Differentiation of the Cholesky
// decomposition"). With this convention the gradient with respect to a
// parameter θ of a symmetric matrix K(θ) is Σ_ij Ā_ij ∂K_ij/∂θ, summing over
// both triangles. (A code that differentiates with respect to the lower
// triangle only must double the off-diagonal entries of Ā.) The adjoint is
// computed by a recursive blocked algorithm on the level-3 kernels whose
// cost is about twice the factorization's.
//
// The helper adjoints accumulate into their L̄ outputs (L̄ += …) so that
// contributions from several uses of the same factor add up:
//   - SolveLAdjoint: X = L⁻¹B, given X̄: B̄ = L⁻ᵀX̄, L̄ −= tril(B̄·Xᵀ);
//   - SolveLTAdjoint: Y = L⁻ᵀB, given Ȳ: B̄ = L⁻¹Ȳ, L̄ −= tril(Y·B̄ᵀ);
//   - LogDetAdjoint: logdet(A) = 2·Σ log L_ii, so L̄_ii += 2·ḡ/L_ii.
//
// # LAPACK drop-in
//
// Implementation embeds gonum's native LAPACK and overrides Dpotrf, Dpotrs,
// Dtrtrs, Dpotri and Dtrtri with this package's blocked routines (and has a
// blocked Dlauum, which gonum's lapack64 does not route: call it directly), so
//
//	lapack64.Use(chol.Implementation{})
//
// speeds up gonum/mat Cholesky users with no other change. Those methods
// panic on bad arguments exactly as gonum's do.
//
// # Algorithms
//
// The factorization is recursive: A11 is factored, L21 = A21·L11⁻ᵀ (Dtrsm),
// A22 −= L21·L21ᵀ (Dsyrk), A22 is factored; blocks of order ≤ 256 are
// factored by a left-looking algorithm on 32-column block columns whose
// updates are single Dgemm calls with a long inner dimension, with an
// unblocked row-oriented kernel on the 32×32 diagonal blocks. The adjoint
// reverses the same recursion (Dsymm, Dtrsm and triangle-restricted Dgemm
// updates) and the inverse is a recursive triangular inversion followed by
// a recursive Lᵀ·L product. All O(n³) work therefore runs in package blas's
// level-3 kernels. Triangular solves with the factor are single Dtrsm calls.
//
// # Threads
//
// Every entry point takes a goroutine budget (threads ≤ 0 means
// runtime.GOMAXPROCS(0)) that is passed down to the blas level-3 calls.
// With more than one goroutine, factorizations and adjoints of order 512
// and more run as task graphs over tiles instead (one-thread kernels per
// task, ready tasks by the longest chain of work waiting on them), so that
// no goroutine waits for a whole step of the recursion. A task graph gives
// the same bits for any number of goroutines; they differ from the
// recursive algorithm's, which one goroutine runs, by rounding.
package chol
