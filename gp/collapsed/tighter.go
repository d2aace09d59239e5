package collapsed

import (
	"fmt"
	"math"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/solvegp/solvegp/blas"
)

// BoundKind selects the collapsed bound a Model evaluates.
type BoundKind int

const (
	// Standard is Titsias' SGPR bound (or, with orthogonal inducing
	// inputs, the collapsed SOLVE-GP bound of eq. 10), whose trace term is
	// −Σₙ dₙ/(2σ²) with dₙ the residual prior variance at xₙ.
	Standard BoundKind = iota
	// Tighter replaces that trace term by −½·Σₙ log(1 + dₙ/σ²): the bound
	// of Titsias (ICML 2025) and Bui, Ashman and Turner (TMLR 2025), whose
	// q(f|u) scales the residual covariance by a diagonal optimized in
	// closed form. Since log(1 + x) ≤ x it is never below Standard; it is
	// still a lower bound on the log marginal likelihood, with the same
	// optimal q(u) (and q(v⊥)) and so the same predictions.
	Tighter
	// BlockDiagonal replaces it by −½·Σ_b log|I + C_b/σ²|, C_b the diagonal
	// blocks of the residual covariance K_ff − Q_ff over a partition of the
	// data into blocks of Options.BlockSize points (BlockOrder): the bound
	// of Bui and Titsias (2025) with a block-diagonal scaling of the
	// residual covariance. It is never below Tighter (Fischer's
	// inequality), equals it for blocks of one point, and has the same
	// optimal q(u) (and q(v⊥)) and predictions (blockdiag.go derives it).
	BlockDiagonal
)

// String returns "standard", "tighter" or "blockdiag".
func (b BoundKind) String() string {
	switch b {
	case Standard:
		return "standard"
	case Tighter:
		return "tighter"
	case BlockDiagonal:
		return "blockdiag"
	}
	return fmt.Sprintf("BoundKind(%d)", int(b))
}

// ParseBound returns the BoundKind named s ("standard", "tighter" or
// "blockdiag").
func ParseBound(s string) (BoundKind, error) {
	switch s {
	case "standard":
		return Standard, nil
	case "tighter":
		return Tighter, nil
	case "blockdiag":
		return BlockDiagonal, nil
	}
	return 0, fmt.Errorf("collapsed: unknown bound %q (want standard, tighter or blockdiag)", s)
}

// The Tighter bound. With q(f⊥ | v⊥) (or q(f | u) for SGPR) of covariance
// C^½·Λ·C^½, C = K_ff − Q_ff the residual covariance after all inducing
// variables (Q_ff = K_fw·K_ww⁻¹·K_wf, so dₙ = Cₙₙ = k(xₙ,xₙ) − ‖ãₙ‖² with
// ãₙ the n-th column of Ã) and Λ = diag(λ), the bound's dependence on λ
// separates from q(u) and q(v⊥): the Gaussian likelihood contributes
// −tr(C^½ΛC^½)/(2σ²) = −Σ λₙdₙ/(2σ²) and the conditional KL
// ½·(tr Λ − N − Σ log λₙ). Its maximum, at λₙ = σ²/(σ² + dₙ), is
// −½·Σ log(1 + dₙ/σ²); λ = 1 gives the Standard term −Σ dₙ/(2σ²). So F
// changes only in that term, and q*(u), q*(v⊥) are unchanged.
//
// Gradient: with wₙ = 1/(σ² + dₙ), ∂F/∂dₙ = −wₙ/2 and the direct
// ∂F/∂σ² = ½·Σ dₙ·wₙ/σ². Through dₙ = k(xₙ,xₙ) − ‖ãₙ‖², the diagonal of
// K_ff gets the adjoint −wₙ/2 and Ã gets Ā += Ã·diag(w), which enters
// K̄_wf = L⁻ᵀĀ and L̄ = −tril(L⁻ᵀ·Ā·Ãᵀ) as L⁻ᵀ·Ã·diag(w) and
// −tril(L⁻ᵀ·G_w), G_w = Ã·diag(w)·Ãᵀ.

// tighterChunk records, for the rows n0… of a chunk whose Ã is ac (k×nc,
// stride lda) and whose prior variances are kdiag, wₙ = 1/(σ² + dₙ) into
// st.w, and adds Σ log(1 + dₙ/σ²) and Σ dₙwₙ to st.logTerm and st.dw.
func (st *state) tighterChunk(n0, nc, k int, ac []float64, lda int, kdiag []float64) error {
	s := st.s
	for i := 0; i < nc; i++ {
		var q float64
		for r := 0; r < k; r++ {
			v := ac[r*lda+i]
			q += v * v
		}
		d := kdiag[i] - q
		if !(s+d > 0) {
			return fmt.Errorf("collapsed: residual variance %v at row %d is below −σ² = %v", d, n0+i, -s)
		}
		w := 1 / (s + d)
		st.w[n0+i] = w
		st.logTerm += math.Log1p(d / s)
		st.dw += d * w
	}
	return nil
}

// tighterBackChunk adds, for one chunk, L⁻ᵀ·Ã·diag(w) to the K̄_wf block
// b (k×nc) and Ã·diag(w)·Ãᵀ to gw (lower triangle), with Ã the block a,
// using buf (k×nc, stride nc) as scratch.
func (md *Model) tighterBackChunk(st *state, n0, nc int, a, b blas64.General, gw, buf []float64) error {
	ac, lda, bc, ldb := a.Data, a.Stride, b.Data, b.Stride
	k := md.m + md.m2
	w := st.w[n0 : n0+nc]
	for r := 0; r < k; r++ {
		for i := 0; i < nc; i++ {
			buf[r*nc+i] = ac[r*lda+i] * math.Sqrt(w[i])
		}
	}
	bi := blas.Implementation{Threads: md.threads}
	bi.Dsyrk(gblas.Lower, gblas.NoTrans, k, nc, 1, buf, nc, 1, gw, k)
	for r := 0; r < k; r++ {
		for i := 0; i < nc; i++ {
			buf[r*nc+i] *= math.Sqrt(w[i])
		}
	}
	if err := st.lw.SolveLT(nc, buf, nc); err != nil {
		return err
	}
	for r := 0; r < k; r++ {
		row := bc[r*ldb : r*ldb+nc]
		for i := range row {
			row[i] += buf[r*nc+i]
		}
	}
	return nil
}

// tighterLbar subtracts tril(L⁻ᵀ·G_w) from lbar (gw holds G_w's lower
// triangle and is overwritten).
func (md *Model) tighterLbar(st *state, gw, lbar []float64) error {
	k := md.m + md.m2
	for i := 0; i < k; i++ {
		for j := 0; j < i; j++ {
			gw[j*k+i] = gw[i*k+j]
		}
	}
	if err := st.lw.SolveLT(k, gw, k); err != nil {
		return err
	}
	for i := 0; i < k; i++ {
		for j := 0; j <= i; j++ {
			lbar[i*k+j] -= gw[i*k+j]
		}
	}
	return nil
}
