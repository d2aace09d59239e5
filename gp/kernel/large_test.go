package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// naiveGrad computes the gradients of Σ dK ⊙ k(x, z) element by element
// from dk/dr and ∂r/∂(x, z, ℓ) (no matrix-product identities), adding them
// into dx, dz and dls (constrained lengthscales) and returning the
// derivative with respect to the (constrained) variance.
func naiveGrad(k *Stationary, dK, x, z, dx, dz *mat.Dense, dls []float64) float64 {
	n, d := x.Dims()
	m, _ := z.Dims()
	ls := func(c int) float64 {
		if k.ard {
			return k.ls[c]
		}
		return k.ls[0]
	}
	dvar := 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			s := 0.0
			for c := 0; c < d; c++ {
				t := (x.At(i, c) - z.At(j, c)) / ls(c)
				s += t * t
			}
			r := math.Sqrt(s)
			kv := naiveK(k.family, k.ls, 1, x.RawRowView(i), z.RawRowView(j))
			dvar += dK.At(i, j) * kv
			// dk/dr / r (unit variance), with the r → 0 limit.
			var g float64
			switch k.family {
			case RBF:
				g = -math.Exp(-0.5 * s)
			case Matern12:
				if r > 0 {
					g = -math.Exp(-r) / r
				}
			case Matern32:
				g = -3 * math.Exp(-math.Sqrt(3)*r)
			case Matern52:
				g = -5.0 / 3 * (1 + math.Sqrt(5)*r) * math.Exp(-math.Sqrt(5)*r)
			}
			g *= k.variance * dK.At(i, j)
			for c := 0; c < d; c++ {
				l := ls(c)
				diff := x.At(i, c) - z.At(j, c)
				// ∂r/∂x = diff/(ℓ² r); times dk/dr = g r.
				dx.Set(i, c, dx.At(i, c)+g*diff/(l*l))
				dz.Set(j, c, dz.At(j, c)-g*diff/(l*l))
				// ∂r/∂ℓ_c = −diff²/(ℓ³ r).
				contrib := -g * diff * diff / (l * l * l)
				if k.ard {
					dls[c] += contrib
				} else {
					dls[0] += contrib
				}
			}
		}
	}
	return dvar
}

// TestStationaryLargeParallel exercises the chunked, parallel paths (many
// row chunks, rows wider than the micro-kernels' blocks, above the parallel
// threshold; the cross and the symmetric matrix) against element-by-element
// references.
func TestStationaryLargeParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const n, m, d = 530, 1100, 3
	x := randDense(rng, n, d, 1)
	z := randDense(rng, m, d, 1)
	for ci, tc := range allStationary(t, d) {
		if testing.Short() && ci%4 != 1 {
			continue // the race-detector run of CI: RBF and Matérn-3/2, ARD
		}
		k := tc.k
		var K, Ks mat.Dense
		k.Matrix(&K, x, z)
		k.Matrix(&Ks, x, x)
		for i := 0; i < n; i++ {
			for j := 0; j < m; j++ {
				want := naiveK(k.family, k.ls, k.variance, x.RawRowView(i), z.RawRowView(j))
				if got := K.At(i, j); math.Abs(got-want) > 1e-12 {
					t.Fatalf("%s: K[%d,%d] = %g, want %g", tc.name, i, j, got, want)
				}
			}
			for j := 0; j < n; j++ {
				want := naiveK(k.family, k.ls, k.variance, x.RawRowView(i), x.RawRowView(j))
				if got := Ks.At(i, j); math.Abs(got-want) > 1e-12 || got != Ks.At(j, i) {
					t.Fatalf("%s: Ks[%d,%d] = %g, want %g", tc.name, i, j, got, want)
				}
			}
		}
		for _, sym := range []bool{false, true} {
			zz, KK, mm := z, &K, m
			if sym {
				zz, KK, mm = x, &Ks, n
			}
			dK := randDense(rng, n, mm, 1)
			dx := mat.NewDense(n, d, nil)
			dz := mat.NewDense(mm, d, nil)
			dp := make([]float64, k.NumParams())
			if sym {
				k.MatrixGrad(dK, KK, x, zz, dx, dx, dp)
			} else {
				k.MatrixGrad(dK, KK, x, zz, dx, dz, dp)
			}
			wx := mat.NewDense(n, d, nil)
			wz := mat.NewDense(mm, d, nil)
			wls := make([]float64, len(k.ls))
			wvar := naiveGrad(k, dK, x, zz, wx, wz, wls)
			if sym {
				wx.Add(wx, wz)
			}
			scale := mat.Norm(dK, 1)
			cmp := func(what string, got, want float64) {
				if math.Abs(got-want) > 1e-11*scale {
					t.Errorf("%s sym=%v: %s = %.15g, reference %.15g", tc.name, sym, what, got, want)
				}
			}
			for i := 0; i < n; i++ {
				for c := 0; c < d; c++ {
					cmp("dx", dx.At(i, c), wx.At(i, c))
				}
			}
			if !sym {
				for j := 0; j < m; j++ {
					for c := 0; c < d; c++ {
						cmp("dz", dz.At(j, c), wz.At(j, c))
					}
				}
			}
			nls := len(k.ls)
			for c := 0; c < nls; c++ {
				cmp("dls", dp[c], wls[c]*sp(k.u[c]))
			}
			cmp("dvar", dp[nls], wvar*sp(k.u[nls]))
		}
	}
}

func sp(u float64) float64 { return 1 / (1 + math.Exp(-u)) }
