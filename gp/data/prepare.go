package data

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Sets holds the parts of a split data set, standardized with statistics
// of the training part only.
type Sets struct {
	XTrain *mat.Dense
	YTrain []float64
	// XValid, YValid and XTest, YTest are nil when the split has no rows
	// in that part.
	XValid *mat.Dense
	YValid []float64
	XTest  *mat.Dense
	YTest  []float64
	// Std maps back to original units (see Standardizer.InverseY).
	Std *Standardizer
}

// Prepare extracts the training, validation and test rows of tab given by
// s, fits a Standardizer on the training rows and applies it to all three
// parts, as in the paper's regression benchmarks (metrics are then on
// standardized targets). It returns an error if s breaks the invariant of
// Split (an index out of range, or in more than one set or twice in one
// set; rows in no set are fine) or a selected row of tab holds a NaN or
// infinite value (tables from ReadCSV never do; hand-built ones may).
func Prepare(tab *Table, s Split) (*Sets, error) {
	if tab == nil || tab.X == nil || tab.Y == nil {
		return nil, fmt.Errorf("data: Prepare: table without inputs or targets")
	}
	if err := checkSplit(tab.X.RawMatrix().Rows, s); err != nil {
		return nil, fmt.Errorf("data: Prepare: %w", err)
	}
	var out Sets
	var err error
	if out.XTrain, out.YTrain, err = selectFinite(tab, s.Train); err != nil {
		return nil, fmt.Errorf("data: Prepare: training rows: %w", err)
	}
	if len(s.Valid) > 0 {
		if out.XValid, out.YValid, err = selectFinite(tab, s.Valid); err != nil {
			return nil, fmt.Errorf("data: Prepare: validation rows: %w", err)
		}
	}
	if len(s.Test) > 0 {
		if out.XTest, out.YTest, err = selectFinite(tab, s.Test); err != nil {
			return nil, fmt.Errorf("data: Prepare: test rows: %w", err)
		}
	}
	if out.Std, err = FitStandardizer(out.XTrain, out.YTrain); err != nil {
		return nil, err
	}
	for _, part := range []struct {
		x *mat.Dense
		y []float64
	}{{out.XTrain, out.YTrain}, {out.XValid, out.YValid}, {out.XTest, out.YTest}} {
		if part.x == nil {
			continue
		}
		if err := out.Std.TransformX(part.x); err != nil {
			return nil, err
		}
		out.Std.TransformY(part.y)
	}
	return &out, nil
}

// selectFinite is Rows for the rows idx of tab, with an error naming the
// first NaN or infinite value among them by its index in tab.
func selectFinite(tab *Table, idx []int) (*mat.Dense, []float64, error) {
	x, y, err := Rows(tab.X, tab.Y, idx)
	if err != nil {
		return nil, nil, err
	}
	for k, i := range idx {
		for j, v := range x.RawRowView(k) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("input X[%d][%d] is %v", i, j, v)
			}
		}
		if v := y[k]; math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, fmt.Errorf("target Y[%d] is %v", i, v)
		}
	}
	return x, y, nil
}

// checkSplit reports an index of s outside [0, n), or one that appears in
// more than one set of s or more than once in a set, in O(n + |s|) time.
func checkSplit(n int, s Split) error {
	owner := make([]uint8, n) // 0: no set yet, else 1 + the set's number
	for k, part := range [...]struct {
		name string
		idx  []int
	}{{"training", s.Train}, {"validation", s.Valid}, {"test", s.Test}} {
		for _, i := range part.idx {
			if i < 0 || i >= n {
				return fmt.Errorf("%s rows: index %d out of range [0, %d)", part.name, i, n)
			}
			switch prev := owner[i]; {
			case prev == uint8(k+1):
				return fmt.Errorf("%s rows: row %d appears twice", part.name, i)
			case prev != 0:
				return fmt.Errorf("row %d is in both the %s and the %s rows", i, [...]string{"training", "validation", "test"}[prev-1], part.name)
			}
			owner[i] = uint8(k + 1)
		}
	}
	return nil
}
