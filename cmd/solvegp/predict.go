package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// loadInputs reads the inputs of a CSV file for the model in b: a file
// with exactly d columns is all inputs; one with d+1 columns has its target
// column (-target, default last) dropped; Y is set when needTarget. Labels
// that do not suit the likelihood are reported as file:line:column.
func loadInputs(b *modelfile.Bundle, path string, csv *csvFlags, needTarget bool) (*data.Table, error) {
	opts, err := csv.options()
	if err != nil {
		return nil, err
	}
	d, _, _, _ := b.Model.Dims()
	if needTarget {
		tab, err := data.LoadCSV(path, opts)
		if err != nil {
			return nil, err
		}
		if _, c := tab.X.Dims(); c != d {
			return nil, fmt.Errorf("%s: %d input columns besides the target, the model was trained on %d", path, c, d)
		}
		if err := checkLabels(path, tab, b.Model.Likelihood()); err != nil {
			return nil, err
		}
		return tab, nil
	}
	opts.NoTarget = true
	tab, err := data.LoadCSV(path, opts)
	if err != nil {
		return nil, err
	}
	switch _, c := tab.X.Dims(); {
	case c == d:
		return tab, nil
	case c == d+1:
		opts.NoTarget = false
		return data.LoadCSV(path, opts)
	default:
		return nil, fmt.Errorf("%s: %d columns, the model takes %d inputs", path, c, d)
	}
}

// inputError names file in an error of prediction on the inputs of tab,
// and gives an input the model refuses (modelfile.InputError) as
// file:line:column.
func inputError(file string, tab *data.Table, err error) error {
	var ie *modelfile.InputError
	if !errors.As(err, &ie) {
		return fmt.Errorf("%s: %w", file, err)
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
ignored. For a single latent function the output columns are
  f_mean, f_var, y_mean, y_var
(latent and observed mean and variance); for C classes they are
  f_mean_0..f_mean_{C-1}, f_var_0..f_var_{C-1}, p_0..p_{C-1}
(class probabilities). The output file is written atomically.`, stderr)
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
	tab, err := loadInputs(b, fs.Arg(0), &csv, false)
	if err != nil {
		return fail(stderr, "predict", err)
	}
	pred, err := b.Predict(tab.X)
	if err != nil {
		return fail(stderr, "predict", inputError(fs.Arg(0), tab, err))
	}
	var buf bytes.Buffer
	writePredictions(&buf, pred)
	if *out == "-" {
		_, err = stdout.Write(buf.Bytes())
	} else {
		err = modelfile.WriteFileAtomic(*out, buf.Bytes(), 0o644)
	}
	if err != nil {
		return fail(stderr, "predict", err)
	}
	return exitOK
}

func writePredictions(w *bytes.Buffer, p *modelfile.Prediction) {
	n, c := p.FMean.Dims()
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
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
the evidence lower bound of the model on that data.`, stderr)
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
	tab, err := loadInputs(b, fs.Arg(0), &csv, true)
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
	if m.Bound != nil {
		fmt.Fprintf(stdout, "bound      %.6g (ELBO on this data, standardized)\n", *m.Bound)
	}
	return exitOK
}
