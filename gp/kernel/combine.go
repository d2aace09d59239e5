package kernel

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
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
		if p == nil {
			return combo{}, fmt.Errorf("kernel: %s part %d is nil", what, i)
		}
		if i == 0 {
			c.dim = p.Dim()
		} else if p.Dim() != c.dim {
			return combo{}, fmt.Errorf("kernel: %s part %d has dimension %d, part 0 has %d", what, i, p.Dim(), c.dim)
		}
		c.offs[i+1] = c.offs[i] + p.NumParams()
	}
	return c, nil
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

// SetParams sets the parts' parameters from their concatenation. On error
// no part is changed.
func (c *combo) SetParams(src []float64) error {
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
	for i, p := range c.parts {
		if err := p.SetParams(src[c.offs[i]:c.offs[i+1]]); err != nil {
			// Restore the parts already set.
			for j := 0; j < i; j++ {
				if e := c.parts[j].SetParams(old[c.offs[j]:c.offs[j+1]]); e != nil {
					return errors.Join(err, e)
				}
			}
			return fmt.Errorf("kernel: part %d: %w", i, err)
		}
	}
	return nil
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
func NewSum(parts ...Kernel) (*Sum, error) {
	c, err := newCombo("sum", parts)
	if err != nil {
		return nil, err
	}
	return &Sum{c}, nil
}

// Matrix sets dst to Σ_i k_i(x, z).
func (s *Sum) Matrix(dst *mat.Dense, x, z mat.Matrix) {
	n := checkInput("x", x, s.dim)
	m := checkInput("z", z, s.dim)
	prepareDst(dst, n, m)
	s.parts[0].Matrix(dst, x, z)
	if len(s.parts) == 1 {
		return
	}
	p, buf := getBuf(n * m)
	defer putBuf(p)
	tmp := mat.NewDense(n, m, buf)
	raw := dst.RawMatrix()
	for _, part := range s.parts[1:] {
		part.Matrix(tmp, x, z)
		for i := 0; i < n; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+m]
			for j, v := range buf[i*m : i*m+m] {
				row[j] += v
			}
		}
	}
}

// Diag sets dst to Σ_i diag k_i(x, x).
func (s *Sum) Diag(dst []float64, x mat.Matrix) {
	n := checkInput("x", x, s.dim)
	if len(dst) != n {
		panic(fmt.Sprintf("kernel: Diag destination has length %d, want %d", len(dst), n))
	}
	s.parts[0].Diag(dst, x)
	p, tmp := getBuf(n)
	defer putBuf(p)
	for _, part := range s.parts[1:] {
		part.Diag(tmp, x)
		for i, v := range tmp {
			dst[i] += v
		}
	}
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
// dimension. The parts are shared, not copied.
func NewProduct(parts ...Kernel) (*Product, error) {
	c, err := newCombo("product", parts)
	if err != nil {
		return nil, err
	}
	return &Product{c}, nil
}

// Matrix sets dst to Π_i k_i(x, z) (elementwise).
func (pr *Product) Matrix(dst *mat.Dense, x, z mat.Matrix) {
	n := checkInput("x", x, pr.dim)
	m := checkInput("z", z, pr.dim)
	prepareDst(dst, n, m)
	pr.parts[0].Matrix(dst, x, z)
	if len(pr.parts) == 1 {
		return
	}
	p, buf := getBuf(n * m)
	defer putBuf(p)
	tmp := mat.NewDense(n, m, buf)
	raw := dst.RawMatrix()
	for _, part := range pr.parts[1:] {
		part.Matrix(tmp, x, z)
		for i := 0; i < n; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+m]
			for j, v := range buf[i*m : i*m+m] {
				row[j] *= v
			}
		}
	}
}

// Diag sets dst to Π_i diag k_i(x, x).
func (pr *Product) Diag(dst []float64, x mat.Matrix) {
	n := checkInput("x", x, pr.dim)
	if len(dst) != n {
		panic(fmt.Sprintf("kernel: Diag destination has length %d, want %d", len(dst), n))
	}
	pr.parts[0].Diag(dst, x)
	p, tmp := getBuf(n)
	defer putBuf(p)
	for _, part := range pr.parts[1:] {
		part.Diag(tmp, x)
		for i, v := range tmp {
			dst[i] *= v
		}
	}
}

// MatrixGrad recomputes every part's matrix K_i and passes each part the
// adjoint dK ⊙ Π_{j≠i} K_j (formed by products, not by division, so that
// zeros in K are handled exactly).
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
	for i, part := range pr.parts {
		ks[i] = mat.NewDense(n, m, buf[i*nm:(i+1)*nm])
		part.Matrix(ks[i], x, z)
	}
	adj := buf[np*nm : (np+1)*nm]
	adjM := mat.NewDense(n, m, adj)
	dkr := dK.RawMatrix()
	for i, part := range pr.parts {
		for r := 0; r < n; r++ {
			copy(adj[r*m:r*m+m], dkr.Data[r*dkr.Stride:r*dkr.Stride+m])
		}
		for j := range pr.parts {
			if j == i {
				continue
			}
			kj := buf[j*nm : (j+1)*nm]
			for e := range adj {
				adj[e] *= kj[e]
			}
		}
		part.MatrixGrad(adjM, ks[i], x, z, dx, dz, pr.sub(dparams, i))
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
