package kernel

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// exactSqDist returns ‖(a − b)/ℓ‖² of float64 rows, computed in 200-bit
// arithmetic and rounded once.
func exactSqDist(a, b []float64, ls float64) float64 {
	const prec = 200
	s := new(big.Float).SetPrec(prec)
	l := new(big.Float).SetPrec(prec).SetFloat64(ls)
	for k := range a {
		t := new(big.Float).SetPrec(prec).SetFloat64(a[k])
		t.Sub(t, new(big.Float).SetPrec(prec).SetFloat64(b[k]))
		t.Quo(t, l)
		s.Add(s, t.Mul(t, t))
	}
	v, _ := s.Float64()
	return v
}

// TestNearCoincidentAccuracy places rows of z within 1e-7 lengthscales of
// rows of x, among inputs spread over tens of lengthscales (so that the
// squared norms in ‖x‖² + ‖z‖² − 2xᵀz are ~10³), and checks that every
// family's covariances of those pairs, in Matrix (cross and symmetric),
// match values computed from exactly rounded distances to a few ulps —
// for the Matérn 1/2 profile, whose 1 − k ≈ r is the quantity a difference
// of covariances keeps, to 1e-7 relative to r. The expansion alone gives
// absolute errors of ~1e-12 in r² here, i.e. relative errors of ~100% in
// r² ≈ 1e-14.
func TestNearCoincidentAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 73))
	const d, ls = 8, 0.7
	for _, sz := range []struct{ n, m int }{{6, 5}, {300, 200}} {
		x := randDense(rng, sz.n, d, 15*ls)
		z := randDense(rng, sz.m, d, 15*ls)
		type pair struct{ i, j int }
		var near []pair
		for _, j := range rng.Perm(sz.m)[:min(4, sz.m)] {
			i := rng.IntN(sz.n)
			xr, zr := x.RawRowView(i), z.RawRowView(j)
			for k := range zr {
				zr[k] = xr[k] + ls*1e-7*rng.NormFloat64()/math.Sqrt(d)
			}
			near = append(near, pair{i, j})
		}
		// Two rows of x near each other, for the symmetric matrix.
		xr0, xr1 := x.RawRowView(0), x.RawRowView(1)
		for k := range xr1 {
			xr1[k] = xr0[k] + ls*1e-7*rng.NormFloat64()/math.Sqrt(d)
		}
		for _, f := range []Family{RBF, Matern12, Matern32, Matern52} {
			k, err := NewStationary(f, d, ls, 1)
			if err != nil {
				t.Fatal(err)
			}
			check := func(what string, got float64, a, b []float64) {
				t.Helper()
				s := exactSqDist(a, b, ls)
				want := naiveKFromSq(f, s)
				tol := 4e-16
				if f == Matern12 {
					// 1 − k ≈ r, whose relative error from the rounding of
					// the scaled inputs x/ℓ is ~ε·‖x/ℓ‖/r ≈ 3e-8 here.
					tol += 1e-7 * math.Sqrt(s)
				}
				if math.Abs(got-want) > tol {
					t.Errorf("%v %dx%d %s: k = %.17g, want %.17g (r² = %.3g, error %.2g)", f, sz.n, sz.m, what, got, want, s, got-want)
				}
			}
			var K, S mat.Dense
			k.Matrix(&K, x, z)
			for _, p := range near {
				check("cross", K.At(p.i, p.j), x.RawRowView(p.i), z.RawRowView(p.j))
			}
			k.Matrix(&S, x, x)
			check("symmetric", S.At(0, 1), xr0, xr1)
			check("symmetric (mirrored)", S.At(1, 0), xr0, xr1)
		}
	}
}

// naiveKFromSq returns the unit-variance profile at squared distance s.
func naiveKFromSq(f Family, s float64) float64 {
	r := math.Sqrt(s)
	switch f {
	case Matern12:
		return math.Exp(-r)
	case Matern32:
		return (1 + math.Sqrt(3)*r) * math.Exp(-math.Sqrt(3)*r)
	case Matern52:
		return (1 + math.Sqrt(5)*r + 5*s/3) * math.Exp(-math.Sqrt(5)*r)
	}
	return math.Exp(-s / 2)
}
