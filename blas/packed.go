package blas

import "github.com/solvegp/solvegp/internal/gemm"

// Packed operands.
//
// Dgemm packs blocks of its operands into micro-panels and multiplies them
// one register tile at a time. A caller that multiplies the same small
// operands many times (the column-chunked GP products of package gp) can
// pack each operand once with PackA and PackB and call Kernel.MulTile tile
// by tile; the products are bit-identical to the kernel's inside Dgemm.
//
// The panel formats: PackA with width w stores an m×k matrix as ⌈m/w⌉
// panels of w rows, column p of panel q at dst[q·w·k+p·w:] (w consecutive
// values); PackB with width w stores a k×n matrix as ⌈n/w⌉ panels of w
// columns, row p of panel q at dst[q·w·k+p·w:]. Rows or columns past the
// matrix in the last panel are zero. A Kernel reads A panels of width MR and
// B panels of width NR.

// PackedLen returns the number of values PackA or PackB writes for n rows
// (PackA) or columns (PackB) of depth k in panels of width w: ⌈n/w⌉·w·k.
func PackedLen(w, n, k int) int { return (n + w - 1) / w * w * k }

// PackA packs the m×k matrix op(A) into row panels of width w (see Packed
// operands). op(A) = A when trans is false (A[i,p] = a[i·lda+p]) and Aᵀ
// otherwise (A[i,p] = a[p·lda+i]). dst must hold PackedLen(w, m, k) values;
// PackA panics on a short dst, a leading dimension shorter than a row, or
// w < 1.
func PackA(w int, dst, a []float64, lda int, trans bool, m, k int) {
	gemm.PackA(w, dst, a, lda, trans, m, k)
}

// PackB packs the k×n matrix op(B) into column panels of width w (see
// Packed operands). op(B) = B when trans is false (B[p,j] = b[p·ldb+j]) and
// Bᵀ otherwise (B[p,j] = b[j·ldb+p]). dst must hold PackedLen(w, n, k)
// values; PackB panics on a short dst, a leading dimension shorter than a
// row, or w < 1.
func PackB(w int, dst, b []float64, ldb int, trans bool, k, n int) {
	gemm.PackB(w, dst, b, ldb, trans, k, n)
}

// Kernel is a register-tile micro-kernel: the innermost product of Dgemm.
// The zero value is not usable; get one from Implementation.Kernel or
// Kernels.
type Kernel struct {
	be *gemm.Backend
}

// Kernel returns the micro-kernel impl's level-3 routines run on.
func (impl Implementation) Kernel() Kernel { return Kernel{impl.KernelBackend()} }

// Kernels returns every micro-kernel usable on the running machine, the
// default (the one a zero Implementation uses) first, so that tests can
// exercise each.
func Kernels() []Kernel {
	bes := gemm.Backends()
	ks := make([]Kernel, len(bes))
	for i, be := range bes {
		ks[i] = Kernel{be}
	}
	return ks
}

// Name returns the kernel's name ("avx512", "avx2", "neon" or "generic").
func (k Kernel) Name() string { return k.be.Name() }

// MR returns the number of rows of the kernel's tile, the width of its A
// panels.
func (k Kernel) MR() int { return k.be.MR() }

// NR returns the number of columns of the kernel's tile, the width of its B
// panels.
func (k Kernel) NR() int { return k.be.NR() }

// Implementation returns an Implementation whose level-3 routines run on k
// with at most threads goroutines (see Implementation.Threads).
func (k Kernel) Implementation(threads int) Implementation {
	return Implementation{Threads: threads, backend: k.be}
}

// WithBlocking returns the kernel with the cache blocking MC×KC×NC instead
// of the tuned one, for tests that need small blocks to cross the block
// edges on small matrices. MC is rounded up to a multiple of MR and NC to a
// multiple of NR; values below one keep the tuned ones.
func (k Kernel) WithBlocking(mc, kc, nc int) Kernel {
	return Kernel{k.be.WithBlocking(gemm.Blocking{MC: mc, KC: kc, NC: nc})}
}

// MulTile computes the first rows rows (1 ≤ rows ≤ MR) of one register tile
//
//	C := β·C + α·A·B
//
// with A one packed MR-row panel (PackA, width MR) and B one packed
// NR-column panel (PackB, width NR), both of depth depth, and C row-major
// with leading dimension ldc ≥ NR; all NR columns of each of the rows rows
// are written. Each element is the sum of A[i,p]·B[p,j] for p = 0, 1, …,
// depth−1 in that order with fused multiply-adds from zero, then α·sum
// (β = 0, C not read) or fma(β, C, α·sum). It is the same Go loop
//
//	for i := 0; i < rows; i++ {
//		for j := 0; j < NR; j++ {
//			var s float64
//			for p := 0; p < depth; p++ {
//				s = math.FMA(a[p*MR+i], b[p*NR+j], s)
//			}
//			if beta == 0 {
//				c[i*ldc+j] = alpha * s
//			} else {
//				c[i*ldc+j] = math.FMA(beta, c[i*ldc+j], alpha*s)
//			}
//		}
//	}
//
// MulTile panics if rows is out of range, depth < 0, ldc < NR, or a panel
// or C is too short.
func (k Kernel) MulTile(rows, depth int, alpha float64, a, b []float64, beta float64, c []float64, ldc int) {
	k.be.KernelRows(rows, depth, alpha, a, b, beta, c, ldc)
}
