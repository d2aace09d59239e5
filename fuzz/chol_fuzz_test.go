package fuzz

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/chol"
)

// cholBytes deterministically turns arbitrary bytes into float64 values.
type cholBytes struct {
	data []byte
	pos  int
}

// byte returns the next byte (0 once the data are exhausted).
func (r *cholBytes) byte() byte {
	if r.pos >= len(r.data) {
		return 0
	}
	b := r.data[r.pos]
	r.pos++
	return b
}

// small returns a value in [-4, 4) from two bytes.
func (r *cholBytes) small() float64 {
	v := int16(uint16(r.byte()) | uint16(r.byte())<<8)
	return float64(v) / 8192
}

// raw returns an arbitrary float64 (NaN, ±Inf, subnormals, huge) from
// eight bytes.
func (r *cholBytes) raw() float64 {
	var b [8]byte
	for i := range b {
		b[i] = r.byte()
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
}

// cholFuzzMatrix builds an n×n symmetric matrix (full storage, stride n)
// from the bytes in one of several ways chosen by mode.
func cholFuzzMatrix(r *cholBytes, n int, mode byte) []float64 {
	a := make([]float64, n*n)
	switch mode % 4 {
	case 0: // Gram matrix G·Gᵀ (positive semidefinite, often singular).
		k := 1 + int(r.byte())%(n+1)
		g := make([]float64, n*k)
		for i := range g {
			g[i] = r.small()
		}
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				var s float64
				for t := 0; t < k; t++ {
					s += g[i*k+t] * g[j*k+t]
				}
				a[i*n+j], a[j*n+i] = s, s
			}
		}
	case 1: // Diagonally dominant with fuzzed signs and scales.
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				v := r.small()
				a[i*n+j], a[j*n+i] = v, v
			}
		}
		for i := 0; i < n; i++ {
			a[i*n+i] = 4*float64(n)*r.small() + float64(r.byte()%3)
		}
	case 2: // Arbitrary bit patterns in the lower triangle.
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				v := r.raw()
				a[i*n+j], a[j*n+i] = v, v
			}
		}
	default: // Small entries: indefinite or nearly singular.
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				v := r.small()
				a[i*n+j], a[j*n+i] = v, v
			}
		}
	}
	return a
}

// cholCheckFactor fails unless L·Lᵀ equals A + jitter·I to within the
// componentwise backward-error bound c·(n+1)·ε·(|L|·|L|ᵀ)_ij.
func cholCheckFactor(t *testing.T, n int, a, l []float64, jitter float64) {
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if l[i*n+j] != 0 {
				t.Fatalf("L[%d,%d] = %g above the diagonal", i, j, l[i*n+j])
			}
		}
		if d := l[i*n+i]; !(d > 0) || math.IsInf(d, 0) {
			t.Fatalf("L[%d,%d] = %g", i, i, d)
		}
	}
	tol := 16 * float64(n+1) * 0x1p-52
	// Gradual underflow in L contributes absolute errors of up to
	// max|L|·2⁻¹⁰⁷⁴ per term.
	var maxL float64
	for _, v := range l {
		maxL = math.Max(maxL, math.Abs(v))
	}
	slack := 4 * float64(n+1) * maxL * math.SmallestNonzeroFloat64
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			var s, abs float64
			for k := 0; k <= j; k++ {
				s += l[i*n+k] * l[j*n+k]
				abs += math.Abs(l[i*n+k] * l[j*n+k])
			}
			want := a[i*n+j]
			if i == j {
				want += jitter
			}
			if math.Abs(s-want) > tol*abs+slack {
				t.Fatalf("(L·Lᵀ)[%d,%d] = %g, want %g (|L||L|ᵀ = %g)", i, j, s, want, abs)
			}
		}
	}
}

// FuzzCholFactor turns arbitrary bytes into a symmetric matrix and factors
// it with chol.Cholesky under a fuzzer-chosen jitter policy. The outcome
// must be either a factor that reproduces A + jitter·I within the backward
// error bound, followed by solves and an adjoint that are checked too, or a
// typed error (*NotPositiveDefiniteError naming a pivot in range, or
// *NonFiniteError naming a non-finite input entry) — never a wrong factor
// and never a panic.
func FuzzCholFactor(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, uint8(3), uint8(0))
	f.Add([]byte{0, 0, 0, 0}, uint8(5), uint8(4))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0xf0, 0x7f}, uint8(2), uint8(2))
	f.Add([]byte("positive definite"), uint8(40), uint8(1))
	f.Add([]byte("indefinite matrix with a negative pivot"), uint8(33), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, nSel, mode uint8) {
		n := int(nSel) % 72
		r := &cholBytes{data: data}
		a := cholFuzzMatrix(r, n, mode)
		policy := chol.NoJitter()
		if mode&4 != 0 {
			policy = chol.DefaultJitter()
		}
		var c chol.Cholesky
		jit, err := c.Factor(n, a, max(1, n), policy, 1+int(mode>>7))
		if err != nil {
			cholCheckFactorError(t, n, a, err)
			return
		}
		for _, v := range a {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatal("factored a matrix with a non-finite entry")
			}
		}
		l := c.RawL()
		cholCheckFactor(t, n, a, l, jit)
		if n == 0 {
			return
		}
		cholCheckSolve(t, r, &c, n, a, jit)
		cholCheckAdjoint(t, r, &c, n)
	})
}

// cholCheckFactorError checks the typed error of a failed factorization of
// the n×n matrix a: a pivot in range whose leading block factors, or the
// position of a non-finite entry of the lower triangle.
func cholCheckFactorError(t *testing.T, n int, a []float64, err error) {
	t.Helper()
	var npd *chol.NotPositiveDefiniteError
	var nf *chol.NonFiniteError
	switch {
	case errors.As(err, &npd):
		if npd.Pivot < 0 || npd.Pivot >= n || (npd.Value > 0 && !math.IsInf(npd.Value, 1)) {
			t.Fatalf("bad NotPositiveDefiniteError %+v for n=%d", npd, n)
		}
		// The leading block before the failing pivot is itself
		// positive definite (with the same jitter) up to the
		// backward error of the pivots that succeeded. On a
		// semidefinite matrix a pivot that is exactly zero in one
		// summation order is a rounding residue of either sign in
		// another, so the block is allowed a shift of
		// 4·p²·ε·max aᵢᵢ, which bounds ‖ΔA‖₂ for the p pivots.
		if p := npd.Pivot; p > 0 {
			lead := make([]float64, p*p)
			var maxDiag float64
			for i := 0; i < p; i++ {
				copy(lead[i*p:i*p+p], a[i*n:i*n+p])
				lead[i*p+i] += npd.Jitter
				maxDiag = math.Max(maxDiag, math.Abs(lead[i*p+i]))
			}
			var c2 chol.Cholesky
			if _, err := c2.Factor(p, lead, p, chol.NoJitter(), 1); err != nil {
				shift := 4*float64(p*p)*0x1p-52*maxDiag + math.SmallestNonzeroFloat64
				for i := 0; i < p; i++ {
					lead[i*p+i] += shift
				}
				if _, err2 := c2.Factor(p, lead, p, chol.NoJitter(), 1); err2 != nil {
					t.Fatalf("pivot %d failed but its leading block does not factor even with a backward-error shift %g: %v", p, shift, err2)
				}
			}
		}
	case errors.As(err, &nf):
		if nf.Col > nf.Row || nf.Row >= n || !(math.IsNaN(a[nf.Row*n+nf.Col]) || math.IsInf(a[nf.Row*n+nf.Col], 0)) {
			t.Fatalf("bad NonFiniteError %+v", nf)
		}
	default:
		t.Fatalf("unexpected error type %T: %v", err, err)
	}
}

// cholCheckSolve solves A·X = B with the factor in c for three fuzzed
// right-hand sides and checks the componentwise backward error
// |B − (A + jI)·X| ≤ c·n·ε·(|L|·|L|ᵀ)·|X|.
func cholCheckSolve(t *testing.T, r *cholBytes, c *chol.Cholesky, n int, a []float64, jit float64) {
	t.Helper()
	l := c.RawL()
	const nrhs = 3
	b := make([]float64, n*nrhs)
	for i := range b {
		b[i] = r.small() + 1
	}
	x := append([]float64(nil), b...)
	if err := c.Solve(nrhs, x, nrhs); err != nil {
		t.Fatal(err)
	}
	absLLt := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for k := 0; k <= min(i, j); k++ {
				s += math.Abs(l[i*n+k] * l[j*n+k])
			}
			absLLt[i*n+j] = s
		}
	}
	tol := 32 * float64(n+1) * 0x1p-52
	for i := 0; i < n; i++ {
		for q := 0; q < nrhs; q++ {
			var res, bound float64
			for j := 0; j < n; j++ {
				aij := a[i*n+j]
				if i == j {
					aij += jit
				}
				res += aij * x[j*nrhs+q]
				bound += absLLt[i*n+j] * math.Abs(x[j*nrhs+q])
			}
			if math.IsInf(bound, 0) || math.IsNaN(bound) {
				continue // the solution overflowed: nothing to check
			}
			if math.Abs(res-b[i*nrhs+q]) > tol*bound*float64(n)+1e-300 {
				t.Fatalf("solve residual %g at (%d,%d) exceeds %g", math.Abs(res-b[i*nrhs+q]), i, q, tol*bound)
			}
		}
	}
}

// cholCheckAdjoint checks the factor's adjoint on fuzzed directions when L
// is well scaled: Ā is symmetric and consistent with the forward-mode
// derivative dL = L·Φ(L⁻¹·dA·L⁻ᵀ), i.e. <Ā, dA> = <L̄, dL>.
func cholCheckAdjoint(t *testing.T, r *cholBytes, c *chol.Cholesky, n int) {
	t.Helper()
	l := c.RawL()
	dmin, dmax := math.Inf(1), 0.0
	for i := 0; i < n; i++ {
		dmin = math.Min(dmin, l[i*n+i])
		dmax = math.Max(dmax, l[i*n+i])
	}
	if dmax/dmin > 1e3 || dmin < 1e-3 || dmax > 1e3 {
		return
	}
	lbar := make([]float64, n*n)
	da := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			lbar[i*n+j] = r.small()
			v := r.small()
			da[i*n+j], da[j*n+i] = v, v
		}
	}
	abar := make([]float64, n*n)
	if err := c.Adjoint(lbar, n, abar, n); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			if abar[i*n+j] != abar[j*n+i] {
				t.Fatalf("Ā not symmetric at (%d,%d)", i, j)
			}
		}
	}
	s := append([]float64(nil), da...)
	if err := c.SolveL(n, s, n); err != nil {
		t.Fatal(err)
	}
	if err := c.SolveLTRight(n, s, n); err != nil {
		t.Fatal(err)
	}
	var lhs, rhs, mag float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			lhs += abar[i*n+j] * da[i*n+j]
			mag += math.Abs(abar[i*n+j] * da[i*n+j])
		}
		for j := 0; j <= i; j++ {
			// dL_ij = Σ_{j≤k≤i} L_ik·Φ(S)_kj.
			var dl float64
			for k := j; k <= i; k++ {
				phi := s[k*n+j]
				if k == j {
					phi /= 2
				}
				dl += l[i*n+k] * phi
			}
			rhs += lbar[i*n+j] * dl
			mag += math.Abs(lbar[i*n+j] * dl)
		}
	}
	if math.Abs(lhs-rhs) > 1e-9*float64(n)*(mag+1) {
		t.Fatalf("adjoint inconsistent: <Ā,dA> = %g, <L̄,dL> = %g", lhs, rhs)
	}
}

// FuzzCholDpotrf runs the LAPACK drop-in chol.Implementation's Dpotrf (both
// triangles) and Dpotrs on fuzzed matrices: it must never panic on valid
// arguments, must agree with itself across the two triangles on success,
// and every factor it accepts must satisfy the backward-error bound.
func FuzzCholDpotrf(f *testing.F) {
	f.Add([]byte{9, 8, 7, 6, 5, 4, 3, 2, 1}, uint8(4), uint8(1))
	f.Add([]byte("lapack"), uint8(35), uint8(0))
	f.Add([]byte{0, 0, 0, 0x80, 0, 0, 0, 0}, uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, nSel, mode uint8) {
		n := int(nSel) % 72
		r := &cholBytes{data: data}
		a := cholFuzzMatrix(r, n, mode)
		impl := chol.Implementation{Threads: 1 + int(mode>>7)}
		lo := append([]float64(nil), a...)
		up := append([]float64(nil), a...)
		okL := impl.Dpotrf(gblas.Lower, n, lo, max(1, n))
		okU := impl.Dpotrf(gblas.Upper, n, up, max(1, n))
		if !okL || !okU {
			return // the two may legitimately disagree near the boundary
		}
		l := make([]float64, n*n)
		for i := 0; i < n; i++ {
			copy(l[i*n:i*n+i+1], lo[i*n:i*n+i+1])
		}
		cholCheckFactor(t, n, a, l, 0)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				l[i*n+j] = up[j*n+i]
			}
		}
		cholCheckFactor(t, n, a, l, 0)
		if n > 0 {
			b := make([]float64, n)
			for i := range b {
				b[i] = 1
			}
			impl.Dpotrs(gblas.Lower, n, 1, lo, n, b, 1)
			impl.Dpotrs(gblas.Upper, n, 1, up, n, make([]float64, n), 1)
		}
	})
}
