package data

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestCSVMissingTargets checks Options.Missing: empty, NA and NaN fields
// of the listed columns (by name or number) read as NaN, the same fields
// elsewhere stay errors with their line and column, a row whose listed
// columns are all missing is an error naming its line, and NA on the first
// line does not make it a header.
func TestCSVMissingTargets(t *testing.T) {
	const file = "a,p,b,q\n1,,2,3\n4,NA,5,13\n6,7,8, nan \n9,10,11,\n"
	for _, spec := range [][]string{{"p", "q"}, {"2", "4"}, {"q", "p"}} {
		tab, err := ReadCSV(strings.NewReader(file), "m.csv", Options{NoTarget: true, Missing: spec})
		if err != nil {
			t.Fatalf("%v: %v", spec, err)
		}
		want := [][]float64{{1, math.NaN(), 2, 3}, {4, math.NaN(), 5, 13}, {6, 7, 8, math.NaN()}, {9, 10, 11, math.NaN()}}
		for i, row := range want {
			for j, v := range row {
				got := tab.X.At(i, j)
				if !(got == v || math.IsNaN(got) && math.IsNaN(v)) {
					t.Errorf("%v: [%d][%d] = %v, want %v", spec, i, j, got, v)
				}
			}
		}
	}
	cases := []struct {
		name, file string
		missing    []string
		line, col  int
		msg        string
	}{
		{"empty input", "a,p,b,q\n1,2,,4\n", []string{"p", "q"}, 2, 3, "missing value"},
		{"NA input", "a,p,b,q\n1,2,NA,4\n", []string{"p", "q"}, 2, 3, "not a number"},
		{"every target missing", "a,p,b,q\n1,2,3,4\n1,,3,NA\n", []string{"p", "q"}, 3, 0, "every target of the row is missing"},
		{"no Missing", "a,p,b,q\n1,,3,4\n", nil, 2, 2, "only the target columns of a multi-output model"},
		{"NaN without Missing", "a,p\n1,NaN\n", nil, 2, 2, "non-finite"},
	}
	for _, c := range cases {
		_, err := ReadCSV(strings.NewReader(c.file), "m.csv", Options{NoTarget: true, Missing: c.missing})
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != c.line || pe.Column != c.col || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("%s: %v, want line %d column %d %q", c.name, err, c.line, c.col, c.msg)
		}
	}
	// A single target is read as before: a missing one is an error.
	if _, err := ReadCSV(strings.NewReader("a,y\n1,\n"), "s.csv", Options{}); err == nil || !strings.Contains(err.Error(), "s.csv:2:2") {
		t.Errorf("missing single target: %v", err)
	}
	// Without a header, NA in a listed column is a value, not a name.
	tab, err := ReadCSV(strings.NewReader("1,NA,3\n4,5,6\n"), "h.csv", Options{NoTarget: true, Missing: []string{"2", "3"}})
	if err != nil || tab.Names != nil || !math.IsNaN(tab.X.At(0, 1)) {
		t.Errorf("NA on the first line: %v, names %v", err, tab)
	}
}

// writeOptionalParquet writes columns x (required) and p, q (optional),
// with nulls where a value is NaN in p or q, and a NaN kept as a value
// where nanValue marks it.
func writeOptionalParquet(t *testing.T, path string, x, p, q []float64, nanValue []bool) {
	t.Helper()
	schema := parquet.NewSchema("t", parquet.Group{
		"x": parquet.Leaf(parquet.DoubleType),
		"p": parquet.Optional(parquet.Leaf(parquet.DoubleType)),
		"q": parquet.Optional(parquet.Leaf(parquet.DoubleType)),
	})
	var b bytes.Buffer
	pw := parquet.NewWriter(&b, schema)
	for i := range x {
		// Columns in schema order: p, q, x.
		row := parquet.Row{{}, {}, parquet.DoubleValue(x[i]).Level(0, 0, 2)}
		for k, v := range []float64{p[i], q[i]} {
			if math.IsNaN(v) && !nanValue[i] {
				row[k] = parquet.NullValue().Level(0, 0, k)
			} else {
				row[k] = parquet.DoubleValue(v).Level(0, 1, k)
			}
		}
		if _, err := pw.WriteRows([]parquet.Row{row}); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestParquetMissingTargets checks that a null (or NaN) in a column of
// Options.Missing reads as NaN, that it stays an error elsewhere, and that
// a row with every listed column missing is an error naming the row.
func TestParquetMissingTargets(t *testing.T) {
	dir := t.TempDir()
	nan := math.NaN()
	path := filepath.Join(dir, "m.parquet")
	writeOptionalParquet(t, path, []float64{1, 2, 3}, []float64{nan, 5, 6}, []float64{7, nan, 9}, []bool{false, true, false})
	tab, err := LoadParquet(path, Options{NoTarget: true, Missing: []string{"p", "q"}})
	if err != nil {
		t.Fatal(err)
	}
	// Columns p, q, x.
	if !math.IsNaN(tab.X.At(0, 0)) || !math.IsNaN(tab.X.At(1, 1)) || tab.X.At(2, 0) != 6 || tab.X.At(0, 2) != 1 {
		t.Errorf("table %v", tab.X)
	}
	if _, err := LoadParquet(path, Options{NoTarget: true, Missing: []string{"q"}}); err == nil || !strings.Contains(err.Error(), `column "p"`) {
		t.Errorf("null outside the listed columns: %v", err)
	}
	all := filepath.Join(dir, "all.parquet")
	writeOptionalParquet(t, all, []float64{1, 2}, []float64{4, nan}, []float64{7, nan}, []bool{false, false})
	if _, err := LoadParquet(all, Options{NoTarget: true, Missing: []string{"p", "q"}}); err == nil || !strings.Contains(err.Error(), "row 2: every target") {
		t.Errorf("row with every target missing: %v", err)
	}
}
