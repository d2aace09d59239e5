package gemm

import (
	"math/rand/v2"
	"testing"
)

func TestPackA(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, mr := range []int{4, 6, 8, 14, 16} {
		for _, tc := range packCases() {
			trans, useAsm := tc.trans, tc.useAsm
			for _, m := range []int{1, mr - 1, mr, mr + 1, 3*mr + 2} {
				for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 33} {
					rows, cols := m, k
					if trans {
						rows, cols = k, m
					}
					lda := cols + 2
					a := randSlice(rng, (rows-1)*lda+cols)
					np := (m + mr - 1) / mr
					dst := make([]float64, np*mr*k+5)
					for i := range dst {
						dst[i] = guard
					}
					packA(mr, dst, a, lda, trans, m, k, useAsm)
					for q := 0; q < np; q++ {
						for p := 0; p < k; p++ {
							for i := 0; i < mr; i++ {
								got := dst[q*mr*k+p*mr+i]
								want := 0.0
								if r := q*mr + i; r < m {
									if trans {
										want = a[p*lda+r]
									} else {
										want = a[r*lda+p]
									}
								}
								if got != want {
									t.Fatalf("asm=%v mr=%d trans=%v m=%d k=%d: panel %d p=%d i=%d: got %v want %v", useAsm, mr, trans, m, k, q, p, i, got, want)
								}
							}
						}
					}
					for _, v := range dst[np*mr*k:] {
						if v != guard {
							t.Fatalf("mr=%d trans=%v m=%d k=%d: wrote past the packed block", mr, trans, m, k)
						}
					}
				}
			}
		}
	}
}

func TestPackB(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, nr := range []int{4, 6, 8, 14, 16} {
		for _, tc := range packCases() {
			trans, useAsm := tc.trans, tc.useAsm
			for _, n := range []int{1, nr - 1, nr, nr + 1, 3*nr + 2} {
				for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 33} {
					rows, cols := k, n
					if trans {
						rows, cols = n, k
					}
					ldb := cols + 3
					b := randSlice(rng, (rows-1)*ldb+cols)
					np := (n + nr - 1) / nr
					dst := make([]float64, np*nr*k+5)
					for i := range dst {
						dst[i] = guard
					}
					packB(nr, dst, b, ldb, trans, k, n, useAsm)
					for q := 0; q < np; q++ {
						for p := 0; p < k; p++ {
							for j := 0; j < nr; j++ {
								got := dst[q*nr*k+p*nr+j]
								want := 0.0
								if c := q*nr + j; c < n {
									if trans {
										want = b[c*ldb+p]
									} else {
										want = b[p*ldb+c]
									}
								}
								if got != want {
									t.Fatalf("asm=%v nr=%d trans=%v n=%d k=%d: panel %d p=%d j=%d: got %v want %v", useAsm, nr, trans, n, k, q, p, j, got, want)
								}
							}
						}
					}
					for _, v := range dst[np*nr*k:] {
						if v != guard {
							t.Fatalf("nr=%d trans=%v n=%d k=%d: wrote past the packed block", nr, trans, n, k)
						}
					}
				}
			}
		}
	}
}

// packCases lists the pack variants to test: Go and, when this build and
// CPU have them, the assembly pack routines.
func packCases() []struct{ trans, useAsm bool } {
	cs := []struct{ trans, useAsm bool }{{false, false}, {true, false}}
	if packAsm {
		cs = append(cs, struct{ trans, useAsm bool }{false, true}, struct{ trans, useAsm bool }{true, true})
	}
	return cs
}

// TestUnpackB checks UnpackB, with and without assembly, as the inverse of
// PackB's transposing pack, with guard cells around every row of b.
func TestUnpackB(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, nr := range []int{4, 6, 8, 14, 16} {
		for _, useAsm := range []bool{false, packAsm} {
			for _, n := range []int{1, nr - 1, nr} {
				for _, k := range []int{1, 3, 4, 5, 8, 9, 16, 33} {
					ldb := k + 3
					src := randSlice(rng, k*nr)
					b := make([]float64, n*ldb)
					for i := range b {
						b[i] = guard
					}
					unpackB(nr, b, ldb, src, k, n, useAsm)
					for j := 0; j < n; j++ {
						for p := 0; p < ldb; p++ {
							want := guard
							if p < k {
								want = src[p*nr+j]
							}
							if got := b[j*ldb+p]; got != want {
								t.Fatalf("asm=%v nr=%d n=%d k=%d: b[%d][%d] = %v, want %v", useAsm, nr, n, k, j, p, got, want)
							}
						}
					}
					// PackB undoes it.
					back := make([]float64, k*nr)
					packB(nr, back, b, ldb, true, k, n, useAsm)
					for p := 0; p < k; p++ {
						for j := 0; j < n; j++ {
							if back[p*nr+j] != src[p*nr+j] {
								t.Fatalf("nr=%d n=%d k=%d: PackB(UnpackB) differs at p=%d j=%d", nr, n, k, p, j)
							}
						}
					}
				}
			}
		}
	}
}
