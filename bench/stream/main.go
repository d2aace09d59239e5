// Command stream measures training from a file that does not fit the
// memory budget: it writes a synthetic regression CSV of -rows rows (10
// million by default, about 1.5 GB) into a temporary directory under -dir,
// trains an SVGP for -steps steps from it with data.Stream and
// train.FitSource (one pass for the row count, the standardization and
// the k-means sample, then shuffled mini-batches), reports the
// process's peak resident set (VmHWM) and the rows per second of each
// phase, and compares the training rate with train.Fit on -mem-rows rows
// held in memory. The CSV is deleted afterwards. It exits with an error if
// the peak resident set exceeds -max-rss MiB.
//
//	go run ./bench/stream                          # 10⁷ rows, 200 steps
//	go run ./bench/stream -rows 200000 -dir /var/tmp
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// config holds the flags.
type config struct {
	rows, dim, memRows int
	steps, batch       int
	buffer, m          int
	dir                string
	maxRSS             float64 // MiB
	asJSON             bool
}

// report is what a run measured.
type report struct {
	Rows          int     `json:"rows"`
	Dim           int     `json:"dim"`
	FileMiB       float64 `json:"file_mib"`
	WriteSeconds  float64 `json:"write_seconds"`
	ScanSeconds   float64 `json:"scan_seconds"`    // the Summarize pass
	ScanRowsPerS  float64 `json:"scan_rows_per_s"` // rows parsed per second in that pass
	Steps         int     `json:"steps"`
	Batch         int     `json:"batch"`
	StreamSeconds float64 `json:"stream_train_seconds"`
	StreamRowsPS  float64 `json:"stream_train_rows_per_s"`
	PeakRSSMiB    float64 `json:"peak_rss_mib"` // after the streamed run, before the in-memory one
	MemRows       int     `json:"mem_rows"`
	MemSeconds    float64 `json:"mem_train_seconds"`
	MemRowsPS     float64 `json:"mem_train_rows_per_s"`
	StreamBound   float64 `json:"stream_last_objective"`
	GoVersion     string  `json:"go"`
}

func main() {
	var c config
	flag.IntVar(&c.rows, "rows", 10_000_000, "rows of the generated CSV")
	flag.IntVar(&c.dim, "dim", 13, "input columns")
	flag.IntVar(&c.memRows, "mem-rows", 200_000, "rows of the in-memory comparison")
	flag.IntVar(&c.steps, "steps", 200, "training steps of each run")
	flag.IntVar(&c.batch, "batch", 1000, "mini-batch size")
	flag.IntVar(&c.buffer, "buffer", 100_000, "shuffle-buffer rows")
	flag.IntVar(&c.m, "m", 128, "inducing points")
	flag.StringVar(&c.dir, "dir", os.TempDir(), "directory for the temporary CSV (needs about 150 bytes per row)")
	flag.Float64Var(&c.maxRSS, "max-rss", 400, "fail if the peak resident set of the streamed run exceeds this many MiB (0: no limit)")
	flag.BoolVar(&c.asJSON, "json", false, "print the report as JSON")
	flag.Parse()
	if err := run(context.Background(), c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "stream:", err)
		os.Exit(1)
	}
}

// target is the synthetic regression function, smooth in every input.
func target(x []float64) float64 {
	s := 0.0
	for j, v := range x {
		s += math.Sin(v+float64(j)) / float64(j+1)
	}
	return s
}

// writeCSV writes rows rows of dim standard-normal inputs and a noisy
// target to path and returns the file's size.
func writeCSV(path string, rows, dim int, seed uint64) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(seed, 7))
	x := make([]float64, dim)
	line := make([]byte, 0, 256)
	for i := 0; i < rows; i++ {
		line = line[:0]
		for j := range x {
			x[j] = rng.NormFloat64()
			line = strconv.AppendFloat(line, x[j], 'g', 8, 64)
			line = append(line, ',')
		}
		line = strconv.AppendFloat(line, target(x)+0.1*rng.NormFloat64(), 'g', 8, 64)
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			f.Close()
			return 0, err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return 0, err
	}
	return st.Size(), f.Close()
}

// memorySet returns rows rows drawn as writeCSV draws them, standardized.
func memorySet(rows, dim int, seed uint64) (*mat.Dense, []float64, error) {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := mat.NewDense(rows, dim, nil)
	y := make([]float64, rows)
	for i := range y {
		r := x.RawRowView(i)
		for j := range r {
			r[j] = rng.NormFloat64()
		}
		y[i] = target(r) + 0.1*rng.NormFloat64()
	}
	std, err := data.FitStandardizer(x, y)
	if err != nil {
		return nil, nil, err
	}
	if err := std.TransformX(x); err != nil {
		return nil, nil, err
	}
	std.TransformY(y)
	return x, y, nil
}

// newModel returns an SVGP with m inducing points placed by k-means on xs.
func newModel(xs *mat.Dense, m int) (*gp.Model, error) {
	_, d := xs.Dims()
	z, _, err := inducing.Init(xs, m, 0, inducing.KMeansOptions{Seed: 1})
	if err != nil {
		return nil, err
	}
	k, err := kernel.NewRBF(d, 1, 1)
	if err != nil {
		return nil, err
	}
	lik, err := likelihood.NewGaussian(0.1)
	if err != nil {
		return nil, err
	}
	return gp.NewSVGP(k, lik, z)
}

// peakRSS returns the process's peak resident set in MiB (VmHWM).
func peakRSS() (float64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("VmHWM %q: %w", rest, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, errors.New("no VmHWM in /proc/self/status")
}

// run writes the CSV, trains from it, trains in memory and reports.
func run(ctx context.Context, c config, out io.Writer) (err error) {
	if c.rows < c.m || c.memRows < c.m || c.steps < 1 || c.batch < 1 || c.dim < 1 || c.buffer < 1 {
		return fmt.Errorf("bad sizes: -rows %d, -mem-rows %d, -m %d, -steps %d, -batch %d, -dim %d, -buffer %d", c.rows, c.memRows, c.m, c.steps, c.batch, c.dim, c.buffer)
	}
	dir, err := os.MkdirTemp(c.dir, "solvegp-stream-")
	if err != nil {
		return err
	}
	defer func() {
		if rerr := os.RemoveAll(dir); err == nil {
			err = rerr
		}
	}()
	rep := report{Rows: c.rows, Dim: c.dim, Steps: c.steps, Batch: c.batch, MemRows: c.memRows, GoVersion: runtime.Version()}
	if err := streamed(ctx, c, filepath.Join(dir, "data.csv"), &rep); err != nil {
		return err
	}
	if err := inMemory(ctx, c, &rep); err != nil {
		return err
	}
	if c.asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printReport(out, &rep)
	}
	if c.maxRSS > 0 && rep.PeakRSSMiB > c.maxRSS {
		return fmt.Errorf("peak resident set %.0f MiB exceeds -max-rss %.0f MiB", rep.PeakRSSMiB, c.maxRSS)
	}
	return nil
}

// streamed writes the CSV at path and trains from it, filling rep.
func streamed(ctx context.Context, c config, path string, rep *report) error {
	t0 := time.Now()
	size, err := writeCSV(path, c.rows, c.dim, 1)
	if err != nil {
		return err
	}
	rep.FileMiB, rep.WriteSeconds = float64(size)/(1<<20), time.Since(t0).Seconds()
	t0 = time.Now()
	shards, err := data.OpenShards([]string{path}, data.Options{Header: data.HeaderAbsent})
	if err != nil {
		return err
	}
	sum, err := data.Summarize(shards, max(10000, 20*c.m), 1)
	if err != nil {
		return err
	}
	src, err := data.NewStream(shards, data.StreamOptions{Buffer: c.buffer, Seed: 1, Std: sum.Std, Rows: sum.Rows, Dim: sum.Dim})
	if err != nil {
		return err
	}
	rep.ScanSeconds = time.Since(t0).Seconds()
	rep.ScanRowsPerS = float64(c.rows) / rep.ScanSeconds
	xs := mat.DenseCopyOf(sum.SampleX)
	if err := sum.Std.TransformX(xs); err != nil {
		return err
	}
	model, err := newModel(xs, c.m)
	if err != nil {
		return err
	}
	t0 = time.Now()
	res, err := train.FitSource(ctx, model, src, train.Config{MaxSteps: c.steps, BatchSize: c.batch, Seed: 1})
	if err != nil {
		return err
	}
	rep.StreamSeconds = time.Since(t0).Seconds()
	rep.StreamRowsPS = float64(res.Steps*c.batch) / rep.StreamSeconds
	rep.StreamBound = res.Objective
	rep.PeakRSSMiB, err = peakRSS()
	return err
}

// inMemory trains on c.memRows rows held in memory, filling rep.
func inMemory(ctx context.Context, c config, rep *report) error {
	x, y, err := memorySet(c.memRows, c.dim, 2)
	if err != nil {
		return err
	}
	model, err := newModel(x, c.m)
	if err != nil {
		return err
	}
	t0 := time.Now()
	res, err := train.Fit(ctx, model, x, y, train.Config{MaxSteps: c.steps, BatchSize: c.batch, Seed: 1})
	if err != nil {
		return err
	}
	rep.MemSeconds = time.Since(t0).Seconds()
	rep.MemRowsPS = float64(res.Steps*c.batch) / rep.MemSeconds
	return nil
}

// printReport prints rep as a Markdown table.
func printReport(w io.Writer, r *report) {
	fmt.Fprintf(w, "| measure | value |\n|---|---:|\n")
	fmt.Fprintf(w, "| CSV | %d rows × %d inputs + target, %.0f MiB, written in %.1f s |\n", r.Rows, r.Dim, r.FileMiB, r.WriteSeconds)
	fmt.Fprintf(w, "| summary pass (count, standardization, k-means sample) | %.1f s, %.3g rows/s |\n", r.ScanSeconds, r.ScanRowsPerS)
	fmt.Fprintf(w, "| streamed training, %d steps of %d rows | %.1f s, %.3g rows/s |\n", r.Steps, r.Batch, r.StreamSeconds, r.StreamRowsPS)
	fmt.Fprintf(w, "| in-memory training (%d rows), %d steps of %d rows | %.1f s, %.3g rows/s |\n", r.MemRows, r.Steps, r.Batch, r.MemSeconds, r.MemRowsPS)
	fmt.Fprintf(w, "| streamed / in-memory training rate | %.2f |\n", r.StreamRowsPS/r.MemRowsPS)
	fmt.Fprintf(w, "| peak resident set (VmHWM) after the streamed run | %.0f MiB |\n", r.PeakRSSMiB)
}
