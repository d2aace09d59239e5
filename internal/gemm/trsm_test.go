package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// trsmTriangle returns an MR×MR triangle for TrsmTile: coupling entries in
// [−1, 1) inside the triangle, reciprocal diagonal in [0.5, 1.5) (or 1
// when unit), and NaN outside the triangle, which TrsmTile must not read.
func trsmTriangle(rng *rand.Rand, mr int, upper, unit bool) []float64 {
	t := make([]float64, mr*mr)
	for i := 0; i < mr; i++ {
		for p := 0; p < mr; p++ {
			switch {
			case p == i && unit:
				t[i*mr+p] = 1
			case p == i:
				t[i*mr+p] = 0.5 + rng.Float64()
			case (p > i) == upper:
				t[i*mr+p] = rng.Float64()*2 - 1
			default:
				t[i*mr+p] = math.NaN()
			}
		}
	}
	return t
}

// TestTrsmTile checks every backend's TrsmTile bit for bit against its
// twin (which runs the Go definition on Reference), and the solution
// against the equations T·X = α·C − A·B, with padded ldc and guard cells.
func TestTrsmTile(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, be := range Backends() {
		twin := be.Twin()
		mr, nr := be.MR(), be.NR()
		for _, k := range []int{0, 1, 3, 4, 5, 8, 13, 64, 257} {
			k0 := k
			for _, alpha := range []float64{1, -0.7, 2.5} {
				for _, upper := range []bool{false, true} {
					for _, pad := range []int{0, 5} {
						ldc := nr + pad
						a := randSlice(rng, k*mr)
						b := randSlice(rng, k*nr)
						tri := trsmTriangle(rng, mr, upper, pad != 0)
						buf := make([]float64, (mr+2)*ldc+nr)
						for i := range buf {
							buf[i] = guard
						}
						for i := 0; i < mr; i++ {
							for j := 0; j < nr; j++ {
								buf[(i+1)*ldc+j] = rng.Float64()*2 - 1
							}
						}
						if pad == 0 {
							// Signed zeros: zero products and zero or −0
							// entries of C, whose signs the kernels must
							// round exactly as the definition does.
							for p := range a {
								if rng.IntN(2) == 0 {
									a[p] = 0
								}
							}
							for i := 0; i < mr; i++ {
								for j := 0; j < nr; j++ {
									switch rng.IntN(3) {
									case 0:
										buf[(i+1)*ldc+j] = 0
									case 1:
										buf[(i+1)*ldc+j] = math.Copysign(0, -1)
									}
								}
							}
						}
						c0 := append([]float64(nil), buf[ldc:]...)
						want := append([]float64(nil), buf...)
						x := make([]float64, mr*nr+1)
						wantX := make([]float64, mr*nr+1)
						x[mr*nr], wantX[mr*nr] = guard, guard
						twin.TrsmTile(upper, k, alpha, a, b, tri, want[ldc:], ldc, wantX)
						be.TrsmTile(upper, k, alpha, a, b, tri, buf[ldc:], ldc, x)
						for i := range buf {
							if math.Float64bits(buf[i]) != math.Float64bits(want[i]) {
								t.Fatalf("%s upper=%v k=%d alpha=%v ldc=%d: C element %d = %v, twin %v",
									be.Name(), upper, k, alpha, ldc, i, buf[i], want[i])
							}
						}
						for i := range x {
							if math.Float64bits(x[i]) != math.Float64bits(wantX[i]) {
								t.Fatalf("%s upper=%v k=%d: x[%d] = %v, twin %v", be.Name(), upper, k, i, x[i], wantX[i])
							}
						}
						// The residual of T·X = α·C − A·B, in plain arithmetic.
						for i := 0; i < mr; i++ {
							for j := 0; j < nr; j++ {
								rhs := alpha * c0[i*ldc+j]
								for p := 0; p < k; p++ {
									rhs -= a[p*mr+i] * b[p*nr+j]
								}
								lhs := x[i*nr+j] / tri[i*mr+i]
								for p := 0; p < mr; p++ {
									if p != i && (p > i) == upper {
										lhs += tri[i*mr+p] * x[p*nr+j]
									}
								}
								if math.Abs(lhs-rhs) > 1e-12*(1+math.Abs(rhs))*float64(k+mr) {
									t.Fatalf("%s upper=%v k=%d: row %d col %d: T·X = %v, want %v", be.Name(), upper, k, i, j, lhs, rhs)
								}
								if x[i*nr+j] != buf[(i+1)*ldc+j] {
									t.Fatalf("%s: x and C differ at row %d col %d", be.Name(), i, j)
								}
							}
						}
						if pad == 0 {
							// Solved in place: c is x (ldc = NR).
							for _, kb := range []*Backend{be, twin} {
								xc := append([]float64(nil), c0[:mr*nr]...)
								kb.TrsmTile(upper, k0, alpha, a, b, tri, xc, nr, xc)
								for i, v := range xc {
									if math.Float64bits(v) != math.Float64bits(x[i]) {
										t.Fatalf("%s upper=%v k=%d: in place, x[%d] = %v, want %v", kb.Name(), upper, k0, i, v, x[i])
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestTrsmTilePanics checks TrsmTile's argument validation.
func TestTrsmTilePanics(t *testing.T) {
	be := Default()
	mr, nr := be.MR(), be.NR()
	ok := func() (a, b, tri, c, x []float64) {
		return make([]float64, 2*mr), make([]float64, 2*nr), make([]float64, mr*mr), make([]float64, mr*nr), make([]float64, mr*nr)
	}
	for name, f := range map[string]func(){
		"k<0":     func() { a, b, tri, c, x := ok(); be.TrsmTile(false, -1, 1, a, b, tri, c, nr, x) },
		"ldc<NR":  func() { a, b, tri, c, x := ok(); be.TrsmTile(false, 2, 1, a, b, tri, c, nr-1, x) },
		"short a": func() { a, b, tri, c, x := ok(); be.TrsmTile(false, 3, 1, a, b, tri, c, nr, x) },
		"short t": func() { a, b, tri, c, x := ok(); be.TrsmTile(false, 2, 1, a, b, tri[1:], c, nr, x) },
		"short c": func() { a, b, tri, c, x := ok(); be.TrsmTile(false, 2, 1, a, b, tri, c[1:], nr, x) },
		"short x": func() { a, b, tri, c, x := ok(); be.TrsmTile(false, 2, 1, a, b, tri, c, nr, x[1:]) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
