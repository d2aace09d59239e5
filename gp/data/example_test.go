package data_test

import (
	"fmt"
	"strings"

	"github.com/solvegp/solvegp/gp/data"
)

// Read a small CSV, split it, and standardize with training statistics.
func Example() {
	const csv = "x1,x2,y\n0,10,1\n1,10,3\n2,10,5\n3,10,7\n4,10,9\n"
	tab, err := data.ReadCSV(strings.NewReader(csv), "toy.csv", data.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	split, err := data.RandomSplit(len(tab.Y), 0.2, 0, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	xTrain, yTrain, _ := data.Rows(tab.X, tab.Y, split.Train)
	std, err := data.FitStandardizer(xTrain, yTrain)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("columns:", tab.Names)
	fmt.Println("train rows:", len(yTrain), "test rows:", len(split.Test))
	fmt.Println("constant column x2 keeps scale:", std.XScale[1])
	// Output:
	// columns: [x1 x2 y]
	// train rows: 4 test rows: 1
	// constant column x2 keeps scale: 1
}

// Every malformed input is reported with its file, line and column.
func ExampleReadCSV_error() {
	_, err := data.ReadCSV(strings.NewReader("a,b\n1,2\n3\n"), "train.csv", data.Options{})
	fmt.Println(err)
	_, err = data.ReadCSV(strings.NewReader("a,b\n1,2\n3,NaN\n"), "train.csv", data.Options{})
	fmt.Println(err)
	// Output:
	// train.csv:3:2: ragged row: 1 fields, want 2 as on the first line
	// train.csv:3:2: non-finite value "NaN"
}
