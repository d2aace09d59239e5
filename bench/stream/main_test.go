package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestRunSmall runs the benchmark on a small file and checks the report
// (every rate positive, a peak resident set read), that the temporary
// directory is gone afterwards, and that -max-rss below the peak fails.
func TestRunSmall(t *testing.T) {
	dir := t.TempDir()
	c := config{rows: 3000, dim: 3, memRows: 1000, steps: 5, batch: 100, buffer: 500, m: 10, dir: dir, asJSON: true}
	var out strings.Builder
	if err := run(context.Background(), c, &out); err != nil {
		t.Fatal(err)
	}
	var r report
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
		t.Fatalf("report %q: %v", out.String(), err)
	}
	if r.Rows != 3000 || !(r.FileMiB > 0) || !(r.ScanRowsPerS > 0) || !(r.StreamRowsPS > 0) || !(r.MemRowsPS > 0) ||
		!(r.PeakRSSMiB > 1) || r.Steps != 5 {
		t.Errorf("report %+v", r)
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Errorf("left in the temporary directory: %v (%v)", left, err)
	}
	c.maxRSS = 1
	if err := run(context.Background(), c, &out); err == nil || !strings.Contains(err.Error(), "exceeds -max-rss") {
		t.Errorf("-max-rss 1: %v", err)
	}
	c.rows = 5
	if err := run(context.Background(), c, &out); err == nil {
		t.Error("fewer rows than inducing points: no error")
	}
}
