package main

import (
	"fmt"
	"math"

	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// maxDataValue bounds the magnitude of the values train accepts, inputs
// and targets alike. It is the limit predict and eval apply to test inputs
// (modelfile.MaxInput): a training value beyond it makes a standardization
// whose squares overflow (a target of 1e308 gives a target scale whose
// square, the scale of every predictive variance, is +Inf), so the saved
// model would be refused or predict infinities.
const maxDataValue = modelfile.MaxInput

// checkDataScale returns an error naming file:line:column of the first
// value of tab whose magnitude is beyond maxDataValue, so that train
// refuses data that would make a model predict and eval refuse.
func checkDataScale(file string, tab *data.Table) error {
	r, c := tab.X.Dims()
	for i := 0; i < r; i++ {
		for j, v := range tab.X.RawRowView(i)[:c] {
			if !(math.Abs(v) <= maxDataValue) {
				line, col := tab.Pos(i, j)
				return &data.ParseError{File: file, Line: line, Column: col,
					Msg: fmt.Sprintf("input %g is beyond the limit of %g on the magnitude of a value", v, maxDataValue)}
			}
		}
	}
	for i, v := range tab.Y {
		if !(math.Abs(v) <= maxDataValue) {
			line, col := tab.Pos(i, -1)
			return &data.ParseError{File: file, Line: line, Column: col,
				Msg: fmt.Sprintf("target %g is beyond the limit of %g on the magnitude of a value (its squared scale would overflow, and the model predict infinite variances)", v, maxDataValue)}
		}
	}
	return nil
}
