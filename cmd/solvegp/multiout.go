package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
	"github.com/solvegp/solvegp/gp/train"
)

// parseTarget parses -target: a column number (the single target), or a
// comma-separated list of several columns, by name or 1-based number, for a
// multi-output model.
func (c *csvFlags) parseTarget() error {
	spec := strings.TrimSpace(c.targetSpec)
	c.target, c.targets = 0, nil
	if !strings.Contains(spec, ",") {
		t, err := strconv.Atoi(spec)
		switch {
		case spec == "":
		case err != nil:
			return fmt.Errorf("-target %q: a single target is given by its 1-based column number; names are for a list of several targets (a,b)", spec)
		case t < 0:
			return fmt.Errorf("-target %d: columns are numbered from 1 (0 means the last)", t)
		}
		c.target = t
		return nil
	}
	for _, e := range strings.Split(spec, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			return fmt.Errorf("-target %q: an empty entry", spec)
		}
		if slices.Contains(c.targets, e) {
			return fmt.Errorf("-target %q: %q is repeated", spec, e)
		}
		c.targets = append(c.targets, e)
	}
	return nil
}

// resolveTargets returns the 0-based columns of the entries of -target
// (names in header, or 1-based numbers) among c columns.
func resolveTargets(path string, targets, header []string, c int) ([]int, error) {
	cols := make([]int, len(targets))
	for i, e := range targets {
		k := -1
		if header != nil {
			k = slices.Index(header, e)
		}
		if k < 0 {
			if n, err := strconv.Atoi(e); err == nil && n >= 1 && n <= c {
				k = n - 1
			}
		}
		if k < 0 {
			return nil, targetError{fmt.Errorf("%s: -target %q: no column of that name or number (the file has %d columns)", path, e, c)}
		}
		if slices.Contains(cols[:i], k) {
			return nil, targetError{fmt.Errorf("%s: -target names column %d twice", path, k+1)}
		}
		cols[i] = k
	}
	if len(cols) >= c {
		return nil, targetError{fmt.Errorf("%s: %d target columns leave no input among %d columns", path, len(cols), c)}
	}
	return cols, nil
}

// targetError is a -target list that the file's columns do not fit: a
// usage error, found once the header is read.
type targetError struct{ error }

// splitTargets splits the all-input table raw into its inputs (the columns
// not in tcols, in file order) and its targets, point-major (n·P values),
// with the names of both when the file has a header.
func splitTargets(raw *data.Table, tcols []int) (tab *data.Table, y []float64, tnames []string) {
	n, c := raw.X.Dims()
	var icols []int
	for j := 0; j < c; j++ {
		if !slices.Contains(tcols, j) {
			icols = append(icols, j)
		}
	}
	x := mat.NewDense(n, len(icols), nil)
	P := len(tcols)
	y = make([]float64, n*P)
	for i := 0; i < n; i++ {
		row := raw.X.RawRowView(i)
		for j, k := range icols {
			x.Set(i, j, row[k])
		}
		for p, k := range tcols {
			y[i*P+p] = row[k]
		}
	}
	tab = &data.Table{X: x, Lines: raw.Lines}
	if raw.Names != nil {
		for _, k := range icols {
			tab.Names = append(tab.Names, raw.Names[k])
		}
		for _, k := range tcols {
			tnames = append(tnames, raw.Names[k])
		}
	}
	return tab, y, tnames
}

// multiRows returns the rows idx of x and of y, which holds P targets per
// row.
func multiRows(x *mat.Dense, y []float64, P int, idx []int) (*mat.Dense, []float64) {
	_, d := x.Dims()
	xs := mat.NewDense(len(idx), d, nil)
	ys := make([]float64, 0, len(idx)*P)
	for k, i := range idx {
		xs.SetRow(k, x.RawRowView(i))
		ys = append(ys, y[i*P:(i+1)*P]...)
	}
	return xs, ys
}

// checkMultiFlags checks the flags of a multi-output run (-target with
// several columns) and -outputs, which needs one, and sets f.latent from
// -outputs lmc:L.
func (f *trainFlags) checkMultiFlags() error {
	multi := len(f.csv.targets) > 0
	mode, latent, hasLatent := strings.Cut(f.outputs, ":")
	f.latent = 0
	if hasLatent {
		l, err := strconv.Atoi(latent)
		switch {
		case mode != "lmc":
			return fmt.Errorf("-outputs %q: a number of latent GPs needs lmc (lmc:L)", f.outputs)
		case err != nil || l < 1:
			return fmt.Errorf("-outputs %q: the number of latent GPs must be an integer of at least 1", f.outputs)
		}
		f.latent = l
	}
	switch {
	case mode != "independent" && mode != "lmc" && mode != "separate":
		return fmt.Errorf("-outputs %q: want independent, lmc, lmc:L or separate", f.outputs)
	case !multi && isFlagSet(f.fs, "outputs"):
		return errors.New("-outputs needs several target columns (-target a,b)")
	case !multi:
		return nil
	case f.spec.lik != "gaussian":
		return fmt.Errorf("-likelihood %s: several target columns need the Gaussian likelihood", f.spec.lik)
	case f.useCollapsed || isFlagSet(f.fs, "stream"):
		return errors.New("-collapsed and -stream take a single target column")
	case f.spec.mean != "zero" && f.spec.mean != "" && mode != "separate":
		return errors.New("-mean: several target columns need the zero prior mean (or -outputs separate, one mean per output)")
	}
	return nil
}

// multiLikelihood returns the likelihood of P outputs that -outputs asks
// for: independent outputs, or an LMC of L latent functions (lmc:L;
// default P) whose mixing matrix starts with W_pl = 1 for l = p mod L and
// 0 elsewhere; nil for separate outputs, each of which has a Gaussian
// likelihood of its own (buildModel).
func (f *trainFlags) multiLikelihood(P int) (gp.Likelihood, error) {
	if f.outputs == "separate" {
		return nil, nil
	}
	noise := make([]float64, P)
	for i := range noise {
		noise[i] = f.spec.noise
	}
	if mode, _, _ := strings.Cut(f.outputs, ":"); mode == "independent" {
		return likelihood.NewIndependentGaussian(noise)
	}
	L := f.latent
	if L == 0 {
		L = P
	}
	w := make([]float64, P*L)
	for p := 0; p < P; p++ {
		w[p*L+p%L] = 1
	}
	return likelihood.NewLMC(L, w, noise)
}

// loadMultiTrainData is loadTrainData for several target columns.
func loadMultiTrainData(f *trainFlags, path string, opts data.Options) (*trainData, error) {
	opts.NoTarget = true
	opts.Missing = f.csv.targets // an empty, NA or NaN target is a missing one
	raw, err := data.LoadFiles(f.fs.Args(), opts)
	if err != nil {
		return nil, err
	}
	n, c := raw.X.Dims()
	tcols, err := resolveTargets(path, f.csv.targets, raw.Names, c)
	if err != nil {
		return nil, err
	}
	P := len(tcols)
	d := &trainData{}
	var y []float64
	d.tab, y, d.targetNames = splitTargets(raw, tcols)
	d.tab.Y = y // P values per row, for the checkpoint's fingerprint
	if d.tab.Names != nil {
		d.tab.Names = append(d.tab.Names, d.targetNames...)
	}
	f.spec.names = d.tab.Names
	if d.lik, err = f.multiLikelihood(P); err != nil {
		return nil, err
	}
	split, err := data.RandomSplit(n, 0, f.validFrac, f.spec.seed)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if f.validFrac > 0 && len(split.Valid) == 0 {
		return nil, fmt.Errorf("-valid %g holds out no row of %d; use a larger fraction or none", f.validFrac, n)
	}
	d.xTrain, d.yTrain = multiRows(d.tab.X, y, P, split.Train)
	if len(split.Valid) > 0 {
		d.xValid, d.yValid = multiRows(d.tab.X, y, P, split.Valid)
	}
	if len(split.Train) < f.spec.m+f.spec.m2 {
		return nil, fmt.Errorf("%s: %d training rows, fewer than the %d inducing points asked for (-m %d, -m2 %d)",
			path, len(split.Train), f.spec.m+f.spec.m2, f.spec.m, f.spec.m2)
	}
	if d.std, err = data.FitStandardizerOutputs(d.xTrain, d.yTrain, P); err != nil {
		return nil, err
	}
	d.xs = mat.DenseCopyOf(d.xTrain)
	d.ys = append([]float64(nil), d.yTrain...)
	if err := d.std.TransformX(d.xs); err != nil {
		return nil, err
	}
	d.std.TransformY(d.ys)
	return d, nil
}

// outputNames returns the names of the outputs of a multi-output model for
// its prediction columns: the target names it records, else 0..P−1.
func outputNames(b *modelfile.Bundle) []string {
	P := b.NumOutputs()
	if len(b.Meta.TargetNames) == P {
		return b.Meta.TargetNames
	}
	names := make([]string, P)
	for i := range names {
		names[i] = strconv.Itoa(i)
	}
	return names
}

// isMultiOutput reports whether the bundle's model has several targets
// per point: separate outputs, or a multi-output likelihood.
func isMultiOutput(b *modelfile.Bundle) bool {
	if b.Separate != nil {
		return true
	}
	_, ok := b.Model.Likelihood().(*likelihood.MultiGaussian)
	return ok
}

// loadMultiInputs is loadInputs for a multi-output model: with a header the
// columns are matched by name, the model's targets (all of them when
// needTargets) taken out; without one, the first d columns are the inputs
// and, when needTargets, the next P the targets in the model's order (or
// those -target lists by number). The table's Y holds P values per row.
func loadMultiInputs(b *modelfile.Bundle, path string, csv *csvFlags, needTargets bool) (*inputTable, error) {
	opts, err := csv.options()
	if err != nil {
		return nil, err
	}
	if csv.target != 0 {
		return nil, fmt.Errorf("-target %d: a multi-output model takes its target columns as a list (-target a,b)", csv.target)
	}
	opts.NoTarget = true
	d, P := b.InputDim(), b.NumOutputs()
	if needTargets {
		opts.Missing = missingTargets(b, csv.targets)
	}
	raw, err := data.LoadTable(path, opts)
	if err != nil {
		return nil, err
	}
	_, c := raw.X.Dims()
	inputs := b.InputNames(d)
	var tcols, icols []int
	switch {
	case len(csv.targets) > 0:
		if tcols, err = resolveTargets(path, csv.targets, raw.Names, c); err != nil {
			return nil, err
		}
	case raw.Names != nil && inputs != nil && len(b.Meta.TargetNames) == P:
		for _, t := range b.Meta.TargetNames {
			if k := slices.Index(raw.Names, t); k >= 0 {
				tcols = append(tcols, k)
			}
		}
	case c == d+P:
		for p := 0; p < P; p++ {
			tcols = append(tcols, d+p)
		}
	}
	if needTargets && len(tcols) != P {
		return nil, fmt.Errorf("%s: found %d of the model's %d target columns (%s); name them in a header or with -target", path, len(tcols), P, strings.Join(outputNames(b), ", "))
	}
	if raw.Names != nil && inputs != nil {
		if icols, err = matchMultiNames(path, raw.Names, tcols, inputs); err != nil {
			return nil, err
		}
	} else {
		for j := 0; j < c; j++ {
			if !slices.Contains(tcols, j) {
				icols = append(icols, j)
			}
		}
		if len(icols) != d {
			return nil, fmt.Errorf("%s: %d input columns besides the targets, the model takes %d", path, len(icols), d)
		}
	}
	n, _ := raw.X.Dims()
	x := mat.NewDense(n, d, nil)
	var y []float64
	for i := 0; i < n; i++ {
		row := raw.X.RawRowView(i)
		for j, k := range icols {
			x.Set(i, j, row[k])
		}
		if needTargets {
			for _, k := range tcols {
				y = append(y, row[k])
			}
		}
	}
	return &inputTable{Table: &data.Table{X: x, Y: y, Lines: raw.Lines}, cols: icols}, nil
}

// matchMultiNames returns the columns of header that hold the model's
// inputs, in their order; every column other than the targets tcols must
// be an input, each once.
func matchMultiNames(path string, header []string, tcols []int, inputs []string) ([]int, error) {
	cols := make([]int, len(inputs))
	for j, name := range inputs {
		cols[j] = -1
		for k, h := range header {
			if h == name && !slices.Contains(tcols, k) {
				cols[j] = k
			}
		}
		if cols[j] < 0 {
			return nil, fmt.Errorf("%s: the header has no input column %q", path, name)
		}
	}
	for k, h := range header {
		if !slices.Contains(tcols, k) && !slices.Contains(inputs, h) {
			return nil, fmt.Errorf("%s: column %d (%q) is neither an input nor a target of the model", path, k+1, h)
		}
	}
	return cols, nil
}

// outputMetrics are the test statistics of one output of a multi-output
// model.
type outputMetrics struct {
	Name string `json:"name"`
	N    int    `json:"n"`
	// RMSE and LogLik (mean per point) are in the output's original
	// units.
	RMSE   float64 `json:"rmse"`
	LogLik float64 `json:"log_lik"`
}

// evaluateOutputs returns the RMSE and mean log predictive density of each
// output of a multi-output model on raw x and y (P values per row; NaN
// missing).
func evaluateOutputs(b *modelfile.Bundle, pred *modelfile.Prediction, y []float64) []outputMetrics {
	names := outputNames(b)
	P := len(names)
	out := make([]outputMetrics, P)
	for p := range out {
		o := &out[p]
		o.Name = names[p]
		var se, ll float64
		for i := 0; i*P < len(y); i++ {
			v := y[i*P+p]
			if math.IsNaN(v) {
				continue
			}
			m, s := pred.YMean.At(i, p), pred.YVar.At(i, p)
			r := v - m
			se += r * r
			ll += -0.5*math.Log(2*math.Pi*s) - 0.5*r*r/s
			o.N++
		}
		if o.N > 0 {
			o.RMSE, o.LogLik = math.Sqrt(se/float64(o.N)), ll/float64(o.N)
		}
	}
	return out
}

// multiColumns returns the prediction columns of a multi-output model,
// f_mean_<t>, f_var_<t>, y_mean_<t>, y_var_<t> for each output t.
func multiColumns(p *modelfile.Prediction, outputs []string) (names []string, cols [][]float64) {
	n, _ := p.YMean.Dims()
	for j, t := range outputs {
		for k, m := range []*mat.Dense{p.FMean, p.FVar, p.YMean, p.YVar} {
			col := make([]float64, n)
			for i := range col {
				col[i] = m.At(i, j)
			}
			names = append(names, []string{"f_mean_", "f_var_", "y_mean_", "y_var_"}[k]+t)
			cols = append(cols, col)
		}
	}
	return names, cols
}

// writeColumns writes columns of equal length as CSV with a header.
func writeColumns(w *bytes.Buffer, names []string, cols [][]float64) {
	w.WriteString(strings.Join(names, ",") + "\n")
	if len(cols) == 0 {
		return
	}
	for i := range cols[0] {
		for k, c := range cols {
			if k > 0 {
				w.WriteByte(',')
			}
			w.WriteString(strconv.FormatFloat(c[i], 'g', -1, 64))
		}
		w.WriteByte('\n')
	}
}

// printOutputMetrics prints the per-output lines of eval.
func printOutputMetrics(w io.Writer, outs []outputMetrics) {
	for _, o := range outs {
		fmt.Fprintf(w, "output %-10s n %d, RMSE %.6g, log-lik %.6g (mean per observed value)\n", o.Name, o.N, o.RMSE, o.LogLik)
	}
}

// buildModel builds the model to train on d and its bundle, and returns
// the model's kind: with -outputs separate a gp.Separate of one
// single-output model per target column, each with a Gaussian likelihood
// and its inducing points placed on the rows where its target is
// observed; otherwise one gp.Model.
func (f *trainFlags) buildModel(d *trainData) (train.Model, *modelfile.Bundle, string, error) {
	if d.lik != nil {
		m, err := f.spec.build(d.xs, d.lik)
		if err != nil {
			return nil, nil, "", err
		}
		return m, newBundle(m, d.std, d.tab.Names), m.Kind().String(), nil
	}
	P := len(d.ys) / rows(d.xs)
	models := make([]*gp.Model, P)
	for p := range models {
		var obs []int
		for i := 0; i < rows(d.xs); i++ {
			if !math.IsNaN(d.ys[i*P+p]) {
				obs = append(obs, i)
			}
		}
		xp, _ := multiRows(d.xs, d.ys, P, obs)
		lik, err := likelihood.NewGaussian(f.spec.noise)
		if err != nil {
			return nil, nil, "", err
		}
		if models[p], err = f.spec.build(xp, lik); err != nil {
			return nil, nil, "", fmt.Errorf("output %d (%d observed training rows): %v", p+1, len(obs), err)
		}
	}
	s, err := gp.NewSeparate(models)
	if err != nil {
		return nil, nil, "", err
	}
	b := &modelfile.Bundle{Separate: s, Standardizer: d.std}
	if names := d.tab.Names; names != nil {
		k := len(names) - P
		b.Meta.InputNames = append([]string(nil), names[:k]...)
		b.Meta.TargetNames = append([]string(nil), names[k:]...)
	}
	return s, b, models[0].Kind().String(), nil
}

// missingTargets returns the columns whose empty, NA or NaN fields eval
// reads as missing targets (data.Options.Missing): those -target lists,
// else the model's target names, else (a model trained on a file without a
// header) the P columns after its d inputs.
func missingTargets(b *modelfile.Bundle, targets []string) []string {
	if len(targets) > 0 {
		return targets
	}
	d, P := b.InputDim(), b.NumOutputs()
	if len(b.Meta.TargetNames) == P {
		return b.Meta.TargetNames
	}
	cols := make([]string, P)
	for p := range cols {
		cols[p] = strconv.Itoa(d + p + 1)
	}
	return cols
}
