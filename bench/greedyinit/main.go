// Command greedyinit compares two placements of the inducing inputs of
// collapsed SGPR (Titsias' bound, gp/collapsed): k-means centres
// (inducing.KMeans) and greedy conditional-variance selection of training
// rows (inducing.Greedy, Burt, Rasmussen and van der Wilk, JMLR 2020).
//
//	go run ./bench/greedyinit -data ../shared/data/elevators.csv.gz -rows 5000 -m 64
//
// For each split seed it takes the first -rows rows of the file, splits them
// at random into training and test rows (-test), standardizes both with the
// training statistics, places M inducing inputs on the training inputs by
// each method under the initial kernel (RBF with one lengthscale per
// input, all -lengthscale, variance 1, noise variance 0.1), fits the
// collapsed bound by L-BFGS for at most -iters iterations (kernel, noise
// and, unless -fix-z, Z), and prints the bound before and after the fit and the test RMSE and
// mean log predictive density on standardized targets. Both methods see
// the same split and the same starting hyperparameters, so their
// differences come from the placement alone. With -refit it also runs the
// alternation of Burt et al.: from the k-means fit, Z placed anew by greedy
// selection under the fitted kernel and fitted again, against the k-means
// fit continued for as many iterations.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
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
	seeds    int
	fixZ     bool
	refit    bool
	ls       float64
	threads  int
}

func main() {
	var c config
	flag.StringVar(&c.path, "data", "../shared/data/elevators.csv.gz", "CSV or gzip CSV file, target in the last column")
	flag.IntVar(&c.rows, "rows", 5000, "use the first this many rows of the file (0: all)")
	flag.Float64Var(&c.testFrac, "test", 0.1, "fraction of the rows held out for testing")
	flag.IntVar(&c.m, "m", 64, "number of inducing points M")
	flag.IntVar(&c.iters, "iters", 300, "most L-BFGS iterations")
	flag.IntVar(&c.seeds, "seeds", 3, "number of random splits (seeds 1, 2, …)")
	flag.BoolVar(&c.fixZ, "fix-z", false, "keep Z where the initialization put it (fit only the kernel and the noise)")
	flag.BoolVar(&c.refit, "refit", false, "also compare, from the k-means fit, continuing it with re-placing Z by greedy selection under the fitted kernel and fitting again")
	flag.Float64Var(&c.ls, "lengthscale", 1, "initial lengthscale of every input (on standardized inputs)")
	flag.IntVar(&c.threads, "threads", 1, "goroutines per linear-algebra call (0: all CPUs)")
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(context.Background(), c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "greedyinit:", err)
		os.Exit(1)
	}
}

// result is one fit.
type result struct {
	initial, bound, rmse, loglik float64
	iters                        int
	seconds                      float64
}

// run loads the data and prints one table row per seed and method, then
// the means over the seeds.
func run(ctx context.Context, c config, w io.Writer) error {
	if c.ls == 0 {
		c.ls = 1
	}
	if c.rows < 0 || c.m < 1 || c.iters < 0 || c.seeds < 1 || !(c.ls > 0) {
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
	fmt.Fprintf(w, "%s: first %d rows, %.0f%% test, M = %d, initial lengthscale %g, at most %d L-BFGS iterations, fix-z %v\n\n",
		c.path, n, 100*c.testFrac, c.m, c.ls, c.iters, c.fixZ)
	fmt.Fprintln(w, "| seed | init | initial bound | final bound | iterations | test RMSE | test log-lik | seconds |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	methods := []string{"kmeans", "greedy"}
	if c.refit {
		methods = append(methods, "kmeans→kmeans", "kmeans→greedy")
	}
	sum := make(map[string]*result, len(methods))
	for _, name := range methods {
		sum[name] = &result{}
	}
	for seed := uint64(1); seed <= uint64(c.seeds); seed++ {
		split, err := data.RandomSplit(n, c.testFrac, 0, seed)
		if err != nil {
			return err
		}
		sets, err := data.Prepare(tab, split)
		if err != nil {
			return err
		}
		for _, name := range methods {
			r, err := fitOne(ctx, c, sets, name, seed)
			if err != nil {
				return fmt.Errorf("seed %d, %s: %w", seed, name, err)
			}
			fmt.Fprintf(w, "| %d | %s | %.1f | %.1f | %d | %.4f | %.4f | %.1f |\n",
				seed, name, r.initial, r.bound, r.iters, r.rmse, r.loglik, r.seconds)
			s := sum[name]
			s.initial += r.initial / float64(c.seeds)
			s.bound += r.bound / float64(c.seeds)
			s.rmse += r.rmse / float64(c.seeds)
			s.loglik += r.loglik / float64(c.seeds)
			s.seconds += r.seconds / float64(c.seeds)
		}
	}
	for _, name := range methods {
		s := sum[name]
		fmt.Fprintf(w, "| mean | %s | %.1f | %.1f | – | %.4f | %.4f | %.1f |\n", name, s.initial, s.bound, s.rmse, s.loglik, s.seconds)
	}
	return nil
}

// fitOne places Z by the named method under the initial kernel, fits the
// collapsed SGPR bound and evaluates the fitted model on the test rows.
// With refit ("kmeans→kmeans" or "kmeans→greedy") it starts instead from
// the k-means fit: it continues that fit for another -iters iterations, or
// places Z anew by greedy selection under the fitted kernel and fits again,
// so that both refits run the same number of iterations.
func fitOne(ctx context.Context, c config, sets *data.Sets, method string, seed uint64) (result, error) {
	_, d := sets.XTrain.Dims()
	k, err := kernel.NewRBF(d, c.ls, 1, kernel.ARD())
	if err != nil {
		return result{}, err
	}
	lik, err := likelihood.NewGaussian(0.1)
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	first := method
	if method != "kmeans" && method != "greedy" {
		first = "kmeans"
	}
	md, fit, err := placeAndFit(ctx, c, sets, k, lik, first, seed)
	if err != nil {
		return result{}, err
	}
	switch method {
	case "kmeans→kmeans":
		if fit, err = md.Fit(ctx, sets.XTrain, sets.YTrain, train.LBFGSOptions{MaxIter: c.iters}); err != nil {
			return result{}, err
		}
	case "kmeans→greedy":
		if md, fit, err = placeAndFit(ctx, c, sets, md.Kernel(), md.Likelihood(), "greedy", seed); err != nil {
			return result{}, err
		}
	}
	r, err := evaluate(md, sets)
	if err != nil {
		return result{}, err
	}
	r.initial, r.bound, r.iters = fit.Initial, fit.Bound, fit.Iterations
	r.seconds = time.Since(start).Seconds()
	return r, nil
}

// placeAndFit places Z on the training inputs by k-means or by greedy
// selection under k, builds the collapsed model on k and lik (which it
// fits in place) and fits it.
func placeAndFit(ctx context.Context, c config, sets *data.Sets, k kernel.Kernel, lik *likelihood.Gaussian, method string, seed uint64) (*collapsed.Model, collapsed.FitResult, error) {
	var z *mat.Dense
	var err error
	if method == "greedy" {
		var sel *inducing.GreedySelection
		if sel, err = inducing.Greedy(k, sets.XTrain, c.m, inducing.GreedyOptions{Seed: seed, Threads: c.threads}); err == nil {
			z = sel.Points
		}
	} else {
		z, err = inducing.KMeans(sets.XTrain, c.m, inducing.KMeansOptions{Seed: seed, Threads: c.threads})
	}
	if err != nil {
		return nil, collapsed.FitResult{}, err
	}
	md, err := collapsed.New(k, lik, z, nil, collapsed.Options{FixInducing: c.fixZ, Threads: c.threads})
	if err != nil {
		return nil, collapsed.FitResult{}, err
	}
	fit, err := md.Fit(ctx, sets.XTrain, sets.YTrain, train.LBFGSOptions{MaxIter: c.iters})
	return md, fit, err
}

// evaluate returns the test RMSE and mean log predictive density of the
// fitted model's posterior.
func evaluate(md *collapsed.Model, sets *data.Sets) (result, error) {
	post, err := md.Posterior(sets.XTrain, sets.YTrain)
	if err != nil {
		return result{}, err
	}
	nt, _ := sets.XTest.Dims()
	mean, variance := make([]float64, nt), make([]float64, nt)
	if err := post.Predict(sets.XTest, mean, variance); err != nil {
		return result{}, err
	}
	for i := range variance {
		variance[i] += post.NoiseVariance()
	}
	var r result
	if r.rmse, err = metrics.RMSE(sets.YTest, mean); err != nil {
		return result{}, err
	}
	if r.loglik, err = metrics.GaussianLogLik(sets.YTest, mean, variance); err != nil {
		return result{}, err
	}
	return r, nil
}
