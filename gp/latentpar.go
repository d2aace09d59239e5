package gp

import (
	"time"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/internal/parallel"
)

// Latent functions side by side. With several latent functions (a
// multi-class likelihood) and a batch of few columns, the whole-row loops of
// wideForward and blockBackward make, per latent function, products of an
// m×m triangle with an m×N block whose N columns are too few to split well
// between goroutines: on two cores a Dtrmm of order 1000 with 64 columns ran
// 1.2–1.5 times as fast as on one, while the factor's 4 MB triangle is read
// from memory on both. Those products are then run one latent function per
// goroutine, each with one-thread BLAS, into its own scratch. BLAS results
// do not depend on the goroutine budget, every output is written by one
// goroutine, and the sums across latent functions (B̄ += P_l·F̄_l) stay in
// latent order after the products, so the results are the same bits as
// those of the sequential loop. The price is one m×m scratch P̄ and one m×N
// scratch F̄ per goroutine instead of one in all (32 MiB more at m = 2048 on
// two goroutines).

// latentParCols is the batch width below which the per-latent products run
// side by side: from 256 columns on, Dtrmm of order 1000 scaled 1.6–1.9
// times on two cores by itself.
const latentParCols = 256

// latentWorkers returns how many latent functions a whole-row loop over an
// m-row block works on at once: one unless the model has several and the
// batch has fewer than latentParCols columns.
func (mod *Model) latentWorkers(m, n int) int {
	if mod.nl < 2 || n >= latentParCols || m == 0 {
		return 1
	}
	return parallel.Workers(mod.cfg.threads, mod.nl)
}

// latentTask runs the per-latent products of wideForward (fwd) or
// blockBackward on one goroutine per part.
type latentTask struct {
	lg   la // one-thread BLAS and passes, recording nothing
	fwd  bool
	m, n int
	// l0 is the first latent function, l its count and parts the number
	// of goroutines; part q handles latent functions l0+q·l/parts … .
	l0, l, parts int
	// nl is the model's number of latent functions (the stride of vr
	// and dvar).
	nl int
	// Forward operands: the basis, the triangles T_l, the outputs F_l and
	// the point-major variances vr, less sq.
	basis, sq, vr []float64
	tris, f       [][]float64
	// Backward operands: B, the triangles P_l, the F_l, the variance
	// gradients dvar, and per part the scratch F̄ (m×N) and P̄ (m×m).
	b, dvar      []float64
	p            [][]float64
	fbars, pbars []float64
}

// Run computes the products of the latent functions of part q.
func (t *latentTask) Run(q int) {
	for l := t.l0 + q*t.l/t.parts; l < t.l0+(q+1)*t.l/t.parts; l++ {
		if t.fwd {
			t.forward(&t.lg, "", l)
			continue
		}
		t.backward(&t.lg, l)
	}
}

// forward computes latent function l's F_l = T_lᵀ·basis and adds
// colsum(F_l²) − sq to its variances, with lg's BLAS and goroutine budget;
// name labels the product in lg's profile.
func (t *latentTask) forward(lg *la, name string, l int) {
	m, n, nl := t.m, t.n, t.nl
	f := t.f[l]
	copyPar(lg.threads, m, n, t.basis, f)
	lg.trmmL(name, true, m, n, t.tris[l], m, f, n)
	colSumSq(lg.threads, t.vr[l:], nl, 1, m, n, f)
	for j := 0; j < n; j++ {
		t.vr[j*nl+l] -= t.sq[j]
	}
}

// backward computes latent function l's F̄ = 2·F_l·diag(h_l), P̄ =
// tril(B·F̄ᵀ) and then P_l·F̄ over F̄, in slot l − l0 of the scratch, with
// lg's BLAS and goroutine budget.
func (t *latentTask) backward(lg *la, l int) {
	m, n, s := t.m, t.n, l-t.l0
	fbar, pbar := t.fbars[s*m*n:(s+1)*m*n], t.pbars[s*m*m:(s+1)*m*m]
	scaleCols(lg.threads, m, n, 2, t.f[l], t.dvar[l:], t.nl, fbar)
	lg.gemmLowerNT("P̄ = tril(B·F̄ᵀ)", m, n, 1, t.b, n, fbar, n, 0, pbar, m)
	lg.trmmL("B̄ += P·F̄", false, m, n, t.p[l], m, fbar, n)
}

// run runs t on its parts and records its products, count of each, in lg's
// profile.
func (t *latentTask) run(lg *la, ops ...Op) {
	t0 := time.Now()
	parallel.For(t.parts, t.parts, t)
	lg.recInterleaved(time.Since(t0), t.l, ops...)
}

// latentForward is wideForward's whole-row loop over the L latent
// functions: on w goroutines when w > 1 (latentWorkers), otherwise in order
// with lg's budget, each product recorded in lg's profile.
func (mod *Model) latentForward(lg *la, name string, blk *fwdBlock, w int) {
	ws := &mod.ws
	m, N, L := blk.m, ws.n, mod.nl
	t := &ws.latent
	*t = latentTask{lg: latentWorkerLA(), fwd: true, m: m, n: N, l0: 0, l: L, parts: w, nl: L,
		basis: blk.basis, sq: blk.sq, vr: ws.vr, tris: blk.tris, f: blk.f}
	if w > 1 {
		t.run(lg, Op{Name: name, Dims: [3]int{m, N, m}, Flops: float64(m) * float64(m) * float64(N)})
	} else {
		for l := 0; l < L; l++ {
			t.forward(lg, name, l)
		}
	}
	*t = latentTask{} // drop the references to the caller's slices
}

// latentBackProducts computes, for the latent functions l0 … l1−1 of
// blockBackward's whole-row loop, F̄_l = 2·F_l·diag(h_l), P̄_l =
// tril(B·F̄_lᵀ) and P_l·F̄_l, leaving the last two in slot l − l0 of the
// scratch (ws.pbar, m×m per slot, and ws.fbar, m×N): on one goroutine per
// latent function when there are several, otherwise with lg's budget.
func (mod *Model) latentBackProducts(lg *la, blk *backBlock, dvar []float64, l0, l1 int) {
	ws := &mod.ws
	m, N, L := blk.m, ws.n, mod.nl
	mf, nf := float64(m), float64(N)
	t := &ws.latent
	*t = latentTask{lg: latentWorkerLA(), m: m, n: N, l0: l0, l: l1 - l0, parts: l1 - l0, nl: L,
		b: blk.b, dvar: dvar, p: blk.p, f: blk.f, fbars: ws.fbar, pbars: ws.pbar}
	if l1-l0 > 1 {
		t.run(lg,
			Op{Name: "P̄ = tril(B·F̄ᵀ)", Dims: [3]int{m, m, N}, Flops: mf * (mf + 1) * nf},
			Op{Name: "B̄ += P·F̄", Dims: [3]int{m, N, m}, Flops: mf * mf * nf})
	} else {
		t.backward(lg, l0)
	}
	*t = latentTask{}
}

// latentWorkerLA returns the linear algebra of one latent-parallel
// goroutine: one-thread BLAS and passes, and no profile (the loop records
// its products as a whole).
func latentWorkerLA() la {
	return la{bi: blas.Implementation{Threads: 1}, threads: 1}
}
