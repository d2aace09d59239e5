package gpbeam

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// shardTable is a parsed shard: every column of the file as read, and the
// model's inputs (and target) taken from them.
type shardTable struct {
	path string
	raw  *data.Table // every column, in file order (raw.Y is nil)
	x    *mat.Dense  // the model's inputs, in the model's order
	y    []float64   // the target column, when one was asked for
	cols []int       // the 0-based file column of each column of x
	t    int         // the 0-based file column of y, -1 for none
}

// parseShard reads the contents buf of the shard at path, a Parquet file
// (by its .parquet extension, its leaf columns named as a header names
// CSV columns) or a CSV or gzip CSV file, and takes the model's inputs from it as solvegp predict does: with a
// header and a model that records the names of its inputs, by name in any
// order (the target, if any, being the column named as the model's target,
// else the last; every other column must be an input); otherwise by
// position (d columns are all inputs, d+1 have the last as target). With
// needTarget the shard must have a target, whose values must suit the
// model's likelihood. Errors name the file, and the line and column where
// there is one.
func parseShard(b *modelfile.Bundle, path string, buf []byte, needTarget bool) (*shardTable, error) {
	var raw *data.Table
	var err error
	if data.IsParquet(path) {
		raw, err = data.ReadParquet(bytes.NewReader(buf), int64(len(buf)), path, data.Options{NoTarget: true})
	} else {
		raw, err = data.ReadCSV(bytes.NewReader(buf), path, data.Options{NoTarget: true})
	}
	if err != nil {
		return nil, err
	}
	d, _, _, _ := b.Model.Dims()
	n, c := raw.X.Dims()
	inputs := b.InputNames(d)
	byName := inputs != nil && raw.Names != nil
	tab := &shardTable{path: path, raw: raw, t: -1}
	if needTarget || c > d && (byName || c == d+1) {
		tab.t = c - 1
		if byName {
			if k := slices.Index(raw.Names, b.Meta.TargetName); k >= 0 && !slices.Contains(inputs, b.Meta.TargetName) {
				tab.t = k
			}
		}
		if needTarget && c < 2 {
			return nil, &data.ParseError{File: path, Msg: "need at least 2 columns (inputs and a target), the file has 1"}
		}
	}
	if byName {
		if tab.cols, err = matchNames(path, raw.Names, tab.t, inputs); err != nil {
			return nil, err
		}
	} else {
		for j := 0; j < c; j++ {
			if j != tab.t {
				tab.cols = append(tab.cols, j)
			}
		}
		if len(tab.cols) != d {
			return nil, &data.ParseError{File: path, Msg: fmt.Sprintf("%d columns, the model takes %d inputs (and an optional last target column)", c, d)}
		}
	}
	tab.x = mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		src, dst := raw.X.RawRowView(i), tab.x.RawRowView(i)
		for j, k := range tab.cols {
			dst[j] = src[k]
		}
	}
	if needTarget {
		tab.y = make([]float64, n)
		for i := range tab.y {
			tab.y[i] = raw.X.At(i, tab.t)
		}
		if err := tab.checkLabels(b.Model.Likelihood()); err != nil {
			return nil, err
		}
	}
	return tab, nil
}

// matchNames returns the 0-based column of header that holds each of the
// model's inputs, in their order, leaving out the target column t (-1 for
// none); see modelfile.MatchHeader.
func matchNames(path string, header []string, t int, inputs []string) ([]int, error) {
	if t >= 0 && slices.Contains(inputs, header[t]) {
		return nil, &data.ParseError{File: path, Msg: fmt.Sprintf("column %d (%q), taken for the target, is one of the model's inputs", t+1, header[t])}
	}
	cols, err := modelfile.MatchHeader(header, t, inputs)
	if err != nil {
		return nil, &data.ParseError{File: path, Msg: err.Error()}
	}
	return cols, nil
}

// checkLabels checks the targets with the likelihood's Validate and
// reports a bad one (likelihood.LabelError) as file:line:column.
func (t *shardTable) checkLabels(lik gp.Likelihood) error {
	v, ok := lik.(interface{ Validate([]float64) error })
	if !ok {
		return nil
	}
	err := v.Validate(t.y)
	var le *likelihood.LabelError
	if errors.As(err, &le) {
		return &data.ParseError{File: t.path, Line: t.raw.Lines[le.Index], Column: t.t + 1, Msg: fmt.Sprintf("target %g: %s", le.Value, le.Rule)}
	}
	if err != nil {
		return &data.ParseError{File: t.path, Msg: err.Error()}
	}
	return nil
}

// inputError names the shard in an error of prediction, and gives an input
// the model refuses (modelfile.InputError) as file:line:column and a test
// point whose prediction is not finite (gp.PointError) as file:line.
func (t *shardTable) inputError(err error) error {
	var ie *modelfile.InputError
	if errors.As(err, &ie) && ie.Row < len(t.raw.Lines) && ie.Col < len(t.cols) {
		return &data.ParseError{File: t.path, Line: t.raw.Lines[ie.Row], Column: t.cols[ie.Col] + 1, Msg: ie.Error()}
	}
	var pe *gp.PointError
	if errors.As(err, &pe) && pe.Point >= 0 && pe.Point < len(t.raw.Lines) {
		return &data.ParseError{File: t.path, Line: t.raw.Lines[pe.Point], Msg: err.Error()}
	}
	return fmt.Errorf("%s: %w", t.path, err)
}
