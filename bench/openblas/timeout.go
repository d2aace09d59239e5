//go:build openblas && cgo

package openblas

import (
	"fmt"
	"os"
	"syscall"
)

// ThreadTimeoutEnv is OpenBLAS's knob for how long its idle threads
// busy-wait for the next call (2^value cycles, default 2^28, about 0.1 s).
// Benchmarks that alternate OpenBLAS and solvegp calls need it small: with
// the default, OpenBLAS's idle threads keep spinning on the cores that
// solvegp's goroutines need next, which halved solvegp's measured
// two-thread rate. The smallest value (4) makes them yield at once, as a
// library called between other work would want.
const ThreadTimeoutEnv = "OPENBLAS_THREAD_TIMEOUT"

// ReexecWithThreadTimeout replaces the running program by itself with
// OPENBLAS_THREAD_TIMEOUT=4 when the variable is not set, since OpenBLAS
// reads it only when the library is loaded. It returns only when the
// variable is set already (nil) or the re-execution failed (the error;
// two-thread comparisons are then unfair).
func ReexecWithThreadTimeout() error {
	if _, ok := os.LookupEnv(ThreadTimeoutEnv); ok {
		return nil
	}
	exe, err := os.Executable()
	if err == nil {
		err = syscall.Exec(exe, os.Args, append(os.Environ(), ThreadTimeoutEnv+"=4"))
	}
	return fmt.Errorf("openblas: re-executing with %s=4 failed (%v); two-thread comparisons will be unfair", ThreadTimeoutEnv, err)
}
