// Command solvegp-beam runs solvegp models over sharded CSV or Parquet data
// (files named *.parquet) as Apache Beam pipelines:
//
//	solvegp-beam predict -model m.json -input 'data/part-*.csv' -output out/pred
//	solvegp-beam eval    -model m.json -input 'data/test-*.csv'
//	solvegp-beam refit   -model m.json -input 'data/part-*.csv' -output refit.json
//
// predict writes one CSV shard per input shard (out/pred-00000-of-00004.csv,
// ...; Parquet, out/pred-00000-of-00004.parquet, for -output out/pred.parquet),
// each row the input row followed by the columns solvegp predict
// writes; eval prints the RMSE, mean log-likelihood (accuracy for
// classifiers) over all rows as solvegp eval does; refit writes a copy of an
// SVGP regression model with its q(u) set to the optimum of the collapsed
// bound for all the rows, from sums over the shards. The pipelines run on the
// in-process Prism runner unless -runner names another (flink, spark,
// dataflow, universal), which then takes Beam's usual flags (-endpoint,
// -project, -region, -staging_location, ...).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/solvegp/solvegp/beam/gpbeam"
)

const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

const usage = `usage: solvegp-beam predict -model m.json -input 'glob' -output prefix [beam flags]
       solvegp-beam eval    -model m.json -input 'glob' [-output metrics.json] [-json] [beam flags]
       solvegp-beam refit   -model m.json -input 'glob' -output refit.json [beam flags]

Runs on the in-process Prism runner by default; -runner flink|spark|dataflow|universal
with Beam's flags (-endpoint, -project, -region, -staging_location, ...) runs elsewhere.
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the subcommand of args. Without one it hands the flags to Beam,
// which runs the worker harness when a runner starts this binary as a
// worker (-worker) and returns otherwise.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if err := flag.CommandLine.Parse(args); err == nil {
			beam.Init()
		}
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "predict":
		return runPredict(ctx, args[1:], stderr)
	case "eval":
		return runEval(ctx, args[1:], stdout, stderr)
	case "refit":
		return runRefit(ctx, args[1:], stderr)
	case "help", "-h", "-help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "solvegp-beam: unknown command %q\n%s", args[0], usage)
	return exitUsage
}

// newFlags returns a flag set for a subcommand that also takes Beam's
// flags (those of the flag package's command line).
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("solvegp-beam "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	flag.CommandLine.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, f.Name, f.Usage) })
	return fs
}

// parse parses args into fs and marks Beam's flags among them as set on the
// command line, where Beam reads its pipeline options, then initializes
// Beam. own lists the subcommand's own flags.
func parse(fs *flag.FlagSet, args []string, own []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains(own, f.Name) && err == nil {
			err = flag.CommandLine.Set(f.Name, f.Value.String())
		}
	})
	if err != nil {
		return err
	}
	if !flag.Parsed() {
		if err := flag.CommandLine.Parse(nil); err != nil {
			return err
		}
	}
	beam.Init()
	return nil
}

func fail(stderr io.Writer, cmd string, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "solvegp-beam %s: %v\n", cmd, err)
	return exitError
}

func runPredict(ctx context.Context, args []string, stderr io.Writer) int {
	fs := newFlags("predict", stderr)
	modelPath := fs.String("model", "model.json", "model file written by solvegp train")
	input := fs.String("input", "", "glob of the input CSV shards (local or gs://...)")
	output := fs.String("output", "", "prefix of the output shards: PREFIX-00000-of-00004.csv, ... (Parquet for a prefix ending in .parquet)")
	if err := parse(fs, args, []string{"model", "input", "output"}); err != nil {
		return fail(stderr, "predict", err)
	}
	if *input == "" || *output == "" {
		return fail(stderr, "predict", errors.New("need -input and -output"))
	}
	modelJSON, b, err := gpbeam.LoadModel(ctx, *modelPath)
	if err != nil {
		return fail(stderr, "predict", err)
	}
	warnUnchecked(stderr, "predict", *modelPath, b.Unchecked)
	shards, err := gpbeam.MatchShards(ctx, *input)
	if err != nil {
		return fail(stderr, "predict", err)
	}
	p, s := beam.NewPipelineWithRoot()
	gpbeam.Predict(s, modelJSON, shards, *output)
	if err := beamx.Run(ctx, p); err != nil {
		return fail(stderr, "predict", err)
	}
	return exitOK
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("eval", stderr)
	modelPath := fs.String("model", "model.json", "model file written by solvegp train")
	input := fs.String("input", "", "glob of the labelled CSV shards (local or gs://...)")
	output := fs.String("output", "", "file for the metrics as JSON (default a temporary file; a shared path such as gs://... on a distributed runner)")
	asJSON := fs.Bool("json", false, "print the metrics as JSON")
	if err := parse(fs, args, []string{"model", "input", "output", "json"}); err != nil {
		return fail(stderr, "eval", err)
	}
	if *input == "" {
		return fail(stderr, "eval", errors.New("need -input"))
	}
	modelJSON, b, err := gpbeam.LoadModel(ctx, *modelPath)
	if err != nil {
		return fail(stderr, "eval", err)
	}
	warnUnchecked(stderr, "eval", *modelPath, b.Unchecked)
	shards, err := gpbeam.MatchShards(ctx, *input)
	if err != nil {
		return fail(stderr, "eval", err)
	}
	out := *output
	if out == "" {
		dir, err := os.MkdirTemp("", "solvegp-beam-eval")
		if err != nil {
			return fail(stderr, "eval", err)
		}
		defer os.RemoveAll(dir)
		out = filepath.Join(dir, "metrics.json")
	}
	p, s := beam.NewPipelineWithRoot()
	metrics, err := gpbeam.Eval(s, modelJSON, shards)
	if err != nil {
		return fail(stderr, "eval", err)
	}
	gpbeam.WriteMetrics(s, metrics, out)
	if err := beamx.Run(ctx, p); err != nil {
		return fail(stderr, "eval", err)
	}
	m, err := gpbeam.ReadMetrics(ctx, out)
	if err != nil {
		return fail(stderr, "eval", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(m); err != nil {
			return fail(stderr, "eval", err)
		}
		return exitOK
	}
	if err := m.WriteText(stdout); err != nil {
		return fail(stderr, "eval", err)
	}
	return exitOK
}

// warnUnchecked warns about a model file of an older format whose checksum
// does not cover everything that affects a prediction.
func warnUnchecked(stderr io.Writer, cmd, path, unchecked string) {
	if unchecked != "" {
		fmt.Fprintf(stderr, "solvegp-beam %s: warning: %s: %s\n", cmd, path, unchecked)
	}
}

func runRefit(ctx context.Context, args []string, stderr io.Writer) int {
	fs := newFlags("refit", stderr)
	modelPath := fs.String("model", "model.json", "SVGP regression model file written by solvegp train")
	input := fs.String("input", "", "glob of the labelled CSV shards (local or gs://...)")
	output := fs.String("output", "", "the refitted model file")
	if err := parse(fs, args, []string{"model", "input", "output"}); err != nil {
		return fail(stderr, "refit", err)
	}
	if *input == "" || *output == "" {
		return fail(stderr, "refit", errors.New("need -input and -output"))
	}
	modelJSON, b, err := gpbeam.LoadModel(ctx, *modelPath)
	if err != nil {
		return fail(stderr, "refit", err)
	}
	warnUnchecked(stderr, "refit", *modelPath, b.Unchecked)
	shards, err := gpbeam.MatchShards(ctx, *input)
	if err != nil {
		return fail(stderr, "refit", err)
	}
	p, s := beam.NewPipelineWithRoot()
	if err := gpbeam.Refit(s, modelJSON, shards, *output); err != nil {
		return fail(stderr, "refit", err)
	}
	if err := beamx.Run(ctx, p); err != nil {
		return fail(stderr, "refit", err)
	}
	return exitOK
}
