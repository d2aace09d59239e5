//go:build openblas && cgo

package openblas

import (
	"fmt"
	"os"
	"testing"
)

// TestMain re-executes the test binary with OPENBLAS_THREAD_TIMEOUT=4 when
// it is not set (see ThreadTimeoutEnv).
func TestMain(m *testing.M) {
	if err := ReexecWithThreadTimeout(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(m.Run())
}
