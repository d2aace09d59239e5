package exact

import (
	"fmt"
	"math"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/chol"
	"github.com/solvegp/solvegp/gp/transform"
)

// factored is the state after K̃ has been factored in md.buf: the lower
// triangle of buf holds L with L·Lᵀ = K̃ + jitter·I.
type factored struct {
	n      int
	noise  float64 // σ²
	jitter float64 // diagonal jitter added by the policy (0 if none)
	mean   float64 // mean(diag(K̃)), the jitter's reference scale
	alpha  []float64
	logDet float64
}

// LogMarginal returns the log marginal likelihood log N(y | 0, K + σ²I) of
// the data x (N×D), y at the model's parameters. If grad is not nil (length
// NumParams) it receives the gradient with respect to the flat
// unconstrained parameters. See the package documentation for the jitter
// policy and the errors.
func (md *Model) LogMarginal(x *mat.Dense, y []float64, grad []float64) (float64, error) {
	n, err := md.checkData("LogMarginal", x, y)
	if err != nil {
		return 0, err
	}
	if grad != nil && len(grad) != md.NumParams() {
		return 0, fmt.Errorf("exact: LogMarginal: gradient has length %d, the model has %d parameters", len(grad), md.NumParams())
	}
	if n == 0 {
		clear(grad)
		return 0, nil
	}
	st, err := md.factor(x, y)
	if err != nil {
		return 0, err
	}
	lml := -0.5*(dot(y, st.alpha)+st.logDet) - 0.5*float64(n)*math.Log(2*math.Pi)
	if math.IsNaN(lml) || math.IsInf(lml, 0) {
		return 0, fmt.Errorf("exact: LogMarginal: the log marginal likelihood is %v", lml)
	}
	if grad == nil {
		return lml, nil
	}
	if err := md.gradient(x, st, grad); err != nil {
		return 0, err
	}
	return lml, nil
}

// factor forms K̃ = K(x, x) + σ²I in the lower triangle of md.buf, factors
// it in place under the model's jitter policy and solves for α = K̃⁻¹y.
func (md *Model) factor(x *mat.Dense, y []float64) (*factored, error) {
	n, _ := x.Dims()
	if cap(md.buf) < n*n {
		md.buf = nil // release the old workspace before allocating the new one
		md.buf = make([]float64, n*n)
	}
	md.buf = md.buf[:n*n]
	a := md.buf
	st := &factored{n: n, noise: md.lik.NoiseVariance()}
	if err := md.buildK(x, st.noise); err != nil {
		return nil, err
	}
	p := md.jitter
	scale := 1.0
	st.mean = chol.MeanDiag(n, a, n)
	if st.mean > 0 && !math.IsInf(st.mean, 0) {
		scale = st.mean
	}
	floor := p.MinPivot * scale
	lp := chol.Implementation{Threads: md.threads}
	jit := 0.0
	var piv int
	var val float64
	for t := 0; ; t++ {
		if t > 0 {
			// The failed attempt overwrote K̃: form it again, jittered.
			if err := md.buildK(x, st.noise+jit); err != nil {
				return nil, err
			}
		}
		if lp.Dpotrf(gblas.Lower, n, a, n) {
			if piv, val = belowFloor(n, a, floor); piv < 0 {
				break
			}
		} else {
			piv, val = failedPivot(n, a)
		}
		if t == p.MaxTries {
			e := &chol.NotPositiveDefiniteError{Pivot: piv, Value: val, Jitter: jit}
			if val > 0 && !math.IsInf(val, 0) {
				e.Floor = floor
			}
			return nil, e
		}
		if t == 0 {
			jit = p.Start * scale
		} else {
			jit *= growth(p)
		}
	}
	st.jitter = jit
	for i := 0; i < n; i++ {
		st.logDet += 2 * math.Log(a[i*n+i])
	}
	st.alpha = append([]float64(nil), y...)
	lp.Dpotrs(gblas.Lower, n, 1, a, n, st.alpha, 1)
	return st, nil
}

// growth is the policy's effective growth factor (0 means 10).
func growth(p chol.JitterPolicy) float64 {
	if p.Growth == 0 {
		return 10
	}
	return p.Growth
}

// belowFloor returns the first pivot of the factor in the lower triangle of
// (a, n) whose square is below floor, and that square, or −1.
func belowFloor(n int, a []float64, floor float64) (int, float64) {
	if floor > 0 {
		for i := 0; i < n; i++ {
			if d := a[i*n+i]; d*d < floor {
				return i, d * d
			}
		}
	}
	return -1, 0
}

// failedPivot locates the pivot at which Dpotrf stopped: the pivots before
// it are positive and finite, and it holds its Schur-complement value.
func failedPivot(n int, a []float64) (int, float64) {
	for i := 0; i < n; i++ {
		if d := a[i*n+i]; !(d > 0) || math.IsInf(d, 0) {
			return i, d
		}
	}
	return n - 1, a[(n-1)*n+n-1]
}

// buildK writes K(x, x) + diag·I into the lower triangle of md.buf (and
// the upper triangles of its diagonal tiles), tile by tile, and returns a
// *chol.NonFiniteError if an entry is NaN or Inf.
func (md *Model) buildK(x *mat.Dense, diag float64) error {
	n, d := x.Dims()
	big := mat.NewDense(n, n, md.buf)
	b := md.block
	for b0 := 0; b0 < n; b0 += b {
		b1 := min(b0+b, n)
		xb := x.Slice(b0, b1, 0, d).(*mat.Dense)
		for c0 := 0; c0 <= b0; c0 += b {
			c1 := min(c0+b, n)
			xc := xb
			if c0 != b0 {
				xc = x.Slice(c0, c1, 0, d).(*mat.Dense)
			}
			md.kern.Matrix(big.Slice(b0, b1, c0, c1).(*mat.Dense), xb, xc)
		}
	}
	a := md.buf
	for i := 0; i < n; i++ {
		a[i*n+i] += diag
		for j, v := range a[i*n : i*n+i+1] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return &chol.NonFiniteError{Row: i, Col: j, Value: v}
			}
		}
	}
	return nil
}

// gradient writes the gradient of the log marginal likelihood into grad,
// given the factor in md.buf: K̃⁻¹ in place (DPOTRI), W = ½(ααᵀ − K̃⁻¹)
// in place, the jitter's share on W's diagonal, then Σ_ij W_ij·∂K_ij/∂θ
// tile by tile through the kernel's MatrixGrad.
func (md *Model) gradient(x *mat.Dense, st *factored, grad []float64) error {
	n := st.n
	a := md.buf
	lp := chol.Implementation{Threads: md.threads}
	if !lp.Dpotri(gblas.Lower, n, a, n) {
		return fmt.Errorf("exact: LogMarginal: zero pivot in the Cholesky factor")
	}
	al := st.alpha
	for i := 0; i < n; i++ {
		row := a[i*n : i*n+i+1]
		ai := 0.5 * al[i]
		for j := range row {
			row[j] = ai*al[j] - 0.5*row[j]
		}
	}
	chol.AddJitterAdjoint(n, st.jitter, st.mean, a, n, a, n)
	var tr float64
	for i := 0; i < n; i++ {
		tr += a[i*n+i]
	}
	md.mirrorDiagTiles(n)
	nk := md.kern.NumParams()
	clear(grad)
	md.kernelGrad(x, grad[:nk])
	var u [1]float64
	md.lik.Params(u[:])
	// σ² = floor + softplus(u), and ∂K̃/∂σ² = I.
	grad[nk] = tr * transform.SoftplusDeriv(u[0])
	for i, v := range grad {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("exact: LogMarginal: gradient entry %d is %v", i, v)
		}
	}
	return nil
}

// mirrorDiagTiles copies the strict lower triangle of every diagonal tile
// of md.buf into its upper triangle, so that each diagonal tile of W is a
// full symmetric matrix for the kernel's MatrixGrad.
func (md *Model) mirrorDiagTiles(n int) {
	a := md.buf
	for b0 := 0; b0 < n; b0 += md.block {
		b1 := min(b0+md.block, n)
		for i := b0; i < b1; i++ {
			for j := b0; j < i; j++ {
				a[j*n+i] = a[i*n+j]
			}
		}
	}
}

// kernelGrad adds Σ_ij W_ij·∂K_ij/∂θ into dparams, with the symmetric W in
// the lower tiles of md.buf. Off-diagonal tiles stand for themselves and
// their transposes, so their contribution counts twice.
func (md *Model) kernelGrad(x *mat.Dense, dparams []float64) {
	n, d := x.Dims()
	b := md.block
	big := mat.NewDense(n, n, md.buf)
	if cap(md.tile) < b*b {
		md.tile = make([]float64, b*b)
	}
	tile := mat.NewDense(b, b, md.tile[:b*b])
	off := make([]float64, len(dparams))
	for b0 := 0; b0 < n; b0 += b {
		b1 := min(b0+b, n)
		xb := x.Slice(b0, b1, 0, d).(*mat.Dense)
		for c0 := 0; c0 <= b0; c0 += b {
			c1 := min(c0+b, n)
			xc, dst := xb, dparams
			if c0 != b0 {
				xc, dst = x.Slice(c0, c1, 0, d).(*mat.Dense), off
			}
			kt := tile.Slice(0, b1-b0, 0, c1-c0).(*mat.Dense)
			md.kern.Matrix(kt, xb, xc)
			md.kern.MatrixGrad(big.Slice(b0, b1, c0, c1).(*mat.Dense), kt, xb, xc, nil, nil, dst)
		}
	}
	for i, v := range off {
		dparams[i] += 2 * v
	}
}

// dot returns Σ x_i·y_i.
func dot(x, y []float64) float64 {
	return blas.Implementation{}.Ddot(len(x), x, 1, y, 1)
}
