package data

import (
	"fmt"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// IsParquet reports whether path names a Parquet file (by its .parquet
// extension).
func IsParquet(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".parquet") }

// LoadTable reads one CSV, gzip CSV or Parquet file (by IsParquet) into a
// Table: LoadCSV or LoadParquet.
func LoadTable(path string, opts Options) (*Table, error) {
	if IsParquet(path) {
		return LoadParquet(path, opts)
	}
	return LoadCSV(path, opts)
}

// LoadFiles reads the files at paths, expanding patterns with *, ? or [
// (sorted), and stacks their rows in that order into one Table. One file
// gives LoadTable's table; several must have the same columns (and the
// same names, when they have headers), and the stacked table records no
// line positions.
func LoadFiles(paths []string, opts Options) (*Table, error) {
	files, err := ExpandPaths(paths)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("data: no input files")
	}
	first, err := LoadTable(files[0], opts)
	if err != nil || len(files) == 1 {
		return first, err
	}
	_, d := first.X.Dims()
	var x []float64
	var y []float64
	x = append(x, first.X.RawMatrix().Data...)
	y = append(y, first.Y...)
	for _, f := range files[1:] {
		t, err := LoadTable(f, opts)
		if err != nil {
			return nil, err
		}
		if _, dt := t.X.Dims(); dt != d || !slices.Equal(t.Names, first.Names) {
			return nil, fmt.Errorf("data: %s: columns %v (%d inputs) differ from those of %s, %v (%d inputs)", f, t.Names, dt, files[0], first.Names, d)
		}
		x = append(x, t.X.RawMatrix().Data...)
		y = append(y, t.Y...)
	}
	out := &Table{X: mat.NewDense(len(x)/d, d, x), Names: first.Names, TargetColumn: first.TargetColumn}
	if !opts.NoTarget {
		out.Y = y
	}
	return out, nil
}

// ExpandPaths returns the file names that paths stand for, in order: a
// path with *, ? or [ is a pattern expanded as filepath.Glob does, sorted
// (a pattern that matches nothing is an error); any other path stands for
// itself.
func ExpandPaths(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		if !strings.ContainsAny(p, "*?[") {
			files = append(files, p)
			continue
		}
		m, err := globSorted(p)
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	return files, nil
}
