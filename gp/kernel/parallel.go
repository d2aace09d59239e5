package kernel

import (
	"sync"

	"github.com/solvegp/solvegp/internal/parallel"
)

// rowChunk is the number of rows of a kernel matrix handled as one unit of
// work: large enough to amortise scheduling, small enough that a chunk of
// a 2048-column matrix (1 MiB) stays in the L2 cache between its distance
// product and its elementwise pass.
const rowChunk = 64

// parallelMinWork is the number of matrix elements below which a kernel
// evaluation runs on the calling goroutine only.
const parallelMinWork = 1 << 15

// chunkBody is the body of a forChunks loop: chunk handles the row range
// [i0, i1), chunk index c. Bodies are pointers to pooled structs holding
// the loop's operands, so that handing them to the worker pool allocates
// nothing (a closure would be moved to the heap on every call).
type chunkBody interface {
	chunk(c, i0, i1 int)
}

// forChunks calls body.chunk(c, i0, i1) for consecutive row ranges [i0, i1)
// of [0, rows), chunk index c = i0/rowChunk, on up to workers goroutines
// (≤ 0: GOMAXPROCS) of the parallel worker pool (only the caller's if work,
// the number of elements touched, is small). Chunks are handed out dynamically, so that
// triangular workloads balance; callers that reduce across chunks store
// per-chunk partials indexed by c and sum them in order, which keeps
// results independent of scheduling.
func forChunks(rows, work, workers int, body chunkBody) {
	nc := numChunks(rows)
	workers = parallel.Workers(workers, nc)
	if work < parallelMinWork || workers <= 1 {
		for c := 0; c < nc; c++ {
			body.chunk(c, c*rowChunk, min((c+1)*rowChunk, rows))
		}
		return
	}
	task := chunkTasks.Get().(*chunkTask)
	task.body, task.rows = body, rows
	parallel.For(nc, workers, task)
	task.body = nil
	chunkTasks.Put(task)
}

// chunkTask is the parallel loop of forChunks over row chunks.
type chunkTask struct {
	body chunkBody
	rows int
}

var chunkTasks = sync.Pool{New: func() any { return new(chunkTask) }}

// Run handles chunk c.
func (t *chunkTask) Run(c int) { t.body.chunk(c, c*rowChunk, min((c+1)*rowChunk, t.rows)) }

// numChunks returns the number of row chunks of a matrix with rows rows.
func numChunks(rows int) int { return (rows + rowChunk - 1) / rowChunk }

// mirrorUpper copies the strict upper triangle of the n×n row-major
// matrix a (stride lda) into its lower triangle, tile by tile so that the
// transposed accesses stay in cache, on up to workers goroutines.
func mirrorUpper(a []float64, n, lda, workers int) {
	mt := mirrorTasks.Get().(*mirrorTask)
	*mt = mirrorTask{a: a, n: n, lda: lda}
	forChunks(n, n*n/2, workers, mt)
	*mt = mirrorTask{}
	mirrorTasks.Put(mt)
}

// mirrorTask is the loop body of mirrorUpper.
type mirrorTask struct {
	a      []float64
	n, lda int
}

var mirrorTasks = sync.Pool{New: func() any { return new(mirrorTask) }}

// mirrorTile is the order of the tiles of mirrorUpper.
const mirrorTile = 32

// chunk fills rows [i0, i1) of the lower triangle from columns of the
// upper triangle, in mirrorTile×mirrorTile blocks.
func (mt *mirrorTask) chunk(_, i0, i1 int) {
	a, n, lda := mt.a, mt.n, mt.lda
	nt := (n + mirrorTile - 1) / mirrorTile
	for jb := 0; jb < nt; jb++ {
		j0 := jb * mirrorTile
		if j0 >= i1 {
			break
		}
		j1 := min(j0+mirrorTile, n)
		for i := i0; i < i1; i++ {
			row := a[i*lda:]
			for j := j0; j < j1 && j < i; j++ {
				row[j] = a[j*lda+i]
			}
		}
	}
}
