package chol

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/solvegp/solvegp/blas"
)

// TestRowPasses checks every elementwise pass of the congruence, split
// over 1 to 5 goroutines, bit for bit against a plain loop, on sizes above
// rowParMin that are not multiples of the tile order, with padded strides.
func TestRowPasses(t *testing.T) {
	rnd := rand.New(rand.NewPCG(41, 42))
	randMat := func(r, c, ld int) []float64 {
		a := make([]float64, (r-1)*ld+c)
		for i := range a {
			a[i] = rnd.NormFloat64()
		}
		return a
	}
	same := func(name string, parts int, got, want []float64) {
		t.Helper()
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%s, %d goroutines: element %d = %v, want %v", name, parts, i, got[i], want[i])
			}
		}
	}
	const r, c, n = 301, 237, 333
	if r*c < rowParMin || n*n/2 < rowParMin {
		t.Fatal("sizes too small to split the passes")
	}
	for threads := 1; threads <= 5; threads++ {
		bi := blas.Implementation{Threads: threads}
		if got := rowParts(bi, n, n*n/2); got != threads {
			t.Fatalf("rowParts = %d, want %d", got, threads)
		}

		// Mirror of the strict lower triangle.
		a := randMat(n, n, n+1)
		want := append([]float64(nil), a...)
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				want[j*(n+1)+i] = want[i*(n+1)+j]
			}
		}
		mirrorStrictLower(bi, n, a, n+1)
		same("mirror", threads, a, want)

		// Scale.
		a = randMat(r, c, c+2)
		want = append([]float64(nil), a...)
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				want[i*(c+2)+j] *= 0.75
			}
		}
		rowPassRun(bi, passScale, false, r, c, a, c+2, nil, 0, 0.75)
		same("scale", threads, a, want)

		// V and Z.
		w := randMat(r, c, c+4)
		u := randMat(r, c, c)
		wantW, wantU := append([]float64(nil), w...), append([]float64(nil), u...)
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				v := wantW[i*(c+4)+j] - wantU[i*c+j]
				wantW[i*(c+4)+j] = v
				wantU[i*c+j] = 0.5*wantU[i*c+j] + v
			}
		}
		rowPassRun(bi, passVZ, false, r, c, w, c+4, u, c, 0)
		same("V", threads, w, wantW)
		same("Z", threads, u, wantU)

		// W −= G + Gᵀ on the lower triangle; the upper one untouched.
		w = randMat(n, n, n+2)
		g := randMat(n, n, n)
		wantW = append([]float64(nil), w...)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				wantW[i*(n+2)+j] = wantW[i*(n+2)+j] - g[i*n+j] - g[j*n+i]
			}
		}
		rowPassRun(bi, passSymUpdate, true, n, n, w, n+2, g, n, 0)
		same("symmetric update", threads, w, wantW)
	}
}

// TestCopyLower checks the parallel copy of a lower triangle: the values
// bit for bit, zeros above the diagonal, and, with non-finite entries in
// several row ranges, the first one in row-major order whatever the number
// of goroutines.
func TestCopyLower(t *testing.T) {
	rnd := rand.New(rand.NewPCG(43, 44))
	const n, lds = 333, 340
	src := make([]float64, (n-1)*lds+n)
	for i := range src {
		src[i] = rnd.NormFloat64()
	}
	for threads := 1; threads <= 5; threads++ {
		bi := blas.Implementation{Threads: threads}
		dst := make([]float64, n*n)
		for i := range dst {
			dst[i] = math.NaN()
		}
		if bad := copyLower(bi, n, src, lds, dst, n); bad.found {
			t.Fatalf("%d goroutines: reported %+v in finite data", threads, bad)
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				want := 0.0
				if j <= i {
					want = src[i*lds+j]
				}
				if math.Float64bits(dst[i*n+j]) != math.Float64bits(want) {
					t.Fatalf("%d goroutines: dst[%d,%d] = %v, want %v", threads, i, j, dst[i*n+j], want)
				}
			}
		}
		// Non-finite values late in the matrix and, the first one, in
		// the middle; the upper triangle's Inf is not read.
		bad := append([]float64(nil), src...)
		bad[5*lds+200] = math.Inf(1)
		bad[300*lds+7] = math.NaN()
		bad[170*lds+100] = math.Inf(-1)
		bad[171*lds+3] = math.NaN()
		got := copyLower(bi, n, bad, lds, dst, n)
		if !got.found || got.row != 170 || got.col != 100 || !math.IsInf(got.value, -1) {
			t.Fatalf("%d goroutines: reported %+v, want -Inf at (170, 100)", threads, got)
		}
	}
}
