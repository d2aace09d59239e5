// Package archtest holds the module's structural tests: the import rule of
// docs/architecture.md and the limits on function length and parameter count.
// It has no code of its own; `go test ./internal/archtest` runs the checks.
package archtest
