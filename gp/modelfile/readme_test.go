package modelfile

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeQuickStart checks that the README's Go quick start is exactly
// the tested Example in example_test.go.
func TestReadmeQuickStart(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Skipf("no README: %v", err)
	}
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```go\n"+string(example)+"```\n") {
		t.Fatal("README.md's quick start differs from gp/modelfile/example_test.go; paste the file into the README's first go block")
	}
}
