// Command regression reproduces the UCI regression benchmarks of the
// SOLVE-GP paper (Shi, Titsias & Mnih, AISTATS 2020): Tables 2 (test
// log-likelihood), 5 (test RMSE) and 6 (Elevators and Bike), with the
// settings of Appendix F.3.
//
// For every data set, random split and model it standardizes inputs and
// targets with training statistics, places Z and O by k-means (-init
// greedy: by greedy conditional-variance selection under the initial
// kernel, which the paper does not do), trains
// every parameter (kernel, noise, inducing inputs, q(u), q(v⊥)) with Adam
// and reports the test RMSE and test log-likelihood on standardized targets
// and the seconds per iteration:
//
//   - splits: 20% of the rows are the test set, 20% of the rest the
//     validation set, the remaining 64% the training set (split k uses the
//     seed -seed·1000003 + k, the same for every model);
//   - Matérn-3/2 kernel with one shared lengthscale (initial lengthscale 1,
//     or -lengthscale; variance 1), Gaussian noise variance 0.1 at the start;
//   - 100 epochs of mini-batches of 1024, learning rate 0.01;
//   - unwhitened SVGP and SOLVE-GP (Appendix F: "Unless stated otherwise,
//     no whitening"); ODVGP 1024 + 8096 samples 1024 columns of K_vv per
//     step (Section 5.3).
//
// The paper does not say that the validation set is used for early stopping
// or model selection, so by default the model after the last epoch is
// evaluated; the validation metrics of that model are recorded too.
// -keep-best instead evaluates the model whose validation log-likelihood was
// best at the end of an epoch.
//
// -natural γ trains q(u) (and q(v⊥) for SOLVE-GP) by natural-gradient steps
// of size γ and the other parameters by Adam, which the paper does not do;
// such rows are named e.g. "SOLVE-GP+NG(0.1) 1024+1024" and sit next to the
// Adam rows in the tables.
//
// Runs are resumable: each finished (data set, model, split) is appended as
// one JSON line to <out>/regression.jsonl and, on a restart with the same
// settings, is skipped. Within a run, the parameters are checkpointed to
// <out>/checkpoints/ at the end of an epoch at most once a minute and, on
// Ctrl-C or SIGTERM, after the step in progress (the program then exits
// with status 130; a second signal ends it at once, without a checkpoint).
// A restarted run continues from its checkpoint, which holds Adam's moments
// and the position in the batch order too, exactly as if it had not
// stopped, so an interruption loses no training, and a kill or crash at
// most about a minute. After each run, and with -report alone, the tables
// are regenerated from the log into <out>/regression.md and
// <out>/regression.json: mean ± standard error over splits next to the
// paper's numbers. Files whose content would change only in their
// "generated" timestamp (as after a rerun that ran nothing new) are left as
// they are.
//
// Usage (the default -out, bench/results, holds the repository's results:
// runs already there are skipped, so a rerun for checking needs a fresh
// -out):
//
//	go run ./bench/regression -datasets elevators,bike -models solvegp1024+1024,svgp1024 -splits 1 -out /tmp/regression-check
//	go run ./bench/regression -report
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
)

// defaultModels are the rows of the paper's tables, in its order.
var defaultModels = []string{"svgp1024", "svgp1536", "odvgp1024+1024", "odvgp1024+8096", "solvegp1024+1024", "svgp2048"}

// modelSpec is one model configuration.
type modelSpec struct {
	Kind gp.Kind
	M    int
	M2   int
	// Natural, if positive, is the natural-gradient step size for q(u)
	// and q(v⊥) (Adam then trains the other parameters).
	Natural float64
	// Tighter trains on the tighter bound (gp.TighterBound) instead of the
	// standard ELBO.
	Tighter bool
}

// Label is the model's row name in the tables, e.g. "SOLVE-GP 1024+1024",
// with natural gradients of step 0.1 "SOLVE-GP+NG(0.1) 1024+1024", on the
// tighter bound "SOLVE-GP/tighter 1024+1024" (after any "+NG(…)").
func (s modelSpec) Label() string {
	name := s.Kind.String()
	if s.Natural > 0 {
		name += fmt.Sprintf("+NG(%g)", s.Natural)
	}
	if s.Tighter {
		name += "/tighter"
	}
	if s.Kind == gp.SVGP {
		return fmt.Sprintf("%s %d", name, s.M)
	}
	return fmt.Sprintf("%s %d+%d", name, s.M, s.M2)
}

var modelRE = regexp.MustCompile(`^(svgp|odvgp|solvegp)([0-9]+)(?:\+([0-9]+))?(/tighter)?$`)

// parseModel parses a model name such as svgp1024, odvgp1024+8096 or
// solvegp1024+1024, each optionally followed by /tighter for the tighter
// bound (solvegp1024+1024/tighter).
func parseModel(name string) (modelSpec, error) {
	sm := modelRE.FindStringSubmatch(strings.ToLower(strings.TrimSpace(name)))
	if sm == nil {
		return modelSpec{}, fmt.Errorf("model %q: want svgpM, odvgpM+M2 or solvegpM+M2, optionally with /tighter (e.g. solvegp1024+1024/tighter)", name)
	}
	m, err := strconv.Atoi(sm[2])
	if err != nil || m < 1 {
		return modelSpec{}, fmt.Errorf("model %q: M must be a positive integer", name)
	}
	s := modelSpec{M: m, Tighter: sm[4] != ""}
	switch sm[1] {
	case "svgp":
		if sm[3] != "" {
			return modelSpec{}, fmt.Errorf("model %q: SVGP has no orthogonal inducing points", name)
		}
		s.Kind = gp.SVGP
		return s, nil
	case "odvgp":
		s.Kind = gp.ODVGP
	default:
		s.Kind = gp.SOLVEGP
	}
	if sm[3] == "" {
		return modelSpec{}, fmt.Errorf("model %q: %s needs M+M2", name, sm[1])
	}
	if s.M2, err = strconv.Atoi(sm[3]); err != nil || s.M2 < 1 {
		return modelSpec{}, fmt.Errorf("model %q: M2 must be a positive integer", name)
	}
	return s, nil
}

// options are the parsed command-line settings.
type options struct {
	dataDir     string
	datasets    []string
	models      []modelSpec
	splits      int
	firstSplit  int
	epochs      int
	batch       int
	lr          float64
	threads     int
	seed        uint64
	out         string
	colSample   int
	whiten      bool
	keepBest    bool
	init        string
	lengthscale float64
	report      bool
	status      bool
	quiet       bool

	// checkpointEvery is the least time between checkpoints of a run;
	// onCheckpoint, if set (by tests), is called after each one at an
	// epoch end, and onStep after each training step (before the check
	// for an interruption that follows it).
	checkpointEvery time.Duration
	onCheckpoint    func(epochs int)
	onStep          func(step int)
}

func main() {
	// The first Ctrl-C or SIGTERM stops training after the step in progress
	// and saves a checkpoint (runOne); a second one ends the program at
	// once, with the status the shell gives a process killed by that
	// signal. (signal.Notify is used rather than restoring the default
	// handler after the first signal: a program started with SIGINT
	// ignored, as in the background of a script, would then ignore the
	// second.)
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		cancel()
		fmt.Fprintln(os.Stderr, "regression: interrupted: a run in training stops after the step in progress and saves a checkpoint (interrupt again to quit at once)")
		s := <-sig
		code := 130
		if s == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}

// defaultDataDir is ../shared/data when it exists (the project's layout),
// else empty (then -data-dir is required).
func defaultDataDir() string {
	d := filepath.Join("..", "shared", "data")
	if fi, err := os.Stat(d); err == nil && fi.IsDir() {
		return d
	}
	return ""
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("regression", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{checkpointEvery: defaultCheckpointEvery}
	fs.StringVar(&o.dataDir, "data-dir", defaultDataDir(), "folder with <name>.csv.gz (default ../shared/data when present)")
	datasets := fs.String("datasets", strings.Join(data.UCIDatasets(), ","), "comma-separated data sets")
	models := fs.String("models", strings.Join(defaultModels, ","), "comma-separated models: svgpM, odvgpM+M2, solvegpM+M2, each optionally /tighter")
	fs.IntVar(&o.splits, "splits", 5, "number of random splits per data set and model")
	fs.IntVar(&o.firstSplit, "first-split", 0, "index of the first split (splits first-split .. first-split+splits-1 are run)")
	fs.IntVar(&o.epochs, "epochs", 100, "training epochs")
	fs.IntVar(&o.batch, "batch", 1024, "mini-batch size")
	fs.Float64Var(&o.lr, "lr", 0.01, "Adam learning rate")
	fs.IntVar(&o.threads, "threads", 0, "goroutines per linear-algebra call (0: all CPUs)")
	fs.Uint64Var(&o.seed, "seed", 1, "base seed of splits, k-means, mini-batches and column sampling")
	fs.StringVar(&o.out, "out", filepath.Join("bench", "results"), "directory of regression.jsonl, regression.md and regression.json")
	m := fs.Int("m", 0, "override M of every model (0: as named)")
	m2 := fs.Int("m2", 0, "override M2 of every ODVGP and SOLVE-GP model (0: as named)")
	fs.IntVar(&o.colSample, "colsample", 1024, "ODVGP: columns of K_vv sampled per step when M2 exceeds it (0: exact)")
	fs.BoolVar(&o.whiten, "whiten", false, "whitened SVGP/SOLVE-GP and q(u) of ODVGP (the paper's tables: off)")
	natural := fs.Float64("natural", 0, "natural-gradient step size in (0, 1] for q(u) and q(v⊥), with Adam on the other parameters (0: Adam on everything, as the paper); the model names get \"+NG(step)\"")
	fs.StringVar(&o.init, "init", "kmeans", "placement of Z and O: kmeans, or greedy (the rows of largest residual variance under the initial kernel, among 100·(M+M2) random training rows)")
	fs.Float64Var(&o.lengthscale, "lengthscale", initLengthscale, "initial lengthscale of the Matérn-3/2 kernel (the paper's: 1)")
	fs.BoolVar(&o.keepBest, "keep-best", false, "evaluate the epoch with the best validation log-likelihood instead of the last")
	fs.BoolVar(&o.report, "report", false, "only regenerate regression.md and regression.json from regression.jsonl")
	fs.BoolVar(&o.status, "status", false, "only list the unfinished runs checkpointed under -out, with their progress")
	fs.BoolVar(&o.quiet, "quiet", false, "no per-epoch progress lines")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() != 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.out == "" {
		return nil, errors.New("-out must name a directory")
	}
	if o.report || o.status {
		return o, nil
	}
	if o.dataDir == "" {
		return nil, errors.New("-data-dir is required (../shared/data does not exist)")
	}
	switch {
	case o.splits < 1:
		return nil, fmt.Errorf("-splits %d: must be positive", o.splits)
	case o.firstSplit < 0:
		return nil, fmt.Errorf("-first-split %d: must be non-negative", o.firstSplit)
	case o.epochs < 1:
		return nil, fmt.Errorf("-epochs %d: must be positive", o.epochs)
	case o.batch < 1:
		return nil, fmt.Errorf("-batch %d: must be positive", o.batch)
	case !(o.lr > 0) || o.lr > 1e6:
		return nil, fmt.Errorf("-lr %v: must be a positive number", o.lr)
	case o.threads < 0:
		return nil, fmt.Errorf("-threads %d: must be non-negative", o.threads)
	case *m < 0:
		return nil, fmt.Errorf("-m %d: must be non-negative", *m)
	case *m2 < 0:
		return nil, fmt.Errorf("-m2 %d: must be non-negative", *m2)
	case o.colSample < 0:
		return nil, fmt.Errorf("-colsample %d: must be non-negative", o.colSample)
	case o.init != "kmeans" && o.init != "greedy":
		return nil, fmt.Errorf("-init %q: want kmeans or greedy", o.init)
	case !(o.lengthscale > 0) || math.IsInf(o.lengthscale, 0):
		return nil, fmt.Errorf("-lengthscale %v: must be a positive number", o.lengthscale)
	case !(*natural >= 0 && *natural <= 1):
		return nil, fmt.Errorf("-natural %v: must be in [0, 1]", *natural)
	}
	for _, name := range strings.Split(*datasets, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if strings.ContainsAny(name, `/\`) {
			return nil, fmt.Errorf("-datasets: %q is a path, want a data set name", name)
		}
		o.datasets = append(o.datasets, name)
	}
	if len(o.datasets) == 0 {
		return nil, errors.New("-datasets: no data set given")
	}
	seen := map[string]bool{}
	for _, name := range strings.Split(*models, ",") {
		if strings.TrimSpace(name) == "" {
			continue
		}
		s, err := parseModel(name)
		if err != nil {
			return nil, fmt.Errorf("-models: %v", err)
		}
		if *m > 0 {
			s.M = *m
		}
		if *m2 > 0 && s.Kind != gp.SVGP {
			s.M2 = *m2
		}
		s.Natural = *natural
		if !seen[s.Label()] {
			seen[s.Label()] = true
			o.models = append(o.models, s)
		}
	}
	if len(o.models) == 0 {
		return nil, errors.New("-models: no model given")
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "regression: %v\n", err)
		return 2
	}
	if o.status {
		if err := writeStatus(o.out, stdout); err != nil {
			fmt.Fprintf(stderr, "regression: %v\n", err)
			return 1
		}
		return 0
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		fmt.Fprintf(stderr, "regression: %v\n", err)
		return 1
	}
	if !o.report {
		if err := runAll(ctx, o, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "regression: %v\n", err)
			if errors.Is(err, context.Canceled) {
				return 130
			}
			return 1
		}
	}
	if err := writeReport(o.out, stdout); err != nil {
		fmt.Fprintf(stderr, "regression: %v\n", err)
		return 1
	}
	return 0
}
