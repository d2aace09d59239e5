package collapsed

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/transform"
	"github.com/solvegp/solvegp/internal/nilcheck"
)

// GPModel returns a new model of package gp equivalent to md trained on
// x, y: SVGP when md has no orthogonal inducing inputs, SOLVE-GP
// otherwise, in the unwhitened parameterization, with
//
//   - a copy of md's kernel made by its Clone method (see gp.Cloner, which
//     every kernel of package kernel implements; others are an error),
//   - a copy of md's Gaussian likelihood (noise variance and floor),
//   - md's inducing inputs Z and O, and
//   - q(u) and q(v⊥) set to the collapsed optimum for x, y at md's
//     hyperparameters (the distributions OptimalQ returns).
//
// The model shares nothing with md: changing md afterwards (SetParams,
// Fit) leaves it unchanged, and it can be trained further (for example
// with mini-batches by package train) or saved with package modelfile.
// Its uncollapsed bound on the whole data set (Objective(x, y, N, nil)
// with N = len(y)) equals md.Bound(x, y), and its predictions of the
// latent function equal those of md.Posterior(x, y), to rounding. The
// model's jitter policies (for K_uu and C_vv) and thread budget are md's;
// where a kernel matrix needs jitter to factorize, gp and this package
// jitter different matrices (K_uu and C_vv there, K_ww here), and the
// two can then disagree. Mostly by about the jitter, but not always: when
// orthogonal inducing inputs coincide or nearly coincide with inducing
// inputs, C_vv is (nearly) singular, the jitter gp adds to it is relative
// to K_vv's scale, and the disagreement need not shrink with the jitter
// (with O = Z the gp model's bound is about 0.15 nats lower per orthogonal
// input; with O within 1e-4 of Z and little noise, predictive means can
// differ by 0.1 on unit-scale targets). Keep O apart from Z.
//
// For a model with Options.Tight, q(u) is the SGPR optimum (as for
// Posterior), and the gp model's bound is Titsias' bound, below md's.
// For a model with Options.Bound = Tighter or BlockDiagonal, q(u) and
// q*(v⊥) are the Standard bound's optimum, which is also these bounds'
// (the diagonal or block-diagonal rescaling of the residual covariance
// separates from them). For Tighter the gp model evaluates the uncollapsed
// tighter bound (gp.WithBound(gp.TighterBound)), which at that q equals
// md's; for BlockDiagonal, which has no uncollapsed counterpart in gp, it
// evaluates the Standard bound, below md's.
//
// It returns an error for data that Bound rejects (nil, mismatched in
// size or not finite), for a kernel it cannot copy, and when the kernel
// matrices cannot be factorized.
func (md *Model) GPModel(x *mat.Dense, y []float64) (*gp.Model, error) {
	if md == nil {
		return nil, errors.New("collapsed: GPModel: nil model")
	}
	k, err := copyKernel(md.kern)
	if err != nil {
		return nil, fmt.Errorf("collapsed: GPModel: %w", err)
	}
	lik, err := copyGaussian(md.lik)
	if err != nil {
		return nil, fmt.Errorf("collapsed: GPModel: %w", err)
	}
	mu, tu, mv, tv, err := md.optimalFactors(x, y)
	if err != nil {
		return nil, err
	}
	opts := []gp.Option{gp.WithWhitening(false), gp.WithKuuJitter(md.jitter), gp.WithCvvJitter(md.jitter), gp.WithThreads(md.threads)}
	if md.bound == Tighter {
		opts = append(opts, gp.WithBound(gp.TighterBound))
	}
	if md.mean != nil {
		mf, err := cloneMean(md.mean)
		if err != nil {
			return nil, fmt.Errorf("collapsed: GPModel: %w", err)
		}
		opts = append(opts, gp.WithMean(mf))
	}
	var mod *gp.Model
	if md.m2 == 0 {
		mod, err = gp.NewSVGP(k, lik, md.Z(), opts...)
	} else {
		mod, err = gp.NewSOLVEGP(k, lik, md.Z(), md.O(), opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("collapsed: GPModel: %w", err)
	}
	p := make([]float64, mod.NumParams())
	mod.Params(p)
	lay := mod.Layout()
	copy(p[lay.MU[0]:lay.MU[0]+md.m], mu)
	if err := packFactor(p[lay.LU[0]:], md.m, tu); err != nil {
		return nil, fmt.Errorf("collapsed: GPModel: q(u): %w", err)
	}
	if md.m2 > 0 {
		copy(p[lay.MV[0]:lay.MV[0]+md.m2], mv)
		if err := packFactor(p[lay.LV[0]:], md.m2, tv); err != nil {
			return nil, fmt.Errorf("collapsed: GPModel: q(v⊥): %w", err)
		}
	}
	if err := mod.SetParams(p); err != nil {
		return nil, fmt.Errorf("collapsed: GPModel: %w", err)
	}
	return mod, nil
}

// packFactor writes the Cholesky factor L of S = T·Tᵀ (T n×n row-major)
// into dst in package gp's packed form: the lower triangle row by row, the
// diagonal through softplus⁻¹. L is Rᵀ for the QR factorization Tᵀ = Q·R
// (rows of R negated where its diagonal is negative), so that S is never
// formed and factorized.
func packFactor(dst []float64, n int, t []float64) error {
	var qr mat.QR
	qr.Factorize(mat.NewDense(n, n, t).T())
	var r mat.Dense
	qr.RTo(&r)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := r.At(j, i) // L[i][j] = ±R[j][i]
			if r.At(j, j) < 0 {
				v = -v
			}
			if i == j {
				u := transform.InvSoftplus(v)
				if !(v > 0) || math.IsInf(u, 0) || math.IsNaN(u) {
					return fmt.Errorf("covariance factor has diagonal entry %d = %v (covariance not numerically positive definite)", i, v)
				}
				v = u
			}
			dst[i*(i+1)/2+j] = v
		}
	}
	return nil
}

// copyKernel returns k's copy by its Clone method (see gp.Cloner).
func copyKernel(k kernel.Kernel) (kernel.Kernel, error) {
	if c, ok := k.(gp.Cloner); ok {
		if ck, ok := c.Clone().(kernel.Kernel); ok && nilcheck.IsCopy(ck, k) {
			return ck, nil
		}
	}
	return nil, fmt.Errorf("cannot copy kernel of type %T (it does not implement gp.Cloner with a new copy of its own type, as the kernels of package kernel do)", k)
}

// copyGaussian returns g's copy by its Clone method.
func copyGaussian(g *likelihood.Gaussian) (*likelihood.Gaussian, error) {
	c, ok := g.Clone().(*likelihood.Gaussian)
	if !ok || c == nil {
		return nil, errors.New("cannot copy the Gaussian likelihood")
	}
	return c, nil
}
