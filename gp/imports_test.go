package gp

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoTrainerImport checks that the model package does not depend on its
// trainer: the natural-gradient maths lives here, and train.Fit finds it
// through interfaces.
func TestNoTrainerImport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/solvegp/solvegp/gp/train") {
			t.Errorf("package gp depends on %s", p)
		}
	}
}
