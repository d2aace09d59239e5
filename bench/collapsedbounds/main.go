// Command collapsedbounds compares the collapsed SGPR bounds of package
// gp/collapsed on one regression data set: Titsias' standard bound, the
// Tighter bound (Titsias 2025; Bui et al. 2025) and the block-diagonal
// bound of Bui and Titsias (2025) at one or more block sizes.
//
//	go run ./bench/collapsedbounds -data ../shared/data/elevators.csv.gz -m 128 -iters 50 -blocks 64,128
//
// It splits the rows at random into training and test rows (-test),
// standardizes both with the training statistics, places M inducing inputs
// by k-means on the training inputs, and then, for each bound, from the
// same start (RBF kernel with one lengthscale per input, all 1, variance 1,
// noise variance 0.1): measures the process CPU time of -evals evaluations
// of the bound with its gradient (CPU rather than wall time, which on a
// shared machine mostly measures the other processes), fits the bound by
// L-BFGS for at most -iters iterations (kernel, noise and Z; none with
// -iters 0), and prints the bound at the start (all bounds at the same
// parameters, so these values order the bounds), the bound after the fit,
// and the test RMSE and mean log predictive density on standardized
// targets; then every bound at the parameters each fit ended at.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/metrics"
	"github.com/solvegp/solvegp/gp/train"
)

// config is what one run of the comparison does.
type config struct {
	path     string
	rows     int
	testFrac float64
	m        int
	iters    int
	evals    int
	blocks   []int
	seed     uint64
	threads  int
}

func main() {
	var c config
	var blocks string
	flag.StringVar(&c.path, "data", "../shared/data/elevators.csv.gz", "CSV or gzip CSV file, target in the last column")
	flag.IntVar(&c.rows, "rows", 0, "use the first this many rows of the file (0: all)")
	flag.Float64Var(&c.testFrac, "test", 0.2, "fraction of the rows held out for testing")
	flag.IntVar(&c.m, "m", 128, "number of inducing points M")
	flag.IntVar(&c.iters, "iters", 50, "most L-BFGS iterations per bound (0: evaluate at the start only)")
	flag.IntVar(&c.evals, "evals", 3, "timed evaluations of each bound with its gradient")
	flag.StringVar(&blocks, "blocks", "64,128", "comma-separated block sizes of the blockdiag bound")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the split and of k-means")
	flag.IntVar(&c.threads, "threads", 1, "goroutines per linear-algebra call (0: all CPUs)")
	flag.Parse()
	var err error
	if c.blocks, err = parseBlocks(blocks); err != nil || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(context.Background(), c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "collapsedbounds:", err)
		os.Exit(1)
	}
}

// parseBlocks parses a comma-separated list of positive block sizes.
func parseBlocks(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		b, err := strconv.Atoi(f)
		if err != nil || b < 1 {
			return nil, fmt.Errorf("bad block size %q", f)
		}
		out = append(out, b)
	}
	return out, nil
}

// result is one bound's row of the table.
type result struct {
	initial, bound, rmse, loglik float64
	iters, evals                 int
	evalCPU, fitCPU, fitWall     float64 // CPU s per timed evaluation; CPU and wall s of the fit
}

// run loads and splits the data and prints one table row per bound.
func run(ctx context.Context, c config, w io.Writer) error {
	if c.rows < 0 || c.m < 1 || c.iters < 0 || c.evals < 1 || !(c.testFrac > 0 && c.testFrac < 1) {
		return fmt.Errorf("bad configuration %+v", c)
	}
	tab, err := data.LoadCSV(c.path, data.Options{})
	if err != nil {
		return err
	}
	n, _ := tab.X.Dims()
	if c.rows > 0 {
		n = min(n, c.rows)
	}
	split, err := data.RandomSplit(n, c.testFrac, 0, c.seed)
	if err != nil {
		return err
	}
	sets, err := data.Prepare(tab, split)
	if err != nil {
		return err
	}
	z, err := inducing.KMeans(sets.XTrain, c.m, inducing.KMeansOptions{Seed: c.seed, Threads: c.threads})
	if err != nil {
		return err
	}
	ntr, d := sets.XTrain.Dims()
	fmt.Fprintf(w, "%s: %d training and %d test rows, d = %d, M = %d, at most %d L-BFGS iterations, %d thread(s)\n\n",
		c.path, ntr, len(sets.YTest), d, c.m, c.iters, c.threads)
	fmt.Fprintln(w, "| bound | block size | bound at start | final bound | iterations (evaluations) | test RMSE | test log-lik | CPU s per evaluation | fit CPU s (wall s) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	type bound struct {
		kind collapsed.BoundKind
		size int
	}
	list := []bound{{collapsed.Standard, 0}, {collapsed.Tighter, 0}}
	for _, b := range c.blocks {
		list = append(list, bound{collapsed.BlockDiagonal, b})
	}
	opts := make([]collapsed.Options, len(list))
	names := make([]string, len(list))
	fits := make([]*collapsed.Model, len(list))
	for i, b := range list {
		opts[i] = collapsed.Options{Bound: b.kind, BlockSize: b.size, Threads: c.threads}
		names[i] = b.kind.String()
		size := "–"
		if b.size > 0 {
			size = strconv.Itoa(b.size)
			names[i] += " " + size
		}
		md, r, err := fitOne(ctx, c, sets, z, opts[i])
		if err != nil {
			return fmt.Errorf("%v: %w", b.kind, err)
		}
		fits[i] = md
		fmt.Fprintf(w, "| %v | %s | %.1f | %.1f | %d (%d) | %.4f | %.4f | %.3f | %.1f (%.1f) |\n",
			b.kind, size, r.initial, r.bound, r.iters, r.evals, r.rmse, r.loglik, r.evalCPU, r.fitCPU, r.fitWall)
	}
	return crossTable(w, sets, fits, opts, names)
}

// crossTable prints every bound at the parameters every fit ended at (one
// row per fit, one column per bound), which orders the bounds at common
// parameters again after the fits have moved apart.
func crossTable(w io.Writer, sets *data.Sets, fits []*collapsed.Model, opts []collapsed.Options, names []string) error {
	fmt.Fprintf(w, "\n| parameters of the fit of | %s |\n|---|%s\n", strings.Join(names, " | "), strings.Repeat("---|", len(names)))
	for i, md := range fits {
		fmt.Fprintf(w, "| %s |", names[i])
		for _, o := range opts {
			other, err := collapsed.New(md.Kernel(), md.Likelihood(), md.Z(), nil, o)
			if err != nil {
				return err
			}
			f, err := other.Bound(sets.XTrain, sets.YTrain)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, " %.1f |", f)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// fitOne builds the collapsed model with opts from the common start, times
// its evaluations, fits it and evaluates it on the test rows; it returns the
// fitted model.
func fitOne(ctx context.Context, c config, sets *data.Sets, z *mat.Dense, opts collapsed.Options) (*collapsed.Model, result, error) {
	_, d := sets.XTrain.Dims()
	k, err := kernel.NewRBF(d, 1, 1, kernel.ARD())
	if err != nil {
		return nil, result{}, err
	}
	lik, err := likelihood.NewGaussian(0.1)
	if err != nil {
		return nil, result{}, err
	}
	md, err := collapsed.New(k, lik, z, nil, opts)
	if err != nil {
		return nil, result{}, err
	}
	grad := make([]float64, md.NumParams())
	cpu := processCPUSeconds()
	for range c.evals {
		if _, err := md.BoundGrad(sets.XTrain, sets.YTrain, grad); err != nil {
			return nil, result{}, err
		}
	}
	var r result
	r.evalCPU = (processCPUSeconds() - cpu) / float64(c.evals)
	if r.initial, err = md.Bound(sets.XTrain, sets.YTrain); err != nil {
		return nil, result{}, err
	}
	r.bound = r.initial
	if c.iters > 0 {
		start, cpu := time.Now(), processCPUSeconds()
		fit, err := md.Fit(ctx, sets.XTrain, sets.YTrain, train.LBFGSOptions{MaxIter: c.iters})
		if err != nil {
			return nil, result{}, err
		}
		r.fitCPU, r.fitWall = processCPUSeconds()-cpu, time.Since(start).Seconds()
		r.bound, r.iters, r.evals = fit.Bound, fit.Iterations, fit.Evaluations
	}
	post, err := md.Posterior(sets.XTrain, sets.YTrain)
	if err != nil {
		return nil, result{}, err
	}
	nt, _ := sets.XTest.Dims()
	mean, variance := make([]float64, nt), make([]float64, nt)
	if err := post.Predict(sets.XTest, mean, variance); err != nil {
		return nil, result{}, err
	}
	for i := range variance {
		variance[i] += post.NoiseVariance()
	}
	if r.rmse, err = metrics.RMSE(sets.YTest, mean); err != nil {
		return nil, result{}, err
	}
	if r.loglik, err = metrics.GaussianLogLik(sets.YTest, mean, variance); err != nil {
		return nil, result{}, err
	}
	return md, r, nil
}
