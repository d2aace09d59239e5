// Command patches turns the output of the patches benchmarks into the
// Markdown tables of bench/README.md.
//
//	go test -run '^$' -bench 'Im2Col|PackRows' -benchtime 0.3s -count 5 ./patches > patches-bench.txt
//	go run ./bench/patches < patches-bench.txt      (or: go run ./bench/patches patches-bench.txt)
//
// For every configuration it reports the median over the -count repetitions
// (best in parentheses) of the GB/s-cpu metric: bytes of patch matrix per
// CPU second of the benchmark's thread, which on a shared machine is far
// steadier than wall-clock throughput. Ratios are of medians.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// line matches e.g.
// BenchmarkIm2Col/28x28x1/k5/s1/VALID/im2col-2  1000  3e5 ns/op  2e4 MB/s  24.2 GB/s  38.1 GB/s-cpu
var line = regexp.MustCompile(`^Benchmark(Im2Col|PackRows)/(\S+)/([\w+-]+?)(-\d+)?\s+\d+\s.*?([\d.]+) GB/s-cpu`)

type key struct{ config, variant string }

func main() {
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: patches [benchmark-output.txt]  (default: standard input)\n\n"+
			"Turns the output of go test -bench 'Im2Col|PackRows' ./patches into the Markdown table of bench/README.md.")
	}
	flag.Parse()
	in, name := io.Reader(os.Stdin), "standard input"
	switch flag.NArg() {
	case 0:
	case 1:
		f, err := os.Open(flag.Arg(0))
		if err != nil {
			fmt.Fprintln(os.Stderr, "patches:", err)
			os.Exit(1)
		}
		defer f.Close()
		in, name = f, flag.Arg(0)
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err := run(in, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "patches: %s: %v\n", name, err)
		os.Exit(1)
	}
}

func run(r io.Reader, w io.Writer) error {
	samples := map[key][]float64{}
	var configs []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24) // go test output can hold long log lines
	for lineNo := 1; sc.Scan(); lineNo++ {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[5], 64)
		if err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
		k := key{m[2], m[3]}
		samples[k] = append(samples[k], v)
		if !seen[m[2]] {
			seen[m[2]] = true
			configs = append(configs, m[2])
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(configs) == 0 {
		return fmt.Errorf("no benchmark lines with a GB/s-cpu metric")
	}
	rows := 0
	for _, c := range configs {
		if len(strings.Split(c, "/")) == 4 {
			rows++
		}
	}
	if rows == 0 {
		return fmt.Errorf("no benchmark named Im2Col/<image>/k<patch>/s<stride>/<padding>/<variant>, the patches package's form")
	}
	med := func(c, v string) float64 {
		s := append([]float64(nil), samples[key{c, v}]...)
		if len(s) == 0 {
			return 0
		}
		sort.Float64s(s)
		if len(s)%2 == 1 {
			return s[len(s)/2]
		}
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	cell := func(c, v string) string {
		s := samples[key{c, v}]
		if len(s) == 0 {
			return "–"
		}
		best := s[0]
		for _, x := range s {
			best = max(best, x)
		}
		return fmt.Sprintf("%.1f (%.1f)", med(c, v), best)
	}
	ratio := func(a, b float64, pct bool) string {
		if a == 0 || b == 0 {
			return "–"
		}
		if pct {
			return fmt.Sprintf("%.0f%%", 100*a/b)
		}
		return fmt.Sprintf("%.1f×", a/b)
	}
	fmt.Fprintln(w, "| image | patch | stride | padding | im2col | plain loop | copy | im2col / copy | im2col / loop | col2im | PackRows (w = 8) | Im2Col + blas.PackA |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, c := range configs {
		f := strings.Split(c, "/")
		if len(f) != 4 {
			continue
		}
		k := strings.TrimPrefix(f[1], "k")
		fmt.Fprintf(w, "| %s | %s×%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			f[0], k, k, strings.TrimPrefix(f[2], "s"), f[3],
			cell(c, "im2col"), cell(c, "loop"), cell(c, "copy"),
			ratio(med(c, "im2col"), med(c, "copy"), true), ratio(med(c, "im2col"), med(c, "loop"), false),
			cell(c, "col2im"), cell(c, "packrows"), cell(c, "im2col+packA"))
	}
	return nil
}
