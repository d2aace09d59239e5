package kernel

import (
	"errors"
	"fmt"
	"math"
	"reflect"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/internal/nilcheck"
)

// combo holds the parts shared by Sum and Product.
type combo struct {
	parts []Kernel
	offs  []int // parameter offset of each part; offs[len(parts)] = total
	dim   int
}

func newCombo(what string, parts []Kernel) (combo, error) {
	if len(parts) == 0 {
		return combo{}, fmt.Errorf("kernel: %s of no kernels", what)
	}
	c := combo{parts: append([]Kernel(nil), parts...), offs: make([]int, len(parts)+1)}
	for i, p := range c.parts {
		if nilcheck.IsNil(p) {
			return combo{}, fmt.Errorf("kernel: %s part %d is nil", what, i)
		}
		if i == 0 {
			c.dim = p.Dim()
		} else if p.Dim() != c.dim {
			return combo{}, fmt.Errorf("kernel: %s part %d has dimension %d, part 0 has %d", what, i, p.Dim(), c.dim)
		}
		np := p.NumParams()
		if np < 0 {
			return combo{}, fmt.Errorf("kernel: %s part %d has %d parameters", what, i, np)
		}
		c.offs[i+1] = c.offs[i] + np
	}
	if err := checkShared(what, c.parts); err != nil {
		return combo{}, err
	}
	return c, nil
}

// checkShared returns an error if one kernel is two of the parts, or is
// held by two of them through nested sums and products (any part with a
// Parts method): its parameters would appear twice in the combination's
// vector, and setting them would leave only the later copy's values.
// Kernels are identified by their address, so only kernels held by
// pointer, as this package's are, can be told apart; kernels without
// parameters have nothing to share and may repeat.
func checkShared(what string, parts []Kernel) error {
	owner := make(map[uintptr]int)
	var walk func(k Kernel, i int) error
	walk = func(k Kernel, i int) error {
		if nilcheck.IsNil(k) {
			return nil
		}
		if v := reflect.ValueOf(k); v.Kind() == reflect.Pointer && k.NumParams() > 0 {
			if j, seen := owner[v.Pointer()]; seen {
				if j == i {
					return fmt.Errorf("kernel: %s part %d holds one kernel (%T) twice; each part must be a separate kernel", what, i, k)
				}
				return fmt.Errorf("kernel: %s parts %d and %d hold the same kernel (%T); each part must be a separate kernel", what, j, i, k)
			}
			owner[v.Pointer()] = i
		}
		if c, ok := k.(interface{ Parts() []Kernel }); ok {
			for _, p := range c.Parts() {
				if err := walk(p, i); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i, p := range parts {
		if err := walk(p, i); err != nil {
			return err
		}
	}
	return nil
}

// Dim returns the common input dimension of the parts.
func (c *combo) Dim() int { return c.dim }

// SetWorkers calls SetWorkers(n) on every part that has that method (a
// Stationary kernel, or a nested sum or product), bounding the goroutines
// each part's evaluation uses (n ≤ 0: GOMAXPROCS).
func (c *combo) SetWorkers(n int) {
	for _, p := range c.parts {
		if w, ok := p.(interface{ SetWorkers(int) }); ok {
			w.SetWorkers(n)
		}
	}
}

// NumParams returns the total number of parameters of the parts.
func (c *combo) NumParams() int { return c.offs[len(c.parts)] }

// clone returns a copy of c holding copies of the parts made by their
// Clone methods, or false if a part has none or its Clone returns nil, no
// Kernel or the part itself.
func (c *combo) clone() (combo, bool) {
	parts := make([]Kernel, len(c.parts))
	for i, p := range c.parts {
		cl, ok := p.(interface{ Clone() any })
		if !ok {
			return combo{}, false
		}
		k, ok := cl.Clone().(Kernel)
		if !ok || !nilcheck.IsCopy(k, p) {
			return combo{}, false // no copy, one of another type (an embedded Clone), or p itself
		}
		parts[i] = k
	}
	return combo{parts: parts, offs: append([]int(nil), c.offs...), dim: c.dim}, true
}

// Parts returns the component kernels (the slice is a copy; the kernels
// are shared).
func (c *combo) Parts() []Kernel { return append([]Kernel(nil), c.parts...) }

// Params copies the parts' parameters, concatenated in order, into dst.
func (c *combo) Params(dst []float64) {
	if len(dst) != c.NumParams() {
		panic(fmt.Sprintf("kernel: Params destination has length %d, want %d", len(dst), c.NumParams()))
	}
	for i, p := range c.parts {
		p.Params(dst[c.offs[i]:c.offs[i+1]])
	}
}

// setParams sets the parts' parameters from their concatenation, then runs
// check on the combined kernel. On error no part is changed.
func (c *combo) setParams(src []float64, check func() error) error {
	if len(src) != c.NumParams() {
		return fmt.Errorf("kernel: %d parameters, want %d", len(src), c.NumParams())
	}
	for i, v := range src {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("kernel: parameter %d is %g", i, v)
		}
	}
	old := make([]float64, len(src))
	c.Params(old)
	restore := func(upto int, err error) error {
		for j := 0; j < upto; j++ {
			if e := c.parts[j].SetParams(old[c.offs[j]:c.offs[j+1]]); e != nil {
				return errors.Join(err, e)
			}
		}
		return err
	}
	for i, p := range c.parts {
		if err := p.SetParams(src[c.offs[i]:c.offs[i+1]]); err != nil {
			return restore(i, fmt.Errorf("kernel: part %d: %w", i, err))
		}
	}
	if err := check(); err != nil {
		return restore(len(c.parts), err)
	}
	return nil
}

// checkVariance reports an error when k(0, 0) of the combined kernel,
// whose Diag is diag, is not finite: the parts' variances are each valid
// but their sum or product overflows float64.
func (c *combo) checkVariance(what string, diag func(dst []float64, x mat.Matrix)) error {
	var v [1]float64
	diag(v[:], mat.NewDense(1, c.dim, nil))
	if math.IsInf(v[0], 0) || math.IsNaN(v[0]) {
		return fmt.Errorf("kernel: the %s of the parts' variances, k(x, x) = %g, is not a finite float64", what, v[0])
	}
	return nil
}

// matrix sets dst to the elementwise sum of the parts' matrices k_i(x, z),
// or to their elementwise product when product is set: Sum and Product
// differ only in how each further part is folded in.
func (c *combo) matrix(dst *mat.Dense, x, z mat.Matrix, product bool) {
	n := checkInput("x", x, c.dim)
	m := checkInput("z", z, c.dim)
	prepareDst(dst, n, m)
	c.parts[0].Matrix(dst, x, z)
	if len(c.parts) == 1 {
		return
	}
	p, buf := getBuf(n * m)
	defer putBuf(p)
	tmp := mat.NewDense(n, m, buf)
	raw := dst.RawMatrix()
	for _, part := range c.parts[1:] {
		part.Matrix(tmp, x, z)
		for i := 0; i < n; i++ {
			fold(raw.Data[i*raw.Stride:i*raw.Stride+m], buf[i*m:i*m+m], product)
		}
	}
}

// diag sets dst to the elementwise sum of the parts' diagonals
// diag k_i(x, x), or to their product when product is set.
func (c *combo) diag(dst []float64, x mat.Matrix, product bool) {
	n := checkInput("x", x, c.dim)
	if len(dst) != n {
		panic(fmt.Sprintf("kernel: Diag destination has length %d, want %d", len(dst), n))
	}
	c.parts[0].Diag(dst, x)
	p, tmp := getBuf(n)
	defer putBuf(p)
	for _, part := range c.parts[1:] {
		part.Diag(tmp, x)
		fold(dst, tmp, product)
	}
}

// fold adds src to dst elementwise, or multiplies dst by it when product
// is set. The test is made once per call, outside the loops, so that each
// loop is as tight as a dedicated one; dst is resliced to src's length so
// that the compiler drops the bounds checks.
func fold(dst, src []float64, product bool) {
	dst = dst[:len(src)]
	if product {
		for j, v := range src {
			dst[j] *= v
		}
		return
	}
	for j, v := range src {
		dst[j] += v
	}
}

func (c *combo) sub(dparams []float64, i int) []float64 {
	if dparams == nil {
		return nil
	}
	return dparams[c.offs[i]:c.offs[i+1]]
}

func (c *combo) checkGradArgs(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, dparams []float64) (n, m int) {
	n = checkInput("x", x, c.dim)
	m = checkInput("z", z, c.dim)
	checkShape("dK", dK, n, m)
	checkShape("K", K, n, m)
	if dx != nil {
		checkShape("dx", dx, n, c.dim)
	}
	if dz != nil {
		checkShape("dz", dz, m, c.dim)
	}
	if dparams != nil && len(dparams) != c.NumParams() {
		panic(fmt.Sprintf("kernel: dparams has length %d, want %d", len(dparams), c.NumParams()))
	}
	return n, m
}

// Sum is the kernel k(x, z) = Σ_i k_i(x, z) of its parts. Its parameter
// vector is the concatenation of the parts' parameter vectors, in order.
type Sum struct{ combo }

// NewSum returns the sum of one or more kernels of equal dimension. The
// parts are shared, not copied: setting the sum's parameters sets theirs.
// So each part must be a separate kernel: it is an error for a kernel to be
// two parts (NewSum(a, a)) or to be held by two parts through nested sums
// and products (NewSum(NewSum(a, b), a)).
func NewSum(parts ...Kernel) (*Sum, error) {
	c, err := newCombo("sum", parts)
	if err != nil {
		return nil, err
	}
	s := &Sum{c}
	if err := s.checkVariance("sum", s.Diag); err != nil {
		return nil, err
	}
	return s, nil
}

// SetParams sets the parts' parameters from their concatenation. It
// returns an error, changing nothing, when a part rejects its parameters or
// when the parts' variances are valid but their sum overflows float64.
func (s *Sum) SetParams(src []float64) error {
	return s.setParams(src, func() error { return s.checkVariance("sum", s.Diag) })
}

// Clone returns a *Sum of copies of the parts made by their Clone methods
// (see gp.Cloner), sharing nothing with s, or nil if a part has no Clone
// method or its Clone returns nil, a value of another type or the part
// itself.
func (s *Sum) Clone() any {
	c, ok := s.clone()
	if !ok {
		return nil
	}
	return &Sum{c}
}

// Matrix sets dst to Σ_i k_i(x, z).
func (s *Sum) Matrix(dst *mat.Dense, x, z mat.Matrix) {
	s.matrix(dst, x, z, false)
}

// Diag sets dst to Σ_i diag k_i(x, x).
func (s *Sum) Diag(dst []float64, x mat.Matrix) {
	s.diag(dst, x, false)
}

// MatrixGrad passes dK to every part, each with its own recomputed
// matrix k_i(x, z) (the sum's K is not needed).
func (s *Sum) MatrixGrad(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, dparams []float64) {
	n, m := s.checkGradArgs(dK, K, x, z, dx, dz, dparams)
	if len(s.parts) == 1 {
		s.parts[0].MatrixGrad(dK, K, x, z, dx, dz, dparams)
		return
	}
	p, buf := getBuf(n * m)
	defer putBuf(p)
	tmp := mat.NewDense(n, m, buf)
	for i, part := range s.parts {
		part.Matrix(tmp, x, z)
		part.MatrixGrad(dK, tmp, x, z, dx, dz, s.sub(dparams, i))
	}
}

// DiagGrad passes dDiag to every part.
func (s *Sum) DiagGrad(dDiag []float64, x mat.Matrix, dx *mat.Dense, dparams []float64) {
	checkInput("x", x, s.dim)
	for i, part := range s.parts {
		part.DiagGrad(dDiag, x, dx, s.sub(dparams, i))
	}
}

// Product is the kernel k(x, z) = Π_i k_i(x, z) of its parts. Its
// parameter vector is the concatenation of the parts' parameter vectors,
// in order.
type Product struct{ combo }

// NewProduct returns the product of one or more kernels of equal
// dimension. The parts are shared, not copied, so each part must be a
// separate kernel, as for NewSum.
func NewProduct(parts ...Kernel) (*Product, error) {
	c, err := newCombo("product", parts)
	if err != nil {
		return nil, err
	}
	pr := &Product{c}
	if err := pr.checkVariance("product", pr.Diag); err != nil {
		return nil, err
	}
	return pr, nil
}

// SetParams sets the parts' parameters from their concatenation. It
// returns an error, changing nothing, when a part rejects its parameters or
// when the parts' variances are valid but their product overflows float64.
func (pr *Product) SetParams(src []float64) error {
	return pr.setParams(src, func() error { return pr.checkVariance("product", pr.Diag) })
}

// Clone returns a *Product of copies of the parts made by their Clone
// methods (see gp.Cloner), sharing nothing with pr, or nil if a part has no
// Clone method or its Clone returns nil, a value of another type or the
// part itself.
func (pr *Product) Clone() any {
	c, ok := pr.clone()
	if !ok {
		return nil
	}
	return &Product{c}
}

// Matrix sets dst to Π_i k_i(x, z) (elementwise).
func (pr *Product) Matrix(dst *mat.Dense, x, z mat.Matrix) {
	pr.matrix(dst, x, z, true)
}

// Diag sets dst to Π_i diag k_i(x, x).
func (pr *Product) Diag(dst []float64, x mat.Matrix) {
	pr.diag(dst, x, true)
}

// MatrixGrad recomputes every part's matrix K_i and passes each part the
// adjoint dK ⊙ Π_{j≠i} K_j (formed by products, not by division, so that
// zeros in K are handled exactly). When that adjoint could overflow
// although the gradients need not (a part's variance within a few orders of
// the float64 maximum), each factor K_j is scaled by a power of two into
// [−1, 1], the part's gradients are formed in scratch and scaled back as
// they are added, so only gradients that are themselves out of range
// become infinite.
func (pr *Product) MatrixGrad(dK, K *mat.Dense, x, z mat.Matrix, dx, dz *mat.Dense, dparams []float64) {
	n, m := pr.checkGradArgs(dK, K, x, z, dx, dz, dparams)
	np := len(pr.parts)
	if np == 1 {
		pr.parts[0].MatrixGrad(dK, K, x, z, dx, dz, dparams)
		return
	}
	nm := n * m
	p, buf := getBuf((np + 1) * nm)
	defer putBuf(p)
	ks := make([]*mat.Dense, np)
	exps := make([]int, np) // 2^exps[j] bounds |K_j|
	for i, part := range pr.parts {
		ks[i] = mat.NewDense(n, m, buf[i*nm:(i+1)*nm])
		part.Matrix(ks[i], x, z)
		exps[i] = maxExp(buf[i*nm : (i+1)*nm])
	}
	dkr := dK.RawMatrix()
	dkExp := 0
	for r := 0; r < n; r++ {
		dkExp = max(dkExp, maxExp(dkr.Data[r*dkr.Stride:r*dkr.Stride+m]))
	}
	adj := buf[np*nm : (np+1)*nm]
	adjM := mat.NewDense(n, m, adj)
	for i, part := range pr.parts {
		for r := 0; r < n; r++ {
			copy(adj[r*m:r*m+m], dkr.Data[r*dkr.Stride:r*dkr.Stride+m])
		}
		scale := 0
		for j := range pr.parts {
			if j != i {
				scale += max(exps[j], 0)
			}
		}
		direct := dkExp+scale <= safeExp
		for j := range pr.parts {
			if j == i {
				continue
			}
			// f is exact: 1 on the direct path, else 2^−exps[j].
			kj, f := buf[j*nm:(j+1)*nm], 1.0
			if !direct {
				f = math.Ldexp(1, -max(exps[j], 0))
			}
			for e := range adj {
				adj[e] *= kj[e] * f
			}
		}
		if direct {
			part.MatrixGrad(adjM, ks[i], x, z, dx, dz, pr.sub(dparams, i))
		} else {
			addScaledGrad(scale, dx, dz, pr.sub(dparams, i), func(tx, tz *mat.Dense, tp []float64) {
				part.MatrixGrad(adjM, ks[i], x, z, tx, tz, tp)
			})
		}
	}
}

// safeExp bounds the binary exponent of an adjoint's entries on the direct
// path of Product's gradients: sums of up to 2^20 products of such an
// entry with factors below 1 stay finite.
const safeExp = 1000

// maxExp returns the smallest e ≥ 0 with |v| ≤ 2^e for every finite v
// in s (0 when all are NaN, ±Inf or within [−1, 1]).
func maxExp(s []float64) int {
	e := 0
	for _, v := range s {
		if v != 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			_, ev := math.Frexp(v)
			e = max(e, ev)
		}
	}
	return e
}

// addScaledGrad runs grad (a MatrixGrad on an adjoint scaled by
// 2^−scale) into zeroed scratch destinations shaped like dx, dz and
// dparams, and adds 2^scale times them into dx, dz and dparams (each may be
// nil, and then grad gets nil for it; dz may be dx).
func addScaledGrad(scale int, dx, dz *mat.Dense, dparams []float64, grad func(tx, tz *mat.Dense, tp []float64)) {
	var tx, tz *mat.Dense
	if dx != nil {
		r, c := dx.Dims()
		tx = mat.NewDense(r, c, nil)
	}
	switch {
	case dz != nil && dz == dx:
		tz = tx
	case dz != nil:
		r, c := dz.Dims()
		tz = mat.NewDense(r, c, nil)
	}
	var tp []float64
	if dparams != nil {
		tp = make([]float64, len(dparams))
	}
	grad(tx, tz, tp)
	addScaled := func(dst, src *mat.Dense) {
		r, c := dst.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				dst.Set(i, j, dst.At(i, j)+math.Ldexp(src.At(i, j), scale))
			}
		}
	}
	if dx != nil {
		addScaled(dx, tx)
	}
	if dz != nil && dz != dx {
		addScaled(dz, tz)
	}
	for k, v := range tp {
		dparams[k] += math.Ldexp(v, scale)
	}
}

// DiagGrad passes every part dDiag ⊙ Π_{j≠i} diag k_j.
func (pr *Product) DiagGrad(dDiag []float64, x mat.Matrix, dx *mat.Dense, dparams []float64) {
	n := checkInput("x", x, pr.dim)
	if len(dDiag) != n {
		panic(fmt.Sprintf("kernel: DiagGrad adjoint has length %d, want %d", len(dDiag), n))
	}
	np := len(pr.parts)
	if np == 1 {
		pr.parts[0].DiagGrad(dDiag, x, dx, dparams)
		return
	}
	p, buf := getBuf((np + 1) * n)
	defer putBuf(p)
	for i, part := range pr.parts {
		part.Diag(buf[i*n:(i+1)*n], x)
	}
	adj := buf[np*n:]
	for i, part := range pr.parts {
		copy(adj, dDiag)
		for j := range pr.parts {
			if j != i {
				for e, v := range buf[j*n : (j+1)*n] {
					adj[e] *= v
				}
			}
		}
		part.DiagGrad(adj, x, dx, pr.sub(dparams, i))
	}
}
