package convgp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestInducingBlocks checks the inducing × inducing covariances and their
// gradients with more rows than one block (inducingRows) and sizes that are
// not multiples of it, with last blocks of one, two and seven rows: values
// against the definition, gradients against finite differences (rows at
// both edges of every block), and the same bits for 1 to 4 workers.
func TestInducingBlocks(t *testing.T) {
	for _, tc := range []testCase{testCases()[0], testCases()[3]} {
		for _, size := range [][2]int{{2*inducingRows + 7, inducingRows + 3}, {2*inducingRows + 1, inducingRows + 2}} {
			t.Run(fmt.Sprintf("%s/%dx%d", tc.name, size[0], size[1]), func(t *testing.T) { testInducingBlocks(t, tc, size[0], size[1]) })
		}
	}
}

func testInducingBlocks(t *testing.T, tc testCase, M1, M2 int) {
	rng := rand.New(rand.NewPCG(11, 12))
	ks := make([]*Kernel, 4)
	for w := range ks {
		cfg := tc.cfg
		cfg.Workers = w + 1
		ks[w] = newTestKernel(t, cfg, rand.New(rand.NewPCG(13, 14)))
	}
	k := ks[0]
	z1, z2 := inducing(k, rng, M1), inducing(k, rng, M2)
	d := k.geom.PatchLen()
	for _, pair := range []struct {
		name   string
		a, b   *mat.Dense
		ra, rb int
	}{{"z1×z2", z1, z2, M1, M2}, {"z1×z1", z1, z1, M1, M1}} {
		K := make([]*mat.Dense, len(ks))
		for w, kw := range ks {
			K[w] = mat.NewDense(pair.ra, pair.rb, nil)
			kw.InducingMatrix(K[w], pair.a, pair.b)
		}
		for i := 0; i < pair.ra; i++ {
			for j := 0; j < pair.rb; j++ {
				a, b := pair.a.RawRowView(i), pair.b.RawRowView(j)
				want := bruteKg(k, a[:d], b[:d])
				if k.tick {
					want *= bruteKl(k, a[d], a[d+1], b[d], b[d+1])
				}
				if got := K[0].At(i, j); math.Abs(got-want) > 1e-12 {
					t.Fatalf("%s: K[%d,%d] = %v, want %v", pair.name, i, j, got, want)
				}
			}
		}
		for w := 1; w < len(ks); w++ {
			if !mat.Equal(K[0], K[w]) {
				t.Errorf("%s: InducingMatrix with %d workers differs from one", pair.name, w+1)
			}
		}
	}

	// J = <dA, K(z1, z2)> + <dB, K(z1, z1)>.
	dA, dB := randDense(rng, M1, M2), randDense(rng, M1, M1)
	theta := make([]float64, k.NumParams())
	k.Params(theta)
	type grads struct {
		dz1, dz2 *mat.Dense
		dp       []float64
	}
	gs := make([]grads, len(ks))
	for w, kw := range ks {
		g := grads{mat.NewDense(M1, k.InducingDim(), nil), mat.NewDense(M2, k.InducingDim(), nil), make([]float64, k.NumParams())}
		kw.InducingMatrixGrad(dA, nil, z1, z2, g.dz1, g.dz2, g.dp)
		kw.InducingMatrixGrad(dB, nil, z1, z1, g.dz1, g.dz1, g.dp)
		gs[w] = g
	}
	for w := 1; w < len(ks); w++ {
		if !mat.Equal(gs[0].dz1, gs[w].dz1) || !mat.Equal(gs[0].dz2, gs[w].dz2) {
			t.Errorf("inducing-point gradients with %d workers differ from one", w+1)
		}
		for i := range gs[0].dp {
			if gs[0].dp[i] != gs[w].dp[i] {
				t.Errorf("parameter gradient %d with %d workers: %v, one worker %v", i, w+1, gs[w].dp[i], gs[0].dp[i])
			}
		}
	}
	J := func() float64 {
		if err := k.SetParams(theta); err != nil {
			t.Fatal(err)
		}
		a, b := mat.NewDense(M1, M2, nil), mat.NewDense(M1, M1, nil)
		k.InducingMatrix(a, z1, z2)
		k.InducingMatrix(b, z1, z1)
		return mat.Sum(mulElem(dA, a)) + mat.Sum(mulElem(dB, b))
	}
	const h = 1e-6
	// The scalar kernel parameters (the weights do not enter K_uu).
	for i := 0; i < k.wOff(); i++ {
		checkClose(t, "param", gs[0].dp[i], fd(theta, i, h*math.Max(1, math.Abs(theta[i])), J))
	}
	// Every coordinate of the first and last row of each block of
	// z1 and z2.
	for _, zc := range []struct {
		name string
		z, g *mat.Dense
		rows int
	}{{"z1", z1, gs[0].dz1, M1}, {"z2", z2, gs[0].dz2, M2}} {
		zr := zc.z.RawMatrix().Data
		var rows []int
		for b := 0; b < inducingBlocks(zc.rows); b++ {
			r0, r1 := blockRows(b, zc.rows)
			rows = append(rows, r0, r1-1)
		}
		for _, r := range rows {
			for q := 0; q < k.InducingDim(); q++ {
				i := r*k.InducingDim() + q
				checkClose(t, zc.name, zc.g.RawMatrix().Data[i], fd(zr, i, h, J))
			}
		}
	}
}
