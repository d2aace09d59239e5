package chol

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// randomGraph is a random acyclic task graph (edges only from lower to
// higher task numbers) whose tasks record when they start and finish.
type randomGraph struct {
	succ       [][]int
	cost       []float64
	clock      atomic.Int64
	start, end []int64
	fail       int
}

func (g *randomGraph) size() int { return len(g.succ) }

func (g *randomGraph) successors(t int, f func(int)) {
	for _, u := range g.succ[t] {
		f(u)
	}
}

func (g *randomGraph) flops(t int) float64 { return g.cost[t] }

func (g *randomGraph) run(t int) (int, float64) {
	g.start[t] = g.clock.Add(1)
	if t == g.fail {
		return t, -1
	}
	g.end[t] = g.clock.Add(1)
	return -1, 0
}

// TestScheduler runs random graphs on one to four goroutines and checks
// that every task runs once, after all the tasks it depends on have
// finished, and that a failing task stops the graph with its pivot.
func TestScheduler(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for trial := range 40 {
		n := 1 + rng.IntN(60)
		g := &randomGraph{succ: make([][]int, n), cost: make([]float64, n), start: make([]int64, n), end: make([]int64, n), fail: -1}
		for u := range n {
			g.cost[u] = 1 + rng.Float64()
			for v := u + 1; v < n; v++ {
				if rng.IntN(8) == 0 {
					g.succ[u] = append(g.succ[u], v)
				}
			}
		}
		if trial%4 == 3 {
			g.fail = rng.IntN(n)
		}
		s := newScheduler(g)
		checkRanks(t, "random", g, s, n <= 20)
		pivot, _ := s.runOn(1 + trial%4)
		if pivot != g.fail {
			t.Fatalf("trial %d: pivot %d, want %d", trial, pivot, g.fail)
		}
		for u := range n {
			if g.fail >= 0 {
				continue // the tasks after a failure may be skipped
			}
			if g.start[u] == 0 || g.end[u] == 0 {
				t.Fatalf("trial %d: task %d did not run", trial, u)
			}
			for _, v := range g.succ[u] {
				if g.start[v] < g.end[u] {
					t.Fatalf("trial %d: task %d started at %d, before task %d it depends on finished at %d", trial, v, g.start[v], u, g.end[u])
				}
			}
		}
	}
}

// TestSchedulerCycle checks that a graph with a cycle is refused.
func TestSchedulerCycle(t *testing.T) {
	g := &randomGraph{succ: [][]int{{1}, {2}, {1}}, cost: []float64{1, 1, 1}}
	defer func() {
		if recover() == nil {
			t.Error("no panic for a cyclic graph")
		}
	}()
	newScheduler(g)
}
