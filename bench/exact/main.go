// Command exact trains an exact GP (package gp/exact) on a UCI data set as the
// yardstick for the sparse models: an ARD RBF kernel (lengthscales 1,
// variance 1) and Gaussian noise variance 0.1 on standardized data, all
// hyperparameters fitted by L-BFGS on the log marginal likelihood.
//
// The data set is split at random (-seed) into 90% training and 10% test
// rows; -n training rows are then drawn at random from the training part
// (an exact GP costs O(N³) time and O(N²) memory). Inputs and targets are
// standardized with statistics of those n rows.
//
// An interrupt (SIGINT, SIGTERM) stops the fit early; the best parameters
// found so far are then evaluated and reported with stop reason
// "interrupted".
//
// It prints and writes to -out as JSON: the seconds per evaluation of the
// log marginal likelihood with its gradient (averaged over the fit) and
// without it (one timed evaluation at the fitted parameters), the fitted
// log marginal likelihood, and the test RMSE and test log-likelihood in the
// targets' original units, with the CPU, the command and the revision.
//
// Usage:
//
//	go run ./bench/exact [-data elevators] [-dir ../shared/data] [-n 4000] [-iters 100] [-seed 1] [-threads 0] [-out exact.json]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/klauspost/cpuid/v2"

	"github.com/solvegp/solvegp/bench/internal/benchutil"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/exact"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/metrics"
	"github.com/solvegp/solvegp/gp/train"
	"github.com/solvegp/solvegp/internal/atomicfile"
)

// testFrac is the fraction of the data set held out for testing.
const testFrac = 0.1

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// config holds the parsed flags.
type config struct {
	name, dir, out string
	n, iters       int
	seed           uint64
	threads        int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("exact", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.name, "data", "elevators", "UCI data set name (<dir>/<name>.csv.gz)")
	fs.StringVar(&c.dir, "dir", "../shared/data", "directory of the data files")
	fs.IntVar(&c.n, "n", 4000, "training rows (drawn from the 90% training part)")
	fs.IntVar(&c.iters, "iters", 100, "L-BFGS iterations at most")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the split and of the training subsample")
	fs.IntVar(&c.threads, "threads", 0, "goroutines of the linear algebra and the kernel (0: all CPUs)")
	fs.StringVar(&c.out, "out", "exact.json", "JSON result file")
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
	case c.n < 1 || c.iters < 1 || c.threads < 0:
		fmt.Fprintf(stderr, "exact: -n %d and -iters %d must be positive, -threads %d not negative\n", c.n, c.iters, c.threads)
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
	NTrain        int       `json:"n_train"`
	NTest         int       `json:"n_test"`
	Dim           int       `json:"dim"`
	Seed          uint64    `json:"seed"`
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

// prepare loads the data set, splits it and standardizes the n training
// rows drawn from the training part.
func prepare(c config) (*data.Sets, error) {
	tab, err := data.LoadUCI(c.dir, c.name)
	if err != nil {
		return nil, err
	}
	split, err := data.RandomSplit(len(tab.Y), testFrac, 0, c.seed)
	if err != nil {
		return nil, err
	}
	if c.n < len(split.Train) {
		r := rand.New(rand.NewPCG(c.seed, 0x65786163))
		r.Shuffle(len(split.Train), func(i, j int) { split.Train[i], split.Train[j] = split.Train[j], split.Train[i] })
		split.Train = split.Train[:c.n]
		slices.Sort(split.Train)
	}
	return data.Prepare(tab, split)
}

// bench fits the exact GP and evaluates it on the test rows.
func bench(ctx context.Context, c config, stdout io.Writer) (*result, error) {
	sets, err := prepare(c)
	if err != nil {
		return nil, err
	}
	if sets.XTest == nil {
		return nil, fmt.Errorf("%s: no test rows", c.name)
	}
	n, d := sets.XTrain.Dims()
	k, err := kernel.NewRBF(d, 1, 1, kernel.ARD())
	if err != nil {
		return nil, err
	}
	lik, err := likelihood.NewGaussian(0.1)
	if err != nil {
		return nil, err
	}
	md, err := exact.New(k, lik, exact.Options{Threads: c.threads})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "%s: %d training rows, %d test rows, %d inputs; %s\n", c.name, n, len(sets.YTest), d, cpuName())
	fit, err := md.Fit(ctx, sets.XTrain, sets.YTrain, train.LBFGSOptions{MaxIter: c.iters,
		OnIteration: func(it int, f float64) { fmt.Fprintf(stdout, "iteration %d: log marginal %.4f\n", it, f) }})
	switch {
	case errors.Is(err, context.Canceled) && fit.Evaluations > 0:
		// Interrupted: the model holds the best parameters found; report
		// them as such.
		fit.Reason = "interrupted"
	case err != nil:
		return nil, err
	}
	t0 := time.Now()
	if _, err := md.LogMarginal(sets.XTrain, sets.YTrain, nil); err != nil {
		return nil, err
	}
	valueOnly := time.Since(t0).Seconds()
	res := &result{
		Data: c.name, NTrain: n, NTest: len(sets.YTest), Dim: d, Seed: c.seed,
		Iterations: fit.Iterations, Evaluations: fit.Evaluations, Failed: fit.Failed, Reason: fit.Reason,
		SecPerEval: fit.EvalTime.Seconds() / float64(fit.Evaluations), SecValueOnly: valueOnly,
		FitSeconds: fit.Elapsed.Seconds(), LMLInitial: fit.Initial, LML: fit.LogMarginal,
		Noise: lik.NoiseVariance(), KernelParams: make([]float64, k.NumParams()),
		Threads: c.threads, GOMAXPROCS: runtime.GOMAXPROCS(0), CPU: cpuName(),
		Revision: benchutil.Revision(), Date: time.Now().UTC().Format(time.RFC3339),
	}
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

// evaluate predicts the test rows and fills the test metrics of res, on
// standardized and on original targets.
func evaluate(md *exact.Model, sets *data.Sets, res *result) error {
	post, err := md.Posterior(sets.XTrain, sets.YTrain)
	if err != nil {
		return err
	}
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
