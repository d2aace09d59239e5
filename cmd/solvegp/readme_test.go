package main

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeFirstContact checks that the README's first section, the one a
// new user reads before running anything, says that the first run spends
// about a minute downloading and compiling, and gives the install line for
// the command and the go get line for the module path of go.mod.
func TestReadmeFirstContact(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Skipf("no README: %v", err)
	}
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	module := ""
	for _, line := range strings.Split(string(gomod), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			module = strings.TrimSpace(m)
		}
	}
	first, _, ok := strings.Cut(string(readme), "\n## Go quick start")
	if !ok {
		t.Fatal("README.md has no Go quick start section")
	}
	for _, want := range []string{
		"about a minute",
		"go install ./cmd/solvegp",
		"go get " + module + "@latest",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("README.md before its Go quick start does not say %q", want)
		}
	}
}
