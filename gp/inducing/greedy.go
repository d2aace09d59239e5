package inducing

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/internal/nilcheck"
)

// GreedyOptions control Greedy, GreedyGiven and GreedyInit. The zero value
// gives the defaults.
type GreedyOptions struct {
	// Subsample is the number of rows, drawn at random without
	// replacement, among which the points are chosen and over which the
	// residual variance is measured (0 or a value above n means all rows).
	Subsample int
	// Seed seeds the subsample draw. Without a subsample the selection
	// does not depend on it.
	Seed uint64
	// Tol is the relative floor on the residual variance of a point that
	// may still be chosen: selection fails once every remaining candidate
	// has a residual variance of at most Tol times the largest prior
	// variance k(x, x) among the candidates, since such points are, to
	// rounding, already explained by the chosen ones and would make K_ZZ
	// singular. 0 means 1e-10, which keeps the squared pivots of the
	// chosen points' K_ZZ above the pivot floor of chol.DefaultJitter.
	Tol float64
	// Threads bounds the goroutines of the Cholesky factorization and the
	// triangular solve of GreedyGiven (0 means GOMAXPROCS).
	Threads int
}

// GreedySelection is the outcome of a greedy selection.
type GreedySelection struct {
	// Points holds the chosen inputs (m×d), in the order chosen.
	Points *mat.Dense
	// Index holds the row of x each point was taken from.
	Index []int
	// Trace[j] is the residual trace Σᵢ (k(xᵢ, xᵢ) − Q(xᵢ, xᵢ)) over the
	// candidate rows once the first j points are chosen (Trace[0]: none,
	// that is, given only the Z of GreedyGiven), where Q is the Nyström
	// approximation by the given and chosen points. It does not increase
	// with j.
	Trace []float64
}

// maxGreedyValues bounds m times the number of candidates, the size of
// the partial Cholesky factor Greedy keeps (1 GiB).
const maxGreedyValues = 1 << 27

// Greedy chooses m rows of x as inducing inputs by the greedy
// conditional-variance rule of Burt, Rasmussen and van der Wilk
// ("Convergence of sparse variational inference in Gaussian process
// regression", JMLR 2020): it repeatedly takes the candidate with the
// largest diagonal of K_ff − Q_ff, the variance that the points chosen so
// far leave unexplained. This is a pivoted Cholesky factorization of K_ff
// stopped after m pivots; each new point updates the partial factor and the
// residual diagonal in O(N·m) time, so the selection costs O(N·m²) time and
// O(N·m) memory for N candidates. Ties go to the lower row.
//
// The result depends on the kernel's hyperparameters: under a lengthscale
// much shorter than the distances between the points every residual
// variance stays near the prior variance and the choice is nearly
// arbitrary, so Greedy is best run under a kernel fitted to the data, or
// with a lengthscale of the order of those distances. It is deterministic
// for a given x, kernel, m and options. Greedy returns an error for a nil
// kernel or data, data with another number of columns than k.Dim(), NaN or
// Inf in x or in its prior variances, m < 1 or m above the number of
// candidates, and when fewer than m candidates have a residual variance
// above the floor GreedyOptions.Tol.
func Greedy(k kernel.Kernel, x *mat.Dense, m int, opts GreedyOptions) (*GreedySelection, error) {
	return greedy(k, x, nil, m, opts)
}

// GreedyGiven continues the greedy selection of Greedy from given inducing
// inputs z: it chooses m rows of x by the largest residual variance of the
// process conditioned on f(z),
//
//	C_vv(x) = k(x, x) − k(x, z)·K_zz⁻¹·k(z, x),
//
// the covariance of SOLVE-GP's orthogonal process f⊥, so that the chosen
// points suit the orthogonal inducing inputs O. The partial Cholesky
// factor of z (K_zz = L·Lᵀ, with chol.DefaultJitter) gives the first
// columns L⁻¹·K_zx of the pivoted factorization, which then continues as
// in Greedy. When z are the first points Greedy chose, GreedyGiven chooses
// the points Greedy would have chosen next.
//
// Besides the errors of Greedy it returns one for a nil z, a z with
// another number of columns than x, NaN or Inf in z, and a K_zz that does
// not factor.
func GreedyGiven(k kernel.Kernel, x, z *mat.Dense, m int, opts GreedyOptions) (*GreedySelection, error) {
	if z == nil {
		return nil, errors.New("inducing: GreedyGiven: nil z")
	}
	return greedy(k, x, z, m, opts)
}

// GreedyInit chooses m + m2 rows of x by Greedy and returns the first m as
// the inducing inputs Z and the next m2 as the orthogonal inducing inputs
// O of SOLVE-GP (nil if m2 = 0): O are the points of largest residual
// variance given Z, as GreedyGiven would choose them. It is the greedy
// counterpart of Init.
func GreedyInit(k kernel.Kernel, x *mat.Dense, m, m2 int, opts GreedyOptions) (z, o *mat.Dense, err error) {
	if m < 1 || m2 < 0 {
		return nil, nil, fmt.Errorf("inducing: GreedyInit: m = %d, m2 = %d; need m ≥ 1 and m2 ≥ 0", m, m2)
	}
	sel, err := Greedy(k, x, m+m2, opts)
	if err != nil {
		return nil, nil, err
	}
	_, d := sel.Points.Dims()
	z = mat.DenseCopyOf(sel.Points.Slice(0, m, 0, d))
	if m2 > 0 {
		o = mat.DenseCopyOf(sel.Points.Slice(m, m+m2, 0, d))
	}
	return z, o, nil
}

// greedy checks the arguments, draws the candidates, starts the pivoted
// factorization from z (if not nil) and runs m pivots.
func greedy(k kernel.Kernel, x, z *mat.Dense, m int, opts GreedyOptions) (*GreedySelection, error) {
	name := "Greedy"
	if z != nil {
		name = "GreedyGiven"
	}
	if nilcheck.IsNil(k) {
		return nil, fmt.Errorf("inducing: %s: nil kernel", name)
	}
	if x == nil {
		return nil, fmt.Errorf("inducing: %s: nil data", name)
	}
	n, d := x.Dims()
	if n == 0 || d == 0 {
		return nil, fmt.Errorf("inducing: %s: no data", name)
	}
	if kd := k.Dim(); kd != d {
		return nil, fmt.Errorf("inducing: %s: data have %d columns, the kernel takes %d", name, d, kd)
	}
	if opts.Subsample < 0 || !(opts.Tol >= 0) || math.IsInf(opts.Tol, 0) {
		return nil, fmt.Errorf("inducing: %s: bad options %+v", name, opts)
	}
	if err := checkFiniteRows(name, "x", x); err != nil {
		return nil, err
	}
	if z != nil {
		if _, dz := z.Dims(); dz != d {
			return nil, fmt.Errorf("inducing: %s: z has %d columns, the data %d", name, dz, d)
		}
		if err := checkFiniteRows(name, "z", z); err != nil {
			return nil, err
		}
	}
	ns := opts.Subsample
	if ns == 0 || ns > n {
		ns = n
	}
	if m < 1 || m > ns {
		return nil, fmt.Errorf("inducing: %s: m = %d, need 1 ≤ m ≤ %d (the candidate rows)", name, m, ns)
	}
	mz := 0
	if z != nil {
		mz, _ = z.Dims()
	}
	if mz+m > maxGreedyValues/ns {
		return nil, fmt.Errorf("inducing: %s: %d points over %d candidates is more than %d values", name, mz+m, ns, maxGreedyValues)
	}
	xs, rows := candidates(x, ns, opts.Seed)
	p, err := newPivoted(k, xs, mz+m)
	if err != nil {
		return nil, fmt.Errorf("inducing: %s: %w", name, err)
	}
	if z != nil {
		if err := p.condition(z, opts.Threads); err != nil {
			return nil, fmt.Errorf("inducing: %s: %w", name, err)
		}
	}
	tol := opts.Tol
	if tol == 0 {
		tol = 1e-10
	}
	sel := &GreedySelection{Points: mat.NewDense(m, d, nil), Index: make([]int, m), Trace: make([]float64, m+1)}
	sel.Trace[0] = p.trace()
	for j := 0; j < m; j++ {
		i, ok, err := p.step(tol * p.maxPrior)
		if err != nil {
			return nil, fmt.Errorf("inducing: %s: %w", name, err)
		}
		if !ok {
			return nil, fmt.Errorf("inducing: %s: only %d of the %d points asked for have a residual variance above %g of the largest prior variance; ask for fewer points", name, j, m, tol)
		}
		sel.Index[j] = rows[i]
		copy(sel.Points.RawRowView(j), xs.RawRowView(i))
		sel.Trace[j+1] = p.trace()
	}
	return sel, nil
}

// checkFiniteRows reports the first NaN or Inf entry of a.
func checkFiniteRows(name, what string, a *mat.Dense) error {
	r, _ := a.Dims()
	for i := 0; i < r; i++ {
		for j, v := range a.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("inducing: %s: %s[%d][%d] = %v is not finite", name, what, i, j, v)
			}
		}
	}
	return nil
}

// candidates returns the ns candidate rows of x and their row numbers: x
// itself when ns = n, otherwise a seeded random subsample in ascending row
// order.
func candidates(x *mat.Dense, ns int, seed uint64) (*mat.Dense, []int) {
	n, d := x.Dims()
	rows := make([]int, ns)
	if ns == n {
		for i := range rows {
			rows[i] = i
		}
		return x, rows
	}
	rng := rand.New(rand.NewPCG(seed, 0x677265656479))
	pick := make([]bool, n)
	for _, r := range rng.Perm(n)[:ns] {
		pick[r] = true
	}
	xs := mat.NewDense(ns, d, nil)
	j := 0
	for i, ok := range pick {
		if ok {
			rows[j] = i
			copy(xs.RawRowView(j), x.RawRowView(i))
			j++
		}
	}
	return xs, rows
}

// pivoted is a partial pivoted Cholesky factorization of K_ff over the
// candidate rows xs: K_ff ≈ Cᵀ·C with C's rows the columns of the factor.
type pivoted struct {
	k        kernel.Kernel
	xs       *mat.Dense
	c        [][]float64 // rows of C, each of length ns
	resid    []float64   // diag(K_ff − Cᵀ·C), 0 at chosen rows
	chosen   []bool
	maxPrior float64    // the largest k(x, x) over the candidates
	kcol     *mat.Dense // ns×1 scratch for a kernel column
	coef     []float64  // scratch: column p of C
}

// newPivoted starts the factorization with no columns, with room for
// capacity of them.
func newPivoted(k kernel.Kernel, xs *mat.Dense, capacity int) (*pivoted, error) {
	ns, _ := xs.Dims()
	p := &pivoted{
		k: k, xs: xs,
		c:      make([][]float64, 0, capacity),
		resid:  make([]float64, ns),
		chosen: make([]bool, ns),
		kcol:   mat.NewDense(ns, 1, nil),
		coef:   make([]float64, 0, capacity),
	}
	k.Diag(p.resid, xs)
	for i, v := range p.resid {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("prior variance k(x, x) = %v at candidate %d is not finite and non-negative", v, i)
		}
		p.maxPrior = math.Max(p.maxPrior, v)
	}
	return p, nil
}

// condition adds the columns L⁻¹·K_zx of given points z, where
// K_zz = L·Lᵀ, and subtracts their squares from the residual diagonal.
func (p *pivoted) condition(z *mat.Dense, threads int) error {
	mz, _ := z.Dims()
	ns, _ := p.xs.Dims()
	kzz := mat.NewDense(mz, mz, nil)
	p.k.Matrix(kzz, z, z)
	var ch chol.Cholesky
	if _, err := ch.Factor(mz, kzz.RawMatrix().Data, mz, chol.DefaultJitter(), threads); err != nil {
		return fmt.Errorf("factoring the kernel matrix of Z: %w", err)
	}
	kzx := mat.NewDense(mz, ns, nil)
	p.k.Matrix(kzx, z, p.xs)
	if err := ch.SolveL(ns, kzx.RawMatrix().Data, ns); err != nil {
		return err
	}
	for l := 0; l < mz; l++ {
		row := kzx.RawRowView(l)
		for i, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("L⁻¹·K_zx[%d][%d] = %v is not finite", l, i, v)
			}
			p.resid[i] = math.Max(0, p.resid[i]-v*v)
		}
		p.c = append(p.c, row)
	}
	return nil
}

// step takes the unchosen candidate of largest residual variance as the
// next pivot, adds its column to the factor and returns its index; it
// returns false, and changes nothing, when that variance is at most floor,
// and an error when the kernel column holds NaN or Inf.
func (p *pivoted) step(floor float64) (int, bool, error) {
	best, piv := math.Inf(-1), -1
	for i, v := range p.resid {
		if !p.chosen[i] && v > best {
			best, piv = v, i
		}
	}
	if piv < 0 || !(best > floor) {
		return -1, false, nil
	}
	ns, d := p.xs.Dims()
	p.k.Matrix(p.kcol, p.xs, p.xs.Slice(piv, piv+1, 0, d))
	col := make([]float64, ns)
	copy(col, p.kcol.RawMatrix().Data[:ns])
	for i, v := range col {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return -1, false, fmt.Errorf("k(x[%d], x[%d]) = %v is not finite", i, piv, v)
		}
	}
	p.coef = p.coef[:0]
	for _, row := range p.c {
		p.coef = append(p.coef, row[piv])
	}
	for l, row := range p.c {
		a := p.coef[l]
		if a == 0 {
			continue
		}
		for i, v := range row {
			col[i] -= a * v
		}
	}
	inv := 1 / math.Sqrt(best)
	for i := range col {
		col[i] *= inv
		p.resid[i] = math.Max(0, p.resid[i]-col[i]*col[i])
	}
	p.resid[piv] = 0
	p.chosen[piv] = true
	p.c = append(p.c, col)
	return piv, true, nil
}

// trace returns the sum of the residual variances.
func (p *pivoted) trace() float64 {
	var s float64
	for _, v := range p.resid {
		s += v
	}
	return s
}
