package gp

import (
	"math"
	"math/big"
)

// A 256-bit reference implementation of the SOLVE-GP bound and predictive
// marginals for one latent function, a shared-lengthscale RBF kernel and
// the Gaussian likelihood, written from the paper's formulas (eqs.
// D.2–D.3, the KL terms of q(u) and q(v⊥), and Appendix E for the
// whitened form) with no code shared with the model.

const bigPrec = 256

type bf = *big.Float

func bnew(x float64) bf { return new(big.Float).SetPrec(bigPrec).SetFloat64(x) }
func bzero() bf         { return new(big.Float).SetPrec(bigPrec) }
func badd(a, b bf) bf   { return bzero().Add(a, b) }
func bsub(a, b bf) bf   { return bzero().Sub(a, b) }
func bmul(a, b bf) bf   { return bzero().Mul(a, b) }
func bquo(a, b bf) bf   { return bzero().Quo(a, b) }
func bf64(a bf) float64 { v, _ := a.Float64(); return v }

// bexp returns e^x: the Taylor series at x/2^k, |x/2^k| < 2⁻¹⁰, squared k
// times (the working precision covers the bits the squarings lose).
func bexp(x bf) bf {
	const work = bigPrec + 64
	k := 0
	if e := x.MantExp(nil); e > -10 {
		k = e + 10
	}
	y := new(big.Float).SetPrec(work).SetMantExp(x, -k)
	sum := new(big.Float).SetPrec(work).SetInt64(1)
	term := new(big.Float).SetPrec(work).SetInt64(1)
	for i := 1; i < 200; i++ {
		term.Mul(term, y)
		term.Quo(term, new(big.Float).SetPrec(work).SetInt64(int64(i)))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil) < sum.MantExp(nil)-work-8 {
			break
		}
	}
	for ; k > 0; k-- {
		sum.Mul(sum, sum)
	}
	return bzero().Set(sum)
}

// blog returns ln x (x > 0) by Halley's iteration y ← y + 2(x − e^y)/(x + e^y)
// from the float64 logarithm (cubic convergence: three steps reach 256 bits).
func blog(x bf) bf {
	m := new(big.Float)
	e := x.MantExp(m)
	mf, _ := m.Float64()
	y := bnew(math.Log(mf) + float64(e)*math.Ln2)
	for range 4 {
		ey := bexp(y)
		y = badd(y, bmul(bnew(2), bquo(bsub(x, ey), badd(x, ey))))
	}
	return y
}

func bsoftplus(u bf) bf { return blog(badd(bnew(1), bexp(u))) }

var bigPi, _ = new(big.Float).SetPrec(bigPrec).SetString("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899863")

type bmat [][]bf

func bmatNew(r, c int) bmat {
	a := make(bmat, r)
	for i := range a {
		a[i] = make([]bf, c)
		for j := range a[i] {
			a[i][j] = bzero()
		}
	}
	return a
}

func (a bmat) t() bmat {
	b := bmatNew(len(a[0]), len(a))
	for i := range a {
		for j := range a[i] {
			b[j][i] = a[i][j]
		}
	}
	return b
}

func bmatMul(a, b bmat) bmat {
	c := bmatNew(len(a), len(b[0]))
	for i := range a {
		for j := range b[0] {
			s := bzero()
			for k := range b {
				s.Add(s, bmul(a[i][k], b[k][j]))
			}
			c[i][j] = s
		}
	}
	return c
}

// bchol returns the lower Cholesky factor of the symmetric a.
func bchol(a bmat) bmat {
	n := len(a)
	l := bmatNew(n, n)
	for j := 0; j < n; j++ {
		s := bzero().Set(a[j][j])
		for k := 0; k < j; k++ {
			s.Sub(s, bmul(l[j][k], l[j][k]))
		}
		if s.Sign() <= 0 {
			panic("bchol: matrix not positive definite")
		}
		l[j][j] = bzero().Sqrt(s)
		for i := j + 1; i < n; i++ {
			s := bzero().Set(a[i][j])
			for k := 0; k < j; k++ {
				s.Sub(s, bmul(l[i][k], l[j][k]))
			}
			l[i][j] = bquo(s, l[j][j])
		}
	}
	return l
}

// bsolveL returns L⁻¹·b for lower-triangular L.
func bsolveL(l, b bmat) bmat {
	n, c := len(l), len(b[0])
	x := bmatNew(n, c)
	for j := 0; j < c; j++ {
		for i := 0; i < n; i++ {
			s := bzero().Set(b[i][j])
			for k := 0; k < i; k++ {
				s.Sub(s, bmul(l[i][k], x[k][j]))
			}
			x[i][j] = bquo(s, l[i][i])
		}
	}
	return x
}

// bsolveLT returns L⁻ᵀ·b for lower-triangular L.
func bsolveLT(l, b bmat) bmat {
	n, c := len(l), len(b[0])
	x := bmatNew(n, c)
	for j := 0; j < c; j++ {
		for i := n - 1; i >= 0; i-- {
			s := bzero().Set(b[i][j])
			for k := i + 1; k < n; k++ {
				s.Sub(s, bmul(l[k][i], x[k][j]))
			}
			x[i][j] = bquo(s, l[i][i])
		}
	}
	return x
}

// bsumSq returns Σ a_ij².
func bsumSq(a bmat) bf {
	s := bzero()
	for _, r := range a {
		for _, v := range r {
			s.Add(s, bmul(v, v))
		}
	}
	return s
}

func bcol(v []bf) bmat {
	a := make(bmat, len(v))
	for i := range v {
		a[i] = []bf{v[i]}
	}
	return a
}

// refProblem is a SOLVE-GP problem for the reference: a model's layout
// and sizes, a batch, test inputs and the jitters of K_uu and C_vv as
// fractions of the kernel variance (their mean diagonals).
type refProblem struct {
	lay              Layout
	d, m, m2         int
	whiten           bool
	noiseFloor       float64
	x, xt            [][]float64
	y                []float64
	nTotal           int
	relJitU, relJitV bf
}

// refResult holds the reference bound and predictive marginals at xt.
type refResult struct {
	bound          bf
	mean, variance []bf
	l0u, l0v       bmat // chol(K_uu + jitter), chol(C_vv + jitter)
}

func (pr *refProblem) rows(theta []bf, off, n int) bmat {
	a := make(bmat, n)
	for i := range a {
		a[i] = theta[off+i*pr.d : off+(i+1)*pr.d]
	}
	return a
}

// eval computes the bound (nTotal/N)·Σ E log N(y | f, σ²) − KL_u − KL_v and
// the predictive marginals at parameters theta.
func (pr *refProblem) eval(theta []bf, wantPred bool) refResult {
	d, M, M2 := pr.d, pr.m, pr.m2
	lay := pr.lay
	ls := bsoftplus(theta[lay.Kernel])
	vr := bsoftplus(theta[lay.Kernel+1])
	noise := badd(bnew(pr.noiseFloor), bsoftplus(theta[lay.Lik]))
	inv2l2 := bquo(bnew(-0.5), bmul(ls, ls))
	kern := func(a, b bmat) bmat {
		k := bmatNew(len(a), len(b))
		for i := range a {
			for j := range b {
				s := bzero()
				for c := 0; c < d; c++ {
					t := bsub(a[i][c], b[j][c])
					s.Add(s, bmul(t, t))
				}
				k[i][j] = bmul(vr, bexp(bmul(s, inv2l2)))
			}
		}
		return k
	}
	toB := func(x [][]float64) bmat {
		a := make(bmat, len(x))
		for i := range x {
			a[i] = make([]bf, d)
			for c := range x[i] {
				a[i][c] = bnew(x[i][c])
			}
		}
		return a
	}
	z, o := pr.rows(theta, lay.Z, M), pr.rows(theta, lay.O, M2)
	tri := func(off, n int) bmat {
		l := bmatNew(n, n)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				v := theta[off+i*(i+1)/2+j]
				if j == i {
					v = bsoftplus(v)
				}
				l[i][j] = v
			}
		}
		return l
	}
	mu := bcol(theta[lay.MU[0] : lay.MU[0]+M])
	lu := tri(lay.LU[0], M)
	mv := bcol(theta[lay.MV[0] : lay.MV[0]+M2])
	lv := tri(lay.LV[0], M2)

	kuu := kern(z, z)
	for i := range kuu {
		kuu[i][i] = badd(kuu[i][i], bmul(pr.relJitU, vr))
	}
	l0u := bchol(kuu)
	a := bsolveL(l0u, kern(z, o))
	cvv := kern(o, o)
	ata := bmatMul(a.t(), a)
	for i := range cvv {
		for j := range cvv[i] {
			cvv[i][j] = bsub(cvv[i][j], ata[i][j])
		}
		cvv[i][i] = badd(cvv[i][i], bmul(pr.relJitV, vr))
	}
	l0v := bchol(cvv)

	// marginals at the rows of f.
	marg := func(f bmat) (mean, variance []bf) {
		b := bsolveL(l0u, kern(z, f))
		cvf := kern(o, f)
		atb := bmatMul(a.t(), b)
		for i := range cvf {
			for j := range cvf[i] {
				cvf[i][j] = bsub(cvf[i][j], atb[i][j])
			}
		}
		dd := bsolveL(l0v, cvf)
		// With E = L0u⁻ᵀB (unwhitened) or B (whitened): μ = Eᵀm_u + Gᵀm_v,
		// σ² = k_ff − ‖B_n‖² + ‖L_uᵀE_n‖² − ‖D_n‖² + ‖L_vᵀG_n‖².
		e, g := b, dd
		if !pr.whiten {
			e, g = bsolveLT(l0u, b), bsolveLT(l0v, dd)
		}
		fu := bmatMul(lu.t(), e)
		fv := bmatMul(lv.t(), g)
		mm := badd0(bmatMul(e.t(), mu), bmatMul(g.t(), mv))
		for n := range f {
			s := bzero().Set(vr)
			for i := 0; i < M; i++ {
				s.Sub(s, bmul(b[i][n], b[i][n]))
				s.Add(s, bmul(fu[i][n], fu[i][n]))
			}
			for i := 0; i < M2; i++ {
				s.Sub(s, bmul(dd[i][n], dd[i][n]))
				s.Add(s, bmul(fv[i][n], fv[i][n]))
			}
			mean = append(mean, mm[n][0])
			variance = append(variance, s)
		}
		return mean, variance
	}
	// KL(N(m, LLᵀ) ‖ N(0, L0L0ᵀ)) = ½[‖L0⁻¹L‖² + ‖L0⁻¹m‖² − n + 2Σ ln L0_ii − 2Σ ln L_ii],
	// and with L0 = I for the whitened parameters.
	kl := func(l0, l, m bmat) bf {
		n := len(l)
		if !pr.whiten {
			l, m = bsolveL(l0, l), bsolveL(l0, m)
		}
		s := badd(bsumSq(l), bsumSq(m))
		s.Sub(s, bnew(float64(n)))
		for i := 0; i < n; i++ {
			s.Sub(s, bmul(bnew(2), blog(l[i][i])))
		}
		return bmul(bnew(0.5), s)
	}
	// Unwhitened: ln|L0⁻¹L| = Σ ln L_ii − Σ ln L0_ii, which kl reads off the
	// diagonal of L0⁻¹L.
	mean, variance := marg(toB(pr.x))
	ell := bzero()
	c := bmul(bnew(-0.5), blog(bmul(bmul(bnew(2), bigPi), noise)))
	for n := range pr.x {
		r := bsub(bnew(pr.y[n]), mean[n])
		e := badd(bmul(r, r), variance[n])
		ell.Add(ell, bsub(c, bquo(e, bmul(bnew(2), noise))))
	}
	bound := bmul(bquo(bnew(float64(pr.nTotal)), bnew(float64(len(pr.x)))), ell)
	bound.Sub(bound, kl(l0u, lu, mu))
	bound.Sub(bound, kl(l0v, lv, mv))
	res := refResult{bound: bound, l0u: l0u, l0v: l0v}
	if wantPred {
		res.mean, res.variance = marg(toB(pr.xt))
	}
	return res
}

func badd0(a, b bmat) bmat {
	c := bmatNew(len(a), len(a[0]))
	for i := range a {
		for j := range a[i] {
			c[i][j] = badd(a[i][j], b[i][j])
		}
	}
	return c
}

// grad returns the central difference of the bound in each parameter with
// step 2⁻⁸⁰ (truncation error ~2⁻¹⁶⁰, rounding ~2⁻¹⁷⁰).
func (pr *refProblem) grad(theta []bf) []float64 {
	g := make([]float64, len(theta))
	h := new(big.Float).SetPrec(bigPrec).SetMantExp(bnew(1), -80)
	for i := range theta {
		tp := append([]bf(nil), theta...)
		tm := append([]bf(nil), theta...)
		tp[i], tm[i] = badd(theta[i], h), bsub(theta[i], h)
		diff := bsub(pr.eval(tp, false).bound, pr.eval(tm, false).bound)
		g[i] = bf64(bquo(diff, bmul(bnew(2), h)))
	}
	return g
}
