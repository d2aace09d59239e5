package kernel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// rowChunk is the number of rows of a kernel matrix handled as one unit of
// work: large enough to amortise scheduling, small enough that a chunk of
// a 2048-column matrix (1 MiB) stays in the L2 cache between its distance
// product and its elementwise pass.
const rowChunk = 64

// parallelMinWork is the number of matrix elements below which a kernel
// evaluation runs on the calling goroutine only.
const parallelMinWork = 1 << 15

// forChunks calls fn(c, i0, i1) for consecutive row ranges [i0, i1) of
// [0, rows), chunk index c = i0/rowChunk, on up to GOMAXPROCS goroutines
// (one if work, the number of elements touched, is small). Chunks are
// handed out dynamically, so that triangular workloads balance; callers
// that reduce across chunks store per-chunk partials indexed by c and sum
// them in order, which keeps results independent of scheduling.
func forChunks(rows, work int, fn func(c, i0, i1 int)) {
	nc := numChunks(rows)
	workers := runtime.GOMAXPROCS(0)
	if workers > nc {
		workers = nc
	}
	if work < parallelMinWork || workers <= 1 {
		for c := 0; c < nc; c++ {
			fn(c, c*rowChunk, min((c+1)*rowChunk, rows))
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= nc {
					return
				}
				fn(c, c*rowChunk, min((c+1)*rowChunk, rows))
			}
		}()
	}
	wg.Wait()
}

// numChunks returns the number of row chunks of a matrix with rows rows.
func numChunks(rows int) int { return (rows + rowChunk - 1) / rowChunk }

// mirrorUpper copies the strict upper triangle of the n×n row-major
// matrix a (stride lda) into its lower triangle, tile by tile so that the
// transposed accesses stay in cache.
func mirrorUpper(a []float64, n, lda int) {
	const tile = 32
	nt := (n + tile - 1) / tile
	forChunks(n, n*n/2, func(_, i0, i1 int) {
		// Rows [i0, i1) of the lower triangle, filled from columns of the
		// upper triangle, in tile×tile blocks.
		for jb := 0; jb < nt; jb++ {
			j0 := jb * tile
			if j0 >= i1 {
				break
			}
			j1 := min(j0+tile, n)
			for i := i0; i < i1; i++ {
				row := a[i*lda:]
				for j := j0; j < j1 && j < i; j++ {
					row[j] = a[j*lda+i]
				}
			}
		}
	})
}
