// Command exact trains an exact GP (package gp/exact) on a UCI data set as the
// yardstick for the sparse models: by default the regression tables' prior,
// a Matérn-3/2 kernel with one lengthscale (initially 1, variance 1), so
// that the gap between a sparse model and the exact GP is the
// approximation's alone (-kernel rbf-ard: an RBF kernel with one lengthscale
// per input); Gaussian noise variance 0.1 at the start, standardized data,
// all hyperparameters fitted by L-BFGS on the log marginal likelihood.
//
// The rows are split as the regression tables split them (bench/regression,
// the paper's Table 2): split -split under base seed -seed holds out 20% for
// testing and 20% of the rest for validation (unused here), so the exact GP
// trains on the same 64% as the sparse models. -n draws that many of the
// training rows at random instead (0: all). Inputs and targets are
// standardized with statistics of the training rows.
//
// The fit starts at -lengthscale, -variance and -noise (1, 1 and 0.1), or
// for example at a sparse model's fitted values (bench/regression records
// them).
//
// An exact GP costs O(N³) time and one N×N matrix of memory (6.9 GB at
// N = 29,267). -pretrain n0 first fits the hyperparameters by L-BFGS
// (-pretrain-iters iterations) on n0 random training rows and starts the
// full fit (-iters iterations) from there, as Wang et al. (2019) do for
// exact GPs on large data sets; the full fit's log marginal likelihood and
// seconds per evaluation are measured on all training rows.
//
// An interrupt (SIGINT, SIGTERM) stops the fit early; the best parameters
// found so far are then evaluated and reported with stop reason
// "interrupted".
//
// It prints and writes to -out as JSON: the seconds per evaluation of the
// log marginal likelihood with its gradient (averaged over the full fit) and
// without it (the factorization and solve of the final posterior), the
// fitted log marginal likelihood, and the test RMSE and test log-likelihood
// in the targets' original units and standardized, with the CPU, the command
// and the revision.
//
// Usage:
//
//	go run ./bench/exact [-data elevators] [-dir ../shared/data] [-split 0] [-n 0] [-pretrain 0] [-pretrain-iters 100] [-iters 100] [-seed 1] [-threads 0] [-out exact.json]
//	go run ./bench/exact -report bench/results/exact [-regression bench/results/regression.jsonl]
//
// -report prints a markdown table of the results in a directory next to the
// sparse models of bench/regression's log on the same split, with the
// fraction of the gap between SVGP 1024 and the exact GP that each sparse
// model closes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/klauspost/cpuid/v2"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/bench/internal/benchutil"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/exact"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/metrics"
	"github.com/solvegp/solvegp/gp/train"
	"github.com/solvegp/solvegp/internal/atomicfile"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// config holds the parsed flags.
type config struct {
	name, dir, out  string
	kernel          string
	ls, vari, noise float64
	split, n, iters int
	pretrain, preIt int
	seed            uint64
	threads         int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("exact", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.name, "data", "elevators", "UCI data set name (<dir>/<name>.csv.gz)")
	fs.StringVar(&c.dir, "dir", "../shared/data", "directory of the data files")
	fs.StringVar(&c.kernel, "kernel", "matern32", "kernel: matern32 (one lengthscale, as bench/regression) or rbf-ard")
	fs.Float64Var(&c.ls, "lengthscale", 1, "starting lengthscale (every input's, for rbf-ard)")
	fs.Float64Var(&c.vari, "variance", 1, "starting kernel variance")
	fs.Float64Var(&c.noise, "noise", 0.1, "starting noise variance (of standardized targets)")
	fs.IntVar(&c.split, "split", 0, "split of the regression tables (0-based)")
	fs.IntVar(&c.n, "n", 0, "training rows drawn at random from the split's training part (0: all)")
	fs.IntVar(&c.pretrain, "pretrain", 0, "fit first on this many random training rows (0: no pretraining)")
	fs.IntVar(&c.preIt, "pretrain-iters", 100, "L-BFGS iterations of the pretraining at most")
	fs.IntVar(&c.iters, "iters", 100, "L-BFGS iterations on all training rows at most")
	fs.Uint64Var(&c.seed, "seed", 1, "base seed of the splits (as bench/regression's) and of the subsamples")
	fs.IntVar(&c.threads, "threads", 0, "goroutines of the linear algebra and the kernel (0: all CPUs)")
	fs.StringVar(&c.out, "out", "exact.json", "JSON result file")
	rep := fs.String("report", "", "print the markdown table of the results (*.json) in this directory instead of fitting")
	regression := fs.String("regression", "bench/results/regression.jsonl", "-report: the sparse models' results (bench/regression's log)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case fs.NArg() != 0:
		fmt.Fprintf(stderr, "exact: unexpected argument %q\n", fs.Arg(0))
		return 2
	case *rep != "":
		if err := report(*rep, *regression, stdout); err != nil {
			fmt.Fprintf(stderr, "exact: %v\n", err)
			return 1
		}
		return 0
	case c.iters < 1 || c.preIt < 1:
		fmt.Fprintf(stderr, "exact: -iters %d and -pretrain-iters %d must be positive\n", c.iters, c.preIt)
		return 2
	case c.n < 0 || c.pretrain < 0 || c.split < 0 || c.threads < 0:
		fmt.Fprintf(stderr, "exact: -n %d, -pretrain %d, -split %d and -threads %d must not be negative\n", c.n, c.pretrain, c.split, c.threads)
		return 2
	case !(c.ls > 0) || !(c.vari > 0) || !(c.noise > 0) || math.IsInf(c.ls+c.vari+c.noise, 0):
		fmt.Fprintf(stderr, "exact: -lengthscale %g, -variance %g and -noise %g must be positive and finite\n", c.ls, c.vari, c.noise)
		return 2
	case c.kernel != "matern32" && c.kernel != "rbf-ard":
		fmt.Fprintf(stderr, "exact: -kernel %q: want matern32 or rbf-ard\n", c.kernel)
		return 2
	case c.out == "" || c.name == "":
		fmt.Fprintln(stderr, "exact: -data and -out must not be empty")
		return 2
	}
	res, err := bench(ctx, c, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "exact: %v\n", err)
		return 1
	}
	res.Command = "go run ./bench/exact " + strings.Join(args, " ")
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "exact: %v\n", err)
		return 1
	}
	if err := atomicfile.WriteFile(c.out, append(js, '\n'), 0o644); err != nil {
		fmt.Fprintf(stderr, "exact: %v\n", err)
		return 1
	}
	return 0
}

// result is the JSON record of one run.
type result struct {
	Data          string    `json:"data"`
	Kernel        string    `json:"kernel"`
	NTrain        int       `json:"n_train"`
	NTest         int       `json:"n_test"`
	Dim           int       `json:"dim"`
	Seed          uint64    `json:"seed"`
	Split         int       `json:"split"`
	Pretrain      *pretrain `json:"pretrain,omitempty"`
	Iterations    int       `json:"iterations"`
	Evaluations   int       `json:"evaluations"`
	Failed        int       `json:"failed_evaluations"`
	Reason        string    `json:"stop_reason"`
	SecPerEval    float64   `json:"sec_per_eval_with_grad"`
	SecValueOnly  float64   `json:"sec_per_eval_value_only"`
	FitSeconds    float64   `json:"fit_seconds"`
	LMLInitial    float64   `json:"log_marginal_initial"`
	LML           float64   `json:"log_marginal"`
	Noise         float64   `json:"noise_variance_standardized"`
	KernelParams  []float64 `json:"kernel_params_unconstrained"`
	Jitter        float64   `json:"jitter"`
	TestRMSE      float64   `json:"test_rmse"`
	TestLogLik    float64   `json:"test_loglik"`
	TestRMSEStd   float64   `json:"test_rmse_standardized"`
	TestLogLikStd float64   `json:"test_loglik_standardized"`
	Threads       int       `json:"threads"`
	GOMAXPROCS    int       `json:"gomaxprocs"`
	CPU           string    `json:"cpu"`
	Revision      string    `json:"revision"`
	Command       string    `json:"command"`
	Date          string    `json:"date"`
}

// pretrain records the fit on a subsample that the full fit starts from.
type pretrain struct {
	N           int     `json:"n"`
	Iterations  int     `json:"iterations"`
	Evaluations int     `json:"evaluations"`
	Reason      string  `json:"stop_reason"`
	Seconds     float64 `json:"seconds"`
	LML         float64 `json:"log_marginal"`
}

// prepare loads the data set, takes split c.split of the regression
// tables and standardizes its training rows (or c.n of them drawn at
// random).
func prepare(c config) (*data.Sets, error) {
	tab, err := data.LoadUCI(c.dir, c.name)
	if err != nil {
		return nil, err
	}
	split, err := benchutil.TableSplit(len(tab.Y), c.seed, c.split)
	if err != nil {
		return nil, err
	}
	split.Valid = nil
	if c.n > 0 && c.n < len(split.Train) {
		split.Train = subsample(split.Train, c.n, c.seed)
	}
	return data.Prepare(tab, split)
}

// subsample returns n of the indices idx drawn at random, in order.
func subsample(idx []int, n int, seed uint64) []int {
	r := rand.New(rand.NewPCG(seed, 0x65786163))
	idx = slices.Clone(idx)
	r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	idx = idx[:n]
	slices.Sort(idx)
	return idx
}

// rows returns the rows idx of x and y.
func rows(x *mat.Dense, y []float64, idx []int) (*mat.Dense, []float64) {
	_, d := x.Dims()
	xs, ys := mat.NewDense(len(idx), d, nil), make([]float64, len(idx))
	for i, k := range idx {
		xs.SetRow(i, x.RawRowView(k))
		ys[i] = y[k]
	}
	return xs, ys
}

// fit runs L-BFGS on x, y for at most iters iterations, reporting progress
// under label. An interrupted fit keeps the best parameters found.
func fit(ctx context.Context, md *exact.Model, x *mat.Dense, y []float64, iters int, label string, stdout io.Writer) (exact.FitResult, error) {
	r, err := md.Fit(ctx, x, y, train.LBFGSOptions{MaxIter: iters,
		OnIteration: func(it int, f float64) { fmt.Fprintf(stdout, "%s iteration %d: log marginal %.4f\n", label, it, f) }})
	switch {
	case errors.Is(err, context.Canceled) && r.Evaluations > 0:
		r.Reason = "interrupted"
		return r, nil
	case err != nil:
		return r, err
	}
	return r, nil
}

// bench fits the exact GP (after the pretraining, if any) and evaluates it
// on the test rows.
func bench(ctx context.Context, c config, stdout io.Writer) (*result, error) {
	sets, err := prepare(c)
	if err != nil {
		return nil, err
	}
	if sets.XTest == nil {
		return nil, fmt.Errorf("%s: no test rows", c.name)
	}
	n, d := sets.XTrain.Dims()
	k, err := newKernel(c.kernel, d, c.ls, c.vari)
	if err != nil {
		return nil, err
	}
	lik, err := likelihood.NewGaussian(c.noise)
	if err != nil {
		return nil, err
	}
	md, err := exact.New(k, lik, exact.Options{Threads: c.threads})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "%s split %d: %d training rows (a %.1f GB kernel matrix), %d test rows, %d inputs; %s\n",
		c.name, c.split, n, 8*float64(n)*float64(n)/1e9, len(sets.YTest), d, cpuName())
	res := &result{Data: c.name, Kernel: c.kernel, NTrain: n, NTest: len(sets.YTest), Dim: d, Seed: c.seed, Split: c.split}
	if c.pretrain > 0 && c.pretrain < n {
		xs, ys := rows(sets.XTrain, sets.YTrain, subsample(seq(n), c.pretrain, c.seed+1))
		pr, err := fit(ctx, md, xs, ys, c.preIt, "pretraining", stdout)
		if err != nil {
			return nil, err
		}
		res.Pretrain = &pretrain{N: c.pretrain, Iterations: pr.Iterations, Evaluations: pr.Evaluations,
			Reason: pr.Reason, Seconds: pr.Elapsed.Seconds(), LML: pr.LogMarginal}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	full, err := fit(ctx, md, sets.XTrain, sets.YTrain, c.iters, "full", stdout)
	if err != nil {
		return nil, err
	}
	res.Iterations, res.Evaluations, res.Failed, res.Reason = full.Iterations, full.Evaluations, full.Failed, full.Reason
	res.SecPerEval = full.EvalTime.Seconds() / float64(full.Evaluations)
	res.FitSeconds, res.LMLInitial, res.LML = full.Elapsed.Seconds(), full.Initial, full.LogMarginal
	res.Noise, res.KernelParams = lik.NoiseVariance(), make([]float64, k.NumParams())
	res.Threads, res.GOMAXPROCS, res.CPU = c.threads, runtime.GOMAXPROCS(0), cpuName()
	res.Revision, res.Date = benchutil.Revision(), time.Now().UTC().Format(time.RFC3339)
	k.Params(res.KernelParams)
	if err := evaluate(md, sets, res); err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "log marginal %.4f (from %.4f) after %d iterations, %d evaluations (%s)\n",
		res.LML, res.LMLInitial, res.Iterations, res.Evaluations, res.Reason)
	fmt.Fprintf(stdout, "%.3f s per evaluation with gradient, %.3f s without\n", res.SecPerEval, res.SecValueOnly)
	fmt.Fprintf(stdout, "test RMSE %.5f, test log-likelihood %.4f (original units); standardized %.4f, %.4f\n",
		res.TestRMSE, res.TestLogLik, res.TestRMSEStd, res.TestLogLikStd)
	return res, nil
}

// newKernel returns the named kernel on d inputs with lengthscale ls and
// variance v.
func newKernel(name string, d int, ls, v float64) (*kernel.Stationary, error) {
	switch name {
	case "matern32":
		return kernel.NewMatern32(d, ls, v)
	case "rbf-ard":
		return kernel.NewRBF(d, ls, v, kernel.ARD())
	}
	return nil, fmt.Errorf("-kernel %q: want matern32 or rbf-ard", name)
}

// seq returns 0, 1, …, n−1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// evaluate factors the posterior (timed: an evaluation of the log marginal
// likelihood without its gradient is this factorization and solve),
// predicts the test rows and fills the test metrics of res, on standardized
// and on original targets.
func evaluate(md *exact.Model, sets *data.Sets, res *result) error {
	t0 := time.Now()
	post, err := md.Posterior(sets.XTrain, sets.YTrain)
	if err != nil {
		return err
	}
	res.SecValueOnly = time.Since(t0).Seconds()
	res.Jitter = post.Jitter()
	t := len(sets.YTest)
	mean, variance := make([]float64, t), make([]float64, t)
	if err := post.Predict(sets.XTest, mean, variance); err != nil {
		return err
	}
	for i := range variance {
		variance[i] += post.NoiseVariance()
	}
	if res.TestRMSEStd, err = metrics.RMSE(sets.YTest, mean); err != nil {
		return err
	}
	if res.TestLogLikStd, err = metrics.GaussianLogLik(sets.YTest, mean, variance); err != nil {
		return err
	}
	y := append([]float64(nil), sets.YTest...)
	sets.Std.InverseY(y, nil)
	sets.Std.InverseY(mean, variance)
	if res.TestRMSE, err = metrics.RMSE(y, mean); err != nil {
		return err
	}
	res.TestLogLik, err = metrics.GaussianLogLik(y, mean, variance)
	return err
}

// cpuName describes the CPU: brand, vendor family and model.
func cpuName() string {
	return fmt.Sprintf("%s (family %d, model %d)", strings.TrimSpace(cpuid.CPU.BrandName), cpuid.CPU.Family, cpuid.CPU.Model)
}
