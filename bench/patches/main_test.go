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
}
