package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// halvedInducing is an InterDomainKernel built on a plain kernel: an
// inducing input z of the plain kernel is stored as the row (2z, t), with a
// trailing column t that the kernel ignores. A model using it with inducing
// inputs (2Z, T) must compute exactly what the plain model computes with Z,
// with gradients dZ/2 for the stored inputs and zero for T.
type halvedInducing struct{ Kernel }

func (k halvedInducing) InducingDim() int { return k.Dim() + 1 }

func (k halvedInducing) plain(z mat.Matrix) *mat.Dense {
	r, c := z.Dims()
	if c != k.InducingDim() {
		panic(mat.ErrShape)
	}
	out := mat.NewDense(r, k.Dim(), nil)
	for i := 0; i < r; i++ {
		for j := 0; j < k.Dim(); j++ {
			out.Set(i, j, z.At(i, j)/2)
		}
	}
	return out
}

// addHalf adds g/2 into the first Dim columns of dst.
func (k halvedInducing) addHalf(dst, g *mat.Dense) {
	r, _ := g.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < k.Dim(); j++ {
			dst.Set(i, j, dst.At(i, j)+g.At(i, j)/2)
		}
	}
}

func (k halvedInducing) InducingMatrix(dst *mat.Dense, z1, z2 mat.Matrix) {
	p1 := k.plain(z1)
	p2 := p1
	if z2 != z1 {
		p2 = k.plain(z2)
	}
	k.Kernel.Matrix(dst, p1, p2)
}

func (k halvedInducing) InducingMatrixGrad(dK, K *mat.Dense, z1, z2 mat.Matrix, dz1, dz2 *mat.Dense, dparams []float64) {
	p1 := k.plain(z1)
	r1, _ := p1.Dims()
	g1 := mat.NewDense(r1, k.Dim(), nil)
	if z2 == z1 && dz2 == dz1 {
		k.Kernel.MatrixGrad(dK, K, p1, p1, g1, g1, dparams)
		if dz1 != nil {
			k.addHalf(dz1, g1)
		}
		return
	}
	p2 := k.plain(z2)
	r2, _ := p2.Dims()
	g2 := mat.NewDense(r2, k.Dim(), nil)
	k.Kernel.MatrixGrad(dK, K, p1, p2, g1, g2, dparams)
	if dz1 != nil {
		k.addHalf(dz1, g1)
	}
	if dz2 != nil {
		k.addHalf(dz2, g2)
	}
}

func (k halvedInducing) Matrix(dst *mat.Dense, z, x mat.Matrix) {
	k.Kernel.Matrix(dst, k.plain(z), x)
}

func (k halvedInducing) MatrixGrad(dK, K *mat.Dense, z, x mat.Matrix, dz, dx *mat.Dense, dparams []float64) {
	p := k.plain(z)
	r, _ := p.Dims()
	g := mat.NewDense(r, k.Dim(), nil)
	k.Kernel.MatrixGrad(dK, K, p, x, g, dx, dparams)
	if dz != nil {
		k.addHalf(dz, g)
	}
}

// lift stores the inducing inputs z as (2z, t) with random t.
func lift(z *mat.Dense, rng *rand.Rand) *mat.Dense {
	r, c := z.Dims()
	out := mat.NewDense(r, c+1, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out.Set(i, j, 2*z.At(i, j))
		}
		out.Set(i, c, rng.NormFloat64())
	}
	return out
}

// TestInterDomainMatchesPlain checks that the model dispatches every
// inducing-inducing covariance to InducingMatrix and every inducing-data
// covariance to Matrix, and sizes Z and O by InducingDim: the bound, its
// gradient and the predictions of a model with an inter-domain wrapper of a
// plain kernel equal those of the plain model.
func TestInterDomainMatchesPlain(t *testing.T) {
	for _, c := range allCases() {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			const d, m, m2, n = 2, 4, 3, 7
			plain := buildModel(t, c, rng, d, m, m2)
			ik := halvedInducing{plain.kern}
			zl := lift(plain.Z(), rng)
			var ol *mat.Dense
			if plain.o != nil {
				ol = lift(plain.O(), rng)
			}
			opts := []Option{WithWhitening(c.whiten), WithKuuJitter(plain.cfg.kuuJitter), WithCvvJitter(plain.cfg.cvvJitter)}
			if c.sample > 0 {
				opts = append(opts, WithColumnSample(c.sample))
			}
			var inter *Model
			var err error
			inter, err = newOfKind(c.kind, ik, plain.lik, zl, ol, opts...)
			if err != nil {
				t.Fatal(err)
			}
			// Copy the variational parameters of the plain model.
			pl, il := plain.Layout(), inter.Layout()
			tp := make([]float64, plain.NumParams())
			ti := make([]float64, inter.NumParams())
			plain.Params(tp)
			inter.Params(ti)
			if len(ti)-il.MU[0] != len(tp)-pl.MU[0] {
				t.Fatalf("variational blocks differ in size: %d vs %d", len(ti)-il.MU[0], len(tp)-pl.MU[0])
			}
			copy(ti[il.MU[0]:], tp[pl.MU[0]:])
			if err := inter.SetParams(ti); err != nil {
				t.Fatal(err)
			}

			x := randDense(rng, n, d, -2.5, 2.5)
			y := make([]float64, n)
			for i := range y {
				y[i] = math.Round(2 + 2*math.Sin(x.At(i, 0)))
			}
			gp := make([]float64, plain.NumParams())
			gi := make([]float64, inter.NumParams())
			plain.resetRNG()
			inter.resetRNG()
			fp, err := plain.Objective(x, y, 20, gp)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := inter.Objective(x, y, 20, gi)
			if err != nil {
				t.Fatal(err)
			}
			close := func(what string, a, b float64) {
				t.Helper()
				if math.Abs(a-b) > 1e-11*math.Max(1, math.Abs(b)) {
					t.Errorf("%s: inter-domain %.15g, plain %.15g", what, a, b)
				}
			}
			close("bound", fi, fp)
			for i := 0; i < pl.Z; i++ {
				close("kernel/likelihood gradient", gi[i], gp[i])
			}
			for i := 0; i < m+m2; i++ {
				if i >= m && plain.o == nil {
					break
				}
				for j := 0; j < d; j++ {
					close("inducing gradient", gi[il.Z+i*(d+1)+j], gp[pl.Z+i*d+j]/2)
				}
				if v := gi[il.Z+i*(d+1)+d]; v != 0 {
					t.Errorf("gradient %v for an unused inducing column", v)
				}
			}
			for i := range gp[pl.MU[0]:] {
				close("variational gradient", gi[il.MU[0]+i], gp[pl.MU[0]+i])
			}
			// Input gradients through Forward/Backward.
			mu := make([]float64, n*plain.nl)
			vr := make([]float64, n*plain.nl)
			mu2 := make([]float64, n*plain.nl)
			vr2 := make([]float64, n*plain.nl)
			plain.resetRNG()
			inter.resetRNG()
			if _, _, err := plain.Forward(x, mu, vr); err != nil {
				t.Fatal(err)
			}
			if _, _, err := inter.Forward(x, mu2, vr2); err != nil {
				t.Fatal(err)
			}
			for i := range mu {
				close("forward mean", mu2[i], mu[i])
				close("forward variance", vr2[i], vr[i])
			}
			dmu := make([]float64, len(mu))
			dvr := make([]float64, len(mu))
			for i := range dmu {
				dmu[i], dvr[i] = rng.NormFloat64(), rng.NormFloat64()
			}
			dxp, dxi := mat.NewDense(n, d, nil), mat.NewDense(n, d, nil)
			if err := plain.Backward(dmu, dvr, -1, make([]float64, plain.NumParams()), dxp); err != nil {
				t.Fatal(err)
			}
			if err := inter.Backward(dmu, dvr, -1, make([]float64, inter.NumParams()), dxi); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				for j := 0; j < d; j++ {
					close("input gradient", dxi.At(i, j), dxp.At(i, j))
				}
			}
			// Predictions.
			pp, err := plain.Predictor(0)
			if err != nil {
				t.Fatal(err)
			}
			pi, err := inter.Predictor(0)
			if err != nil {
				t.Fatal(err)
			}
			mp, vp, err := pp.PredictF(x)
			if err != nil {
				t.Fatal(err)
			}
			mi, vi, err := pi.PredictF(x)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				for l := 0; l < plain.nl; l++ {
					close("predictive mean", mi.At(i, l), mp.At(i, l))
					close("predictive variance", vi.At(i, l), vp.At(i, l))
				}
			}
			if _, err := pi.JointCov(x, 0); err == nil {
				t.Error("JointCov of an inter-domain model: no error")
			}
			if d2, _, _, _ := inter.Dims(); d2 != d {
				t.Errorf("Dims reports input dimension %d, want %d", d2, d)
			}
		})
	}
}

// TestInterDomainShapes checks that inducing inputs are validated against
// InducingDim and data inputs against Dim.
func TestInterDomainShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ik := halvedInducing{newRefRBF(2, 1)}
	if _, err := NewSVGP(ik, &refGauss{}, randDense(rng, 3, 2, -1, 1)); err == nil {
		t.Error("Z with Dim columns accepted for an inter-domain kernel")
	}
	mod, err := NewSVGP(ik, &refGauss{}, randDense(rng, 3, 3, -1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mod.Objective(randDense(rng, 4, 3, -1, 1), make([]float64, 4), 4, nil); err == nil {
		t.Error("inputs with InducingDim columns accepted")
	}
	if _, err := mod.Objective(randDense(rng, 4, 2, -1, 1), make([]float64, 4), 4, nil); err != nil {
		t.Error(err)
	}
}
