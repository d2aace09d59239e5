package chol

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// randSPD returns a random n×n SPD matrix Q·D·Qᵀ (row-major, stride lda ≥ n,
// padding filled with NaN) whose eigenvalues are log-spaced from 1 to 1/cond.
func randSPD(rnd *rand.Rand, n, lda int, cond float64) []float64 {
	if n == 0 {
		return nil
	}
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, rnd.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	d := make([]float64, n)
	for i := range d {
		t := 0.0
		if n > 1 {
			t = float64(i) / float64(n-1)
		}
		d[i] = math.Pow(cond, -t)
	}
	// Q·D·Qᵀ, symmetrized exactly.
	var qd, qdq mat.Dense
	qd.Apply(func(_, j int, v float64) float64 { return v * d[j] }, &q)
	qdq.Mul(&qd, q.T())
	a := nanSlice((n-1)*lda + n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			s := qdq.At(i, j)
			a[i*lda+j] = s
			a[j*lda+i] = s
		}
	}
	return a
}

// nanSlice returns a slice of length n filled with NaN.
func nanSlice(n int) []float64 {
	s := make([]float64, max(n, 0))
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}

// randLower returns a random well-conditioned n×n lower-triangular matrix
// (stride n) with diagonal in [1, 2].
func randLower(rnd *rand.Rand, n int) []float64 {
	l := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			l[i*n+j] = rnd.NormFloat64() / math.Sqrt(float64(n))
		}
		l[i*n+i] = 1 + rnd.Float64()
	}
	return l
}

// gramLower returns A = L·Lᵀ for the n×n lower L (stride n), full storage.
func gramLower(n int, l []float64) []float64 {
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			var s float64
			for k := 0; k <= j; k++ {
				s += l[i*n+k] * l[j*n+k]
			}
			a[i*n+j] = s
			a[j*n+i] = s
		}
	}
	return a
}

// backwardError returns ‖L·Lᵀ − A‖_F / ‖A‖_F over the full symmetric A
// given by its lower triangle in (a, lda), with jitter added to diag(A).
func backwardError(n int, l []float64, ldl int, a []float64, lda int, jitter float64) float64 {
	var num, den float64
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			var s float64
			for k := 0; k <= j; k++ {
				s += l[i*ldl+k] * l[j*ldl+k]
			}
			aij := a[i*lda+j]
			if i == j {
				aij += jitter
			}
			w := 2.0
			if i == j {
				w = 1
			}
			num += w * (s - aij) * (s - aij)
			den += w * aij * aij
		}
	}
	return math.Sqrt(num / den)
}

// rbfMatrix returns the n×n RBF kernel matrix (stride n) of the points x
// (dim d, row-major) with lengthscale ell and unit variance.
func rbfMatrix(x []float64, n, d int, ell float64) []float64 {
	k := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			var r2 float64
			for t := 0; t < d; t++ {
				u := (x[i*d+t] - x[j*d+t]) / ell
				r2 += u * u
			}
			v := math.Exp(-0.5 * r2)
			k[i*n+j], k[j*n+i] = v, v
		}
	}
	return k
}

// matern52Matrix returns the n×n Matérn-5/2 kernel matrix of the points x.
func matern52Matrix(x []float64, n, d int, ell float64) []float64 {
	k := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			var r2 float64
			for t := 0; t < d; t++ {
				u := (x[i*d+t] - x[j*d+t]) / ell
				r2 += u * u
			}
			r := math.Sqrt(5 * r2)
			v := (1 + r + r*r/3) * math.Exp(-r)
			k[i*n+j], k[j*n+i] = v, v
		}
	}
	return k
}

// clusteredPoints returns n points in d dimensions drawn around a few
// cluster centres with small spread, so that kernel matrices are close to
// singular for long lengthscales.
func clusteredPoints(rnd *rand.Rand, n, d int) []float64 {
	const clusters = 4
	centres := make([]float64, clusters*d)
	for i := range centres {
		centres[i] = 10 * rnd.Float64()
	}
	x := make([]float64, n*d)
	for i := 0; i < n; i++ {
		c := rnd.IntN(clusters)
		for t := 0; t < d; t++ {
			x[i*d+t] = centres[c*d+t] + 0.05*rnd.NormFloat64()
		}
	}
	return x
}
