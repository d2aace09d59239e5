package collapsed

import (
	"errors"
	"fmt"
	"math"
	"slices"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/internal/parallel"
)

// The BlockDiagonal bound. Partition the N training points into blocks
// b = 1…B and let C = K_ff − Q_ff be the residual covariance after all
// inducing variables (Q_ff = K_fw·K_ww⁻¹·K_wf, W = Z ∪ O), with diagonal
// blocks C_b = K_bb − Ã_bᵀ·Ã_b (Ã_b the columns of Ã = L⁻¹K_wf in block
// b). Take q(f⊥ | v⊥) (q(f | u) for SGPR) with mean that of the prior
// conditional and covariance C^½·Λ·C^½, C^½ the symmetric square root of
// the whole of C and Λ = Λ₁ ⊕ … ⊕ Λ_B block-diagonal and positive
// definite. The expected log-likelihood then loses
// tr(C^½ΛC^½)/(2σ²) = Σ_b tr(Λ_b·C_b)/(2σ²), and the KL divergence of
// this conditional from the prior one, N(·, C), is
// ½·Σ_b (tr Λ_b − n_b − log|Λ_b|). Neither involves q(u) or q(v⊥), so
// their optima, and with them the predictions, are those of the Standard
// bound. Setting the derivative −C_b/(2σ²) − I/2 + Λ_b⁻¹/2 to zero gives
// Λ_b = (I + C_b/σ²)⁻¹ and the value −½·log|I + C_b/σ²|, so the trace term
// −tr C/(2σ²) of the Standard bound becomes
//
//	−½·Σ_b log|I + C_b/σ²|  =  −½·Σ_b [log|σ²I + C_b| − n_b·log σ²].
//
// Blocks of size 1 give the Tighter bound. By Fischer's inequality
// (Hadamard's for blocks of size 1) log|I + C_b/σ²| ≤ Σ_{n∈b} log(1 + dₙ/σ²),
// so merging blocks never lowers the bound; with one block it is the best
// bound of this family.
//
// Gradient: with P_b = (σ²I + C_b)⁻¹, ∂F/∂C_b = −P_b/2 and the direct
// ∂F/∂σ² = ½·Σ_b (n_b/σ² − tr P_b). Through C_b = K_bb − Ã_bᵀÃ_b, K_bb
// gets the adjoint −P_b/2 and Ã_b gets Ā_b += Ã_b·P_b, which enters
// K̄_wf = L⁻ᵀĀ and L̄ = −tril(L⁻ᵀ·Ā·Ãᵀ) as L⁻ᵀ·Ã_b·P_b and
// −tril(L⁻ᵀ·G_P), G_P = Σ_b Ã_b·P_b·Ã_bᵀ — the Tighter bound's terms with
// diag(w) replaced by P_b. The extra work per evaluation is, for every
// block, the kernel matrix K_bb, a rank-k update (n_b²·k), a Cholesky
// factorization (n_b³/3) and, for the gradient, the inverse (n_b³), the
// product Ã_b·P_b (k·n_b²) and its contribution to G_P (k²·n_b): in all
// O(N·b·(d + M + M₂ + b)) plus the O(N·(M+M₂)²) of G_P, as for Tighter.
//
// The partition. The bound is valid for any partition, and is a smooth
// function of the parameters only if the partition does not depend on
// them, so it is computed from the inputs x alone: BlockOrder bisects the
// points recursively, each time along the coordinate of largest spread,
// into sets whose sizes are multiples of the block size (the first part
// gets ⌈blocks/2⌉ blocks). Nearby points share a block, where their
// residual covariances are largest, which is what makes the bound tighter
// than Tighter's. All blocks have the block size except the last, which
// holds the remaining N mod size points.

// BlockOrder returns the order of the rows of x (N×d) that the
// BlockDiagonal bound uses: its blocks are order[0:size],
// order[size:2·size], …, the last one holding the remaining rows. The
// order is computed by recursive coordinate bisection (see the package
// source, blockdiag.go): each step sorts the current set of rows by the
// coordinate of largest range (the first such coordinate on ties; rows
// with equal values stay in index order) and splits it after ⌈blocks/2⌉
// blocks. It depends only on x and size, and it returns an error for a
// nil x or a size below 1.
func BlockOrder(x *mat.Dense, size int) ([]int, error) {
	if x == nil {
		return nil, errors.New("collapsed: BlockOrder: nil x")
	}
	if size < 1 {
		return nil, fmt.Errorf("collapsed: BlockOrder: block size %d, want at least 1", size)
	}
	n, _ := x.Dims()
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	bisect(x, order, size)
	return order, nil
}

// bisect orders idx (rows of x) in place as BlockOrder describes.
func bisect(x *mat.Dense, idx []int, size int) {
	blocks := (len(idx) + size - 1) / size
	if blocks <= 1 {
		return
	}
	_, d := x.Dims()
	best, spread := 0, -1.0
	for j := 0; j < d; j++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, i := range idx {
			v := x.At(i, j)
			lo, hi = min(lo, v), max(hi, v)
		}
		if hi-lo > spread {
			best, spread = j, hi-lo
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		va, vb := x.At(a, best), x.At(b, best)
		switch {
		case va < vb:
			return -1
		case va > vb:
			return 1
		}
		return a - b
	})
	cut := (blocks + 1) / 2 * size
	bisect(x, idx[:cut], size)
	bisect(x, idx[cut:], size)
}

// permuteRows returns the rows of x and the entries of y in the given
// order.
func permuteRows(x *mat.Dense, y []float64, order []int) (*mat.Dense, []float64) {
	n, d := x.Dims()
	xp := mat.NewDense(n, d, nil)
	yp := make([]float64, n)
	for i, r := range order {
		copy(xp.RawRowView(i), x.RawRowView(r))
		yp[i] = y[r]
	}
	return xp, yp
}

// blockChunk returns the row chunk size for the BlockDiagonal bound: a
// multiple of the block size, so that no block straddles two chunks.
func blockChunk(chunk, size int) int {
	return max(size, chunk/size*size)
}

// blockFactor factors σ²I + C_b = σ²I + K_bb − Ã_bᵀ·Ã_b for the block
// whose rows are xb (nb of them) and whose Ã columns are (a, lda) (k rows),
// writing K_bb into kbb (nb×nb) and the factor into c, with threads
// goroutines for the linear algebra.
func (md *Model) blockFactor(c *chol.Cholesky, kbb *mat.Dense, xb *mat.Dense, a []float64, lda int, s float64, threads int) error {
	nb, _ := xb.Dims()
	k := md.m + md.m2
	md.kern.Matrix(kbb, xb, xb)
	kr := kbb.RawMatrix()
	buf := make([]float64, nb*nb)
	for i := 0; i < nb; i++ {
		copy(buf[i*nb:i*nb+i+1], kr.Data[i*kr.Stride:i*kr.Stride+i+1])
		buf[i*nb+i] += s
	}
	bi := blas.Implementation{Threads: threads}
	bi.Dsyrk(gblas.Lower, gblas.Trans, nb, k, -1, a, lda, 1, buf, nb)
	if _, err := c.Factor(nb, buf, nb, chol.NoJitter(), threads); err != nil {
		return fmt.Errorf("collapsed: factorizing σ²I + K_bb − Q_bb of a %d-point block: %w", nb, err)
	}
	return nil
}

// blockWorkers returns the goroutines that work on the nblk blocks of a
// chunk at once and the threads each gives its linear algebra: blocks in
// parallel when there are several, each block's small products on one
// thread then.
func (md *Model) blockWorkers(nblk int) (workers, inner int) {
	workers = parallel.Workers(md.threads, nblk)
	if workers > 1 {
		return workers, 1
	}
	return 1, md.threads
}

// blockForwardChunk adds Σ_b log|I + C_b/σ²| over the blocks of one chunk
// (rows xc, Ã columns ac, nc of them) to st.logTerm, keeping the factors
// in st.blk when the data form a single chunk. The blocks are worked on in
// parallel; their terms are added in block order.
func (md *Model) blockForwardChunk(st *state, xc *mat.Dense, ac blas64.General, nc int) error {
	_, d := xc.Dims()
	size := md.blockSize
	nblk := (nc + size - 1) / size
	facs := make([]*chol.Cholesky, nblk)
	logs := make([]float64, nblk)
	errs := make([]error, nblk)
	workers, inner := md.blockWorkers(nblk)
	parallel.Ranges(nblk, workers, func(_, lo, hi int) {
		kbb := mat.NewDense(min(size, nc), min(size, nc), nil)
		for j := lo; j < hi; j++ {
			b0 := j * size
			nb := min(size, nc-b0)
			c := new(chol.Cholesky)
			kb := kbb.Slice(0, nb, 0, nb).(*mat.Dense)
			if errs[j] = md.blockFactor(c, kb, xc.Slice(b0, b0+nb, 0, d).(*mat.Dense), ac.Data[b0:], ac.Stride, st.s, inner); errs[j] != nil {
				return
			}
			facs[j], logs[j] = c, c.LogDet()-float64(nb)*math.Log(st.s)
		}
	})
	for j := range logs {
		if errs[j] != nil {
			return errs[j]
		}
		st.logTerm += logs[j]
	}
	if st.single {
		st.blk = append(st.blk, facs...)
	}
	return nil
}

// blockBack is the shared state of the parallel block loop of
// blockBackChunk: its operands (the chunk's first row n0, rows xc, Ã
// columns a, the scratch buf and the threads per block) and the per-block
// and per-range results that are added in order afterwards.
type blockBack struct {
	n0    int
	xc    *mat.Dense
	a     blas64.General
	buf   []float64
	inner int
	ds    []float64   // per block: ½·(n_b/σ² − tr P_b)
	dth   [][]float64 // per range: the kernel-parameter gradient through its K_bb
	err   []error     // per block
}

// blockBackChunk adds, for the blocks of one chunk (first row n0, rows xc,
// Ã columns a, K̄_wf columns b, nc of them), the kernel gradient through
// K_bb (adjoint −P_b/2) to dtheta, L⁻ᵀ·Ã_b·P_b to K̄_wf, Ã_b·P_b·Ã_bᵀ to
// gp (full k×k), and returns Σ_b ½·(n_b/σ² − tr P_b), the direct
// derivative with respect to σ². buf is k×nc scratch (stride nc). The
// blocks are worked on in parallel (each writes its own columns of buf);
// their sums are added in order.
func (md *Model) blockBackChunk(st *state, n0 int, xc *mat.Dense, a, b blas64.General, gpm, buf []float64, dtheta []float64) (float64, error) {
	nc, _ := xc.Dims()
	k := md.m + md.m2
	size := md.blockSize
	nblk := (nc + size - 1) / size
	workers, inner := md.blockWorkers(nblk)
	bb := &blockBack{n0: n0, xc: xc, a: a, buf: buf, inner: inner,
		ds: make([]float64, nblk), dth: make([][]float64, workers), err: make([]error, nblk)}
	parallel.Ranges(nblk, workers, func(part, lo, hi int) {
		bb.dth[part] = make([]float64, len(dtheta))
		for j := lo; j < hi; j++ {
			if bb.err[j] = md.blockBackOne(st, bb, j, part); bb.err[j] != nil {
				return
			}
		}
	})
	var ds float64
	for j := range bb.ds {
		if bb.err[j] != nil {
			return 0, bb.err[j]
		}
		ds += bb.ds[j]
	}
	for _, g := range bb.dth {
		for i, v := range g {
			dtheta[i] += v
		}
	}
	bi := blas.Implementation{Threads: md.threads}
	bi.Dgemm(gblas.NoTrans, gblas.Trans, k, k, nc, 1, buf, nc, a.Data, a.Stride, 1, gpm, k)
	if err := st.lw.SolveLT(nc, buf, nc); err != nil {
		return 0, err
	}
	for r := 0; r < k; r++ {
		row := b.Data[r*b.Stride : r*b.Stride+nc]
		for i := range row {
			row[i] += buf[r*nc+i]
		}
	}
	return ds, nil
}

// blockBackOne does block j of a chunk for blockBackChunk: P_b from the
// kept or a new factor, its σ² term into bb.ds[j], Ã_b·P_b into the
// block's columns of buf, and the kernel gradient with adjoint −P_b/2 into
// bb.dth[part], with bb.inner threads for the linear algebra.
func (md *Model) blockBackOne(st *state, bb *blockBack, j, part int) error {
	n0, xc, a, buf, inner := bb.n0, bb.xc, bb.a, bb.buf, bb.inner
	nc, d := xc.Dims()
	k := md.m + md.m2
	size := md.blockSize
	b0 := j * size
	nb := min(size, nc-b0)
	xb := xc.Slice(b0, b0+nb, 0, d).(*mat.Dense)
	kb := mat.NewDense(nb, nb, nil)
	var c *chol.Cholesky
	if st.single {
		c = st.blk[(n0+b0)/size]
		md.kern.Matrix(kb, xb, xb)
	} else {
		c = new(chol.Cholesky)
		if err := md.blockFactor(c, kb, xb, a.Data[b0:], a.Stride, st.s, inner); err != nil {
			return err
		}
	}
	p := mat.NewDense(nb, nb, nil)
	pr := p.RawMatrix()
	c.SetThreads(inner)
	if err := c.Inverse(pr.Data, pr.Stride); err != nil {
		return err
	}
	var tr float64
	for i := 0; i < nb; i++ {
		tr += pr.Data[i*pr.Stride+i]
	}
	bb.ds[j] = 0.5 * (float64(nb)/st.s - tr)
	bi := blas.Implementation{Threads: inner}
	bi.Dgemm(gblas.NoTrans, gblas.NoTrans, k, nb, nb, 1, a.Data[b0:], a.Stride, pr.Data, pr.Stride, 0, buf[b0:], nc)
	p.Scale(-0.5, p)
	md.kern.MatrixGrad(p, kb, xb, xb, nil, nil, bb.dth[part])
	return nil
}
