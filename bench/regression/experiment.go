package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/bench/internal/benchutil"
	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/inducing"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// Initial hyperparameters (Section 5 and Appendix F of the paper):
// lengthscale 1, variance 1, noise variance 0.1.
const (
	initLengthscale = 1.0
	initVariance    = 1.0
	initNoise       = 0.1
	predictBatch    = 2048
)

// Setup is the part of a run's configuration shared by the rows of one
// table: runs are comparable (and resumable) only with the same setup.
type Setup struct {
	Epochs    int     `json:"epochs"`
	Batch     int     `json:"batch"`
	LR        float64 `json:"lr"`
	Seed      uint64  `json:"seed"`
	ColSample int     `json:"colsample"`
	Whiten    bool    `json:"whiten"`
	KeepBest  bool    `json:"keep_best"`
	// Init is the placement of Z and O: "" (k-means, the paper's) or
	// "greedy" (inducing.GreedyInit under the initial kernel).
	Init string `json:"init,omitempty"`
	// Lengthscale is the initial lengthscale when it is not the paper's 1
	// (0 means 1).
	Lengthscale float64 `json:"init_lengthscale,omitempty"`
}

// String is a short description of the setup, used as a table heading.
func (s Setup) String() string {
	w := "unwhitened"
	if s.Whiten {
		w = "whitened"
	}
	ev := "final model"
	if s.KeepBest {
		ev = "best validation epoch"
	}
	str := fmt.Sprintf("%d epochs, batch %d, lr %g, seed %d, ODVGP column sample %d, %s, %s evaluated",
		s.Epochs, s.Batch, s.LR, s.Seed, s.ColSample, w, ev)
	if s.Init != "" {
		str += ", " + s.Init + " initialization"
	}
	if s.Lengthscale != 0 {
		str += fmt.Sprintf(", initial lengthscale %g", s.Lengthscale)
	}
	return str
}

// Record is one finished (data set, model, split) run: one line of
// regression.jsonl.
type Record struct {
	Dataset string `json:"dataset"`
	Model   string `json:"model"`
	Kind    string `json:"kind"`
	M       int    `json:"m"`
	M2      int    `json:"m2"`
	Split   int    `json:"split"`
	// Natural is the natural-gradient step size for q(u) and q(v⊥) (0:
	// Adam on every parameter); it is part of Model's label.
	Natural float64 `json:"natural_step,omitempty"`
	Setup

	NTrain int `json:"n_train"`
	NValid int `json:"n_valid"`
	NTest  int `json:"n_test"`
	D      int `json:"d"`

	TestRMSE    float64 `json:"test_rmse"`
	TestLogLik  float64 `json:"test_log_lik"`
	ValidRMSE   float64 `json:"valid_rmse"`
	ValidLogLik float64 `json:"valid_log_lik"`
	// FinalObjective is the mean mini-batch ELBO of the last epoch, per
	// training point.
	FinalObjective float64 `json:"final_objective_per_point"`
	BestEpoch      int     `json:"best_epoch"`

	Noise       float64 `json:"noise_variance"`
	Lengthscale float64 `json:"lengthscale"`
	Variance    float64 `json:"kernel_variance"`

	Steps       int     `json:"steps"`
	Rejected    int     `json:"rejected_steps"`
	InitSeconds float64 `json:"init_seconds"`
	// TrainSeconds is the wall time of training without validation;
	// SecPerIter is TrainSeconds / Steps.
	TrainSeconds float64 `json:"train_seconds"`
	SecPerIter   float64 `json:"sec_per_iter"`

	// Resumed lists the epochs after which training was resumed from a
	// checkpoint with a fresh Adam state (checkpoints written before they
	// held Adam's moments); empty for an uninterrupted run.
	Resumed []int `json:"resumed_after_epochs,omitempty"`
	// ResumedExact lists the epochs after which training was resumed from
	// a checkpoint with Adam's moments and the batch order (and, for an
	// ODVGP that samples columns, its random stream), which gives the same
	// result as an uninterrupted run.
	ResumedExact []int `json:"resumed_exact_after_epochs,omitempty"`
	// ResumedRandomRestarted lists the epochs after which an ODVGP that
	// samples columns was resumed from a checkpoint with Adam's moments and
	// the batch order but without its random stream (checkpoints written
	// before they held it): the columns drawn next restart from the seed,
	// so the run differs from an uninterrupted one.
	ResumedRandomRestarted []int `json:"resumed_random_restarted_after_epochs,omitempty"`
	// ResumedExactSteps lists the steps after which training was resumed
	// exactly (as for ResumedExact) from a checkpoint taken within an
	// epoch, which an interruption (Ctrl-C, SIGTERM) saves.
	ResumedExactSteps []int `json:"resumed_exact_after_steps,omitempty"`

	Threads    int    `json:"threads"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
	GOARCH     string `json:"goarch"`
	// Revision is the commit the program that finished the run was built
	// from (benchutil.Revision; empty if the build does not record it).
	Revision string    `json:"revision,omitempty"`
	Finished time.Time `json:"finished"`
}

// key identifies a run for resumption.
func (r *Record) key() string {
	return runKey(r.Dataset, r.Model, r.Split, r.Setup)
}

// runKey spells out every field, so that it does not depend on how Setup
// prints: changing it would orphan the logs and checkpoints of earlier runs.
func runKey(dataset, model string, split int, s Setup) string {
	key := fmt.Sprintf("%s|%s|%d|epochs=%d|batch=%d|lr=%g|seed=%d|colsample=%d|whiten=%t|keepbest=%t",
		dataset, model, split, s.Epochs, s.Batch, s.LR, s.Seed, s.ColSample, s.Whiten, s.KeepBest)
	if s.Init != "" {
		key += "|init=" + s.Init
	}
	if s.Lengthscale != 0 {
		key += fmt.Sprintf("|lengthscale=%g", s.Lengthscale)
	}
	return key
}

func (o *options) setup() Setup {
	s := Setup{Epochs: o.epochs, Batch: o.batch, LR: o.lr, Seed: o.seed, ColSample: o.colSample, Whiten: o.whiten, KeepBest: o.keepBest}
	if o.init == "greedy" {
		s.Init = o.init
	}
	if o.lengthscale != initLengthscale {
		s.Lengthscale = o.lengthscale
	}
	return s
}

func logPath(out string) string { return filepath.Join(out, "regression.jsonl") }

// runAll runs every (split, data set, model) not yet in the log, splits
// outermost so that one split of everything finishes before the next.
func runAll(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	path := logPath(o.out)
	recs, skipped, err := benchutil.ReadJSONL[Record](path)
	if err != nil {
		return err
	}
	if skipped > 0 {
		fmt.Fprintf(stderr, "regression: %s: ignoring an incomplete last line\n", path)
	}
	done := map[string]bool{}
	for i := range recs {
		done[recs[i].key()] = true
	}
	setup := o.setup()
	// A misspelt data set is an error now, not after hours of training on
	// the ones before it (only data sets with runs left to do are needed).
	for _, name := range o.datasets {
		pending := false
		for k := o.firstSplit; k < o.firstSplit+o.splits && !pending; k++ {
			for _, ms := range o.models {
				pending = pending || !done[runKey(name, ms.Label(), k, setup)]
			}
		}
		if !pending {
			continue
		}
		path := filepath.Join(o.dataDir, name+".csv.gz")
		if fi, err := os.Stat(path); err != nil {
			return fmt.Errorf("data set %s: %w", name, err)
		} else if fi.IsDir() {
			return fmt.Errorf("data set %s: %s is a directory", name, path)
		}
	}
	tables := map[string]*data.Table{}
	ran := false
	for k := o.firstSplit; k < o.firstSplit+o.splits; k++ {
		for _, name := range o.datasets {
			var sets *data.Sets
			for _, ms := range o.models {
				if done[runKey(name, ms.Label(), k, setup)] {
					fmt.Fprintf(stdout, "skip %s %s split %d: already in %s\n", name, ms.Label(), k, path)
					continue
				}
				if sets == nil {
					tab := tables[name]
					if tab == nil {
						if tab, err = data.LoadUCI(o.dataDir, name); err != nil {
							return err
						}
						tables[name] = tab
					}
					split, err := benchutil.TableSplit(len(tab.Y), o.seed, k)
					if err != nil {
						return fmt.Errorf("%s: %w", name, err)
					}
					if sets, err = data.Prepare(tab, split); err != nil {
						return fmt.Errorf("%s: %w", name, err)
					}
					if sets.XValid == nil || sets.XTest == nil {
						return fmt.Errorf("%s: %d rows are too few for a test and a validation set", name, len(tab.Y))
					}
				}
				ran = true
				rec, err := runOne(ctx, o, name, ms, k, sets, stderr)
				if err != nil {
					return fmt.Errorf("%s %s split %d: %w", name, ms.Label(), k, err)
				}
				if err := benchutil.AppendJSONL(path, rec); err != nil {
					return err
				}
				if err := removeCheckpoint(checkpointPath(o.out, rec.key())); err != nil {
					return err
				}
				done[rec.key()] = true
				fmt.Fprintf(stdout, "done %s %s split %d: test LL %.4f, test RMSE %.4f, %.3f s/iter (%d steps)\n",
					name, ms.Label(), k, rec.TestLogLik, rec.TestRMSE, rec.SecPerIter, rec.Steps)
				if err := writeReport(o.out, io.Discard); err != nil {
					return err
				}
			}
		}
	}
	if !ran {
		fmt.Fprintf(stdout, "nothing to run: every run asked for is in %s; to rerun them for checking, give -out a fresh directory\n", path)
	}
	return nil
}

// buildModel places Z and O on the training inputs, by k-means or (with
// -init greedy) by greedy selection under the initial kernel, and returns
// the model with the paper's initial hyperparameters (the lengthscale
// -lengthscale).
func buildModel(o *options, ms modelSpec, x *mat.Dense, seed uint64) (*gp.Model, error) {
	_, d := x.Dims()
	k, err := kernel.NewMatern32(d, o.lengthscale, initVariance)
	if err != nil {
		return nil, err
	}
	var z, ortho *mat.Dense
	if o.init == "greedy" {
		opts := inducing.GreedyOptions{Subsample: 100 * (ms.M + ms.M2), Seed: seed, Threads: o.threads}
		z, ortho, err = inducing.GreedyInit(k, x, ms.M, ms.M2, opts)
	} else {
		z, ortho, err = inducing.Init(x, ms.M, ms.M2, inducing.KMeansOptions{Seed: seed, Threads: o.threads})
	}
	if err != nil {
		return nil, err
	}
	lik, err := likelihood.NewGaussian(initNoise)
	if err != nil {
		return nil, err
	}
	opts := []gp.Option{gp.WithSeed(seed), gp.WithThreads(o.threads), gp.WithWhitening(o.whiten)}
	if ms.Tighter {
		opts = append(opts, gp.WithBound(gp.TighterBound))
	}
	switch ms.Kind {
	case gp.SVGP:
		return gp.NewSVGP(k, lik, z, opts...)
	case gp.ODVGP:
		if samplesColumns(o, ms) {
			opts = append(opts, gp.WithColumnSample(o.colSample))
		}
		return gp.NewODVGP(k, lik, z, ortho, opts...)
	}
	return gp.NewSOLVEGP(k, lik, z, ortho, opts...)
}

// samplesColumns reports whether the model ms samples columns of K_vv, the
// only random numbers a regression run draws after its initialization.
func samplesColumns(o *options, ms modelSpec) bool {
	return ms.Kind == gp.ODVGP && o.colSample > 0 && o.colSample < ms.M2
}

// runOne trains and evaluates one model on one split, resuming from and
// saving to its checkpoint file (see checkpoint.go).
//
// The cancellation of ctx (Ctrl-C or SIGTERM) is seen between training
// steps and at epoch ends: runOne then saves a checkpoint of the state after
// the last step and returns an error wrapping context.Canceled. Training
// itself is not cancelled, so the state saved is always that of a whole
// step. A cancellation after the last epoch lets the run be evaluated and
// returned.
func runOne(ctx context.Context, o *options, name string, ms modelSpec, split int, sets *data.Sets, stderr io.Writer) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	nTrain, d := sets.XTrain.Dims()
	rec := &Record{Dataset: name, Model: ms.Label(), Kind: ms.Kind.String(), M: ms.M, M2: ms.M2, Split: split, Natural: ms.Natural, Setup: o.setup(),
		NTrain: nTrain, NValid: len(sets.YValid), NTest: len(sets.YTest), D: d, BestEpoch: -1,
		Threads: o.threads, GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(), GOARCH: runtime.GOARCH,
		Revision: benchutil.Revision()}
	seed := benchutil.SplitSeed(o.seed, split)
	if !o.quiet {
		fmt.Fprintf(stderr, "%s %s split %d: N_train %d, N_valid %d, N_test %d, d %d\n",
			name, ms.Label(), split, nTrain, rec.NValid, rec.NTest, d)
	}
	start := time.Now()
	model, err := buildModel(o, ms, sets.XTrain, seed)
	if err != nil {
		return nil, err
	}
	rec.InitSeconds = time.Since(start).Seconds()

	ckPath := checkpointPath(o.out, rec.key())
	ck, resume, err := resumeRun(o, ms, model, rec, ckPath, stderr)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // stopped during the initialization: nothing trained to save
	}
	lastSave := time.Now()

	var validTime time.Duration
	segStart := time.Now()
	segTrainSeconds := func() float64 { return (time.Since(segStart) - validTime).Seconds() }
	base := *ck // the state at the start of this segment
	// save writes the checkpoint of the state tc after a step or an epoch.
	save := func(tc train.Checkpoint) error {
		c := base
		c.Epochs = tc.Epochs
		c.Steps = tc.Steps
		c.TrainSeconds = base.TrainSeconds + segTrainSeconds()
		c.FinalObjective = rec.FinalObjective
		c.Params = make([]float64, model.NumParams())
		model.Params(c.Params)
		c.Train = &tc
		return saveCheckpoint(ckPath, &c)
	}
	// interrupted: an interruption saved a checkpoint after step stoppedAt.
	interrupted, stoppedAt := false, 0
	cfg := train.Config{
		Epochs:      o.epochs,
		BatchSize:   o.batch,
		Schedule:    train.Constant(o.lr),
		Seed:        seed,
		Resume:      resume,
		NaturalStep: ms.Natural,
		// One evaluation per step (the paper's small learning rate keeps
		// Adam's one-step lag behind q harmless).
		NaturalSharedGradient: ms.Natural > 0,
		KeepLast:              !o.keepBest,
		OnStep: func(si train.StepInfo) error {
			if o.onStep != nil {
				o.onStep(si.Step)
			}
			if ctx.Err() == nil {
				return nil
			}
			if err := save(si.Checkpoint()); err != nil {
				return err
			}
			interrupted, stoppedAt = true, si.Step
			return train.ErrStop
		},
		OnEpoch: func(e train.EpochInfo) error {
			rec.FinalObjective = e.Objective / float64(nTrain)
			if !o.quiet {
				msg := fmt.Sprintf("  epoch %3d  step %5d  ELBO/N %.4f  %.1f s", e.Epoch+1, e.Steps, e.Objective/float64(nTrain), e.Elapsed.Seconds())
				if e.Validated {
					msg += fmt.Sprintf("  valid LL %.4f RMSE %.4f", e.Score, e.Metrics["rmse"])
				}
				if e.Rejected > 0 {
					msg += fmt.Sprintf("  (%d rejected)", e.Rejected)
				}
				fmt.Fprintln(stderr, msg)
			}
			if e.Epoch+1 >= o.epochs {
				return nil // the run's end: it is evaluated even if interrupted
			}
			stop := ctx.Err() != nil
			if stop || time.Since(lastSave) >= o.checkpointEvery {
				if err := save(e.Checkpoint()); err != nil {
					return err
				}
				lastSave = time.Now()
				if o.onCheckpoint != nil {
					o.onCheckpoint(e.Epoch + 1)
				}
				// Interrupted since: the checkpoint just saved is
				// this epoch's (otherwise the next step saves one).
				stop = ctx.Err() != nil
			}
			if stop {
				interrupted, stoppedAt = true, e.Steps
				return train.ErrStop
			}
			return nil
		},
	}
	if o.keepBest {
		cfg.Validate = func() (float64, map[string]float64, error) {
			t := time.Now()
			defer func() { validTime += time.Since(t) }()
			met, err := benchutil.Evaluate(model, sets.XValid, sets.YValid, predictBatch)
			if err != nil {
				return 0, nil, err
			}
			return met.LogLik, map[string]float64{"rmse": met.RMSE}, nil
		}
	}
	if !o.quiet {
		cfg.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, "  "+format+"\n", args...) }
	}
	// Fit is not cancelled (see above): OnStep and OnEpoch stop it.
	res, err := train.Fit(context.Background(), model, sets.XTrain, sets.YTrain, cfg)
	if err != nil {
		return nil, err
	}
	if interrupted {
		return nil, fmt.Errorf("interrupted; checkpoint after step %d saved to %s (rerun the same command to resume): %w", stoppedAt, ckPath, context.Canceled)
	}
	rec.TrainSeconds = base.TrainSeconds + segTrainSeconds()
	if err := finishRecord(rec, model, res, &base, sets); err != nil {
		return nil, err
	}
	rec.Finished = time.Now().UTC()
	return rec, nil
}

// resumeRun loads the run's checkpoint at ckPath, if there is one, into
// the model and returns it with Fit's state to resume (for a checkpoint
// without it, a fresh Adam state at its epoch, noted in Resumed); without
// a checkpoint it returns a new one for the run.
func resumeRun(o *options, ms modelSpec, model *gp.Model, rec *Record, ckPath string, stderr io.Writer) (*checkpoint, *train.Checkpoint, error) {
	ck, err := loadCheckpoint(ckPath, rec.key(), model.NumParams())
	if err != nil {
		return nil, nil, err
	}
	var resume *train.Checkpoint
	if ck != nil {
		if err := model.SetParams(ck.Params); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", ckPath, err)
		}
		rec.InitSeconds = ck.InitSeconds
		how := "Adam state and batch order restored"
		at := fmt.Sprintf("after epoch %d", ck.Epochs)
		switch resume = ck.Train; {
		case resume == nil:
			// An older checkpoint without the optimizer's state: Adam
			// restarts from zero moments.
			resume = &train.Checkpoint{Epochs: ck.Epochs, Steps: ck.Steps, RateScale: 1,
				Adam: train.AdamState{M: make([]float64, model.NumParams()), V: make([]float64, model.NumParams())}}
			ck.Resumed = append(ck.Resumed, ck.Epochs)
			how = "fresh Adam state"
		case resume.Random == nil && samplesColumns(o, ms):
			// An older checkpoint without the random stream of the
			// sampled columns: it restarts from its seed.
			ck.ResumedRandomRestarted = append(ck.ResumedRandomRestarted, ck.Epochs)
			how += "; the column-sampling stream restarts from its seed"
		case resume.Batches > 0:
			// A checkpoint within an epoch, saved on an interruption.
			ck.ResumedExactSteps = append(ck.ResumedExactSteps, ck.Steps)
			at = fmt.Sprintf("at step %d (%d mini-batches into epoch %d)", ck.Steps, resume.Batches, ck.Epochs+1)
		default:
			ck.ResumedExact = append(ck.ResumedExact, ck.Epochs)
		}
		if resume.Epochs != ck.Epochs || resume.Steps != ck.Steps {
			return nil, nil, fmt.Errorf("%s: inconsistent checkpoint (delete it to restart the run)", ckPath)
		}
		if !o.quiet {
			fmt.Fprintf(stderr, "  resuming %s from %s (%s)\n", at, ckPath, how)
		}
	} else {
		ck = &checkpoint{Key: rec.key(), InitSeconds: rec.InitSeconds}
	}
	return ck, resume, nil
}

// finishRecord fills rec with the training counts of res, the resumptions
// recorded in base, the test and validation metrics and the trained
// hyperparameters.
func finishRecord(rec *Record, model *gp.Model, res train.Result, base *checkpoint, sets *data.Sets) error {
	rec.Steps = res.Steps
	rec.Rejected = res.Rejected
	rec.Resumed, rec.ResumedExact, rec.ResumedRandomRestarted = base.Resumed, base.ResumedExact, base.ResumedRandomRestarted
	rec.ResumedExactSteps = base.ResumedExactSteps
	if res.BestEpoch >= 0 {
		rec.BestEpoch = res.BestEpoch
	}
	if rec.Steps > 0 {
		rec.SecPerIter = rec.TrainSeconds / float64(rec.Steps)
	}
	test, err := benchutil.Evaluate(model, sets.XTest, sets.YTest, predictBatch)
	if err != nil {
		return err
	}
	valid, err := benchutil.Evaluate(model, sets.XValid, sets.YValid, predictBatch)
	if err != nil {
		return err
	}
	rec.TestRMSE, rec.TestLogLik = test.RMSE, test.LogLik
	rec.ValidRMSE, rec.ValidLogLik = valid.RMSE, valid.LogLik
	k := model.Kernel().(*kernel.Stationary)
	rec.Lengthscale, rec.Variance = k.Lengthscales()[0], k.Variance()
	rec.Noise = model.Likelihood().(*likelihood.Gaussian).NoiseVariance()
	return nil
}
