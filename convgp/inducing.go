package convgp

import (
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/transform"
)

// The covariances among inducing points (K_uu, K_uv, K_vv) and their
// gradients. Each matrix is cut into blocks of inducingRows rows, the unit of
// parallel work; the sums that run over rows (kernel-parameter gradients and
// the location gradients of z2) are kept per block and added in block order,
// so the results have the same bits for every number of workers.

// inducingRows is the number of rows in one block of an inducing × inducing
// matrix.
const inducingRows = 32

// inducingBlocks returns the number of row blocks of an m-row matrix.
func inducingBlocks(m int) int { return (m + inducingRows - 1) / inducingRows }

// blockRows returns the rows [r0, r1) of block b of an m-row matrix.
func blockRows(b, m int) (r0, r1 int) {
	return b * inducingRows, min((b+1)*inducingRows, m)
}

// InducingMatrix sets dst (rows(z1)×rows(z2)) to the covariance
// k_g(z1_i, z2_j) (times the location kernel for TICK) among inducing points.
func (k *Kernel) InducingMatrix(dst *mat.Dense, z1, z2 mat.Matrix) {
	ap, al, M1 := k.splitInducing(z1)
	defer k.putSplit(ap, al)
	bp, bl, M2 := k.splitInducing(z2)
	defer k.putSplit(bp, bl)
	if r, c := dst.Dims(); r != M1 || c != M2 {
		panic(mat.ErrShape)
	}
	d := k.geom.PatchLen()
	an, bn := make([]float64, M1), make([]float64, M2)
	sqNorms(an, ap, d)
	sqNorms(bn, bp, d)
	same := z1 == z2
	c := -0.5 / (k.ell * k.ell)
	out := dst.RawMatrix()
	k.parallel(inducingBlocks(M1), func(_, lo, hi int) {
		var sq, el []float64
		if k.tick {
			sq, el = make([]float64, M2), make([]float64, M2)
		}
		for b := lo; b < hi; b++ {
			// The inner products z1_i·z2_j go into dst's rows, which the
			// loop then turns into kernel values in place: the exponents,
			// vecmath.Exp on the whole row, and the same for the location
			// kernel. One product per block: Dgemm's method (and rounding)
			// depends on its sizes, which must not depend on the workers.
			r0, r1 := blockRows(b, M1)
			gemm(false, true, r1-r0, M2, d, 1, ap[r0*d:], d, bp, d, 0, out.Data[r0*out.Stride:], out.Stride)
			for i := r0; i < r1; i++ {
				row := out.Data[i*out.Stride : i*out.Stride+M2]
				inducingExps(row, nil, row, an[i], bn, c, same, i)
				if k.tick {
					k.locRow(sq, el, al[2*i], al[2*i+1], bl)
				}
				for j := range row {
					v := k.variance * row[j]
					if k.tick {
						v *= (1 + sq[j]) * el[j]
					}
					row[j] = v
				}
			}
		}
	})
	if same {
		for i := 0; i < M1; i++ {
			for j := 0; j < i; j++ {
				out.Data[i*out.Stride+j] = out.Data[j*out.Stride+i]
			}
		}
	}
}

// InducingMatrixGrad back-propagates an adjoint dK of K = InducingMatrix(z1,
// z2), adding into dz1, dz2 and dparams (any may be nil; dz1 and dz2 may be
// the same destination when z1 and z2 are the same matrix). K is not used and
// may be nil.
func (k *Kernel) InducingMatrixGrad(dK, K *mat.Dense, z1, z2 mat.Matrix, dz1, dz2 *mat.Dense, dparams []float64) {
	ap, al, M1 := k.splitInducing(z1)
	defer k.putSplit(ap, al)
	bp, bl, M2 := k.splitInducing(z2)
	defer k.putSplit(bp, bl)
	if r, c := dK.Dims(); r != M1 || c != M2 {
		panic(mat.ErrShape)
	}
	if dparams != nil && len(dparams) != k.NumParams() {
		panic(mat.ErrShape)
	}
	d, ID := k.geom.PatchLen(), k.InducingDim()
	an, bn := make([]float64, M1), make([]float64, M2)
	sqNorms(an, ap, d)
	sqNorms(bn, bp, d)
	same := z1 == z2
	ell2 := k.ell * k.ell
	dkr := dK.RawMatrix()

	// A = dK ⊙ K (in g), per block the sums for the variance, lengthscale
	// and location-lengthscale gradients and, for TICK, the location
	// gradients of z2; those of z1 go straight to their rows.
	nb := inducingBlocks(M1)
	gb := &gradBlocks{k: k, ap: ap, al: al, bp: bp, bl: bl, an: an, bn: bn, m2: M2, same: same,
		dk: dkr.Data, dks: dkr.Stride, g: k.bufs.get(M1 * M2), sums: make([]float64, 3*nb)}
	defer k.bufs.put(gb.g)
	if k.tick {
		gb.dl1 = make([]float64, 2*M1)
		gb.dl2 = make([]float64, nb*2*M2)
	}
	k.parallel(nb, func(_, lo, hi int) {
		bufs := make([]float64, 4*M2)
		for b := lo; b < hi; b++ {
			gb.block(b, bufs)
		}
	})
	g, sums, dl1, dl2s := gb.g, gb.sums, gb.dl1, gb.dl2
	if dparams != nil {
		var sVar, sLen, sLoc float64
		for b := 0; b < nb; b++ {
			sVar += sums[3*b]
			sLen += sums[3*b+1]
			sLoc += sums[3*b+2]
		}
		dparams[0] += sVar / k.variance * transform.SoftplusDeriv(k.uVar)
		dparams[1] += sLen / (ell2 * k.ell) * transform.SoftplusDeriv(k.uLen)
		if k.tick {
			dparams[2] += sLoc * transform.SoftplusDeriv(k.uLoc)
		}
	}
	// d/dz1_i = Σ_j A_ij (z2_j − z1_i)/ℓ², by blocks of rows of A.
	if dz1 != nil {
		rows, done := gradRows(dz1, M1, ID)
		k.parallel(nb, func(_, lo, hi int) {
			t := make([]float64, inducingRows*d)
			for b := lo; b < hi; b++ {
				r0, r1 := blockRows(b, M1)
				gemm(false, false, r1-r0, d, M2, 1/ell2, g[r0*M2:], M2, bp, d, 0, t, d)
				for i := r0; i < r1; i++ {
					rs := 0.0
					for _, v := range g[i*M2 : i*M2+M2] {
						rs += v
					}
					rs /= ell2
					ti := t[(i-r0)*d : (i-r0)*d+d]
					for q, v := range ti {
						rows[i*ID+q] += v - rs*ap[i*d+q]
					}
					if k.tick {
						rows[i*ID+d] += dl1[2*i]
						rows[i*ID+d+1] += dl1[2*i+1]
					}
				}
			}
		})
		done()
	}
	// d/dz2_j = Σ_i A_ij (z1_i − z2_j)/ℓ², by blocks of columns of A.
	if dz2 != nil {
		rows, done := gradRows(dz2, M2, ID)
		k.parallel(inducingBlocks(M2), func(_, lo, hi int) {
			t := make([]float64, inducingRows*d)
			cs := make([]float64, inducingRows)
			for b := lo; b < hi; b++ {
				j0, j1 := blockRows(b, M2)
				w := j1 - j0
				gemm(true, false, w, d, M1, 1/ell2, g[j0:], M2, ap, d, 0, t, d)
				clear(cs)
				for i := 0; i < M1; i++ {
					for jj, v := range g[i*M2+j0 : i*M2+j1] {
						cs[jj] += v
					}
				}
				for j := j0; j < j1; j++ {
					s := cs[j-j0] / ell2
					tj := t[(j-j0)*d : (j-j0)*d+d]
					for q, v := range tj {
						rows[j*ID+q] += v - s*bp[j*d+q]
					}
					if k.tick {
						var gr, gc float64
						for bb := 0; bb < nb; bb++ {
							gr += dl2s[bb*2*M2+2*j]
							gc += dl2s[bb*2*M2+2*j+1]
						}
						rows[j*ID+d] += gr
						rows[j*ID+d+1] += gc
					}
				}
			}
		})
		done()
	}
}

// gradBlocks holds the operands of InducingMatrixGrad's first pass.
type gradBlocks struct {
	k              *Kernel
	ap, al, bp, bl []float64 // patch and location parts of z1 and z2
	an, bn         []float64 // squared norms of the patch parts
	m2             int
	same           bool
	dk             []float64 // the adjoint, row stride dks
	dks            int

	g    []float64 // M1×M2: z1·z2ᵀ, then A = dK ⊙ K
	sums []float64 // per block: Σ A, Σ A·r², Σ of the location-lengthscale terms
	dl1  []float64 // location gradients of z1 (TICK)
	dl2  []float64 // per block, location gradients of z2 (TICK)
}

// block computes the rows of A in block b and its sums; bufs holds 4·M2
// values of scratch.
func (gb *gradBlocks) block(b int, bufs []float64) {
	k, M2 := gb.k, gb.m2
	d := k.geom.PatchLen()
	r0, r1 := blockRows(b, len(gb.an))
	g := gb.g
	gemm(false, true, r1-r0, M2, d, 1, gb.ap[r0*d:], d, gb.bp, d, 0, g[r0*M2:], M2)
	r2s, ex, sq, el := bufs[:M2], bufs[M2:2*M2], bufs[2*M2:3*M2], bufs[3*M2:4*M2]
	c := -0.5 / (k.ell * k.ell)
	variance, le, tick := k.variance, k.locEll, k.tick
	al, bl, dl1 := gb.al, gb.bl, gb.dl1
	var dl2 []float64
	if tick {
		dl2 = gb.dl2[b*2*M2 : (b+1)*2*M2]
	}
	var sVar, sLen, sLoc float64
	for i := r0; i < r1; i++ {
		gr := g[i*M2 : i*M2+M2]
		dkr := gb.dk[i*gb.dks : i*gb.dks+M2]
		inducingExps(ex, r2s, gr, gb.an[i], gb.bn, c, gb.same, i)
		if !tick {
			for j, v := range dkr {
				a := v * (variance * ex[j])
				sVar += a
				sLen += a * r2s[j]
				gr[j] = a
			}
			continue
		}
		k.locRow(sq, el, al[2*i], al[2*i+1], bl)
		ar, ac := al[2*i], al[2*i+1]
		var d1r, d1c float64
		for j, v := range dkr {
			a := v * (variance * ex[j])
			dr, dc := ar-bl[2*j], ac-bl[2*j+1]
			e := el[j]
			sLoc += a * sq[j] * sq[j] * e / le
			f := -3 / (le * le) * e * a
			d1r += f * dr
			d1c += f * dc
			dl2[2*j] -= f * dr
			dl2[2*j+1] -= f * dc
			a *= (1 + sq[j]) * e
			sVar += a
			sLen += a * r2s[j]
			gr[j] = a
		}
		dl1[2*i] += d1r
		dl1[2*i+1] += d1c
	}
	gb.sums[3*b], gb.sums[3*b+1], gb.sums[3*b+2] = sVar, sLen, sLoc
}
