package data

import (
	"fmt"

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
// standardized targets).
func Prepare(tab *Table, s Split) (*Sets, error) {
	if tab == nil || tab.X == nil || tab.Y == nil {
		return nil, fmt.Errorf("data: Prepare: table without inputs or targets")
	}
	var out Sets
	var err error
	if out.XTrain, out.YTrain, err = Rows(tab.X, tab.Y, s.Train); err != nil {
		return nil, fmt.Errorf("data: Prepare: training rows: %w", err)
	}
	if len(s.Valid) > 0 {
		if out.XValid, out.YValid, err = Rows(tab.X, tab.Y, s.Valid); err != nil {
			return nil, fmt.Errorf("data: Prepare: validation rows: %w", err)
		}
	}
	if len(s.Test) > 0 {
		if out.XTest, out.YTest, err = Rows(tab.X, tab.Y, s.Test); err != nil {
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
