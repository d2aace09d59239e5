//go:build openblas && cgo

package openblas

import (
	"fmt"
	"os"
	"syscall"
	"testing"
)

// threadTimeoutEnv is OpenBLAS's knob for how long its idle threads
// busy-wait for the next call (2^value cycles, default 2^28, about 0.1 s).
// The benchmarks alternate OpenBLAS and solvegp calls, so with the default
// OpenBLAS's idle threads keep spinning on the cores solvegp's goroutines
// then need, which halved solvegp's measured two-thread rate. The
// smallest value (4) makes them yield at once, as a library that is
// called between other work would want.
const threadTimeoutEnv = "OPENBLAS_THREAD_TIMEOUT"

// TestMain re-executes the test binary with OPENBLAS_THREAD_TIMEOUT=4 when
// it is not set: OpenBLAS reads it only when the library is loaded.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv(threadTimeoutEnv); !ok {
		env := append(os.Environ(), threadTimeoutEnv+"=4")
		exe, err := os.Executable()
		if err == nil {
			err = syscall.Exec(exe, os.Args, env)
		}
		fmt.Fprintf(os.Stderr, "openblas: re-executing with %s=4 failed (%v); two-thread comparisons will be unfair\n", threadTimeoutEnv, err)
	}
	os.Exit(m.Run())
}
