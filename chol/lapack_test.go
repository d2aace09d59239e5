package chol

import (
	"testing"

	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/testlapack"
)

// Implementation is a drop-in lapack.Float64 for lapack64.Use.
var _ lapack.Float64 = Implementation{}

// The gonum conformance suites build their expectations with the global
// blas64/lapack64 implementations, so this test binary never calls Use.

func TestDpotrf(t *testing.T) {
	if raceEnabled && testing.Short() {
		t.Skip("gonum's suite takes minutes under -race; TestFactor* cover the concurrent paths")
	}
	testlapack.DpotrfTest(t, Implementation{})
}
func TestDpotrs(t *testing.T) { testlapack.DpotrsTest(t, Implementation{}) }
func TestDtrtrs(t *testing.T) { testlapack.DtrtrsTest(t, Implementation{}) }
func TestDtrtri(t *testing.T) { testlapack.DtrtriTest(t, Implementation{}) }
func TestDpotri(t *testing.T) { testlapack.DpotriTest(t, Implementation{}) }
func TestDlauum(t *testing.T) { testlapack.DlauumTest(t, Implementation{}) }

func TestLapackOneThread(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("repeats TestDpotrf/TestDpotrs with one thread")
	}
	impl := Implementation{Threads: 1}
	testlapack.DpotrfTest(t, impl)
	testlapack.DpotrsTest(t, impl)
}
