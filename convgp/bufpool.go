package convgp

import "sync"

// floatPool recycles the large buffers of the kernel's methods whose sizes
// are fixed by the model (the M×P location tables and per-worker sums of
// Matrix and MatrixGrad, the M₁×M₂ adjoint block of InducingMatrixGrad:
// megabytes each at M = 1000). Allocated afresh on every call they made a
// training step touch some 80 MB of new pages, and on a VM the page faults
// of those first touches cost as much as the step's exponentials. A pool
// per length, since the lengths in use are few and fixed while a model
// trains; each is a sync.Pool, so what the pools hold is released by the
// garbage collector when unused.
type floatPool struct {
	mu    sync.Mutex
	pools map[int]*sync.Pool
}

func (fp *floatPool) pool(n int) *sync.Pool {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if fp.pools == nil {
		fp.pools = make(map[int]*sync.Pool)
	}
	p := fp.pools[n]
	if p == nil {
		if len(fp.pools) >= maxPoolLengths {
			// Lengths keep changing (inducing sets of many sizes):
			// start over rather than keep a pool for each.
			clear(fp.pools)
		}
		p = new(sync.Pool)
		fp.pools[n] = p
	}
	return p
}

// maxPoolLengths bounds the lengths a floatPool keeps pools for; a training
// run uses fewer than ten.
const maxPoolLengths = 32

// get returns a slice of length n with unspecified contents.
func (fp *floatPool) get(n int) []float64 {
	if v, ok := fp.pool(n).Get().(*[]float64); ok {
		return *v
	}
	return make([]float64, n)
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
	fp.pool(len(s)).Put(&s)
}
