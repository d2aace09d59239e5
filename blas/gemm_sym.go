package blas

import (
	"gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/internal/gemm"
)

// Packing a symmetric operand of which one triangle is stored (Dsymm). An
// MR-row panel of op(A), rows i0…i0+rows, splits its columns into three
// ranges: those left of the panel's diagonal block, those right of it, and
// the block itself. For the lower triangle stored, element (r, p) is a[r, p]
// left of the block — rows of a, read as PackA's NoTrans case — and a[p, r]
// right of it — columns of a's rows, PackA's Trans case; for the upper
// triangle the other way round. Only the rows×rows diagonal block is copied
// element by element. A B panel splits its rows the same way. So Dsymm runs
// on the packed GEMM loops without first forming the other triangle.

// symStored returns element (r, p) of the n×n symmetric matrix whose ul
// triangle is stored in a.
func symStored(ul blas.Uplo, a []float64, lda, r, p int) float64 {
	if (ul == blas.Lower) == (r >= p) {
		return a[r*lda+p]
	}
	return a[p*lda+r]
}

// packSymABlock is packABlock for a symmetric op(A) (g.aSym).
func (g *gemmProblem) packSymABlock(dst []float64, ic, mcb, pc, kcb int) {
	mr := g.be.MR()
	lower := g.aSym == blas.Lower
	pe := pc + kcb
	for q := 0; q*mr < mcb; q++ {
		i0 := ic + q*mr
		rows := min(mr, ic+mcb-i0)
		panel := dst[q*mr*kcb : (q+1)*mr*kcb]
		lo, hi := min(max(i0, pc), pe), min(max(i0+rows, pc), pe)
		// Columns pc…lo (left of the block) and hi…pe (right of it): a's
		// rows (NoTrans) on the stored side, its columns (Trans) on the other.
		if lo > pc {
			g.packAColumns(panel, pc, pc, lo, i0, rows, !lower)
		}
		if pe > hi {
			g.packAColumns(panel, pc, hi, pe, i0, rows, lower)
		}
		for p := lo; p < hi; p++ {
			d := panel[(p-pc)*mr : (p-pc)*mr+mr]
			for r := range rows {
				d[r] = symStored(g.aSym, g.a, g.lda, i0+r, p)
			}
			clear(d[rows:])
		}
	}
}

// packAColumns packs columns c0…c1 of the panel (first column pc) of rows
// i0…i0+rows of the symmetric op(A), reading row r of the panel from row r
// of a (trans false) or from column r of a (trans true).
func (g *gemmProblem) packAColumns(panel []float64, pc, c0, c1, i0, rows int, trans bool) {
	mr := g.be.MR()
	off := i0*g.lda + c0
	if trans {
		off = c0*g.lda + i0
	}
	gemm.PackA(mr, panel[(c0-pc)*mr:(c1-pc)*mr], g.a[off:], g.lda, trans, rows, c1-c0)
}

// packSymBPanel is packBPanel for a symmetric op(B) (g.bSym): rows pc…pc+kcb
// of columns j…j+cols.
func (g *gemmProblem) packSymBPanel(dst []float64, pc, kcb, j, cols int) {
	nr := g.be.NR()
	lower := g.bSym == blas.Lower
	pe := pc + kcb
	lo, hi := min(max(j, pc), pe), min(max(j+cols, pc), pe)
	// Rows above the block (p < j) are on the upper side of B, rows below
	// it (p ≥ j + cols) on the lower side.
	if lo > pc {
		g.packBRows(dst, pc, pc, lo, j, cols, lower)
	}
	if pe > hi {
		g.packBRows(dst, pc, hi, pe, j, cols, !lower)
	}
	for p := lo; p < hi; p++ {
		d := dst[(p-pc)*nr : (p-pc)*nr+nr]
		for c := range cols {
			d[c] = symStored(g.bSym, g.b, g.ldb, p, j+c)
		}
		clear(d[cols:])
	}
}

// packBRows packs rows r0…r1 of the panel (first row pc) of columns
// j…j+cols of the symmetric op(B), reading row p from row p of b (trans
// false) or from column p of b (trans true).
func (g *gemmProblem) packBRows(dst []float64, pc, r0, r1, j, cols int, trans bool) {
	nr := g.be.NR()
	off := r0*g.ldb + j
	if trans {
		off = j*g.ldb + r0
	}
	gemm.PackB(nr, dst[(r0-pc)*nr:(r1-pc)*nr], g.b[off:], g.ldb, trans, r1-r0, cols)
}
