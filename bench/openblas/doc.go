// Package openblas binds a few OpenBLAS routines through cgo so that the
// benchmarks in this directory can compare solvegp's kernels with OpenBLAS
// in one process, alternating between the two.
//
// The bindings are compiled only with the build tag openblas (and cgo); they
// need the system OpenBLAS (Debian: apt-get install libopenblas-dev). Without
// the tag the package is empty, so `go test ./...` never needs a C toolchain:
//
//	go test -tags openblas -run XXX -bench . -benchtime 5x -count 5 ./bench/openblas
//
// OpenBLAS spawns its own thread pool; the benchmarks call SetThreads(1)
// first so that single-thread numbers compare like with like, and the test
// binary runs with OPENBLAS_THREAD_TIMEOUT=4 (set by TestMain unless given)
// so that OpenBLAS's idle threads do not spin on the cores that solvegp's
// goroutines use next.
package openblas
