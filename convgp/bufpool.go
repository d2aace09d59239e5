package convgp

import "sync"

// floatPool recycles the large buffers of the kernel's methods whose sizes
// are fixed by the model (the M×P location tables and per-worker sums of
// Matrix and MatrixGrad, the M₁×M₂ adjoint block of InducingMatrixGrad:
// megabytes each at M = 1000). Allocated afresh on every call they made a
// training step touch some 80 MB of new pages, and on a VM the page faults
// of those first touches cost as much as the step's exponentials.
//
// It is a free list per length under one mutex rather than a sync.Pool: a
// sync.Pool keeps the last slice put on each P in a slot other Ps cannot
// take, so a call whose workers ran on other Ps would miss and allocate
// again. What the lists hold is the peak of one call's buffers, bounded by
// maxPoolPerLength per length and maxPoolLengths lengths, and is released
// with the Kernel.
type floatPool struct {
	mu   sync.Mutex
	free map[int]freeList[[]float64]
}

const (
	// maxPoolLengths bounds the lengths a floatPool keeps; a training run
	// uses fewer than ten.
	maxPoolLengths = 32
	// maxPoolPerLength bounds the slices kept for one length: one call
	// holds one per worker at most, plus a few shared tables.
	maxPoolPerLength = 16
)

// get returns a slice of length n with unspecified contents.
func (fp *floatPool) get(n int) []float64 {
	fp.mu.Lock()
	l := fp.free[n]
	s, ok := l.pop()
	if ok {
		fp.free[n] = l
	}
	fp.mu.Unlock()
	if !ok {
		s = make([]float64, n)
	}
	return s
}

// getZero returns a zeroed slice of length n.
func (fp *floatPool) getZero(n int) []float64 {
	s := fp.get(n)
	clear(s)
	return s
}

// put returns s, obtained from get or getZero, for reuse; nil is ignored.
// s must not be used afterwards.
func (fp *floatPool) put(s []float64) {
	if s == nil {
		return
	}
	n := len(s)
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if fp.free == nil {
		fp.free = make(map[int]freeList[[]float64])
	}
	l, ok := fp.free[n]
	if !ok && len(fp.free) >= maxPoolLengths {
		// Lengths keep changing (inducing sets of many sizes): start
		// over rather than keep a list for each.
		clear(fp.free)
	}
	l.push(s)
	fp.free[n] = l
}

// scratchList recycles the workers' scratch spaces (patches, norms, rows
// of a call, grown to the sizes the model needs) on a free list, for the
// reason floatPool is not a sync.Pool: each worker of a call should find
// a grown scratch, whichever P it runs on.
type scratchList struct {
	mu   sync.Mutex
	free freeList[*scratch]
}

// get returns a free scratch, or a new empty one.
func (l *scratchList) get() *scratch {
	l.mu.Lock()
	s, ok := l.free.pop()
	l.mu.Unlock()
	if !ok {
		s = new(scratch)
	}
	return s
}

// put returns s for reuse; s must not be used afterwards.
func (l *scratchList) put(s *scratch) {
	l.mu.Lock()
	l.free.push(s)
	l.mu.Unlock()
}

// freeList is a last-in first-out list of values for reuse, holding at
// most maxPoolPerLength; its owner serializes access.
type freeList[T any] []T

// pop removes and returns the last value put, if any.
func (l *freeList[T]) pop() (v T, ok bool) {
	k := len(*l)
	if k == 0 {
		return v, false
	}
	v = (*l)[k-1]
	var zero T
	(*l)[k-1] = zero // no reference kept from the spare capacity
	*l = (*l)[:k-1]
	return v, true
}

// push adds v, or drops it when the list is full.
func (l *freeList[T]) push(v T) {
	if len(*l) < maxPoolPerLength {
		*l = append(*l, v)
	}
}
