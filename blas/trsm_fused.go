package blas

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/solvegp/solvegp/internal/gemm"
)

// The fused solver for the diagonal blocks of Dtrsm with Side Left, after
// BLIS's gemm-trsm: the rows of X are finished MR at a time, and the
// coupling of a block of MR rows with all the rows finished before it is
// one GEMM micro-kernel call per register tile, with an inner dimension of
// up to the whole triangle (trsmFusedMax), on micro-panels of X packed as
// its rows are finished. Only the MR×MR triangles on the diagonal are
// substitutions. The recursion it replaces split a triangle down to order
// trsmBase, joining the halves with Dgemm calls of inner dimension 16, 32,
// 64, …, whose packing costs as much as their arithmetic, and solved the
// order-16 triangles with matrix-vector products.

const (
	// trsmFusedMax is the largest triangle order trsmLeft hands to
	// trsmLeftFused; larger triangles are split in two by trsmLeft, the
	// coupling block going to Dgemm. It is about one KC block, so that the
	// packed panels of X stay in the L2 cache.
	trsmFusedMax = 256

	// trsmFusedMin is the smallest triangle order for which trsmLeftFused
	// beats the substitution kernel and the recursion: with fewer rows its
	// micro-kernel calls are too short (order 8 ran at less than half the
	// speed, order 32 about 1.2× faster, 64 1.2-1.6×, 128 1.2×, on 1024
	// right-hand sides on an AMD Zen 3 with AVX2 + FMA).
	trsmFusedMin = 32

	// trsmFusedCols is the number of columns of B solved together: the
	// packed X of a column block, trsmFusedMax × trsmFusedCols values,
	// fills about half of a 1 MiB L2 cache.
	trsmFusedCols = 256
)

// trsmFusedBuf holds the packed panels of one trsmLeftFused call.
type trsmFusedBuf struct {
	x    []float64 // X, NR-column micro-panels of m rows each
	a    []float64 // an MR-row micro-panel of op(A)
	tile []float64 // an MR×NR tile at the right edge of B
}

var trsmFusedBufs = sync.Pool{New: func() any { return new(trsmFusedBuf) }}

// grow returns s with length n, reallocating only if its capacity is short.
func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// trsmLeftFused solves op(A) * X = alpha * B for the m×m triangle A
// (trsmFusedMin ≤ m ≤ trsmFusedMax) and the m×n matrix b (n ≥ NR), in
// place. alpha is non-zero.
func (impl Implementation) trsmLeftFused(ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	be := impl.KernelBackend()
	mr, nr := be.MR(), be.NR()
	forward := trsmOpLower(ul, tA) // rows are finished first to last
	trans := tA != blas.NoTrans
	// op(A)[i, j] = a[i*rs + j*cs].
	rs, cs := lda, 1
	if trans {
		rs, cs = 1, lda
	}
	nc := max(nr, trsmFusedCols/nr*nr)
	buf := trsmFusedBufs.Get().(*trsmFusedBuf)
	defer trsmFusedBufs.Put(buf)
	buf.x = grow(buf.x, m*nc)
	buf.a = grow(buf.a, mr*m)
	buf.tile = grow(buf.tile, mr*nr)
	g := gonum.Implementation{}

	for c0 := 0; c0 < n; c0 += nc {
		w := min(nc, n-c0)
		panels := (w + nr - 1) / nr
		for q0 := 0; q0 < m; q0 += mr {
			// Rows [lo, lo+rows) of B are finished next; they couple
			// with rows [k0, k0+k), finished before.
			rows := min(mr, m-q0)
			lo, k0, k := q0, 0, q0
			if !forward {
				lo = m - q0 - rows
				k0, k = lo+rows, q0
			}
			// B[lo:lo+rows] := alpha·B[lo:lo+rows] − op(A)[lo:lo+rows, k0:k0+k]·X[k0:k0+k].
			bt := b[lo*ldb+c0:]
			if k == 0 {
				if alpha != 1 {
					for i := 0; i < rows; i++ {
						g.Dscal(w, alpha, bt[i*ldb:i*ldb+w], 1)
					}
				}
			} else {
				if trans {
					gemm.PackA(mr, buf.a, a[k0*lda+lo:], lda, true, rows, k)
				} else {
					gemm.PackA(mr, buf.a, a[lo*lda+k0:], lda, false, rows, k)
				}
				for j := 0; j < panels; j++ {
					xp := buf.x[j*m*nr+k0*nr:]
					cols := min(nr, w-j*nr)
					if cols == nr {
						be.KernelRowsNoCheck(rows, k, -1, buf.a, xp, alpha, bt[j*nr:], ldb)
						continue
					}
					t := buf.tile
					for i := 0; i < rows; i++ {
						copy(t[i*nr:i*nr+cols], bt[i*ldb+j*nr:i*ldb+j*nr+cols])
					}
					be.KernelRowsNoCheck(rows, k, -1, buf.a, xp, alpha, t, nr)
					for i := 0; i < rows; i++ {
						copy(bt[i*ldb+j*nr:i*ldb+j*nr+cols], t[i*nr:i*nr+cols])
					}
				}
			}
			// Substitution with the rows×rows diagonal triangle.
			for s := 0; s < rows; s++ {
				i := s
				if !forward {
					i = rows - 1 - s
				}
				r := lo + i
				row := bt[i*ldb : i*ldb+w]
				p0, p1 := 0, i // earlier rows of the block
				if !forward {
					p0, p1 = i+1, rows
				}
				for p := p0; p < p1; p++ {
					g.Daxpy(w, -a[r*rs+(lo+p)*cs], bt[p*ldb:p*ldb+w], 1, row, 1)
				}
				if d == blas.NonUnit {
					g.Dscal(w, 1/a[r*rs+r*cs], row, 1)
				}
			}
			// Pack the finished rows into the panels of X.
			for j := 0; j < panels; j++ {
				gemm.PackB(nr, buf.x[j*m*nr+lo*nr:], bt[j*nr:], ldb, false, rows, min(nr, w-j*nr))
			}
		}
	}
}
