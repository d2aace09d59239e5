// Command kernels measures solvegp's level-3 BLAS and Cholesky kernels as a
// share of the running machine's measured FMA peak and, built with the
// openblas tag, side by side with OpenBLAS in the same process.
//
// Usage:
//
//	go run ./bench/kernels [-n 1024,2048] [-threads 1,2] [-reps 5] [-cases dgemm-nn,...] [-json out.json] [-clock thread]
//	go build -tags openblas -o /tmp/kernels ./bench/kernels && OPENBLAS_CORETYPE=SkylakeX /tmp/kernels
//
// Each case runs the two libraries alternately, reps times each, on the same
// inputs, and reports the best and the median rate of each. The FMA peak for
// the case's thread count is measured (package internal/peak) before and
// after every case; the larger of the two is the reference for the
// "% of peak" column, so a figure can only understate the kernel. Before
// every case on more than one thread the core-to-core round trip of a cache
// line is measured too (peak.RoundTrip): on a virtual machine it tells
// whether the host placed the vCPUs close together, which moves the
// two-thread rates of kernels that hand data between goroutines. The report
// is a Markdown table on standard output headed by the machine description;
// -json also writes every sample. With -clock thread (one thread only) every
// run and every chunk of the peak is timed by the calling thread's CPU time
// instead of the wall clock, which leaves out the time spent waiting for a
// core on a host shared with other processes.
//
// On AMD Zen 4 and Zen 5, OpenBLAS 0.3.21 runs its AVX2 kernels unless
// OPENBLAS_CORETYPE=SkylakeX is set; the report prints OpenBLAS's own
// configuration string so the comparison says which kernels it ran. Built
// with OpenBLAS, the program re-executes itself with
// OPENBLAS_THREAD_TIMEOUT=4 unless that is set, so that OpenBLAS's idle
// threads do not spin on the core solvegp's second goroutine needs.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/solvegp/solvegp/internal/atomicfile"
	"github.com/solvegp/solvegp/internal/peak"
)

// options are the command-line settings.
type options struct {
	sizes    []int
	threads  []int
	reps     int
	cases    []string
	jsonPath string
	peakTime time.Duration
	// clock times each run and chunk of the peak: the wall clock, or the
	// calling thread's CPU time (-clock thread, one thread only).
	clock     func() time.Duration
	clockName string
}

func main() {
	opt, err := parseFlags(os.Args[1:], os.Stderr)
	if err == flag.ErrHelp {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kernels:", err)
		os.Exit(2)
	}
	if err := reference.prepare(); err != nil {
		fmt.Fprintln(os.Stderr, "kernels:", err)
	}
	rep, err := run(opt, os.Stdout)
	if err == nil && opt.jsonPath != "" {
		err = writeJSON(opt.jsonPath, rep)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kernels:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("kernels", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sizes := fs.String("n", "1024,2048", "comma-separated matrix orders")
	threads := fs.String("threads", "1,2", "comma-separated goroutine (and OpenBLAS thread) counts")
	reps := fs.Int("reps", 5, "timed runs of each library per case")
	cases := fs.String("cases", strings.Join(caseNames(), ","), "comma-separated cases")
	jsonPath := fs.String("json", "", "also write every sample to this JSON file")
	peakTime := fs.Duration("peak-time", 300*time.Millisecond, "duration of each FMA peak measurement")
	clock := fs.String("clock", "wall", "time runs by the `wall` clock or by the calling thread's CPU time (thread; -threads 1 only)")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	opt := options{reps: *reps, jsonPath: *jsonPath, peakTime: *peakTime, clockName: *clock}
	var err error
	if opt.clock, err = clockFunc(*clock); err != nil {
		return opt, err
	}
	if opt.sizes, err = parseInts("-n", *sizes); err != nil {
		return opt, err
	}
	if opt.threads, err = parseInts("-threads", *threads); err != nil {
		return opt, err
	}
	if opt.clockName == "thread" && slices.ContainsFunc(opt.threads, func(t int) bool { return t > 1 }) {
		return opt, fmt.Errorf("-clock thread: needs -threads 1 (a thread's CPU time does not cover its helpers)")
	}
	if opt.reps < 1 {
		return opt, fmt.Errorf("-reps %d: need at least 1", opt.reps)
	}
	if opt.peakTime <= 0 {
		return opt, fmt.Errorf("-peak-time %v: need a positive duration", opt.peakTime)
	}
	for _, c := range strings.Split(*cases, ",") {
		if !slices.Contains(caseNames(), c) {
			return opt, fmt.Errorf("-cases: unknown case %q (have %s)", c, strings.Join(caseNames(), ", "))
		}
		opt.cases = append(opt.cases, c)
	}
	return opt, nil
}

func parseInts(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%s: %q is not a positive integer", flagName, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// clockFunc returns the clock named by -clock: "wall", a monotonic wall
// clock, or "thread", the calling OS thread's CPU time, which leaves out the
// time the thread waited for a core on a host shared with other processes
// (not the slowdown from their use of the caches and memory).
func clockFunc(name string) (func() time.Duration, error) {
	switch name {
	case "wall":
		start := time.Now()
		return func() time.Duration { return time.Since(start) }, nil
	case "thread":
		if _, err := threadCPUTime(); err != nil {
			return nil, fmt.Errorf("-clock thread: %v", err)
		}
		return func() time.Duration { d, _ := threadCPUTime(); return d }, nil
	}
	return nil, fmt.Errorf("-clock %q: want wall or thread", name)
}

// report is everything one run measured.
type report struct {
	Machine   string   `json:"machine"`
	GoVersion string   `json:"go"`
	Clock     string   `json:"clock"`
	OpenBLAS  string   `json:"openblas,omitempty"`
	Results   []result `json:"results"`
}

// result is one case at one size and thread count. Rates are GFLOP/s.
type result struct {
	Case       string    `json:"case"`
	N          int       `json:"n"`
	Threads    int       `json:"threads"`
	Peak       float64   `json:"peak"`
	Ours       []float64 `json:"solvegp"`
	Theirs     []float64 `json:"openblas,omitempty"`
	PeakBefore float64   `json:"peak_before"`
	PeakAfter  float64   `json:"peak_after"`
	// RoundTrip is the core-to-core round trip of a cache line measured
	// before the case, in nanoseconds (threads > 1 only).
	RoundTrip float64 `json:"round_trip_ns,omitempty"`
}

func run(opt options, w io.Writer) (report, error) {
	rep := report{Machine: peak.Machine(), GoVersion: runtime.Version(), OpenBLAS: reference.config(), Clock: opt.clockName}
	fmt.Fprintf(w, "Machine: %s; %s; clock %s", rep.Machine, rep.GoVersion, rep.Clock)
	if rep.OpenBLAS != "" {
		fmt.Fprintf(w, "; OpenBLAS %s, OPENBLAS_CORETYPE=%q, OPENBLAS_THREAD_TIMEOUT=%q", rep.OpenBLAS,
			os.Getenv("OPENBLAS_CORETYPE"), os.Getenv("OPENBLAS_THREAD_TIMEOUT"))
	}
	fmt.Fprintf(w, "\n\n| case | n | threads | solvegp best | median | %% of peak | OpenBLAS best | median | ratio | round trip (ns) |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	unit := peak.Best()
	for _, threads := range opt.threads {
		for _, name := range opt.cases {
			for _, n := range opt.sizes {
				r := result{Case: name, N: n, Threads: threads}
				if threads > 1 {
					r.RoundTrip = float64(peak.RoundTrip(roundTripTime).Nanoseconds())
				}
				r.PeakBefore = measurePeak(unit, threads, opt)
				if err := measure(&r, opt.reps, opt.clock); err != nil {
					return rep, err
				}
				r.PeakAfter = measurePeak(unit, threads, opt)
				r.Peak = max(r.PeakBefore, r.PeakAfter)
				rep.Results = append(rep.Results, r)
				printRow(w, r)
			}
		}
	}
	return rep, nil
}

// roundTripTime is how long the core-to-core latency is probed before each
// multi-threaded case.
const roundTripTime = 20 * time.Millisecond

// measurePeak measures the FMA peak of threads cores, timed by opt's clock
// when it runs on one thread.
func measurePeak(unit peak.Unit, threads int, opt options) float64 {
	if threads == 1 {
		return unit.MeasureClock(opt.peakTime, opt.clock)
	}
	return unit.MeasureCores(threads, opt.peakTime)
}

func printRow(w io.Writer, r result) {
	ob, om := slices.Max(r.Ours), median(r.Ours)
	fmt.Fprintf(w, "| %s | %d | %d | %.1f | %.1f | %.0f%% |", r.Case, r.N, r.Threads, ob, om, 100*ob/r.Peak)
	if len(r.Theirs) == 0 {
		fmt.Fprintf(w, " | | |")
	} else {
		tb, tm := slices.Max(r.Theirs), median(r.Theirs)
		fmt.Fprintf(w, " %.1f | %.1f | %.2f |", tb, tm, ob/tb)
	}
	if r.RoundTrip > 0 {
		fmt.Fprintf(w, " %.0f |\n", r.RoundTrip)
	} else {
		fmt.Fprintf(w, " |\n")
	}
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func writeJSON(path string, rep report) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	})
}
