package kernel

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// bufPools recycle float64 scratch slices between calls so that kernel
// evaluations in a training loop do not produce O(n·m) garbage per step.
// Pool k holds slices of capacity 2^k, so that small requests never take
// (and drop) the large buffers of kernel matrices.
var bufPools [64]sync.Pool

// getBuf returns a scratch slice of length n (contents unspecified) and
// the handle to give back to putBuf.
func getBuf(n int) (*[]float64, []float64) {
	k := bits.Len(uint(n))
	if n > 0 && n&(n-1) == 0 {
		k-- // exact power of two
	}
	if v := bufPools[k].Get(); v != nil {
		p := v.(*[]float64)
		return p, (*p)[:n]
	}
	b := make([]float64, 1<<k)
	return &b, b[:n]
}

// putBuf returns a slice obtained from getBuf to its pool.
func putBuf(p *[]float64) {
	k := bits.Len(uint(cap(*p))) - 1
	bufPools[k].Put(p)
}

// sameDense reports whether x and z are the same *mat.Dense. Interface
// values are not compared directly because a mat.Matrix implementation
// need not be comparable.
func sameDense(x, z mat.Matrix) bool {
	xd, ok1 := x.(*mat.Dense)
	zd, ok2 := z.(*mat.Dense)
	return ok1 && ok2 && xd == zd
}

// checkInput panics unless m has dim columns, and returns its row count.
func checkInput(name string, m mat.Matrix, dim int) int {
	r, c := m.Dims()
	if c != dim {
		panic(fmt.Sprintf("kernel: %s has %d columns, kernel dimension is %d", name, c, dim))
	}
	return r
}

// prepareDst makes dst an r×c matrix: an empty dst is resized, otherwise
// its shape must match.
func prepareDst(dst *mat.Dense, r, c int) {
	if dst.IsEmpty() {
		dst.ReuseAs(r, c)
		return
	}
	if dr, dc := dst.Dims(); dr != r || dc != c {
		panic(fmt.Sprintf("kernel: destination is %d×%d, want %d×%d", dr, dc, r, c))
	}
}

// checkShape panics unless m (which may not be nil) is r×c.
func checkShape(name string, m *mat.Dense, r, c int) {
	if mr, mc := m.Dims(); mr != r || mc != c {
		panic(fmt.Sprintf("kernel: %s is %d×%d, want %d×%d", name, mr, mc, r, c))
	}
}

// scaledCopy writes the rows of m, shifted by -shift and multiplied
// column-wise by inv, into dst (row-major, stride d), where d = len(inv).
// A nil shift means no shift.
func scaledCopy(dst []float64, m mat.Matrix, inv, shift []float64) {
	r, d := m.Dims()
	if rm, ok := m.(mat.RawMatrixer); ok {
		raw := rm.RawMatrix()
		for i := 0; i < r; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+d]
			out := dst[i*d : i*d+d]
			if shift == nil {
				for k, v := range row {
					out[k] = v * inv[k]
				}
			} else {
				for k, v := range row {
					out[k] = (v - shift[k]) * inv[k]
				}
			}
		}
		return
	}
	for i := 0; i < r; i++ {
		out := dst[i*d : i*d+d]
		for k := range out {
			v := m.At(i, k)
			if shift != nil {
				v -= shift[k]
			}
			out[k] = v * inv[k]
		}
	}
}

// centreSample bounds the rows per argument that centre looks at.
const centreSample = 256

// centre writes into dst, per column, the median of (an evenly strided
// sample of at most centreSample rows of) x and, unless same, z together:
// the point the inputs are shifted to before distances are formed.
// Centring keeps the expansion ‖x‖² + ‖z‖² − 2xᵀz accurate for data offset
// far from the origin; the median, unlike the mean, is not dragged away
// from the bulk of the points by a few far outliers, which would otherwise
// wipe out the precision of every distance in the bulk.
func centre(dst []float64, x, z mat.Matrix, same bool) {
	var argBuf [2]mat.Matrix
	args := append(argBuf[:0], x)
	if !same {
		args = append(args, z)
	}
	total := 0
	for _, a := range args {
		r, _ := a.Dims()
		total += min(r, centreSample)
	}
	h, col := getBuf(total)
	defer putBuf(h)
	for c := range dst {
		col = col[:0]
		for _, a := range args {
			r, _ := a.Dims()
			step := max(1, (r+centreSample-1)/centreSample)
			for i := 0; i < r; i += step {
				col = append(col, a.At(i, c))
			}
		}
		dst[c] = 0
		if len(col) == 0 {
			continue
		}
		slices.Sort(col)
		if med := col[len(col)/2]; !math.IsInf(med, 0) && !math.IsNaN(med) {
			dst[c] = med
		}
	}
}

// rowSqNorms writes the squared Euclidean norm of each row of the
// row-major r×d matrix a into dst, accumulated with fused multiply-adds
// from zero in column order: exactly as the GEMM micro-kernels accumulate
// the inner products, so that for coincident points the distance product
// ‖x‖² + ‖z‖² − 2xᵀz cancels to exactly 0, whatever the magnitude.
func rowSqNorms(dst []float64, a []float64, d int) {
	for i := range dst {
		s := 0.0
		for _, v := range a[i*d : i*d+d] {
			s = math.FMA(v, v, s)
		}
		dst[i] = s
	}
}
