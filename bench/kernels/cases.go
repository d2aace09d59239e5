package main

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/solvegp/solvegp/blas"
	"github.com/solvegp/solvegp/chol"
)

// kernelCase is one routine in one configuration. setup allocates the
// inputs for order n and returns the solvegp call, the OpenBLAS call (nil
// when the binary was built without OpenBLAS) and a reset that restores the
// inputs an in-place routine overwrites (nil when none).
type kernelCase struct {
	name  string
	flops func(n int) float64
	setup func(n, threads int, rng *rand.Rand) (ours, theirs, reset func() error)
}

// kernelCases are the routines the GP step spends its time in: the four
// Dgemm transposes, the symmetric rank-k update, the triangular solve and
// the Cholesky factorization, all of order n with inner dimension n.
var kernelCases = []kernelCase{
	gemmCase("dgemm-nn", gblas.NoTrans, gblas.NoTrans),
	gemmCase("dgemm-nt", gblas.NoTrans, gblas.Trans),
	gemmCase("dgemm-tn", gblas.Trans, gblas.NoTrans),
	gemmCase("dgemm-tt", gblas.Trans, gblas.Trans),
	{name: "dsyrk", flops: func(n int) float64 { return cube(n) }, setup: setupSyrk},
	{name: "dtrsm", flops: func(n int) float64 { return cube(n) }, setup: setupTrsm},
	{name: "dpotrf", flops: func(n int) float64 { return cube(n) / 3 }, setup: setupPotrf},
}

func caseNames() []string {
	var s []string
	for _, c := range kernelCases {
		s = append(s, c.name)
	}
	return s
}

func cube(n int) float64 { return float64(n) * float64(n) * float64(n) }

func randMat(rng *rand.Rand, n int) []float64 {
	a := make([]float64, n)
	for i := range a {
		a[i] = rng.Float64()*2 - 1
	}
	return a
}

func gemmCase(name string, tA, tB gblas.Transpose) kernelCase {
	return kernelCase{
		name:  name,
		flops: func(n int) float64 { return 2 * cube(n) },
		setup: func(n, threads int, rng *rand.Rand) (ours, theirs, reset func() error) {
			a, b, c := randMat(rng, n*n), randMat(rng, n*n), make([]float64, n*n)
			impl := blas.Implementation{Threads: threads}
			ours = func() error { impl.Dgemm(tA, tB, n, n, n, 1, a, n, b, n, 0, c, n); return nil }
			if reference.available() {
				theirs = func() error { reference.dgemm(tA, tB, n, n, n, 1, a, n, b, n, 0, c, n); return nil }
			}
			return ours, theirs, nil
		},
	}
}

func setupSyrk(n, threads int, rng *rand.Rand) (ours, theirs, reset func() error) {
	a, c := randMat(rng, n*n), make([]float64, n*n)
	impl := blas.Implementation{Threads: threads}
	ours = func() error { impl.Dsyrk(gblas.Lower, gblas.NoTrans, n, n, 1, a, n, 0, c, n); return nil }
	if reference.available() {
		theirs = func() error { reference.dsyrk(gblas.Lower, gblas.NoTrans, n, n, 1, a, n, 0, c, n); return nil }
	}
	return ours, theirs, nil
}

// setupTrsm solves L·X = B for n right-hand sides with a well-conditioned
// lower triangle L (unit-scale diagonal, small off-diagonal entries).
func setupTrsm(n, threads int, rng *rand.Rand) (ours, theirs, reset func() error) {
	l := make([]float64, n*n)
	for i := range n {
		for j := range i {
			l[i*n+j] = (rng.Float64()*2 - 1) / float64(n)
		}
		l[i*n+i] = 1 + rng.Float64()
	}
	b0, x := randMat(rng, n*n), make([]float64, n*n)
	impl := blas.Implementation{Threads: threads}
	ours = func() error {
		impl.Dtrsm(gblas.Left, gblas.Lower, gblas.NoTrans, gblas.NonUnit, n, n, 1, l, n, x, n)
		return nil
	}
	if reference.available() {
		theirs = func() error {
			reference.dtrsm(gblas.Left, gblas.Lower, gblas.NoTrans, gblas.NonUnit, n, n, 1, l, n, x, n)
			return nil
		}
	}
	return ours, theirs, func() error { copy(x, b0); return nil }
}

// setupPotrf factors A = G·Gᵀ/n + I, positive definite and well conditioned.
func setupPotrf(n, threads int, rng *rand.Rand) (ours, theirs, reset func() error) {
	g, a := randMat(rng, n*n), make([]float64, n*n)
	blas.Implementation{Threads: threads}.Dsyrk(gblas.Lower, gblas.NoTrans, n, n, 1/float64(n), g, n, 0, a, n)
	for i := range n {
		a[i*n+i]++
	}
	w := make([]float64, n*n)
	impl := chol.Implementation{Threads: threads}
	ours = func() error {
		if !impl.Dpotrf(gblas.Lower, n, w, n) {
			return fmt.Errorf("dpotrf n=%d: solvegp reports the matrix not positive definite", n)
		}
		return nil
	}
	if reference.available() {
		theirs = func() error {
			if info := reference.dpotrfLower(n, w, n); info != 0 {
				return fmt.Errorf("dpotrf n=%d: OpenBLAS info %d", n, info)
			}
			return nil
		}
	}
	return ours, theirs, func() error { copy(w, a); return nil }
}

// measure runs r's case reps times for each library, alternating, after one
// untimed warm-up call of each, timing each call by clock, and records the
// rates in r.
func measure(r *result, reps int, clock func() time.Duration) error {
	var kc *kernelCase
	for i := range kernelCases {
		if kernelCases[i].name == r.Case {
			kc = &kernelCases[i]
		}
	}
	rng := rand.New(rand.NewPCG(uint64(r.N), 1))
	ours, theirs, reset := kc.setup(r.N, r.Threads, rng)
	if reset == nil {
		reset = func() error { return nil }
	}
	reference.setThreads(r.Threads)
	if r.Threads == 1 {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	flops := kc.flops(r.N)
	timed := func(f func() error) (float64, error) {
		if err := reset(); err != nil {
			return 0, err
		}
		t0 := clock()
		if err := f(); err != nil {
			return 0, err
		}
		return flops / (clock() - t0).Seconds() / 1e9, nil
	}
	for i := -1; i < reps; i++ {
		for _, lib := range []struct {
			call func() error
			out  *[]float64
		}{{ours, &r.Ours}, {theirs, &r.Theirs}} {
			if lib.call == nil {
				continue
			}
			rate, err := timed(lib.call)
			if err != nil {
				return err
			}
			if i >= 0 {
				*lib.out = append(*lib.out, rate)
			}
		}
	}
	return nil
}
