package blas

import (
	"sync"

	"gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/internal/gemm"
)

// The tiled solvers for the diagonal blocks of Dtrsm on backends with a
// gemm-trsm kernel (gemm.Backend.TrsmTile), after BLIS: the triangle T is
// packed once into MR-row micro-panels, as the GEMM macro-kernel packs A,
// and the right-hand sides are solved NR at a time on a panel of X that
// stays in the L1 cache. The rows of the panel are finished MR at a time,
// each MR×NR tile by one kernel call that applies the coupling with every
// row finished before it and then the MR×MR diagonal triangle in
// registers, writing the tile both to its destination and into the panel
// for the tiles after it.
//
// For Side Left the tiles are read from and written to B directly. For
// Side Right the solvers work on the transposed system T·Xᵀ = alpha·Bᵀ,
// T = op(A)ᵀ: NR rows of B are packed, transposed, into the panel, solved in
// place there and written back.

// The triangle orders given to the tiled solvers; larger triangles are
// split in two, the coupling block going to Dgemm. Measured with 1024
// right-hand sides on one thread of an AMD Zen 3 (AVX2), alternating:
//   - Side Right, against the recursion to order-16 substitutions: order
//     8 0.8×, 16 1.2-1.8×, 24-48 2.1-2.7×, 64 2.1×, 256 1.5×; at 384 the
//     tiled solver is 1.0-1.3× the recursion with tiled order-192 leaves,
//     at 512 0.95-1.15× (so 512 is split).
//   - Side Left, against trsmLeftFused: order 16 0.9×, 32 1.2-1.4×, 64
//     1.3-1.4×, 128 1.3×, 256 1.0-1.4×, 384 1.2-1.4×.
const (
	trsmLeftTilesMin  = 32
	trsmRightTilesMin = 16
	trsmTilesMax      = 384
)

// trsmTilesBuf holds the packed triangle and the panel of X of one call.
type trsmTilesBuf struct {
	a    []float64 // the MR-row panels of T, block after block
	tri  []float64 // the MR×MR diagonal triangles, block after block
	x    []float64 // a panel of X with MR rows of slack at both ends
	tile []float64 // an MR×NR tile at the edges of B (Side Left)
}

var trsmTilesBufs = sync.Pool{New: func() any { return new(trsmTilesBuf) }}

// block returns the packed panel of T and the diagonal triangle of block q
// (see trsmPackTriangle), each from its start to the end of its buffer.
// Block q couples with the q·MR rows finished before it, so its panel of
// q·MR steps starts after those of the blocks before it, at
// MR·MR·q(q−1)/2.
func (buf *trsmTilesBuf) block(q, mr int) (panel, tri []float64) {
	return buf.a[mr*mr*q*(q-1)/2:], buf.tri[q*mr*mr:]
}

// trsmBlock describes the q-th block of MR rows of an order-n triangle to
// be finished: rows [lo, lo+rows) of T and X, coupling with the k rows
// from k0 finished before them. A partial block (rows < MR) is always the
// last; its padding rows are placed outside the triangle's rows (after
// them when T is lower, before them when upper, as rows [lo−off, lo)), so
// that no real row depends on them and they fall into the panel's slack.
func trsmBlock(q, n, mr int, upper bool) (lo, rows, k0, k, off int) {
	q0 := q * mr
	rows = min(mr, n-q0)
	if !upper {
		return q0, rows, 0, q0, 0
	}
	lo = n - q0 - rows
	return lo, rows, lo + rows, q0, mr - rows
}

// trsmPackTriangle packs the order-n triangle T[i, j] = a[i*ti + j*tj]
// (lower, or upper when upper is true) for the tiled solvers: for each
// block q of trsmBlock, the MR-row panel of T[lo:lo+rows, k0:k0+k] and the
// MR×MR diagonal triangle with reciprocal diagonal (1 when unit), padded
// with the identity, where buf.block(q, MR) finds them.
func trsmPackTriangle(buf *trsmTilesBuf, mr int, upper, unit bool, n int, a []float64, ti, tj int) {
	nb := (n + mr - 1) / mr
	buf.a = grow(buf.a, mr*mr*nb*(nb-1)/2)
	buf.tri = grow(buf.tri, nb*mr*mr)
	at := func(i, j int) float64 { return a[i*ti+j*tj] }
	for q := 0; q < nb; q++ {
		lo, rows, k0, k, off := trsmBlock(q, n, mr, upper)
		panel, tri := buf.block(q, mr)
		tri = tri[:mr*mr]
		clear(tri)
		for i := 0; i < mr; i++ {
			tri[i*mr+i] = 1
		}
		for i := 0; i < rows; i++ {
			p0, p1 := 0, i
			if upper {
				p0, p1 = i+1, rows
			}
			for p := p0; p < p1; p++ {
				tri[(off+i)*mr+off+p] = at(lo+i, lo+p)
			}
			if !unit {
				tri[(off+i)*mr+off+i] = 1 / at(lo+i, lo+i)
			}
		}
		if k == 0 {
			continue
		}
		panel = panel[:mr*k]
		switch {
		case off > 0:
			clear(panel)
			for p := 0; p < k; p++ {
				for i := 0; i < rows; i++ {
					panel[p*mr+off+i] = at(lo+i, k0+p)
				}
			}
		case tj == 1:
			gemm.PackA(mr, panel, a[lo*ti+k0:], ti, false, rows, k)
		default:
			gemm.PackA(mr, panel, a[k0*tj+lo:], tj, true, rows, k)
		}
	}
}

// trsmPanel returns buf's panel of X for an order-n triangle and NR
// columns: n·NR values with MR·NR values of zeroed slack on either side,
// and the offset of row 0.
func trsmPanel(buf *trsmTilesBuf, mr, nr, n int) (x []float64, base int) {
	slack := mr * nr
	buf.x = grow(buf.x, n*nr+2*slack)
	clear(buf.x[:slack])
	clear(buf.x[slack+n*nr:])
	return buf.x, slack
}

// trsmRightTiles solves X * op(A) = alpha * B for the n×n triangle A and
// the m×n matrix b (m ≥ NR), in place, on the backend's gemm-trsm kernel.
// alpha is non-zero.
func (impl Implementation) trsmRightTiles(ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	be := impl.KernelBackend()
	mr, nr := be.MR(), be.NR()
	// T = op(A)ᵀ is upper triangular when op(A) is lower. op(A)[i, j] is
	// a[i*lda + j] without transposition, so T[i, j] = a[j*lda + i].
	upper := trsmOpLower(ul, tA)
	ti, tj := 1, lda
	if tA != blas.NoTrans {
		ti, tj = lda, 1
	}
	buf := trsmTilesBufs.Get().(*trsmTilesBuf)
	defer trsmTilesBufs.Put(buf)
	trsmPackTriangle(buf, mr, upper, d == blas.Unit, n, a, ti, tj)
	x, base := trsmPanel(buf, mr, nr, n)
	xp := x[base:]
	nb := (n + mr - 1) / mr
	for r := 0; r < m; r += nr {
		cols := min(nr, m-r)
		// xp[p*nr + c] = B[r+c, p].
		gemm.PackB(nr, xp, b[r*ldb:], ldb, true, n, cols)
		for q := 0; q < nb; q++ {
			lo, _, k0, k, off := trsmBlock(q, n, mr, upper)
			ap, tri := buf.block(q, mr)
			slot := x[base+(lo-off)*nr:]
			be.TrsmTileNoCheck(upper, k, alpha, ap, xp[k0*nr:], tri, slot, nr, slot)
		}
		gemm.UnpackB(nr, b[r*ldb:], ldb, xp, n, cols)
	}
}

// trsmLeftTiles solves op(A) * X = alpha * B for the m×m triangle A and the
// m×n matrix b (n ≥ NR), in place, on the backend's gemm-trsm kernel.
// alpha is non-zero.
func (impl Implementation) trsmLeftTiles(ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	be := impl.KernelBackend()
	mr, nr := be.MR(), be.NR()
	upper := !trsmOpLower(ul, tA)
	ti, tj := lda, 1
	if tA != blas.NoTrans {
		ti, tj = 1, lda
	}
	buf := trsmTilesBufs.Get().(*trsmTilesBuf)
	defer trsmTilesBufs.Put(buf)
	trsmPackTriangle(buf, mr, upper, d == blas.Unit, m, a, ti, tj)
	x, base := trsmPanel(buf, mr, nr, m)
	xp := x[base:]
	buf.tile = grow(buf.tile, mr*nr)
	tile := buf.tile
	nb := (m + mr - 1) / mr
	for c0 := 0; c0 < n; c0 += nr {
		cols := min(nr, n-c0)
		for q := 0; q < nb; q++ {
			lo, rows, k0, k, off := trsmBlock(q, m, mr, upper)
			ap, tri := buf.block(q, mr)
			xk := xp[k0*nr:]
			bt := b[lo*ldb+c0:]
			if rows == mr && cols == nr {
				be.TrsmTileNoCheck(upper, k, alpha, ap, xk, tri, bt, ldb, xp[lo*nr:])
				continue
			}
			// An edge tile goes through scratch, its real rows at off.
			clear(tile)
			for i := 0; i < rows; i++ {
				copy(tile[(off+i)*nr:(off+i)*nr+cols], bt[i*ldb:i*ldb+cols])
			}
			be.TrsmTileNoCheck(upper, k, alpha, ap, xk, tri, tile, nr, x[base+(lo-off)*nr:])
			for i := 0; i < rows; i++ {
				copy(bt[i*ldb:i*ldb+cols], tile[(off+i)*nr:(off+i)*nr+cols])
			}
		}
	}
}
