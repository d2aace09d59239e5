package collapsed

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/train"
)

func TestPredictSGPRExact(t *testing.T) {
	x, y := toyData(20, 11)
	xs, _ := toyData(7, 12)
	k := newKernel(t, 1, 1)
	s := 0.05
	md, err := New(k, newNoise(t, s), x, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	post, err := md.Posterior(x, y)
	if err != nil {
		t.Fatal(err)
	}
	mean, variance := make([]float64, 7), make([]float64, 7)
	if err := post.Predict(xs, mean, variance); err != nil {
		t.Fatal(err)
	}
	// Exact GP: K*f (K + sI)⁻¹ y and k** − K*f (K + sI)⁻¹ Kf*.
	kinv := inv(addDiag(kmat(k, x, x), s))
	ksf := kmat(k, xs, x)
	var wm mat.VecDense
	wm.MulVec(mul(ksf, kinv), mat.NewVecDense(20, y))
	cov := sub(kmat(k, xs, xs), mul(ksf, mul(kinv, ksf.T())))
	for i := 0; i < 7; i++ {
		if math.Abs(mean[i]-wm.AtVec(i)) > 1e-8 || math.Abs(variance[i]-cov.At(i, i)) > 1e-8 {
			t.Errorf("point %d: mean %v var %v, exact %v %v", i, mean[i], variance[i], wm.AtVec(i), cov.At(i, i))
		}
	}
	if post.NoiseVariance() != md.Likelihood().NoiseVariance() {
		t.Error("noise variance")
	}
}

func TestPredictSolveGPDense(t *testing.T) {
	x, y := toyData(30, 13)
	xs, _ := toyData(9, 14)
	rng := rand.New(rand.NewPCG(15, 15))
	z := randMat(rng, 4, 2, 1)
	o := randMat(rng, 5, 2, 1)
	k := newKernel(t, 0.8, 1.2)
	s := 0.03
	md, err := New(k, newNoise(t, s), z, o, Options{})
	if err != nil {
		t.Fatal(err)
	}
	post, err := md.Posterior(x, y)
	if err != nil {
		t.Fatal(err)
	}
	mean, variance := make([]float64, 9), make([]float64, 9)
	if err := post.Predict(xs, mean, variance); err != nil {
		t.Fatal(err)
	}

	// Dense reference with the optimal q(u) given q*(v⊥) (App. C and D).
	p := denseParts(k, s, z, o, x)
	mv, sv := p.optimum(y)
	cinv := inv(p.cvv)
	var mf mat.VecDense
	mf.MulVec(mul(p.cfv, cinv), mat.NewVecDense(5, mv))
	kuu, kuf, kuv := kmat(k, z, z), kmat(k, z, x), kmat(k, z, o)
	kuuInv := inv(kuu)
	sig := inv(func() *mat.Dense {
		a := mul(kuf, kuf.T())
		a.Scale(1/s, a)
		a.Add(a, kuu)
		return a
	}())
	r := mat.NewVecDense(30, nil)
	for i := range y {
		r.SetVec(i, y[i]-mf.AtVec(i))
	}
	var mu mat.VecDense
	mu.MulVec(mul(kuu, mul(sig, kuf)), r)
	mu.ScaleVec(1/s, &mu)
	su := mul(kuu, mul(sig, kuu))
	ksu, ksv := kmat(k, xs, z), kmat(k, xs, o)
	csv := sub(ksv, mul(ksu, mul(kuuInv, kuv)))
	css := sub(kmat(k, xs, xs), mul(ksu, mul(kuuInv, ksu.T())))
	var m1, m2 mat.VecDense
	m1.MulVec(mul(ksu, kuuInv), &mu)
	m2.MulVec(mul(csv, cinv), mat.NewVecDense(5, mv))
	v1 := mul(ksu, mul(kuuInv, mul(su, mul(kuuInv, ksu.T()))))
	v3 := mul(csv, mul(cinv, mul(sub(sv, p.cvv), mul(cinv, csv.T()))))
	for i := 0; i < 9; i++ {
		wm := m1.AtVec(i) + m2.AtVec(i)
		wv := v1.At(i, i) + css.At(i, i) + v3.At(i, i)
		if math.Abs(mean[i]-wm) > 1e-8*math.Max(1, math.Abs(wm)) || math.Abs(variance[i]-wv) > 1e-8 {
			t.Errorf("point %d: mean %v var %v, dense %v %v", i, mean[i], variance[i], wm, wv)
		}
	}

	// Concurrent prediction gives the same answers (run under -race in CI).
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, v := make([]float64, 9), make([]float64, 9)
			if err := post.Predict(xs, m, v); err != nil {
				t.Error(err)
				return
			}
			for i := range m {
				if m[i] != mean[i] || v[i] != variance[i] {
					t.Error("concurrent prediction differs")
					return
				}
			}
		}()
	}
	wg.Wait()

	if err := post.Predict(xs, make([]float64, 3), nil); err == nil {
		t.Error("short mean accepted")
	}
	if err := post.Predict(mat.NewDense(2, 3, nil), make([]float64, 2), nil); err == nil {
		t.Error("wrong width accepted")
	}
}

func TestFitImprovesAndConverges(t *testing.T) {
	x, y := toyData(150, 16)
	rng := rand.New(rand.NewPCG(17, 17))
	z := randMat(rng, 8, 2, 1)
	o := randMat(rng, 8, 2, 1)
	for _, c := range []struct {
		name string
		o    *mat.Dense
	}{{"SGPR", nil}, {"SOLVE-GP", o}} {
		t.Run(c.name, func(t *testing.T) {
			md, err := New(newKernel(t, 1, 1), newNoise(t, 0.1), z, c.o, Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := md.Fit(context.Background(), x, y, train.LBFGSOptions{MaxIter: 500})
			if err != nil {
				t.Fatal(err)
			}
			if !(res.Bound > res.Initial+10) {
				t.Errorf("bound %v from %v", res.Bound, res.Initial)
			}
			g := make([]float64, md.NumParams())
			f, err := md.BoundGrad(x, y, g)
			if err != nil || f != res.Bound {
				t.Errorf("model left at bound %v, result %v (%v)", f, res.Bound, err)
			}
			var gmax float64
			for _, v := range g {
				gmax = math.Max(gmax, math.Abs(v))
			}
			if gmax > 1e-2 {
				t.Errorf("gradient %v after %d iterations (%s)", gmax, res.Iterations, res.Reason)
			}
			t.Logf("%s: bound %.4f → %.4f, %d iterations, %d evaluations, |grad|∞ %.2g, %s", c.name, res.Initial, res.Bound, res.Iterations, res.Evaluations, gmax, res.Reason)
		})
	}
}
