package blas

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// The level-3 benchmarks report GFLOP/s for this package (with 1 and 2
// goroutines) and for gonum's native implementation, e.g.
//
//	go test -run '^$' -bench 'Level3' -count 3 ./blas

var level3BenchSizes = []int{64, 128, 256, 512, 1024, 2048}

// level3BenchRHS is the number of right-hand sides of the Dtrsm and Dtrmm
// benchmarks.
const level3BenchRHS = 1024

// level3BenchImpl is one implementation a benchmark runs.
type level3BenchImpl struct {
	name   string
	impl   blas.Float64Level3
	serial bool // runs on the calling goroutine only
}

var level3BenchImpls = []level3BenchImpl{
	{"impl=ours/threads=1", Implementation{Threads: 1}, true},
	{"impl=ours/threads=2", Implementation{Threads: 2}, false},
	// gonum's Dsyrk, Dtrsm, Dtrmm and Dsymm are serial (its Dgemm is not).
	{"impl=gonum", gonum.Implementation{}, true},
}

// level3BenchRand returns n uniform values in [-1, 1).
func level3BenchRand(rnd *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = 2*rnd.Float64() - 1
	}
	return x
}

// level3BenchTri returns a well-conditioned k×k matrix: both triangles are
// O(1/k) off the diagonal, which has modulus in [1, 2].
func level3BenchTri(rnd *rand.Rand, k int) []float64 {
	a := level3BenchRand(rnd, k*k)
	for i := range a {
		a[i] /= float64(k)
	}
	for i := 0; i < k; i++ {
		a[i*k+i] = 1 + rnd.Float64()
	}
	return a
}

// level3Run times b.N calls of f, each preceded by an untimed call of setup
// (if not nil), and reports the median GFLOP/s over the calls for flops
// operations per call. For single-threaded runs it also reports the median
// rate in CPU time of the calling OS thread (cpu-GFLOP/s), which is immune
// to other processes competing for the core.
func level3Run(b *testing.B, flops float64, serial bool, setup, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if setup != nil {
		setup()
	}
	f() // warm up: page faults, pooled buffers
	wall := make([]float64, 0, b.N)
	cpu := make([]float64, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if setup != nil {
			b.StopTimer()
			setup()
			b.StartTimer()
		}
		c0, t0 := level3ThreadCPU(), time.Now()
		f()
		c1, t1 := level3ThreadCPU(), time.Now()
		wall = append(wall, flops/t1.Sub(t0).Seconds()/1e9)
		if c0 >= 0 && c1 > c0 {
			cpu = append(cpu, flops/(c1-c0)/1e9)
		}
	}
	b.ReportMetric(level3Median(wall), "GFLOP/s")
	if serial && len(cpu) > 0 {
		b.ReportMetric(level3Median(cpu), "cpu-GFLOP/s")
	}
}

// level3Median returns the median of x (x is reordered).
func level3Median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	sort.Float64s(x)
	if len(x)%2 == 1 {
		return x[len(x)/2]
	}
	return (x[len(x)/2-1] + x[len(x)/2]) / 2
}

func BenchmarkLevel3Dsyrk(b *testing.B) {
	for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, n := range level3BenchSizes {
			rnd := rand.New(rand.NewPCG(1, uint64(n)))
			a := level3BenchRand(rnd, n*n)
			c := level3BenchRand(rnd, n*n)
			for _, im := range level3BenchImpls {
				b.Run(fmt.Sprintf("tA=%c/n=%d/%s", tA, n, im.name), func(b *testing.B) {
					level3Run(b, float64(n)*float64(n)*float64(n), im.serial, nil, func() {
						im.impl.Dsyrk(blas.Lower, tA, n, n, 1, a, n, 0, c, n)
					})
				})
			}
		}
	}
}

// BenchmarkLevel3DsyrkDeep times the deep, narrow lower Dsyrk of a
// convolutional GP's hidden layer: C (n×n) = Aᵀ·A with 36864 rows of A
// (batch 64 × 576 patches), where the blocked loops have 72 KC blocks.
func BenchmarkLevel3DsyrkDeep(b *testing.B) {
	const k = 36864
	for _, n := range []int{64, 128, 300} {
		rnd := rand.New(rand.NewPCG(2, uint64(n)))
		a := level3BenchRand(rnd, n*k)
		c := level3BenchRand(rnd, n*n)
		for _, im := range level3BenchImpls[:2] { // gonum's serial Dsyrk takes seconds here
			b.Run(fmt.Sprintf("n=%d/k=%d/%s", n, k, im.name), func(b *testing.B) {
				level3Run(b, float64(n)*float64(n)*float64(k), im.serial, nil, func() {
					im.impl.Dsyrk(blas.Lower, blas.Trans, n, k, 1, a, n, 0, c, n)
				})
			})
		}
	}
}

// level3BenchTriangular benchmarks Dtrsm (or Dtrmm when mul is true) on an
// m×m lower triangle with rhs right-hand sides on the given side. B is
// refreshed outside the timing so that repeated calls neither underflow nor
// overflow.
func level3BenchTriangular(b *testing.B, mul bool, s blas.Side, tA blas.Transpose, m, rhs int) {
	rnd := rand.New(rand.NewPCG(2, uint64(m*rhs)))
	a := level3BenchTri(rnd, m)
	bm, bn := m, rhs
	if s == blas.Right {
		bm, bn = rhs, m
	}
	b0 := level3BenchRand(rnd, bm*bn)
	x := make([]float64, bm*bn)
	for _, im := range level3BenchImpls {
		b.Run(fmt.Sprintf("side=%c/ul=L/tA=%c/m=%d/n=%d/%s", s, tA, bm, bn, im.name), func(b *testing.B) {
			level3Run(b, float64(m)*float64(m)*float64(rhs), im.serial, func() { copy(x, b0) }, func() {
				if mul {
					im.impl.Dtrmm(s, blas.Lower, tA, blas.NonUnit, bm, bn, 1, a, m, x, bn)
				} else {
					im.impl.Dtrsm(s, blas.Lower, tA, blas.NonUnit, bm, bn, 1, a, m, x, bn)
				}
			})
		})
	}
}

func BenchmarkLevel3Dtrsm(b *testing.B) {
	for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, m := range level3BenchSizes {
			level3BenchTriangular(b, false, blas.Left, tA, m, level3BenchRHS)
		}
	}
}

func BenchmarkLevel3Dtrmm(b *testing.B) {
	for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, m := range level3BenchSizes {
			level3BenchTriangular(b, true, blas.Left, tA, m, level3BenchRHS)
		}
	}
}

// BenchmarkLevel3DtrsmRight measures right-side solves: those of a blocked
// Cholesky factorization (X·Lᵀ = B with a narrow triangle and many rows)
// and a square one.
func BenchmarkLevel3DtrsmRight(b *testing.B) {
	for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, k := range []int{64, 256, 1024} {
			level3BenchTriangular(b, false, blas.Right, tA, k, 1024)
		}
	}
}

func BenchmarkLevel3Dsymm(b *testing.B) {
	for _, n := range level3BenchSizes {
		rnd := rand.New(rand.NewPCG(4, uint64(n)))
		a := level3BenchRand(rnd, n*n)
		bm := level3BenchRand(rnd, n*n)
		c := make([]float64, n*n)
		for _, im := range level3BenchImpls {
			b.Run(fmt.Sprintf("side=L/ul=L/n=%d/%s", n, im.name), func(b *testing.B) {
				level3Run(b, 2*float64(n)*float64(n)*float64(n), im.serial, nil, func() {
					im.impl.Dsymm(blas.Left, blas.Lower, n, n, 1, a, n, bm, n, 0, c, n)
				})
			})
		}
	}
}

// BenchmarkLevel3DgemmRef measures the square Dgemm on which the other
// level-3 routines are built, as the speed they should approach.
func BenchmarkLevel3DgemmRef(b *testing.B) {
	for _, n := range level3BenchSizes {
		rnd := rand.New(rand.NewPCG(5, uint64(n)))
		a := level3BenchRand(rnd, n*n)
		bm := level3BenchRand(rnd, n*n)
		c := make([]float64, n*n)
		for _, im := range level3BenchImpls[:2] {
			b.Run(fmt.Sprintf("n=%d/%s", n, im.name), func(b *testing.B) {
				level3Run(b, 2*float64(n)*float64(n)*float64(n), im.serial, nil, func() {
					im.impl.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, bm, n, 0, c, n)
				})
			})
		}
	}
}

// BenchmarkLevel3TrsmKernel measures the substitution kernel on one diagonal
// block of order trsmBase against gonum's Dtrsm on the same block.
func BenchmarkLevel3TrsmKernel(b *testing.B) {
	const k, rhs = trsmBase, 1024
	rnd := rand.New(rand.NewPCG(7, 7))
	a := level3BenchTri(rnd, k)
	b0 := level3BenchRand(rnd, k*rhs)
	x := make([]float64, k*rhs)
	for _, s := range []blas.Side{blas.Left, blas.Right} {
		m, n, ld := k, rhs, rhs
		if s == blas.Right {
			m, n, ld = rhs, k, k
		}
		for _, name := range []string{"ours", "gonum"} {
			b.Run(fmt.Sprintf("side=%c/k=%d/rhs=%d/impl=%s", s, k, rhs, name), func(b *testing.B) {
				level3Run(b, float64(k)*float64(k)*float64(rhs), true, func() { copy(x, b0) }, func() {
					switch {
					case name == "gonum":
						gonum.Implementation{}.Dtrsm(s, blas.Lower, blas.NoTrans, blas.NonUnit, m, n, 1, a, k, x, ld)
					case s == blas.Left:
						trsmLeftKernel(blas.Lower, blas.NoTrans, blas.NonUnit, m, n, 1, a, k, x, ld)
					default:
						trsmRightKernel(blas.Lower, blas.NoTrans, blas.NonUnit, m, n, 1, a, k, x, ld)
					}
				})
			})
		}
	}
}

// BenchmarkLevel3VsDgemm runs each routine and a square Dgemm of the same
// order alternately within every iteration, single-threaded, so that both
// see the same machine load, and reports the routine's rate as a fraction
// of Dgemm's (ratio): how close the blocking gets to GEMM speed.
func BenchmarkLevel3VsDgemm(b *testing.B) {
	impl := Implementation{Threads: 1}
	for _, n := range []int{256, 1024} {
		rnd := rand.New(rand.NewPCG(8, uint64(n)))
		a := level3BenchTri(rnd, n)
		b0 := level3BenchRand(rnd, n*n)
		x := make([]float64, n*n)
		c := make([]float64, n*n)
		cube := float64(n) * float64(n) * float64(n)
		cases := []struct {
			name  string
			flops float64
			f     func()
		}{
			{"Dtrsm/L/L/N", cube, func() { impl.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1, a, n, x, n) }},
			{"Dtrsm/L/L/T", cube, func() { impl.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, n, n, 1, a, n, x, n) }},
			{"Dtrsm/R/L/T", cube, func() { impl.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, n, n, 1, a, n, x, n) }},
			{"Dtrmm/L/L/N", cube, func() { impl.Dtrmm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1, a, n, x, n) }},
			{"Dsyrk/L/N", cube, func() { impl.Dsyrk(blas.Lower, blas.NoTrans, n, n, 1, b0, n, 0, c, n) }},
			{"Dsyrk/L/T", cube, func() { impl.Dsyrk(blas.Lower, blas.Trans, n, n, 1, b0, n, 0, c, n) }},
			{"Dsymm/L/L", 2 * cube, func() { impl.Dsymm(blas.Left, blas.Lower, n, n, 1, a, n, b0, n, 0, c, n) }},
		}
		for _, cs := range cases {
			b.Run(fmt.Sprintf("%s/n=%d", cs.name, n), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				gemm := func() { impl.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, b0, n, a, n, 0, c, n) }
				copy(x, b0)
				cs.f()
				gemm()
				var ours, ref []float64
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					copy(x, b0)
					b.StartTimer()
					c0 := level3ThreadCPU()
					cs.f()
					c1 := level3ThreadCPU()
					gemm()
					c2 := level3ThreadCPU()
					if c1 > c0 && c2 > c1 {
						ours = append(ours, cs.flops/(c1-c0)/1e9)
						ref = append(ref, 2*cube/(c2-c1)/1e9)
					}
				}
				if len(ours) > 0 {
					mo, mr := level3Median(ours), level3Median(ref)
					b.ReportMetric(mo, "cpu-GFLOP/s")
					b.ReportMetric(mr, "dgemm-cpu-GFLOP/s")
					b.ReportMetric(mo/mr, "ratio")
				}
			})
		}
	}
}
