package gp

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
)

type opKey struct {
	c    OpClass
	dims [3]int
}

func forwardOps(cp CostProfile) []opKey {
	var ks []opKey
	for _, op := range cp.Ops {
		if op.Pass == Forward {
			ks = append(ks, opKey{op.Class, op.Dims})
		}
	}
	return ks
}

func sortKeys(ks []opKey) {
	slices.SortFunc(ks, func(a, b opKey) int {
		if a.c != b.c {
			return int(a.c) - int(b.c)
		}
		for i := 0; i < 3; i++ {
			if a.dims[i] != b.dims[i] {
				return a.dims[i] - b.dims[i]
			}
		}
		return 0
	})
}

// TestTable3 asserts that the forward bound of unwhitened SVGP and
// SOLVE-GP with a Gaussian likelihood performs exactly the cubic-cost
// operations of Table 3, and that the whitened forms perform the documented
// subsets.
func TestTable3(t *testing.T) {
	const d, M, M2, N = 2, 7, 5, 11
	mm := func(m, n, k int) opKey { return opKey{MatMul, [3]int{m, n, k}} }
	ch := func(n int) opKey { return opKey{Cholesky, [3]int{n, n, n}} }
	ts := func(m, n int) opKey { return opKey{TriSolve, [3]int{m, n, m}} }
	cases := []struct {
		kind   Kind
		whiten bool
		want   []opKey
	}{
		// SVGP: O(NM²) matmul ×1 (F = Luᵀ·E), Cholesky M³ ×1, triangular
		// solves M³ ×1 (L0u⁻¹·Lu) and NM² ×2 (B, E).
		{SVGP, false, []opKey{mm(M, N, M), ch(M), ts(M, M), ts(M, N), ts(M, N)}},
		// SOLVE-GP: matmuls NM², NM₂², NMM₂ (AᵀB), MM₂² (AᵀA); Choleskys
		// M³, M₂³; solves M³, NM² ×2, M₂³, NM₂² ×2, M₂M².
		{SOLVEGP, false, []opKey{
			mm(M, N, M), mm(M2, N, M2), mm(M2, N, M), mm(M2, M2, M),
			ch(M), ch(M2),
			ts(M, M), ts(M, N), ts(M, N), ts(M2, M2), ts(M2, N), ts(M2, N), ts(M, M2)}},
		// Whitened SVGP: F = Luᵀ·B, Cholesky, B = L0u⁻¹·Kuf.
		{SVGP, true, []opKey{mm(M, N, M), ch(M), ts(M, N)}},
		// Whitened SOLVE-GP: no E, G, and no solves with the variational
		// factors.
		{SOLVEGP, true, []opKey{
			mm(M, N, M), mm(M2, N, M2), mm(M2, N, M), mm(M2, M2, M),
			ch(M), ch(M2), ts(M, N), ts(M2, N), ts(M, M2)}},
		// ODVGP: the orthogonal block adds no cubic operation.
		{ODVGP, false, []opKey{mm(M, N, M), ch(M), ts(M, M), ts(M, N), ts(M, N)}},
	}
	for _, c := range cases {
		rng := rand.New(rand.NewPCG(21, 22))
		mod := buildModel(t, gradCase{kind: c.kind, whiten: c.whiten, lik: "gauss"}, rng, d, M, M2)
		x, y := problem(10, N, d)
		if _, err := mod.Objective(x, y, 100, nil); err != nil {
			t.Fatal(err)
		}
		got := forwardOps(mod.LastProfile())
		sortKeys(got)
		sortKeys(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("%v whiten=%v: forward operations\n got  %v\n want %v", c.kind, c.whiten, got, c.want)
		}
		// The gradient appends backward operations and keeps the forward ones.
		g := make([]float64, mod.NumParams())
		if _, err := mod.Objective(x, y, 100, g); err != nil {
			t.Fatal(err)
		}
		cp := mod.LastProfile()
		if len(forwardOps(cp)) != len(c.want) || cp.Flops(Backward) == 0 {
			t.Errorf("%v whiten=%v: profile with gradient has %d forward ops, %g backward flops", c.kind, c.whiten, len(forwardOps(cp)), cp.Flops(Backward))
		}
		if cp.Summary() == "" || cp.String() == "" {
			t.Error("empty profile summary")
		}
	}
}

// TestBadInputs checks that bad shapes, NaN/Inf values and invalid
// settings give errors, not panics.
func TestBadInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	k := newRefRBF(2, 1, 1, 1)
	lik := &refGauss{}
	z := randDense(rng, 4, 2, -1, 1)
	o := randDense(rng, 3, 2, -1, 1)
	if _, err := NewSVGP(k, lik, randDense(rng, 4, 3, 0, 1)); !errors.Is(err, ErrShape) {
		t.Errorf("wrong Z width: %v", err)
	}
	bad := mat.DenseCopyOf(z)
	bad.Set(1, 1, math.NaN())
	if _, err := NewSVGP(k, lik, bad); !errors.Is(err, ErrValue) {
		t.Errorf("NaN in Z: %v", err)
	}
	if _, err := NewSOLVEGP(k, lik, z, nil); err == nil {
		t.Error("SOLVE-GP without O accepted")
	}
	if _, err := NewSOLVEGP(k, lik, z, randDense(rng, 3, 1, 0, 1)); !errors.Is(err, ErrShape) {
		t.Errorf("wrong O width: %v", err)
	}
	if _, err := NewSVGP(k, lik, z, WithColumnSample(3)); err == nil {
		t.Error("column sampling accepted for SVGP")
	}
	if _, err := NewSVGP(k, lik, z, WithKuuJitter(chol.JitterPolicy{MaxTries: 2, Start: -1})); err == nil {
		t.Error("invalid jitter policy accepted")
	}
	// Duplicate inducing points without jitter: not positive definite.
	dup := mat.NewDense(3, 2, []float64{0, 0, 0, 0, 1, 1})
	_, err := NewSVGP(k, lik, dup, WithKuuJitter(chol.NoJitter()))
	var npd *chol.NotPositiveDefiniteError
	if !errors.As(err, &npd) {
		t.Errorf("duplicate Z without jitter: %v", err)
	}
	// With the default policy the jitter is used and reported.
	mod, err := NewSVGP(k, lik, dup)
	if err != nil {
		t.Fatal(err)
	}
	x, y := problem(11, 5, 2)
	if _, err := mod.Objective(x, y, 5, nil); err != nil || mod.LastTerms().JitterUU <= 0 {
		t.Errorf("jitter not reported: %v %+v", err, mod.LastTerms())
	}
	// Orthogonal point on an inducing point: C_vv singular.
	so, err := NewSOLVEGP(k, lik, z, mat.DenseCopyOf(z.Slice(0, 2, 0, 2)), WithCvvJitter(chol.NoJitter()))
	if err == nil {
		if _, err2 := so.Objective(x, y, 5, nil); !errors.As(err2, &npd) {
			t.Errorf("singular C_vv: %v", err2)
		}
	} else if !errors.As(err, &npd) {
		t.Errorf("singular C_vv at construction: %v", err)
	}

	mod, err = NewSOLVEGP(k, lik, z, o)
	if err != nil {
		t.Fatal(err)
	}
	g := make([]float64, mod.NumParams())
	if _, err := mod.Objective(randDense(rng, 5, 3, 0, 1), y, 5, g); !errors.Is(err, ErrShape) {
		t.Errorf("wrong x width: %v", err)
	}
	xb := mat.DenseCopyOf(x)
	xb.Set(2, 0, math.Inf(1))
	if _, err := mod.Objective(xb, y, 5, g); !errors.Is(err, ErrValue) {
		t.Errorf("Inf in x: %v", err)
	}
	if _, err := mod.Objective(x, y[:4], 5, g); !errors.Is(err, ErrShape) {
		t.Errorf("short y: %v", err)
	}
	yb := append([]float64(nil), y...)
	yb[0] = math.NaN()
	if _, err := mod.Objective(x, yb, 5, g); !errors.Is(err, ErrValue) {
		t.Errorf("NaN in y: %v", err)
	}
	if _, err := mod.Objective(x, y, 0, g); !errors.Is(err, ErrValue) {
		t.Errorf("nTotal 0: %v", err)
	}
	if _, err := mod.Objective(x, y, 5, g[:3]); !errors.Is(err, ErrShape) {
		t.Errorf("short grad: %v", err)
	}
	th := make([]float64, mod.NumParams())
	mod.Params(th)
	if err := mod.SetParams(th[:5]); !errors.Is(err, ErrShape) {
		t.Errorf("short params: %v", err)
	}
	th2 := append([]float64(nil), th...)
	th2[len(th2)-1] = math.NaN()
	if err := mod.SetParams(th2); !errors.Is(err, ErrValue) {
		t.Errorf("NaN params: %v", err)
	}
	chk := make([]float64, len(th))
	mod.Params(chk)
	if !slices.Equal(chk, th) {
		t.Error("failed SetParams modified the model")
	}
	mu := make([]float64, 5)
	if _, _, err := mod.Forward(x, mu, mu[:4]); !errors.Is(err, ErrShape) {
		t.Errorf("short marginals: %v", err)
	}
	if err := (&Model{}).Backward(nil, nil, -1, nil, nil); err == nil {
		t.Error("Backward without Forward accepted")
	}
	if _, _, err := mod.Forward(x, mu, make([]float64, 5)); err != nil {
		t.Fatal(err)
	}
	if err := mod.Backward(mu, mu, -1, g, mat.NewDense(4, 2, nil)); !errors.Is(err, ErrShape) {
		t.Errorf("wrong dx: %v", err)
	}
	p, err := mod.Predictor(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.PredictF(xb); !errors.Is(err, ErrValue) {
		t.Errorf("predict Inf: %v", err)
	}
	if _, err := p.LogPredictive(x, y[:2]); !errors.Is(err, ErrShape) {
		t.Errorf("predict short y: %v", err)
	}
	if _, err := p.JointCov(x, 3); !errors.Is(err, ErrShape) {
		t.Errorf("JointCov bad latent: %v", err)
	}
}

// TestCvvJitterRelativeToKvv: with O = Z exactly, C_vv is zero up to
// rounding; the default policy must still factorize it, because its jitter
// is relative to K_vv's diagonal, and it must report the jitter used.
func TestCvvJitterRelativeToKvv(t *testing.T) {
	for _, w := range []bool{false, true} {
		z := mat.NewDense(5, 1, []float64{-2, -1, 0, 1, 2})
		mod, err := NewSOLVEGP(newRefRBF(1, 1, 2), &refGauss{logVar: math.Log(0.1)}, z, mat.DenseCopyOf(z), WithWhitening(w))
		if err != nil {
			t.Fatalf("whiten=%v: %v", w, err)
		}
		x, y := problem(13, 30, 1)
		g := make([]float64, mod.NumParams())
		if _, err := mod.Objective(x, y, 30, g); err != nil {
			t.Fatalf("whiten=%v: %v", w, err)
		}
		if j := mod.LastTerms().JitterVV; !(j > 1e-12) {
			t.Errorf("whiten=%v: C_vv jitter %g, want a jitter relative to K_vv", w, j)
		}
		if _, err := mod.Predictor(0); err != nil {
			t.Errorf("whiten=%v: predictor: %v", w, err)
		}
	}
}
