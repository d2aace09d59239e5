package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// blr is a Bayesian linear regression test model, y = xᵀw + ε with
// ε ~ N(0, σ²) and prior w ~ N(0, I/alpha), trained by its ELBO with
// q(w) = N(m, LLᵀ). The flat parameters are m (d values), the lower
// triangle of L row by row with the diagonal stored as log L_ii, and
// s = log σ². Its optimum is known in closed form for each σ², which makes
// it a model with a checkable answer for the training loop.
type blr struct {
	d     int
	alpha float64
	m     []float64
	l     *mat.TriDense // lower triangular
	s     float64
}

func newBLR(d int) *blr {
	l := mat.NewTriDense(d, mat.Lower, nil)
	for i := 0; i < d; i++ {
		l.SetTri(i, i, 1)
	}
	return &blr{d: d, alpha: 1, m: make([]float64, d), l: l, s: math.Log(0.1)}
}

func (b *blr) NumParams() int { return b.d + b.d*(b.d+1)/2 + 1 }

func (b *blr) Params(dst []float64) {
	k := copy(dst, b.m)
	for i := 0; i < b.d; i++ {
		for j := 0; j <= i; j++ {
			v := b.l.At(i, j)
			if i == j {
				v = math.Log(v)
			}
			dst[k] = v
			k++
		}
	}
	dst[k] = b.s
}

func (b *blr) SetParams(src []float64) error {
	if len(src) != b.NumParams() {
		return errors.New("blr: wrong length")
	}
	for _, v := range src {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("blr: non-finite parameter")
		}
	}
	k := copy(b.m, src)
	for i := 0; i < b.d; i++ {
		for j := 0; j <= i; j++ {
			v := src[k]
			if i == j {
				v = math.Exp(v)
			}
			b.l.SetTri(i, j, v)
			k++
		}
	}
	b.s = src[k]
	return nil
}

// Objective returns the mini-batch ELBO and its gradient.
func (b *blr) Objective(x *mat.Dense, y []float64, nTotal int, grad []float64) (float64, error) {
	nb, d := x.Dims()
	if d != b.d || len(y) != nb || len(grad) != b.NumParams() {
		return 0, fmt.Errorf("blr: bad shapes")
	}
	scale := float64(nTotal) / float64(nb)
	s2 := math.Exp(b.s)
	dL := mat.NewDense(d, d, nil)
	lt := make([]float64, d) // Lᵀx
	var ell, ds float64
	dm := grad[:d]
	for n := 0; n < nb; n++ {
		xn := x.RawRowView(n)
		r := y[n]
		for i := 0; i < d; i++ {
			r -= xn[i] * b.m[i]
		}
		var q float64
		for j := 0; j < d; j++ {
			var v float64
			for i := j; i < d; i++ {
				v += b.l.At(i, j) * xn[i]
			}
			lt[j] = v
			q += v * v
		}
		ell += -0.5*math.Log(2*math.Pi) - 0.5*b.s - (r*r+q)/(2*s2)
		ds += -0.5 + (r*r+q)/(2*s2)
		for i := 0; i < d; i++ {
			dm[i] += scale * r * xn[i] / s2
			for j := 0; j <= i; j++ {
				dL.Set(i, j, dL.At(i, j)-scale/s2*xn[i]*lt[j])
			}
		}
	}
	var kl float64
	for i := 0; i < d; i++ {
		kl += b.alpha * b.m[i] * b.m[i]
		dm[i] -= b.alpha * b.m[i]
		for j := 0; j <= i; j++ {
			v := b.l.At(i, j)
			kl += b.alpha * v * v
			dL.Set(i, j, dL.At(i, j)-b.alpha*v)
		}
		kl -= 2 * math.Log(b.l.At(i, i))
		dL.Set(i, i, dL.At(i, i)+1/b.l.At(i, i))
	}
	kl = 0.5 * (kl - float64(d) - float64(d)*math.Log(b.alpha))
	k := d
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			g := dL.At(i, j)
			if i == j {
				g *= b.l.At(i, i)
			}
			grad[k] += g
			k++
		}
	}
	grad[k] += scale * ds
	return scale*ell - kl, nil
}

// VariationalParams marks m and L.
func (b *blr) VariationalParams(mask []bool) {
	for i := range mask {
		mask[i] = i < len(mask)-1
	}
}

// NaturalStep moves the natural parameters of q(w) a fraction gamma of the
// way to the optimum for the (scaled) mini-batch.
func (b *blr) NaturalStep(x *mat.Dense, y []float64, nTotal int, gamma float64) error {
	nb, d := x.Dims()
	scale := float64(nTotal) / float64(nb)
	s2 := math.Exp(b.s)
	// Current natural parameters: precision Λ = S⁻¹ and η = Λm.
	var chol mat.Cholesky
	u := mat.NewTriDense(d, mat.Upper, nil)
	u.Copy(b.l.T())
	chol.SetFromU(u)
	var lam mat.SymDense
	if err := chol.InverseTo(&lam); err != nil {
		return err
	}
	eta := mat.NewVecDense(d, nil)
	eta.MulVec(&lam, mat.NewVecDense(d, append([]float64(nil), b.m...)))
	// Optimal natural parameters for this batch.
	opt := mat.NewSymDense(d, nil)
	opt.SymOuterK(scale/s2, x.T())
	for i := 0; i < d; i++ {
		opt.SetSym(i, i, opt.At(i, i)+b.alpha)
	}
	etaOpt := mat.NewVecDense(d, nil)
	etaOpt.MulVec(x.T(), mat.NewVecDense(nb, append([]float64(nil), y...)))
	etaOpt.ScaleVec(scale/s2, etaOpt)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			lam.SetSym(i, j, (1-gamma)*lam.At(i, j)+gamma*opt.At(i, j))
		}
		eta.SetVec(i, (1-gamma)*eta.AtVec(i)+gamma*etaOpt.AtVec(i))
	}
	var c2 mat.Cholesky
	if !c2.Factorize(&lam) {
		return errors.New("blr: precision not positive definite")
	}
	var mv mat.VecDense
	if err := c2.SolveVecTo(&mv, eta); err != nil {
		return err
	}
	var cov mat.SymDense
	if err := c2.InverseTo(&cov); err != nil {
		return err
	}
	var c3 mat.Cholesky
	if !c3.Factorize(&cov) {
		return errors.New("blr: covariance not positive definite")
	}
	c3.LTo(b.l)
	for i := 0; i < d; i++ {
		b.m[i] = mv.AtVec(i)
	}
	return nil
}

// posterior returns the exact posterior mean and covariance at log noise s.
func (b *blr) posterior(x *mat.Dense, y []float64, s float64) (*mat.VecDense, *mat.SymDense) {
	n, d := x.Dims()
	s2 := math.Exp(s)
	prec := mat.NewSymDense(d, nil)
	prec.SymOuterK(1/s2, x.T())
	for i := 0; i < d; i++ {
		prec.SetSym(i, i, prec.At(i, i)+b.alpha)
	}
	var c mat.Cholesky
	c.Factorize(prec)
	var cov mat.SymDense
	c.InverseTo(&cov)
	xty := mat.NewVecDense(d, nil)
	xty.MulVec(x.T(), mat.NewVecDense(n, y))
	xty.ScaleVec(1/s2, xty)
	var mean mat.VecDense
	mean.MulVec(&cov, xty)
	return &mean, &cov
}

// logML returns log N(y | 0, σ²I + XXᵀ/alpha) at log noise s.
func (b *blr) logML(x *mat.Dense, y []float64, s float64) float64 {
	n, _ := x.Dims()
	k := mat.NewSymDense(n, nil)
	k.SymOuterK(1/b.alpha, x)
	for i := 0; i < n; i++ {
		k.SetSym(i, i, k.At(i, i)+math.Exp(s))
	}
	var c mat.Cholesky
	c.Factorize(k)
	yv := mat.NewVecDense(n, y)
	var a mat.VecDense
	c.SolveVecTo(&a, yv)
	return -0.5*mat.Dot(yv, &a) - 0.5*c.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
}

// optimalLogML maximizes logML over s by golden-section search.
func (b *blr) optimalLogML(x *mat.Dense, y []float64) (s, v float64) {
	lo, hi := -12.0, 4.0
	g := (math.Sqrt(5) - 1) / 2
	for k := 0; k < 200 && hi-lo > 1e-10; k++ {
		a, c := hi-g*(hi-lo), lo+g*(hi-lo)
		if b.logML(x, y, a) > b.logML(x, y, c) {
			hi = c
		} else {
			lo = a
		}
	}
	s = (lo + hi) / 2
	return s, b.logML(x, y, s)
}

// blrData draws n points of a d=3 linear model with noise sd 0.3.
func blrData(n int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	w := []float64{1, -2, 0.5}
	x := mat.NewDense(n, 3, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < 3; j++ {
			v := rng.NormFloat64()
			x.Set(i, j, v)
			y[i] += w[j] * v
		}
		y[i] += 0.3 * rng.NormFloat64()
	}
	return x, y
}
