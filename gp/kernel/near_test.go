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

// TestRefineNearWindow checks that refineNear's search by norm finds every
// pair that a scan of all entries with the same criterion would refine:
// pairs at separations from 1e-9 to 1e-3 (around the threshold), points of
// one common norm (every column in the window) and a row at the origin.
func TestRefineNearWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, d := range []int{1, 3, 8} {
		const n, m = 40, 50
		xs := make([]float64, n*d)
		zs := make([]float64, m*d)
		for i := range xs {
			xs[i] = 10 * rng.NormFloat64()
		}
		for i := range zs {
			zs[i] = 10 * rng.NormFloat64()
		}
		for j := 0; j < 30; j++ {
			i := rng.IntN(n - 1)
			sep := math.Pow(10, -9+6*rng.Float64())
			for k := 0; k < d; k++ {
				zs[j*d+k] = xs[i*d+k] + sep*rng.NormFloat64()
			}
		}
		// Rows 30..35 of x and columns 40..45 of z on one sphere.
		for i := 30; i < 46; i++ {
			var dst []float64
			if i < 36 {
				dst = xs[i*d : i*d+d]
			} else {
				dst = zs[(i-36+40)*d : (i-36+40)*d+d]
			}
			s := 0.0
			for k := range dst {
				dst[k] = rng.NormFloat64()
				s += dst[k] * dst[k]
			}
			for k := range dst {
				dst[k] *= 5 / math.Sqrt(s)
			}
		}
		clear(xs[(n-1)*d:]) // the origin
		nx, nz := make([]float64, n), make([]float64, m)
		rowSqNorms(nx, xs, d)
		rowSqNorms(nz, zs, d)
		for _, j0 := range []int{0, 17} {
			dr := distRows{xs: xs, zs: zs, nx: nx, nz: nz, d: d}
			dr.prepare(make([]float64, n*(d+2)), make([]float64, m*(d+2)))
			got := make([]float64, n*m)
			dr.rows(got, m, 0, n, j0, m)
			dr.release()
			want := make([]float64, n*m)
			dr.sqDistProduct(want, m, 0, n, j0, m)
			tau := nearRefine * float64(d+2)
			refined := 0
			for i := 0; i < n; i++ {
				for j := j0; j < m; j++ {
					if v := want[i*m+j]; v < tau*(nx[i]+nz[j]) {
						want[i*m+j] = directSqDist(xs[i*d:i*d+d], zs[j*d:j*d+d])
						refined++
					}
				}
			}
			for i := 0; i < n; i++ {
				for j := j0; j < m; j++ {
					if got[i*m+j] != want[i*m+j] {
						t.Fatalf("d=%d j0=%d: s[%d][%d] = %g, a full scan gives %g", d, j0, i, j, got[i*m+j], want[i*m+j])
					}
				}
			}
			if refined == 0 {
				t.Fatalf("d=%d: no pair refined; the case does not exercise refineNear", d)
			}
		}
	}
}

// BenchmarkRefineNear measures refineNear's share of a kernel matrix: its
// sort and per-row searches over the distances of BenchmarkMatrix's
// 1024×1024, d = 8 cases (compare BenchmarkMatrix/RBF/cross/1024x1024 and
// /sym/1024 at -cpu 1).
func BenchmarkRefineNear(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n, m, d = 1024, 1024, 8
	k, _ := NewStationary(RBF, d, 1.2, 1, ARD())
	x := randDense(rng, n, d, 1)
	z := randDense(rng, m, d, 1)
	for _, same := range []bool{false, true} {
		xs, zs := make([]float64, n*d), make([]float64, m*d)
		nx, nz, shift := make([]float64, n), make([]float64, m), make([]float64, d)
		zs = k.prepInputs(x, z, same, xs, zs, shift, nx, nz)
		if same {
			nz = nx
		}
		dr := distRows{xs: xs, zs: zs, nx: nx, nz: nz, d: d}
		dr.prepare(make([]float64, n*(d+2)), make([]float64, m*(d+2)))
		s := make([]float64, n*m)
		dr.rows(s, m, 0, n, 0, m)
		dr.release()
		name := "cross"
		if same {
			name = "sym"
		}
		b.Run(name, func(b *testing.B) {
			cpu0 := processCPUTime()
			for i := 0; i < b.N; i++ {
				dr.prepareNear()
				for i0 := 0; i0 < n; i0 += rowChunk {
					j0 := 0
					if same {
						j0 = i0
					}
					dr.refineNear(s[i0*m:], m, i0, i0+rowChunk, j0, m)
				}
				dr.release()
			}
			b.ReportMetric(float64(processCPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
