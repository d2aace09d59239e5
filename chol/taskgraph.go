package chol

import (
	"sync"
	"sync/atomic"

	"github.com/solvegp/solvegp/internal/parallel"
)

// taskGraph is a set of tasks numbered 0 … size()−1 with the dependencies
// between them, for the scheduler. Task t may run once every task naming
// it among its successors has finished. Tasks that may run at the same
// time must not write memory another of them reads or writes.
type taskGraph interface {
	size() int
	// successors calls f for every task that depends directly on t.
	successors(t int, f func(u int))
	// flops is the cost of t, in which the ranks are measured.
	flops(t int) float64
	// run performs t and returns a failed pivot and its value, or −1.
	run(t int) (pivot int, value float64)
}

// scheduler runs a taskGraph on a number of goroutines. A ready task's
// priority is its upward rank: its own flops plus those of the longest
// chain of tasks that depend on it (the list-scheduling rule of HEFT), and
// on a tie the lower task number. The longest chain of a factorization
// runs through the next panels, so they are started while the rest of the
// previous update is still running (look-ahead), and long chains start
// before short ones.
type scheduler struct {
	g taskGraph

	mu      sync.Mutex
	wake    *sync.Cond
	events  atomic.Int64 // finished tasks and failures, for polling without mu
	ready   []int
	waiting []int     // unmet dependencies of each task
	rank    []float64 // upward rank of each task, in flops
	left    int       // tasks not yet finished
	pivot   int       // first failed pivot, −1 while none
	value   float64
}

// newScheduler counts every task's dependencies, queues the tasks that
// have none and ranks them all.
func newScheduler(g taskGraph) *scheduler {
	n := g.size()
	s := &scheduler{g: g, waiting: make([]int, n), rank: make([]float64, n), left: n, pivot: -1}
	s.wake = sync.NewCond(&s.mu)
	for t := range n {
		g.successors(t, func(u int) { s.waiting[u]++ })
	}
	for t := range n {
		if s.waiting[t] == 0 {
			s.ready = append(s.ready, t)
		}
	}
	s.initRank()
	return s
}

// initRank sets every task's upward rank, visiting the tasks in the
// reverse of a topological order (Kahn's, from the ready tasks), so that
// each task's successors are ranked before it.
func (s *scheduler) initRank() {
	n := s.g.size()
	order := append(make([]int, 0, n), s.ready...)
	deps := append([]int(nil), s.waiting...)
	for i := 0; i < len(order); i++ {
		s.g.successors(order[i], func(u int) {
			if deps[u]--; deps[u] == 0 {
				order = append(order, u)
			}
		})
	}
	if len(order) != n {
		panic("chol: task graph has a cycle")
	}
	for i := n - 1; i >= 0; i-- {
		t := order[i]
		var next float64
		s.g.successors(t, func(u int) { next = max(next, s.rank[u]) })
		s.rank[t] = s.g.flops(t) + next
	}
}

// runOn runs the graph on up to workers goroutines and returns the first
// failed pivot and its value, or −1. After a failure the tasks not yet
// started are skipped.
func (s *scheduler) runOn(workers int) (pivot int, value float64) {
	// Every participant runs tasks until the graph is done; one alone
	// runs them all, so the pool may start helpers late or not at all.
	workers = max(1, min(workers, s.left))
	parallel.For(workers, workers, s)
	return s.pivot, s.value
}

// Run is one participant (parallel.Task).
func (s *scheduler) Run(int) { s.work() }

// work runs ready tasks until every task has finished or one has failed.
func (s *scheduler) work() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for s.starved() {
			// Poll for a running task to finish before parking.
			seen := s.events.Load()
			s.mu.Unlock()
			finished := parallel.Poll(func() bool { return s.events.Load() != seen })
			s.mu.Lock()
			if !finished && s.starved() {
				s.wake.Wait()
			}
		}
		if s.left == 0 || s.pivot >= 0 {
			s.wake.Broadcast()
			return
		}
		best := 0
		for j, t := range s.ready {
			if s.before(t, s.ready[best]) {
				best = j
			}
		}
		t := s.ready[best]
		s.ready[best] = s.ready[len(s.ready)-1]
		s.ready = s.ready[:len(s.ready)-1]
		s.mu.Unlock()
		piv, val := s.g.run(t)
		s.mu.Lock()
		s.events.Add(1)
		if piv >= 0 {
			if s.pivot < 0 {
				s.pivot, s.value = piv, val
			}
			continue
		}
		s.finish(t)
	}
}

// starved reports whether a participant has nothing to run yet while tasks
// of others are still running. Called with mu held.
func (s *scheduler) starved() bool {
	return len(s.ready) == 0 && s.left > 0 && s.pivot < 0
}

// finish releases the dependents of the finished task t. Called with mu
// held.
func (s *scheduler) finish(t int) {
	s.left--
	s.g.successors(t, func(u int) {
		if s.waiting[u]--; s.waiting[u] == 0 {
			s.ready = append(s.ready, u)
			s.wake.Signal()
		}
	})
	if s.left == 0 {
		s.wake.Broadcast()
	}
}

// before reports whether the ready task t should run before u: the larger
// upward rank first, then the lower task number.
func (s *scheduler) before(t, u int) bool {
	if rt, ru := s.rank[t], s.rank[u]; rt != ru {
		return rt > ru
	}
	return t < u
}
