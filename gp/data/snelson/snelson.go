// Package snelson embeds Snelson's 1D regression data set (200 noisy
// observations of a smooth function of one input, and a grid of 301 test
// inputs), the toy problem of Figure 3 of the SOLVE-GP paper. See
// PROVENANCE.md in this directory for where the files come from.
package snelson

import (
	"bytes"
	_ "embed"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/data"
)

//go:embed snelson.csv
var trainCSV []byte

//go:embed snelson_test_inputs.csv
var testCSV []byte

// Load returns the 200 observations (x is 200×1, y has 200 values) and the
// 301 evenly spaced test inputs on [−3, 10] (xtest is 301×1). Every call
// returns fresh copies that the caller may modify.
//
// The embedded files are parsed with package data; the package's tests
// check that they parse, so Load panics only if the binary itself is
// corrupt.
func Load() (x *mat.Dense, y []float64, xtest *mat.Dense) {
	tab, err := data.ReadCSV(bytes.NewReader(trainCSV), "snelson.csv", data.Options{Header: data.HeaderPresent})
	if err != nil {
		panic(fmt.Sprintf("snelson: embedded data corrupt: %v", err))
	}
	test, err := data.ReadCSV(bytes.NewReader(testCSV), "snelson_test_inputs.csv", data.Options{Header: data.HeaderPresent, NoTarget: true})
	if err != nil {
		panic(fmt.Sprintf("snelson: embedded data corrupt: %v", err))
	}
	return tab.X, tab.Y, test.X
}

// TrainTest splits the 200 observations at random, as in Appendix F.1 of
// the paper, into 100 training and 100 test points. The same seed always
// gives the same split.
func TrainTest(seed uint64) (xTrain *mat.Dense, yTrain []float64, xTest *mat.Dense, yTest []float64) {
	x, y, _ := Load()
	s, err := data.RandomSplit(len(y), 0.5, 0, seed)
	if err != nil {
		panic(fmt.Sprintf("snelson: %v", err)) // unreachable: n = 200 and fixed fractions
	}
	xTrain, yTrain, _ = data.Rows(x, y, s.Train)
	xTest, yTest, _ = data.Rows(x, y, s.Test)
	return xTrain, yTrain, xTest, yTest
}
