// Package gp implements sparse variational Gaussian processes: SVGP,
// ODVGP and SOLVE-GP (Shi, Titsias & Mnih, "Sparse Orthogonal Variational
// Inference for Gaussian Processes", AISTATS 2020), with exact reverse-mode
// gradients, prediction and the paper's accounting of cubic-cost
// operations.
//
// All computation is in float64. Matrices are gonum mat types; the heavy
// linear algebra runs on this module's blas and chol packages.
//
// # Models
//
// NewSVGP, NewODVGP and NewSOLVEGP return a *Model: one layer engine in
// which SVGP is the model without an orthogonal block, SOLVE-GP adds
// q(v⊥) = N(m_v, S_v) on the orthogonal inducing inputs O, and ODVGP is
// SOLVE-GP with S_v = C_vv (mean-only orthogonal block, optionally with
// the paper's random column subsets of K_vv, see WithColumnSample). The
// whitened parameterization of Appendix E is an option (WithWhitening).
// Models with a C-class likelihood have C latent functions sharing the
// kernel and the inducing inputs, each with its own q(u) (and q(v⊥)).
//
// All parameters form one flat vector of unconstrained values (Layout,
// Params, SetParams), and Objective returns the mini-batch ELBO and its
// gradient. Forward and Backward expose the layer itself — from inputs to
// the marginals q(f(x_n)) = N(μ_n, σ²_n) of eqs. (D.2)–(D.3) and back to
// every parameter and to the inputs — so that layers can be stacked.
// Predictor returns an immutable, concurrency-safe snapshot for batched
// prediction of marginals, joint covariances, observations and log
// predictive densities.
//
// # Cost profile
//
// Every evaluation records its cubic-cost operations (matrix products,
// Cholesky factorizations, triangular solves, with sizes, flops and
// measured time) in a CostProfile (Model.LastProfile). Let N be the batch
// size, M and M₂ the numbers of inducing and orthogonal inducing points,
// and C the number of latent functions.
//
// The forward bound follows Algorithm 1. For unwhitened SVGP and SOLVE-GP
// with one latent function it performs exactly the operations of Table 3:
//
//	SVGP      matmul   F = Luᵀ·E                               NM²
//	          cholesky L0u = chol(Kuu)                         M³
//	          trisolve P = L0u⁻¹·Lu                            M³
//	                   B = L0u⁻¹·Kuf, E = L0u⁻ᵀ·B              NM² ×2
//	SOLVE-GP  matmul   F = Luᵀ·E                               NM²
//	                   H = Lvᵀ·G                               NM₂²
//	                   Cvf = Kvf − Aᵀ·B                        NMM₂
//	                   Cvv = Kvv − Aᵀ·A                        MM₂²
//	          cholesky L0u = chol(Kuu), L0v = chol(Cvv)        M³, M₂³
//	          trisolve P = L0u⁻¹·Lu                            M³
//	                   B = L0u⁻¹·Kuf, E = L0u⁻ᵀ·B              NM² ×2
//	                   Pv = L0v⁻¹·Lv                           M₂³
//	                   D = L0v⁻¹·Cvf, G = L0v⁻ᵀ·D              NM₂² ×2
//	                   A = L0u⁻¹·Kuv                           M₂M²
//
// With C latent functions, F, P (and H, Pv) are computed once per latent
// function. The solves P = L0u⁻¹·Lu and Pv = L0v⁻¹·Lv have triangular
// right-hand sides and triangular results; they are computed by column
// blocks restricted to the trailing systems, about M³/3 flops each. The whitened forms drop E, G, P and Pv (F = Luᵀ·B, H = Lvᵀ·D):
// whitened SVGP performs one Cholesky, one NM² solve and one NM² product.
// ODVGP performs the operations of SVGP: its orthogonal block is
// parameterized by a = C_vv⁻¹·m_v and needs only matrix–vector products
// with K_uv, K_vf and the (sampled) columns of K_vv.
//
// The backward pass works in each block's whitened coordinates (B, P, a
// for q(u); D, Pv, av for q(v⊥)). The adjoint of a Cholesky factor always
// has the form L̄ = −L⁻ᵀ·X, which maps to the adjoint of its matrix as
// K̄ = −sym(L⁻ᵀ·Φ(X)·L⁻¹) (Φ: lower triangle, halved diagonal), computed
// by chol.Cholesky.AdjointFromProduct as a recursive symmetric congruence
// in about M³ flops and recorded as one backward operation of class
// Cholesky (the adjoint of a factorization). Flops below count a general
// m×n×k product as 2mnk.
//
//	per block and latent   P̄ = tril(B·F̄ᵀ)        block-lower, ≈ 2NM²·9/16
//	                       B̄ += P·F̄              NM² (triangular)
//	unwhitened blocks also X += tril(P̄·Pᵀ)       ≈ M³/2 (column blocks)
//	                       L̄ = tril(L0⁻ᵀ·P̄)      ≈ M³/3 (column blocks)
//	per block              X += tril(B̄·Bᵀ)        block-lower, ≈ 2NM²·9/16
//	                       K̄f = L0⁻ᵀ·B̄          NM²
//	                       K̄ from X             ≈ M³ (class Cholesky)
//	SOLVE-GP coupling      Ā = −2A·C̄vv           2MM₂²
//	                       Ā −= B·C̄vfᵀ, B̄ −= A·C̄vf   2NMM₂ each
//	                       X_u += tril(Ā·Aᵀ)      block-lower, ≈ 2M²M₂·9/16
//	                       K̄uv = L0u⁻ᵀ·Ā         M²M₂
//
// The block-lower products compute whole row blocks of M/8 rows (at
// least 64), so they spend 1/8 of a full product above the diagonal.
//
// Kernel matrices and their adjoints are formed by the kernel (O(NMd)).
//
// # Threads
//
// A model's evaluations run on up to GOMAXPROCS goroutines, or on the budget
// given by WithThreads: its linear algebra, its elementwise passes, and its
// kernel and likelihood when they implement WorkerSetter (the kernels and
// likelihoods of this module that parallelize do). Results do not depend on
// the goroutines' scheduling; with one thread, the same seed gives the same
// parameters bit for bit. A Model is not safe for concurrent use; its
// Predictor is.
//
// # Numerical notes
//
// K_uu and C_vv are factorized with their own jitter policies
// (WithKuuJitter, WithCvvJitter); the jitter used is reported in Terms.
// The gradient includes the jitter's dependence on the parameters (a
// policy's jitter is proportional to the mean diagonal of K_uu, or of K_vv
// for C_vv), so it is the exact gradient of the jittered bound; only the
// choice of jitter attempt is piecewise constant. (In the degenerate case
// of a K_vv whose mean diagonal is not positive, C_vv's jitter is taken
// relative to its own diagonal and treated as a constant.) Marginal variances are
// not clamped: with an (almost) degenerate q they may be rounded slightly
// below zero.
package gp
