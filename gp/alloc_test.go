package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime/debug"
	"testing"
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
// buffer is reallocated after the first steps, and, with one thread, the
// step makes at most a small, size-independent number of heap allocations
// (those left are inside package blas — one closure per triangular solve
// and its packing-buffer pool). This is not a timing test.
func TestStepAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	for _, c := range []gradCase{
		{kind: SVGP, whiten: true, lik: "gauss"},
		{kind: SVGP, lik: "gauss"},
		{kind: SOLVEGP, lik: "gauss"},
		{kind: SOLVEGP, whiten: true, lik: "two"},
		{kind: ODVGP, lik: "gauss"},
		{kind: ODVGP, lik: "gauss", sample: 50},
	} {
		t.Run(c.String(), func(t *testing.T) {
			const M, M2, N = 100, 70, 120 // M above chol's adjoint recursion cutoff (96)
			rng := rand.New(rand.NewPCG(33, 34))
			mod := buildModel(t, c, rng, 3, M, M2)
			mod.cfg.threads = 1
			x, y := problem(31, N, 3)
			g := make([]float64, mod.NumParams())
			th := make([]float64, mod.NumParams())
			mod.Params(th)
			step := func() {
				if _, err := mod.Objective(x, y, 10*N, g); err != nil {
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
			// Pause the collector: a collection empties the blas buffer
			// pools, and their refills are not the model's allocations.
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			allocs := testing.AllocsPerRun(4, step)
			t.Logf("%v allocations per step", allocs)
			if allocs > 48 {
				t.Errorf("%v allocations per step, want ≤ 48", allocs)
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
		})
	}
}
