package collapsed_test

import (
	"context"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/solvegp/solvegp/gp/collapsed"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/metrics"
	"github.com/solvegp/solvegp/gp/train"
)

// TestSharedUCIPipeline runs the whole regression pipeline on one of the
// project's UCI files when SOLVEGP_DATA names their folder: load, random
// 80/20 split with 20% of training held out, standardization, k-means
// initialization, collapsed SGPR and SOLVE-GP fits by L-BFGS, and test
// RMSE / log-likelihood on standardized targets. SOLVEGP_UCI_SET picks the
// set (default elevators) and SOLVEGP_M the number of inducing points
// (default 128; SOLVE-GP uses M + M). It is skipped otherwise.
func TestSharedUCIPipeline(t *testing.T) {
	dir := os.Getenv("SOLVEGP_DATA")
	if dir == "" {
		t.Skip("SOLVEGP_DATA not set")
	}
	name := os.Getenv("SOLVEGP_UCI_SET")
	if name == "" {
		name = "elevators"
	}
	m := 128
	if v, err := strconv.Atoi(os.Getenv("SOLVEGP_M")); err == nil && v > 0 {
		m = v
	}
	tab, err := data.LoadUCI(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	split, err := data.RandomSplit(len(tab.Y), 0.2, 0.2, 1)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := data.Prepare(tab, split)
	if err != nil {
		t.Fatal(err)
	}
	_, d := sets.XTrain.Dims()
	for _, m2 := range []int{0, m} {
		z, o, err := inducing.Init(sets.XTrain, m, m2, inducing.KMeansOptions{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		k, _ := kernel.NewMatern32(d, 1, 1)
		noise, _ := likelihood.NewGaussian(0.1)
		md, err := collapsed.New(k, noise, z, o, collapsed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := md.Fit(context.Background(), sets.XTrain, sets.YTrain, train.LBFGSOptions{MaxIter: 200})
		if err != nil {
			t.Fatal(err)
		}
		post, err := md.Posterior(sets.XTrain, sets.YTrain)
		if err != nil {
			t.Fatal(err)
		}
		n := len(sets.YTest)
		mean, variance := make([]float64, n), make([]float64, n)
		if err := post.Predict(sets.XTest, mean, variance); err != nil {
			t.Fatal(err)
		}
		for i := range variance {
			variance[i] += post.NoiseVariance()
		}
		rmse, _ := metrics.RMSE(sets.YTest, mean)
		ll, _ := metrics.GaussianLogLik(sets.YTest, mean, variance)
		t.Logf("%s N=%d d=%d M=%d+%d: bound %.1f → %.1f in %d iterations (%s, %.1fs); test RMSE %.4f, test LL %.4f",
			name, len(sets.YTrain), d, m, m2, res.Initial, res.Bound, res.Iterations, res.Reason, res.Elapsed.Seconds(), rmse, ll)
		if math.IsNaN(rmse) || rmse > 1 {
			t.Errorf("test RMSE %v on standardized targets", rmse)
		}
	}
}
