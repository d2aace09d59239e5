package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/modelfile"
	"github.com/solvegp/solvegp/internal/atomicfile"
)

// inputTable is the table of an input file with the columns of X in the
// model's input order, which may not be the file's.
type inputTable struct {
	*data.Table
	cols []int // the 0-based file column of each column of X
}

// Pos returns the 1-based line and column of the file at which X[row][col]
// was read, or, when col is negative, the target Y[row] (see data.Table.Pos).
func (t *inputTable) Pos(row, col int) (line, column int) {
	if col < 0 {
		return t.Table.Pos(row, col)
	}
	if row < 0 || row >= len(t.Lines) || col >= len(t.cols) {
		return 0, 0
	}
	return t.Lines[row], t.cols[col] + 1
}

// loadInputs reads the inputs of a CSV file for the model in b. Without a
// header, or for a model that does not record the names of its inputs, the
// columns are taken by position: a file with exactly d columns is all
// inputs; one with d+1 columns has its target column (-target, default
// last) dropped. With both, the columns are matched by name, in any order:
// the target is the column -target gives, else the one named as the
// model's target, else (when there is one column more than inputs) the
// last one, and the others must be the model's inputs, each once. Y is set
// when needTarget (the file must then have a target column). Labels that
// do not suit the likelihood are reported as file:line:column.
func loadInputs(b *modelfile.Bundle, path string, csv *csvFlags, needTarget bool) (*inputTable, error) {
	opts, err := csv.options()
	if err != nil {
		return nil, err
	}
	if len(csv.targets) > 0 {
		return nil, fmt.Errorf("-target %s: several target columns need a multi-output model (train -target a,b)", csv.targetSpec)
	}
	opts.NoTarget = true // every column, chosen below
	raw, err := data.LoadTable(path, opts)
	if err != nil {
		return nil, err
	}
	d, _, _, _ := b.Model.Dims()
	n, c := raw.X.Dims()
	inputs := b.InputNames(d)
	byName := inputs != nil && raw.Names != nil
	// t is the 0-based target column, -1 for none.
	t := -1
	if needTarget || c > d && (byName || c == d+1) {
		t = c - 1
		switch {
		case opts.Target > c:
			return nil, &data.ParseError{File: path, Msg: fmt.Sprintf("target column %d out of range: the file has %d columns", opts.Target, c)}
		case opts.Target > 0:
			t = opts.Target - 1
		case byName:
			if k := slices.Index(raw.Names, b.Meta.TargetName); k >= 0 && !slices.Contains(inputs, b.Meta.TargetName) {
				t = k
			}
		}
		if needTarget && c < 2 {
			return nil, &data.ParseError{File: path, Msg: "need at least 2 columns (inputs and a target), the file has 1"}
		}
	}
	var cols []int
	if byName {
		if cols, err = matchNames(path, raw.Names, t, inputs, opts.Target); err != nil {
			return nil, err
		}
	} else {
		for j := 0; j < c; j++ {
			if j != t {
				cols = append(cols, j)
			}
		}
		switch {
		case needTarget && len(cols) != d:
			return nil, fmt.Errorf("%s: %d input columns besides the target, the model was trained on %d", path, len(cols), d)
		case len(cols) != d:
			return nil, fmt.Errorf("%s: %d columns, the model takes %d inputs", path, c, d)
		}
	}
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		src, dst := raw.X.RawRowView(i), x.RawRowView(i)
		for j, k := range cols {
			dst[j] = src[k]
		}
	}
	tab := &data.Table{X: x, Lines: raw.Lines}
	if raw.Names != nil {
		for _, k := range cols {
			tab.Names = append(tab.Names, raw.Names[k])
		}
	}
	if needTarget {
		tab.Y = make([]float64, n)
		for i := range tab.Y {
			tab.Y[i] = raw.X.At(i, t)
		}
		tab.TargetColumn = t + 1
		if raw.Names != nil {
			tab.Names = append(tab.Names, raw.Names[t])
		}
		if err := checkLabels(path, tab, b.Model.Likelihood()); err != nil {
			return nil, err
		}
	}
	return &inputTable{Table: tab, cols: cols}, nil
}

// matchNames returns the 0-based column of header that holds each of the
// model's inputs, in their order, the target column t (-1 for none) left
// out (modelfile.MatchHeader). target is the -target flag (0 if not given).
func matchNames(path string, header []string, t int, inputs []string, target int) ([]int, error) {
	if t >= 0 && slices.Contains(inputs, header[t]) {
		if target > 0 {
			return nil, fmt.Errorf("%s: column %d (%q), the target by -target %d, is one of the model's inputs", path, t+1, header[t], target)
		}
		return nil, fmt.Errorf("%s: column %d (%q), taken for the target as the last column, is one of the model's inputs (-target chooses the target column)", path, t+1, header[t])
	}
	cols, err := modelfile.MatchHeader(header, t, inputs)
	var he *modelfile.HeaderError
	if errors.As(err, &he) && he.Twice == "" {
		return nil, fmt.Errorf("%s: %w (rename the columns, or remove the header line to take them by position)", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cols, nil
}

// inputError names file in an error of prediction on the inputs of tab,
// and gives an input the model refuses (modelfile.InputError) as
// file:line:column and a test point whose prediction is not finite
// (gp.PointError) as file:line.
func inputError(file string, tab *inputTable, err error) error {
	var ie *modelfile.InputError
	if !errors.As(err, &ie) {
		return pointError(file, tab, err)
	}
	line, col := tab.Pos(ie.Row, ie.Col)
	msg := fmt.Sprintf("input %g is beyond the limit of %g", ie.Value, modelfile.MaxInput)
	if ie.Standardized {
		msg = fmt.Sprintf("input %g is %.3g training standard deviations from the mean, beyond the limit of %g", ie.Value, ie.Scaled, modelfile.MaxInput)
	}
	return &data.ParseError{File: file, Line: line, Column: col, Msg: msg}
}

func runPredict(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("predict", "-model model.json [flags] inputs.csv[.gz]",
		`Writes predictions of a trained model for the rows of a CSV file as CSV, in the
original units of the data. A file with as many columns as the model has inputs
is read as inputs only; one with one more column has its target column (-target)
ignored. When the file has a header and the model records the names of its
inputs (train keeps those of its data's header), the columns are matched by
name, in any order: a file with more columns than inputs has as its target
the column -target gives, else the one named as the model's target, else the
last; a header without every input, or with a column that is neither an input
nor the target, is an error. Without a header the columns are taken in order.
For a multi-output model (train -target a,b) the columns are
  f_mean_<t>, f_var_<t>, y_mean_<t>, y_var_<t> for each target t, in order
(its inputs are matched as above, its target columns left out).
For a single latent function the output columns are
  f_mean, f_var, y_mean, y_var
(latent and observed mean and variance); for C classes they are
  f_mean_0..f_mean_{C-1}, f_var_0..f_var_{C-1}, p_0..p_{C-1}
(class probabilities); for -likelihood heteroscedastic they are
  f_mean_0, f_mean_1, f_var_0, f_var_1, y_mean, y_var, noise_mean, noise_var
(latent 1 and the noise are the log noise variance and the noise variance). The output file is written atomically.`, stderr)
	modelPath := fs.String("model", "model.json", "model file written by solvegp train")
	out := fs.String("out", "-", "output CSV file (- for standard output)")
	var csv csvFlags
	csv.register(fs)
	if done, code := parse(fs, args); done {
		return code
	}
	if misplacedFlag(fs, args, "the input file") {
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "solvegp predict: need exactly one input file (see solvegp predict -h)")
		return exitUsage
	}
	outFile := namedFile{what: "-out", path: *out, stdio: true} // "-": standard output
	if err := distinctFiles(namedFile{what: "the input file", path: fs.Arg(0)}, namedFile{what: "-model", path: *modelPath}, outFile); err != nil {
		return fail(stderr, "predict", err)
	}
	if err := writableDir(outFile); err != nil {
		return fail(stderr, "predict", err)
	}
	b, err := modelfile.Load(*modelPath)
	if err != nil {
		return fail(stderr, "predict", wrongFile(*modelPath, kindRegression, err))
	}
	warnUnchecked(stderr, "predict", *modelPath, b)
	load := loadInputs
	if isMultiOutput(b) {
		load = loadMultiInputs
	}
	tab, err := load(b, fs.Arg(0), &csv, false)
	if err != nil {
		return fail(stderr, "predict", err)
	}
	pred, err := b.Predict(tab.X)
	if err != nil {
		return fail(stderr, "predict", inputError(fs.Arg(0), tab, err))
	}
	var buf bytes.Buffer
	hetero := isHeteroscedastic(b.Model)
	if isMultiOutput(b) {
		names, cols := multiColumns(pred, outputNames(b))
		if data.IsParquet(*out) {
			err = data.WriteParquet(&buf, names, cols, 0)
		} else {
			writeColumns(&buf, names, cols)
		}
	} else if data.IsParquet(*out) {
		err = writeParquetPredictions(&buf, pred, hetero)
	} else {
		writePredictions(&buf, pred, hetero)
	}
	if err != nil {
		return fail(stderr, "predict", err)
	}
	if *out == "-" {
		_, err = stdout.Write(buf.Bytes())
	} else {
		err = atomicfile.WriteFile(*out, buf.Bytes(), 0o644)
	}
	if err != nil {
		return fail(stderr, "predict", err)
	}
	return exitOK
}

// writeParquetPredictions writes the columns of writePredictions as a
// Parquet file; hetero selects the heteroscedastic likelihood's columns.
func writeParquetPredictions(w *bytes.Buffer, p *modelfile.Prediction, hetero bool) error {
	n, c := p.FMean.Dims()
	var names []string
	var cols [][]float64
	add := func(name string, m *mat.Dense, j int) {
		col := make([]float64, n)
		for i := range col {
			col[i] = math.NaN()
			if m != nil {
				col[i] = m.At(i, j)
			}
		}
		names, cols = append(names, name), append(cols, col)
	}
	switch {
	case hetero:
		add("f_mean_0", p.FMean, 0)
		add("f_mean_1", p.FMean, 1)
		add("f_var_0", p.FVar, 0)
		add("f_var_1", p.FVar, 1)
		add("y_mean", p.YMean, 0)
		add("y_var", p.YVar, 0)
		add("noise_mean", p.YMean, 1)
		add("noise_var", p.YVar, 1)
	case c == 1:
		add("f_mean", p.FMean, 0)
		add("f_var", p.FVar, 0)
		add("y_mean", p.YMean, 0)
		add("y_var", p.YVar, 0)
	default:
		for j := 0; j < c; j++ {
			add(fmt.Sprintf("f_mean_%d", j), p.FMean, j)
			add(fmt.Sprintf("f_var_%d", j), p.FVar, j)
			add(fmt.Sprintf("p_%d", j), p.YMean, j)
		}
	}
	return data.WriteParquet(w, names, cols, 0)
}

// writePredictions writes the CSV output of predict; hetero selects the
// columns of the heteroscedastic likelihood.
func writePredictions(w *bytes.Buffer, p *modelfile.Prediction, hetero bool) {
	n, c := p.FMean.Dims()
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if hetero {
		w.WriteString("f_mean_0,f_mean_1,f_var_0,f_var_1,y_mean,y_var,noise_mean,noise_var\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(w, "%s,%s,%s,%s,%s,%s,%s,%s\n", f(p.FMean.At(i, 0)), f(p.FMean.At(i, 1)), f(p.FVar.At(i, 0)), f(p.FVar.At(i, 1)),
				f(p.YMean.At(i, 0)), f(p.YVar.At(i, 0)), f(p.YMean.At(i, 1)), f(p.YVar.At(i, 1)))
		}
		return
	}
	if c == 1 {
		w.WriteString("f_mean,f_var,y_mean,y_var\n")
		for i := 0; i < n; i++ {
			yv := "NaN"
			if p.YVar != nil {
				yv = f(p.YVar.At(i, 0))
			}
			fmt.Fprintf(w, "%s,%s,%s,%s\n", f(p.FMean.At(i, 0)), f(p.FVar.At(i, 0)), f(p.YMean.At(i, 0)), yv)
		}
		return
	}
	sep := ""
	for _, name := range []string{"f_mean_", "f_var_", "p_"} {
		for j := 0; j < c; j++ {
			fmt.Fprintf(w, "%s%s%d", sep, name, j)
			sep = ","
		}
	}
	w.WriteString("\n")
	for i := 0; i < n; i++ {
		sep = ""
		for _, m := range []*mat.Dense{p.FMean, p.FVar, p.YMean} {
			for j := 0; j < c; j++ {
				w.WriteString(sep + f(m.At(i, j)))
				sep = ","
			}
		}
		w.WriteString("\n")
	}
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("eval", "-model model.json [flags] test.csv[.gz]",
		`Evaluates a trained model on a labelled CSV file: test RMSE and mean test
log-likelihood (in the original units, and for Gaussian models also on
standardized targets as in the paper's tables), accuracy for classifiers, and
the evidence lower bound of the model on that data. The target is the column
-target gives, else (with a header) the one named as the model's target, else
the last; with a header, the other columns are matched to the model's inputs
by name, in any order, as in predict.`, stderr)
	modelPath := fs.String("model", "model.json", "model file written by solvegp train")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	var csv csvFlags
	csv.register(fs)
	if done, code := parse(fs, args); done {
		return code
	}
	if misplacedFlag(fs, args, "the data file") {
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "solvegp eval: need exactly one labelled data file (see solvegp eval -h)")
		return exitUsage
	}
	b, err := modelfile.Load(*modelPath)
	if err != nil {
		return fail(stderr, "eval", wrongFile(*modelPath, kindRegression, err))
	}
	warnUnchecked(stderr, "eval", *modelPath, b)
	load := loadInputs
	if isMultiOutput(b) {
		load = loadMultiInputs
	}
	tab, err := load(b, fs.Arg(0), &csv, true)
	if err != nil {
		return fail(stderr, "eval", err)
	}
	m, err := evaluate(b, tab.X, tab.Y, true)
	if err != nil {
		return fail(stderr, "eval", inputError(fs.Arg(0), tab, err))
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(m); err != nil {
			return fail(stderr, "eval", err)
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "n          %d\n", m.N)
	if m.RMSE != nil {
		fmt.Fprintf(stdout, "RMSE       %.6g\n", *m.RMSE)
	}
	fmt.Fprintf(stdout, "log-lik    %.6g (mean per point)\n", m.LogLik)
	if m.RMSEStd != nil {
		fmt.Fprintf(stdout, "standardized: RMSE %.6g, log-lik %.6g\n", *m.RMSEStd, *m.LogLikStd)
	}
	if m.Accuracy != nil {
		fmt.Fprintf(stdout, "accuracy   %.6g\n", *m.Accuracy)
	}
	printOutputMetrics(stdout, m.Outputs)
	if m.Bound != nil {
		fmt.Fprintf(stdout, "bound      %.6g (ELBO on this data, standardized%s)\n", *m.Bound, mcNote(m.BoundMC))
	}
	return exitOK
}
