package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	in := `goos: linux
BenchmarkIm2Col/28x28x1/k5/s1/VALID/im2col-2   1000  300 ns/op  24210.00 MB/s  24.21 GB/s  40.0 GB/s-cpu
BenchmarkIm2Col/28x28x1/k5/s1/VALID/im2col-2   1000  300 ns/op  24210.00 MB/s  24.21 GB/s  38.0 GB/s-cpu
BenchmarkIm2Col/28x28x1/k5/s1/VALID/im2col-2   1000  300 ns/op  24210.00 MB/s  24.21 GB/s  30.0 GB/s-cpu
BenchmarkIm2Col/28x28x1/k5/s1/VALID/loop-2     100   300 ns/op  2728.15 MB/s   2.728 GB/s  3.8 GB/s-cpu
BenchmarkIm2Col/28x28x1/k5/s1/VALID/copy-2     100   300 ns/op  2728.15 MB/s   2.728 GB/s  47.5 GB/s-cpu
BenchmarkIm2Col/28x28x1/k5/s1/VALID/im2col-par-2 100 300 ns/op  2728.15 MB/s   2.728 GB/s
BenchmarkPackRows/28x28x1/k5/s1/VALID/im2col+packA-2 100 300 ns/op 1 MB/s 1 GB/s 12.5 GB/s-cpu
PASS
`
	var out strings.Builder
	if err := run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := "| 28x28x1 | 5×5 | 1 | VALID | 38.0 (40.0) | 3.8 (3.8) | 47.5 (47.5) | 80% | 10.0× | – | – | 12.5 (12.5) |"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("output:\n%s\nwant row:\n%s", out.String(), want)
	}
	if err := run(strings.NewReader("PASS\n"), &out); err == nil {
		t.Fatal("no error for input without benchmarks")
	}
	// Names of another form, and a malformed number, are errors that say
	// what is wrong; long lines are read.
	for _, c := range []struct{ in, want string }{
		{"BenchmarkIm2Col/a/b-2  10  5 ns/op  1.0 GB/s-cpu\n", "no benchmark named"},
		{"goos: linux\nBenchmarkIm2Col/a/k5/s1/SAME/im2col-2  10  5 ns/op  1.2.3 GB/s-cpu\n", "line 2:"},
	} {
		if err := run(strings.NewReader(c.in), &out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one saying %q", c.in, err, c.want)
		}
	}
	long := strings.Repeat("x", 100000) + "\n" + in
	if err := run(strings.NewReader(long), &out); err != nil {
		t.Errorf("a 100000-byte line: %v", err)
	}
}
