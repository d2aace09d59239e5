package gpbeam

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
	"github.com/solvegp/solvegp/gp/transform"
)

func init() {
	register.DoFn2x2[context.Context, Shard, Stats, error](&statsFn{})
	register.Combiner1[Stats](&addStatsFn{})
	register.DoFn2x1[context.Context, Stats, error](&refitFn{})
}

// Stats are the sufficient statistics of the optimal collapsed q(u) of an
// SVGP regression model over a set of rows, on standardized data: the
// count N, A = Σ K_uf K_fu (M×M, row-major) and c = Σ K_uf y (M). Stats
// of disjoint sets of rows add.
type Stats struct {
	N int64
	A []float64
	C []float64
}

// Refit adds to s the refit of the model in modelJSON, an SVGP with a
// Gaussian likelihood, on the labelled shards: the Stats of every shard,
// added, give the optimal q(u) of Titsias' collapsed bound at the model's
// hyperparameters and inducing inputs Z,
//
//	S = K_uu (K_uu + A/σ²)⁻¹ K_uu,  μ = K_uu (K_uu + A/σ²)⁻¹ c/σ²,
//
// (the q(u) gp/collapsed's OptimalQ gives for all the rows at once), and a
// copy of the model with this q(u), unwhitened, is written to out as a
// model file. Only q(u) changes: kernel, noise, Z, standardization and
// metadata are the input model's.
func Refit(s beam.Scope, modelJSON []byte, shards []Shard, out string) error {
	s = s.Scope("gpbeam.Refit")
	b, err := modelfile.Unmarshal(modelJSON)
	if err != nil {
		return err
	}
	if err := checkRefit(b); err != nil {
		return err
	}
	stats := beam.ParDo(s, &statsFn{Model: modelJSON}, beam.CreateList(s, shards))
	beam.ParDo0(s, &refitFn{Model: modelJSON, Out: out}, beam.Combine(s, &addStatsFn{}, stats))
	return nil
}

// checkRefit reports a model Refit cannot refit.
func checkRefit(b *modelfile.Bundle) error {
	if err := checkSingleOutput(b); err != nil {
		return err
	}
	_, _, m2, c := b.Model.Dims()
	if b.Model.Kind() != gp.SVGP || m2 != 0 || c != 1 {
		return fmt.Errorf("gpbeam: refit needs an SVGP model, not %v", b.Model.Kind())
	}
	if _, ok := b.Model.Likelihood().(*likelihood.Gaussian); !ok {
		return fmt.Errorf("gpbeam: refit needs a Gaussian likelihood, not %T", b.Model.Likelihood())
	}
	return nil
}

// statsFn computes the Stats of one shard.
type statsFn struct {
	Model []byte // the model file

	b *modelfile.Bundle
	z *mat.Dense
}

// Setup decodes the model once per worker instance.
func (f *statsFn) Setup() error {
	b, err := modelfile.Unmarshal(f.Model)
	if err != nil {
		return err
	}
	if err := checkRefit(b); err != nil {
		return err
	}
	f.b, f.z = b, b.Model.Z()
	return nil
}

// ProcessElement returns the Stats of the rows of one shard.
func (f *statsFn) ProcessElement(ctx context.Context, sh Shard) (Stats, error) {
	buf, err := readFile(ctx, sh.Path)
	if err != nil {
		return Stats{}, fmt.Errorf("%s: %w", sh.Path, err)
	}
	tab, err := parseShard(f.b, sh.Path, buf, true)
	if err != nil {
		return Stats{}, err
	}
	x, y := mat.DenseCopyOf(tab.x), append([]float64(nil), tab.y...)
	if st := f.b.Standardizer; st != nil {
		if err := st.TransformX(x); err != nil {
			return Stats{}, tab.inputError(err)
		}
		st.TransformY(y)
	}
	n, _ := x.Dims()
	m, _ := f.z.Dims()
	kfu := mat.NewDense(n, m, nil)
	f.b.Model.Kernel().Matrix(kfu, x, f.z)
	a := mat.NewDense(m, m, nil)
	a.Mul(kfu.T(), kfu)
	c := mat.NewVecDense(m, nil)
	c.MulVec(kfu.T(), mat.NewVecDense(n, y))
	return Stats{N: int64(n), A: a.RawMatrix().Data, C: c.RawVector().Data}, nil
}

// addStatsFn adds Stats.
type addStatsFn struct{}

// MergeAccumulators returns a + b.
func (addStatsFn) MergeAccumulators(a, b Stats) Stats {
	if a.N == 0 {
		return b
	}
	if b.N == 0 {
		return a
	}
	out := Stats{N: a.N + b.N, A: append([]float64(nil), a.A...), C: append([]float64(nil), a.C...)}
	for i, v := range b.A {
		out.A[i] += v
	}
	for i, v := range b.C {
		out.C[i] += v
	}
	return out
}

// refitFn turns the total Stats into the refitted model and writes it.
type refitFn struct {
	Model []byte // the model file
	Out   string // the path of the refitted model file
}

// ProcessElement computes the optimal q(u) from st and writes the model.
func (f *refitFn) ProcessElement(ctx context.Context, st Stats) error {
	b, err := modelfile.Unmarshal(f.Model)
	if err != nil {
		return err
	}
	refit, err := RefitModel(b, st)
	if err != nil {
		return err
	}
	buf, err := modelfile.Marshal(refit)
	if err != nil {
		return err
	}
	return writeFile(ctx, f.Out, buf)
}

// OptimalQ returns the mean and covariance of the optimal collapsed q(u)
// of b's SVGP for the Stats st. K_uu is factorized with chol's default
// jitter policy, as gp/collapsed does, and the solves go through
// B = I + L⁻¹AL⁻ᵀ/σ² (K_uu = LLᵀ), well conditioned for any noise:
// S = L B⁻¹ Lᵀ and μ = L B⁻¹ L⁻¹ c/σ².
func OptimalQ(b *modelfile.Bundle, st Stats) (mu []float64, s *mat.SymDense, err error) {
	if err := checkRefit(b); err != nil {
		return nil, nil, err
	}
	z := b.Model.Z()
	m, _ := z.Dims()
	if st.N <= 0 || len(st.A) != m*m || len(st.C) != m {
		return nil, nil, fmt.Errorf("gpbeam: statistics of %d rows for %d inducing points (A has %d values, c %d)", st.N, m, len(st.A), len(st.C))
	}
	for _, v := range append(append([]float64(nil), st.A...), st.C...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, fmt.Errorf("gpbeam: statistics not finite")
		}
	}
	noise := b.Model.Likelihood().(*likelihood.Gaussian).NoiseVariance()
	kuu := mat.NewDense(m, m, nil)
	b.Model.Kernel().Matrix(kuu, z, z)
	var lc chol.Cholesky
	if _, err := lc.Factor(m, kuu.RawMatrix().Data, m, chol.DefaultJitter(), 1); err != nil {
		return nil, nil, fmt.Errorf("gpbeam: factorizing K_uu: %w", err)
	}
	l := mat.NewTriDense(m, mat.Lower, append([]float64(nil), lc.RawL()...))
	// W = L⁻¹ A L⁻ᵀ, B = I + W/σ².
	var w, wt mat.Dense
	if err := w.Solve(l, mat.NewDense(m, m, append([]float64(nil), st.A...))); err != nil {
		return nil, nil, err
	}
	if err := wt.Solve(l, w.T()); err != nil {
		return nil, nil, err
	}
	bm := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			v := (wt.At(i, j) + wt.At(j, i)) / (2 * noise)
			if i == j {
				v++
			}
			bm.SetSym(i, j, v)
		}
	}
	var bc mat.Cholesky
	if !bc.Factorize(bm) {
		return nil, nil, fmt.Errorf("gpbeam: I + L⁻¹AL⁻ᵀ/σ² is not positive definite")
	}
	// μ = L B⁻¹ L⁻¹ c/σ².
	var v, bv, mv mat.VecDense
	if err := v.SolveVec(l, mat.NewVecDense(m, append([]float64(nil), st.C...))); err != nil {
		return nil, nil, err
	}
	if err := bc.SolveVecTo(&bv, &v); err != nil {
		return nil, nil, err
	}
	mv.MulVec(l, &bv)
	mv.ScaleVec(1/noise, &mv)
	// S = L B⁻¹ Lᵀ.
	var binv mat.SymDense
	if err := bc.InverseTo(&binv); err != nil {
		return nil, nil, err
	}
	var t, sd mat.Dense
	t.Mul(l, &binv)
	sd.Mul(&t, l.T())
	s = mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			s.SetSym(i, j, (sd.At(i, j)+sd.At(j, i))/2)
		}
	}
	return mv.RawVector().Data, s, nil
}

// RefitModel returns a copy of b whose model is an unwhitened SVGP with
// b's kernel, likelihood and Z and the optimal q(u) for st (OptimalQ).
func RefitModel(b *modelfile.Bundle, st Stats) (*modelfile.Bundle, error) {
	mu, s, err := OptimalQ(b, st)
	if err != nil {
		return nil, err
	}
	// A copy of the model, through its file, so that b is left as it is.
	buf, err := modelfile.Marshal(b)
	if err != nil {
		return nil, err
	}
	cp, err := modelfile.Unmarshal(buf)
	if err != nil {
		return nil, err
	}
	mod, err := gp.NewSVGP(cp.Model.Kernel(), cp.Model.Likelihood(), cp.Model.Z(), gp.WithWhitening(false))
	if err != nil {
		return nil, err
	}
	p := make([]float64, mod.NumParams())
	mod.Params(p)
	lay := mod.Layout()
	copy(p[lay.MU[0]:], mu)
	var sc mat.Cholesky
	if !sc.Factorize(s) {
		return nil, fmt.Errorf("gpbeam: the optimal S is not numerically positive definite")
	}
	var lt mat.TriDense
	sc.LTo(&lt)
	m := len(mu)
	for i := 0; i < m; i++ {
		for j := 0; j <= i; j++ {
			v := lt.At(i, j)
			if i == j {
				v = transform.InvSoftplus(v)
			}
			p[lay.LU[0]+i*(i+1)/2+j] = v
		}
	}
	if err := mod.SetParams(p); err != nil {
		return nil, err
	}
	cp.Model = mod
	return cp, nil
}
