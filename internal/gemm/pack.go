package gemm

// PackA packs the m×k matrix op(A) into micro-panels of mr rows for the
// micro-kernels. op(A) = A when trans is false (A[i,p] = a[i·lda+p]) and Aᵀ
// otherwise (A[i,p] = a[p·lda+i]).
//
// Panel q holds rows q·mr … q·mr+mr−1; within a panel, column p occupies
// mr consecutive values at dst[q·mr·k + p·mr:]. Rows beyond m in the last
// panel are filled with zeros. dst must hold at least ⌈m/mr⌉·mr·k values.
func PackA(mr int, dst []float64, a []float64, lda int, trans bool, m, k int) {
	packA(mr, dst, a, lda, trans, m, k, packAsm)
}

// packA is PackA with the use of assembly made explicit for the tests.
// Packing the m×k matrix op(A) into panels of mr rows is packing the k×m
// matrix op(A)ᵀ into panels of mr columns, and op(A)ᵀ is op(B) for b = a
// with trans negated, so packB does the work: its copy loops, and the
// choice of assembly for them, serve both.
func packA(mr int, dst []float64, a []float64, lda int, trans bool, m, k int, useAsm bool) {
	packB(mr, dst, a, lda, !trans, k, m, useAsm)
}

// PackB packs the k×n matrix op(B) into micro-panels of nr columns for the
// micro-kernels. op(B) = B when trans is false (B[p,j] = b[p·ldb+j]) and Bᵀ
// otherwise (B[p,j] = b[j·ldb+p]).
//
// Panel q holds columns q·nr … q·nr+nr−1; within a panel, row p occupies nr
// consecutive values at dst[q·nr·k + p·nr:]. Columns beyond n in the last
// panel are filled with zeros. dst must hold at least ⌈n/nr⌉·nr·k values.
func PackB(nr int, dst []float64, b []float64, ldb int, trans bool, k, n int) {
	packB(nr, dst, b, ldb, trans, k, n, packAsm)
}

// packB is PackB with the use of assembly made explicit for the tests.
func packB(nr int, dst []float64, b []float64, ldb int, trans bool, k, n int, useAsm bool) {
	if nr < 1 {
		panic("gemm: pack: panel width < 1")
	}
	if n <= 0 || k <= 0 {
		return
	}
	if trans && ldb < k || !trans && ldb < n {
		panic("gemm: pack: leading dimension smaller than a row")
	}
	np := (n + nr - 1) / nr
	if len(dst) < np*nr*k {
		// Checked against the length, not the capacity: slicing dst up
		// to its capacity would write past what the caller passed.
		panic("gemm: pack: destination too short")
	}
	dst = dst[:np*nr*k]
	for q := 0; q < np; q++ {
		j0 := q * nr
		cols := min(nr, n-j0)
		panel := dst[q*nr*k : (q+1)*nr*k]
		if !trans {
			if useAsm && cols == nr && packContiguous(nr, panel, b[j0:], ldb, k) == k {
				continue
			}
			for p := 0; p < k; p++ {
				d := panel[p*nr : p*nr+nr]
				copy(d, b[p*ldb+j0:p*ldb+j0+cols])
				clear(d[cols:])
			}
			continue
		}
		p0 := 0
		if useAsm && cols == nr {
			p0 = packTransposed(nr, panel, b[j0*ldb:], ldb, k)
		}
		for j := 0; j < cols; j++ {
			src := b[(j0+j)*ldb+p0 : (j0+j)*ldb+k]
			for p, v := range src {
				panel[(p0+p)*nr+j] = v
			}
		}
		for j := cols; j < nr; j++ {
			for p := 0; p < k; p++ {
				panel[p*nr+j] = 0
			}
		}
	}
}

// UnpackB is the inverse of PackB's transposing pack for one panel: it sets
// b[j·ldb+p] = src[p·nr+j] for j < n and p < k, writing the k×n panel src
// (leading dimension nr ≥ n) into n rows of b as k consecutive values
// each. Solvers that work on a transposed panel use it to put the result
// back.
func UnpackB(nr int, b []float64, ldb int, src []float64, k, n int) {
	unpackB(nr, b, ldb, src, k, n, packAsm)
}

// unpackB is UnpackB with the use of assembly made explicit for the tests.
func unpackB(nr int, b []float64, ldb int, src []float64, k, n int, useAsm bool) {
	if n <= 0 || k <= 0 {
		return
	}
	p0 := 0
	if useAsm && n == nr {
		p0 = unpackTransposed(nr, b, src, ldb, k)
	}
	for j := 0; j < n; j++ {
		row := b[j*ldb+p0 : j*ldb+k]
		for p := range row {
			row[p] = src[(p0+p)*nr+j]
		}
	}
}
