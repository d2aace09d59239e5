package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime/debug"
	"testing"

	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
)

// workspaceBuffers returns the data pointer and capacity of every float64
// buffer of the model's workspace.
func workspaceBuffers(ws *workspace) map[string][2]uintptr {
	out := map[string][2]uintptr{}
	v := reflect.ValueOf(ws).Elem()
	add := func(name string, s reflect.Value) {
		if s.Cap() > 0 {
			out[name] = [2]uintptr{s.Pointer(), uintptr(s.Cap())}
		}
	}
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		name := v.Type().Field(i).Name
		switch f.Type() {
		case reflect.TypeOf([]float64(nil)):
			add(name, f)
		case reflect.TypeOf([][]float64(nil)):
			for j := 0; j < f.Len(); j++ {
				add(fmt.Sprintf("%s[%d]", name, j), f.Index(j))
			}
		}
	}
	return out
}

// TestStepAllocations asserts that a steady-state training step (bound,
// gradient, parameter update) reuses the model's workspace: no workspace
// buffer is reallocated after the first steps, and the step makes at most
// a small, size-independent number of heap allocations, with one thread
// and with two. The two-thread cases are large enough that the parallel
// sections of package blas (Dgemm, Dsyrk, Dtrsm) and of the kernel
// evaluations run on the worker pool, which allocates nothing per call.
// This is not a timing test.
func TestStepAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	type size struct {
		threads    int
		m, m2, n   int
		stationary bool // Matérn-3/2 kernel of package kernel and a Gaussian likelihood
		chunk      int  // forced column-chunk width (0: automatic)
	}
	sizes := []size{
		{threads: 1, m: 100, m2: 70, n: 120}, // M above chol's adjoint recursion cutoff (96)
		{threads: 2, m: 300, m2: 260, n: 280},
		{threads: 1, m: 40, m2: 24, n: 120, chunk: 32}, // column chunks (chunks.go) in both blocks
		{threads: 2, m: 40, m2: 24, n: 120, chunk: 32},
	}
	if !testing.Short() {
		sizes = append(sizes, size{threads: 1, m: 300, m2: 260, n: 600, stationary: true},
			size{threads: 2, m: 300, m2: 260, n: 600, stationary: true})
	}
	cases := []gradCase{
		{kind: SVGP, whiten: true, lik: "gauss"},
		{kind: SVGP, lik: "gauss"},
		{kind: SOLVEGP, lik: "gauss"},
		{kind: SOLVEGP, whiten: true, lik: "two"},
		{kind: ODVGP, lik: "gauss"},
		{kind: ODVGP, lik: "gauss", sample: 50},
	}
	for _, sz := range sizes {
		for _, c := range cases {
			if sz.stationary && c.lik != "gauss" {
				continue
			}
			name := fmt.Sprintf("threads=%d/M=%d/%v", sz.threads, sz.m, c)
			if sz.chunk > 0 {
				name += fmt.Sprintf("/chunk=%d", sz.chunk)
			}
			if sz.stationary {
				name += "/matern32"
			}
			t.Run(name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(33, 34))
				var mod *Model
				if sz.stationary {
					mod = buildStationaryModel(t, c, rng, 3, sz.m, sz.m2)
				} else {
					mod = buildModel(t, c, rng, 3, sz.m, sz.m2)
				}
				mod.cfg.threads, mod.cfg.colChunk = sz.threads, sz.chunk
				stepAllocations(t, mod, sz.n)
			})
		}
	}
}

// maxStepAllocs bounds the heap allocations of one steady-state step. A
// fully warmed-up step makes none; the slack allows for sync.Pool caches
// that are still growing, which with two threads can take a few more
// allocations now and then (up to 7 per step observed) as the goroutines
// move between Ps. Nothing left scales with the problem size; before the
// worker pool a step made hundreds.
const maxStepAllocs = 12

// stepAllocations checks the allocations and workspace reuse of training
// steps of mod on a batch of n points.
func stepAllocations(t *testing.T, mod *Model, n int) {
	x, y := problem(31, n, 3)
	g := make([]float64, mod.NumParams())
	th := make([]float64, mod.NumParams())
	mod.Params(th)
	step := func() {
		if _, err := mod.Objective(x, y, 10*n, g); err != nil {
			t.Fatal(err)
		}
		for i, v := range g {
			th[i] += 1e-6 * math.Tanh(v)
		}
		if err := mod.SetParams(th); err != nil {
			t.Fatal(err)
		}
	}
	step()
	bufs := workspaceBuffers(&mod.ws)
	// Pause the collector: a collection empties the sync.Pool caches, and
	// their refills are not the model's allocations.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	// With several goroutines the pools' per-P caches take a few steps to
	// fill; warm up until a step allocates nothing (at most maxWarmup).
	const maxWarmup = 8
	for i := 0; i < maxWarmup && testing.AllocsPerRun(1, step) > 0; i++ {
	}
	allocs := testing.AllocsPerRun(4, step)
	t.Logf("%v allocations per step", allocs)
	if allocs > maxStepAllocs {
		t.Errorf("%v allocations per step, want ≤ %d", allocs, maxStepAllocs)
	}
	after := workspaceBuffers(&mod.ws)
	for name, b := range bufs {
		if after[name] != b {
			t.Errorf("workspace buffer %s reallocated in steady state", name)
		}
	}
	if len(after) != len(bufs) {
		t.Errorf("%d workspace buffers after the first step, %d later", len(bufs), len(after))
	}
}

// buildStationaryModel is buildModel with package kernel's Matérn-3/2
// kernel (whose evaluations are parallel) and a Gaussian likelihood.
func buildStationaryModel(t *testing.T, c gradCase, rng *rand.Rand, d, m, m2 int) *Model {
	t.Helper()
	k, err := kernel.NewMatern32(d, 1.5, 1.0, kernel.ARD())
	if err != nil {
		t.Fatal(err)
	}
	lik, err := likelihood.NewGaussian(0.1)
	if err != nil {
		t.Fatal(err)
	}
	z := randDense(rng, m, d, -2, 2)
	o := randDense(rng, m2, d, -2, 2)
	opts := []Option{WithWhitening(c.whiten)}
	if c.sample > 0 {
		opts = append(opts, WithColumnSample(c.sample))
	}
	var mod *Model
	mod, err = newOfKind(c.kind, k, lik, z, o, opts...)
	if err != nil {
		t.Fatal(err)
	}
	perturbQ(mod, rng, 0.3)
	return mod
}
