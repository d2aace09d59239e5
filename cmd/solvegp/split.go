package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/internal/atomicfile"
)

// splitConfig is a parsed "solvegp split" command line.
type splitConfig struct {
	dataPath   string
	maskPath   string // "" for a random split
	split      int    // 0-based mask column
	testFrac   float64
	seed       uint64
	trainPath  string
	testPath   string
	headerMode data.HeaderMode
}

const splitDescription = `Split the rows of a CSV or gzip CSV data file into a training file and a test
file, so that "solvegp train" and "solvegp eval" can be run on exactly
complementary rows. Either
  -mask FILE -split K   the rows that column K (from 0; "split0" is 0) of the
                        mask file marks with 1 are test rows, the others
                        training rows: the UCI test masks of the SOLVE-GP
                        reproduction (name_test_mask.csv.gz, one row of 0/1
                        per data row, header split0,...,split9) or any file
                        of 0/1 columns with one row per data row, or
  -test-frac F -seed S  round(F·N) rows chosen at random (the same seed gives
                        the same rows) are test rows, the others training rows.
Both parts keep the file's header, column order and row order; values are
written as the shortest decimal that reads back as the same number. "-" as
the data or mask file is standard input (not both), and as -train or -test
standard output (not both). Outputs are written atomically.`

// parseSplitArgs parses the arguments of "solvegp split". It returns done
// when the caller must return code (help, bad usage or an invalid value,
// already reported on stderr).
func parseSplitArgs(args []string, stderr io.Writer) (cfg *splitConfig, done bool, code int) {
	fs := newFlags("split", "[flags] data.csv", splitDescription, stderr)
	mask := fs.String("mask", "", "mask file of 0/1 columns, one row per data row (1: test row)")
	split := fs.Int("split", 0, "0-based column of the -mask file to use")
	frac := fs.Float64("test-frac", 0, "fraction of rows, in (0, 1), to draw at random as test rows (instead of -mask)")
	seed := fs.Uint64("seed", 1, "random seed of -test-frac")
	train := fs.String("train", "", "output CSV file of the training rows (required; - for standard output)")
	test := fs.String("test", "", "output CSV file of the test rows (required; - for standard output)")
	header := fs.String("header", "auto", "first line of the data file is a header: auto, yes or no")
	if done, code := parse(fs, args); done {
		return nil, true, code
	}
	if misplacedFlag(fs, args, "the data file") {
		return nil, true, exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "solvegp split: need exactly one data file (see solvegp split -h)")
		return nil, true, exitUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg = &splitConfig{dataPath: fs.Arg(0), maskPath: *mask, split: *split, testFrac: *frac, seed: *seed, trainPath: *train, testPath: *test}
	csv := csvFlags{header: *header}
	opts, err := csv.options()
	cfg.headerMode = opts.Header
	if err == nil {
		err = checkSplitConfig(cfg, set)
	}
	if err != nil {
		fmt.Fprintf(stderr, "solvegp split: %v\n", err)
		return nil, true, exitError
	}
	return cfg, false, 0
}

// checkSplitConfig refuses flags that contradict or would be ignored.
// set holds the names of the flags given.
func checkSplitConfig(c *splitConfig, set map[string]bool) error {
	switch {
	case set["mask"] == set["test-frac"]:
		return fmt.Errorf("give either -mask (with -split) or -test-frac (with -seed)")
	case set["mask"] && c.maskPath == "":
		return fmt.Errorf("-mask: empty file name")
	case set["mask"] && set["seed"]:
		return fmt.Errorf("-seed applies to -test-frac, not to -mask")
	case set["test-frac"] && set["split"]:
		return fmt.Errorf("-split applies to -mask, not to -test-frac")
	case c.split < 0:
		return fmt.Errorf("-split %d: columns are numbered from 0", c.split)
	case set["test-frac"] && !(c.testFrac > 0 && c.testFrac < 1):
		return fmt.Errorf("-test-frac %v: must lie strictly between 0 and 1", c.testFrac)
	case c.trainPath == "" || c.testPath == "":
		return fmt.Errorf("both -train and -test are required")
	case c.trainPath == "-" && c.testPath == "-":
		return fmt.Errorf("-train and -test cannot both be standard output")
	case c.dataPath == "-" && c.maskPath == "-":
		return fmt.Errorf("the data file and -mask cannot both be standard input")
	}
	return distinctFiles(namedFile{what: "the data file", path: c.dataPath, stdio: true},
		namedFile{what: "-mask", path: c.maskPath, stdio: true},
		namedFile{what: "-train", path: c.trainPath, stdio: true},
		namedFile{what: "-test", path: c.testPath, stdio: true})
}

func runSplit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, done, code := parseSplitArgs(args, stderr)
	if done {
		return code
	}
	for _, f := range []namedFile{{what: "-train", path: cfg.trainPath, stdio: true}, {what: "-test", path: cfg.testPath, stdio: true}} {
		if err := writableDir(f); err != nil {
			return fail(stderr, "split", err)
		}
	}
	tab, err := data.LoadCSV(cfg.dataPath, data.Options{Header: cfg.headerMode, NoTarget: true})
	if err != nil {
		return fail(stderr, "split", err)
	}
	n, _ := tab.X.Dims()
	var train, test []int
	if cfg.maskPath != "" {
		var m *data.MaskFile
		if m, err = data.LoadMaskFile(cfg.maskPath); err == nil {
			train, test, err = m.TrainTest(n, cfg.split)
		}
	} else {
		train, test, err = data.RandomTrainTest(n, cfg.testFrac, cfg.seed)
	}
	if err != nil {
		return fail(stderr, "split", err)
	}
	// Both parts are formatted before either is written, so that a
	// failure leaves neither file half made.
	var trainBuf, testBuf bytes.Buffer
	if err := data.WriteRows(&trainBuf, tab, train); err != nil {
		return fail(stderr, "split", err)
	}
	if err := data.WriteRows(&testBuf, tab, test); err != nil {
		return fail(stderr, "split", err)
	}
	for _, part := range []struct {
		path string
		buf  *bytes.Buffer
	}{{cfg.trainPath, &trainBuf}, {cfg.testPath, &testBuf}} {
		if part.path == "-" {
			_, err = stdout.Write(part.buf.Bytes())
		} else {
			err = atomicfile.WriteFile(part.path, part.buf.Bytes(), 0o644)
		}
		if err != nil {
			return fail(stderr, "split", err)
		}
	}
	fmt.Fprintf(stderr, "solvegp split: %d training rows to %s, %d test rows to %s\n", len(train), cfg.trainPath, len(test), cfg.testPath)
	return exitOK
}
