package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseMemAvailable(t *testing.T) {
	for _, c := range []struct {
		text string
		want int64
		ok   bool
	}{
		{"MemTotal:       24683728 kB\nMemFree:        16349852 kB\nMemAvailable:   24085468 kB\n", 24085468 << 10, true},
		{"MemTotal:       24683728 kB\n", 0, false},
		{"MemAvailable:   x kB\n", 0, false},
		{"MemAvailable:   0 kB\n", 0, false},
	} {
		n, ok := parseMemAvailable(bufio.NewScanner(strings.NewReader(c.text)))
		if ok != c.ok || (ok && n != c.want) {
			t.Errorf("%q: %d, %v; want %d, %v", c.text, n, ok, c.want, c.ok)
		}
	}
}

func TestLoadedBytesAndFit(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{"a.csv": 1000, "b.csv.gz": 100, "c.parquet": 50} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// 3·1000 + 12·100 + 6·50; a missing file counts as empty.
	if got := loadedBytes([]string{filepath.Join(dir, "*.csv*"), filepath.Join(dir, "c.parquet"), filepath.Join(dir, "none.csv")}); got != 4500 {
		t.Errorf("loadedBytes = %d, want 4500", got)
	}
	if wouldNotFit(4500, 9000) || !wouldNotFit(4501, 9000) {
		t.Error("wouldNotFit: the limit is half of the available memory")
	}
}
