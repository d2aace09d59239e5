// Package exact implements exact Gaussian-process regression with Gaussian
// noise, the yardstick against which the sparse models of this module are
// measured: the log marginal likelihood
//
//	log p(y) = log N(y | 0, K̃),   K̃ = K + σ²I,
//	         = −½·yᵀα − ½·log|K̃| − N/2·log 2π,   α = K̃⁻¹y,
//
// its exact gradient with respect to every kernel hyperparameter and the
// noise,
//
//	∂ log p(y)/∂θ = ½·tr((ααᵀ − K̃⁻¹)·∂K̃/∂θ) = Σ_ij W_ij·∂K̃_ij/∂θ,
//	W = ½·(ααᵀ − K̃⁻¹),
//
// hyperparameter fitting by L-BFGS (train.MaximizeLBFGS) and prediction.
//
// # Cost and memory
//
// One evaluation costs O(N²·D) for the kernel matrix, N³/3 flops for its
// Cholesky factor and, with the gradient, N³/3 + N³/3 more for K̃⁻¹
// (triangular inversion and the Lᵀ·L product of LAPACK's DPOTRI). All three
// run in place in one N×N buffer on package chol's blocked algorithms and
// package blas's level-3 kernels, parallel over Options.Threads goroutines:
// K̃ is overwritten by L, L by K̃⁻¹ and K̃⁻¹ by W. The kernel matrix is
// formed, and back-propagated through the kernel's MatrixGrad, tile by tile
// (Options.BlockSize), so that beyond the N×N buffer the memory is one tile
// and O(N·D): the kernel's own temporaries (sums and products of kernels
// recompute their parts) stay tile-sized.
//
// # Jitter
//
// K̃ is factored with a chol.JitterPolicy (Options.Jitter, default
// chol.DefaultJitter()) exactly as chol.Cholesky.Factor applies it: first as
// given, then, if a pivot is not positive or its square falls below
// MinPivot·mean(diag(K̃)), with jitter Start·mean(diag(K̃))·Growth^(t−1)
// added to the diagonal. The value and gradient are then those of the
// jittered matrix, including the jitter's dependence on mean(diag(K̃))
// (chol.AddJitterAdjoint), so the gradient stays exact. When every attempt
// fails the error is a *chol.NotPositiveDefiniteError; a kernel matrix with
// NaN or Inf entries gives a *chol.NonFiniteError.
package exact

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/internal/nilcheck"
)

// DefaultBlockSize is the tile order used to form the kernel matrix and
// back-propagate through it when Options.BlockSize is 0.
const DefaultBlockSize = 512

// Options configure a Model. The zero value gives the defaults.
type Options struct {
	// Jitter is the policy for factorizing K + σ²I; nil means
	// chol.DefaultJitter().
	Jitter *chol.JitterPolicy
	// Threads bounds the goroutines of the linear algebra and, when
	// positive, of the kernel (through its SetWorkers method, if any);
	// 0 means GOMAXPROCS.
	Threads int
	// BlockSize is the order of the kernel-matrix tiles (0 means
	// DefaultBlockSize).
	BlockSize int
}

// Model is an exact GP regression model: a kernel and a Gaussian noise
// variance. Its flat parameter vector is the kernel's unconstrained
// parameters followed by the Gaussian likelihood's (the noise variance as
// floor + softplus(u)). The model keeps one N×N workspace between
// evaluations, so that repeated evaluations (as in Fit) do not allocate it
// again. A Model is not safe for concurrent use.
type Model struct {
	kern    kernel.Kernel
	lik     *likelihood.Gaussian
	jitter  chol.JitterPolicy
	threads int
	block   int
	buf     []float64 // N×N workspace: K̃, then L, then K̃⁻¹, then W
	tile    []float64 // BlockSize² kernel tile for the gradient
}

// New returns an exact GP model with kernel k and Gaussian noise lik. k and
// lik are used (and updated by SetParams and Fit) in place.
func New(k kernel.Kernel, lik *likelihood.Gaussian, opts Options) (*Model, error) {
	if nilcheck.IsNil(k) || lik == nil {
		return nil, errors.New("exact: New: nil kernel or likelihood")
	}
	if k.NumParams() < 0 || k.Dim() < 1 {
		return nil, fmt.Errorf("exact: New: kernel with %d parameters and dimension %d", k.NumParams(), k.Dim())
	}
	if opts.Threads < 0 || opts.BlockSize < 0 {
		return nil, fmt.Errorf("exact: New: negative Threads (%d) or BlockSize (%d)", opts.Threads, opts.BlockSize)
	}
	if err := lik.Validate(nil); err != nil {
		return nil, fmt.Errorf("exact: New: %w", err)
	}
	jit := chol.DefaultJitter()
	if opts.Jitter != nil {
		jit = *opts.Jitter
		if err := jit.Validate(); err != nil {
			return nil, fmt.Errorf("exact: New: %w", err)
		}
	}
	block := opts.BlockSize
	if block == 0 {
		block = DefaultBlockSize
	}
	if opts.Threads > 0 {
		if w, ok := k.(interface{ SetWorkers(int) }); ok {
			w.SetWorkers(opts.Threads)
		}
	}
	return &Model{kern: k, lik: lik, jitter: jit, threads: opts.Threads, block: block}, nil
}

// Kernel returns the model's kernel.
func (md *Model) Kernel() kernel.Kernel { return md.kern }

// Likelihood returns the model's Gaussian likelihood.
func (md *Model) Likelihood() *likelihood.Gaussian { return md.lik }

// NumParams returns the length of the flat parameter vector.
func (md *Model) NumParams() int { return md.kern.NumParams() + md.lik.NumParams() }

// Params copies the flat unconstrained parameters into dst (length
// NumParams).
func (md *Model) Params(dst []float64) {
	nk := md.kern.NumParams()
	md.kern.Params(dst[:nk])
	md.lik.Params(dst[nk:])
}

// SetParams sets the flat unconstrained parameters. It returns an error for
// a wrong length or a value the kernel or likelihood rejects; the model is
// then unchanged.
func (md *Model) SetParams(src []float64) error {
	if len(src) != md.NumParams() {
		return fmt.Errorf("exact: SetParams: %d values for %d parameters", len(src), md.NumParams())
	}
	nk := md.kern.NumParams()
	old := make([]float64, nk)
	md.kern.Params(old)
	if err := md.kern.SetParams(src[:nk]); err != nil {
		return fmt.Errorf("exact: SetParams: %w", err)
	}
	if err := md.lik.SetParams(src[nk:]); err != nil {
		if rerr := md.kern.SetParams(old); rerr != nil {
			return errors.Join(err, rerr)
		}
		return fmt.Errorf("exact: SetParams: %w", err)
	}
	return nil
}

// checkData validates training data against the model.
func (md *Model) checkData(op string, x *mat.Dense, y []float64) (n int, err error) {
	if x == nil {
		return 0, fmt.Errorf("exact: %s: nil inputs", op)
	}
	n, d := x.Dims()
	if d != md.kern.Dim() {
		return 0, fmt.Errorf("exact: %s: inputs have %d columns, the kernel dimension is %d", op, d, md.kern.Dim())
	}
	if len(y) != n {
		return 0, fmt.Errorf("exact: %s: %d input rows but %d targets", op, n, len(y))
	}
	if err := checkFinite(op, "inputs", x); err != nil {
		return 0, err
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("exact: %s: target %d is %v", op, i, v)
		}
	}
	return n, nil
}

// checkFinite returns an error naming the first NaN or Inf entry of a.
func checkFinite(op, what string, a *mat.Dense) error {
	r, c := a.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if v := a.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("exact: %s: %s element (%d, %d) is %v", op, what, i, j, v)
			}
		}
	}
	return nil
}
