package chol

import (
	"sync"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/internal/gemm"
	"github.com/solvegp/solvegp/internal/vecmath"
)

// The tiled leaf: a left-looking Cholesky factorization, A = L·Lᵀ, in steps
// of MR columns, built on the gemm-trsm micro-kernel (gemm.Backend.TrsmTile)
// for backends that have one in assembly.
//
// Step I factors columns I = [i0, i0+MR) of L. Their diagonal block is
//
//	L[I,I] = chol(A[I,I] − L[I,:i0]·L[I,:i0]ᵀ)
//
// (one micro-kernel call and an MR×MR unblocked factorization), and every
// NR rows R below it are one gemm-trsm tile on the transposed system
//
//	L[R,I]ᵀ = L[I,I]⁻¹·(A[R,I]ᵀ − L[I,:i0]·L[R,:i0]ᵀ).
//
// The matrix is packed once, at the start, into the format of the kernel's
// B operand: its rows in groups of NR, k-major (NR values per column).
// That is also the layout in which the kernel writes each solved tile, and
// the tile of C that step I needs from a group, A[R,I]ᵀ, is the same
// MR×NR region of the group's panel that the solved tile L[R,I]ᵀ
// replaces. So every tile is solved in place in its panel, and the large
// operand, L[R,:i0] for every R below I, is never packed again: later
// tiles read it where the earlier ones wrote it. Only the MR rows of
// L[I,:i0] are gathered per step, and the panels are unpacked into the
// matrix at the end. (The recursive left-looking leaf packs L[R,:j] again
// for every block column j, and transposes every tile it solves.)
//
// The diagonal block's rows lie in one or two groups, whose tiles are
// computed whole: their columns for rows above the block are computed from
// the zeros above the diagonal and mean nothing, which is harmless because
// each column of a tile depends only on the same column of C and of the
// packed B panel; they are zeroed again after the step.
//
// uplo Upper is the same algorithm on U = Lᵀ: the rows of L are the columns
// of U, so only the strides of the packing and unpacking change.

// tilesLeafMax is the largest order the recursion hands to the tiled leaf.
// Its panels then take about n²/2 values (265 KiB at order 256), half of a
// 512 KiB L2 cache. Leaves of 128 to 1024 measured alike within this
// host's noise at orders 256–1024 (1.12–1.34× OpenBLAS at 512 and 1024
// with leaves of 256, 512 and 1024, alternating in one process).
//
// Against the recursive left-looking leaf (potrfLeafLower), Dpotrf
// alternating with OpenBLAS in one process (bench/openblas, one thread,
// AMD Zen 3, AVX2) went from 0.87–0.94× OpenBLAS to 0.93–0.95× at order
// 64, 0.87–0.89× to 1.19–1.20× at 128, 0.95× to 1.16–1.32× at 256,
// 1.18× to 1.25–1.34× at 512 and 1.10–1.16× to 1.18–1.22× at 1024.
const tilesLeafMax = 256

// tilesLeaf holds the scratch space of one tiled leaf factorization.
type tilesLeaf struct {
	panels []float64 // the rows of L in groups of NR, k-major
	a      []float64 // L[I,:i0] packed as the kernel's A operand
	s      []float64 // the diagonal block, MR×MR row-major
	t      []float64 // L[I,I], row-major with reciprocal diagonal
}

var tilesLeafPool = sync.Pool{New: func() any { return new(tilesLeaf) }}

// grow sizes the scratch space for order n on a backend with tile MR×NR.
func (w *tilesLeaf) grow(n, mr, nr int) {
	q := (n + nr - 1) / nr
	w.panels = growFloats(w.panels, panelOffset(q, mr, nr))
	w.a = growFloats(w.a, mr*n)
	w.s = growFloats(w.s, mr*mr)
	w.t = growFloats(w.t, mr*mr)
}

// growFloats returns s resliced to n values, reallocated if too short.
func growFloats(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// panelOffset returns where the panel of row group q starts: group p holds
// (p+1)·NR + MR steps of NR values (see panel).
func panelOffset(q, mr, nr int) int {
	return nr * (nr*q*(q+1)/2 + mr*q)
}

// panel returns the packed panel of row group q (rows q·NR … q·NR+NR−1):
// k-major, NR values per step, with room for the (q+1)·NR steps up to the
// group's last diagonal entry and MR more, so that a step whose diagonal
// block starts in the group has its whole MR-step tile there.
func (w *tilesLeaf) panel(q, mr, nr int) []float64 {
	off := panelOffset(q, mr, nr)
	return w.panels[off : off+((q+1)*nr+mr)*nr]
}

// tiledBackend returns the backend of bi if it has an assembly gemm-trsm
// kernel (the tiled leaf would be slow on the Go definition), else nil.
func tiledBackend(bi blas.Implementation) *gemm.Backend {
	be := bi.KernelBackend()
	if !be.HasTrsmKernel() {
		return nil
	}
	return be
}

// potrfTiles factors the order-n matrix in the lower (upper false) or upper
// (upper true) triangle of a in place with the tiled leaf algorithm on
// backend be. The contract is potrfLower's (potrfUpper's for upper): the
// other triangle is not referenced, and on failure at pivot p the
// Schur-complement value is returned and stored at a[p·lda+p], the
// columns of L (rows of U) before p's block of MR are final and p's block
// holds its partial factorization.
func potrfTiles(be *gemm.Backend, upper bool, n int, a []float64, lda int) (pivot int, value float64) {
	if n == 0 {
		return -1, 0
	}
	mr, nr := be.MR(), be.NR()
	w := tilesLeafPool.Get().(*tilesLeaf)
	defer tilesLeafPool.Put(w)
	w.grow(n, mr, nr)
	groups := (n + nr - 1) / nr
	for q := 0; q < groups; q++ {
		w.packGroup(upper, q, mr, nr, n, a, lda)
	}
	s, tri := w.s, w.t
	for i0 := 0; i0 < n; i0 += mr {
		mb := min(mr, n-i0)
		g0, g1 := i0/nr, (i0+mb-1)/nr // the groups of the block's rows

		// S = A[I,I] − L[I,:i0]·L[I,:i0]ᵀ in the tiles of groups g0..g1.
		if i0 > 0 {
			w.gatherRows(i0, mb, mr, nr)
			for g := g0; g <= g1; g++ {
				p := w.panel(g, mr, nr)
				be.KernelRows(mb, i0, -1, w.a, p, 1, p[i0*nr:], nr)
			}
		}
		clear(s)
		for i := 0; i < mb; i++ {
			r := i0 + i
			p := w.panel(r/nr, mr, nr)
			for j := 0; j <= i; j++ {
				s[i*mr+j] = p[(i0+j)*nr+r%nr]
			}
		}
		if p, v := potf2Lower(mb, s, mr); p >= 0 {
			w.unpack(upper, i0, n, mr, nr, a, lda)
			for i := 0; i < mb; i++ {
				for j := 0; j <= i; j++ {
					a[at(upper, i0+i, i0+j, lda)] = s[i*mr+j]
				}
			}
			return i0 + p, v
		}
		copy(tri, s)
		for i := 0; i < mb; i++ {
			tri[i*mr+i] = 1 / s[i*mr+i]
		}
		// Rows below the block in its last group (updated above, so
		// the solve has no GEMM part), then in every group after it.
		if last := g1*nr + min(nr, n-g1*nr); last > i0+mb {
			x := w.panel(g1, mr, nr)[i0*nr:]
			be.TrsmTile(false, 0, 1, w.a, nil, tri, x, nr, x)
		}
		for q := g1 + 1; q < groups; q++ {
			p := w.panel(q, mr, nr)
			x := p[i0*nr:]
			be.TrsmTile(false, i0, 1, w.a, p, tri, x, nr, x)
		}
		// The block's tiles: L[I,I] for its rows, zeros above the
		// diagonal.
		for g := g0; g <= g1; g++ {
			p := w.panel(g, mr, nr)
			for c := 0; c < nr; c++ {
				i := g*nr + c - i0 // the row's index in the block
				if i >= mb {
					continue // a row below the block: solved above
				}
				for j := 0; j < mb; j++ {
					v := 0.0
					if i >= j {
						v = s[i*mr+j]
					}
					p[(i0+j)*nr+c] = v
				}
			}
		}
	}
	w.unpack(upper, n, n, mr, nr, a, lda)
	return -1, 0
}

// packGroup packs the rows of row group q of the lower triangle of A (the
// columns of the upper triangle) into its panel: steps before the group
// whole, the group's diagonal block with zeros above the diagonal, and
// zeros in the MR steps of slack.
func (w *tilesLeaf) packGroup(upper bool, q, mr, nr, n int, a []float64, lda int) {
	p := w.panel(q, mr, nr)
	r0 := q * nr
	cols := min(nr, n-r0)
	if upper {
		gemm.PackB(nr, p, a[r0:], lda, false, r0, cols)
	} else {
		gemm.PackB(nr, p, a[r0*lda:], lda, true, r0, cols)
	}
	d := p[r0*nr:]
	clear(d)
	for c := 0; c < cols; c++ {
		for k := 0; k <= c; k++ {
			d[k*nr+c] = a[at(upper, r0+c, r0+k, lda)]
		}
	}
}

// gatherRows packs L[I,:i0], rows i0 … i0+mb−1 of the panels, into w.a as
// the kernel's A operand (MR values per step, zero rows after mb).
func (w *tilesLeaf) gatherRows(i0, mb, mr, nr int) {
	dst := w.a[:i0*mr]
	if mb < mr {
		clear(dst)
	}
	for r := i0; r < i0+mb; {
		q, c := r/nr, r%nr
		run := min(nr-c, i0+mb-r)
		g := vecmath.CopyGeom{Run: run, N: [3]int{i0, 1, 1}, SrcStride: [3]int{nr, 0, 0}, DstStride: [3]int{mr, 0, 0}}
		vecmath.CopyBlock(dst[r-i0:], w.panel(q, mr, nr)[c:], &g)
		r += run
	}
}

// unpack writes the first kmax columns of L (rows of U) from the panels
// into a, within its triangle.
func (w *tilesLeaf) unpack(upper bool, kmax, n, mr, nr int, a []float64, lda int) {
	for q := 0; q*nr < n; q++ {
		p := w.panel(q, mr, nr)
		r0 := q * nr
		cols := min(nr, n-r0)
		k := min(r0, kmax)
		if upper {
			for kk := 0; kk < k; kk++ {
				copy(a[kk*lda+r0:kk*lda+r0+cols], p[kk*nr:kk*nr+cols])
			}
		} else {
			gemm.UnpackB(nr, a[r0*lda:], lda, p, k, cols)
		}
		for c := 0; c < cols; c++ {
			for kk := r0; kk <= r0+c && kk < kmax; kk++ {
				a[at(upper, r0+c, kk, lda)] = p[kk*nr+c]
			}
		}
	}
}

// at returns the index in a of L[i,j] (lower) or of U[j,i] = L[i,j]
// (upper).
func at(upper bool, i, j, lda int) int {
	if upper {
		return j*lda + i
	}
	return i*lda + j
}
