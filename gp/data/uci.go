package data

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// UCIDatasets returns the names of the UCI regression sets used by the
// SOLVE-GP reproduction (Tables 2, 5 and 6 of the paper), in the order of
// the paper's tables.
func UCIDatasets() []string {
	return []string{"elevators", "bike", "kin40k", "protein", "keggdirected", "keggundirected"}
}

// LoadUCI reads the data set name from dir, in the layout of the project's
// shared data folder: <dir>/<name>.csv.gz with a header line and the
// target in the last column. It returns the inputs and targets, unscaled.
// Other names than UCIDatasets() are read the same way if the file exists;
// if it does not, the error lists the known names.
func LoadUCI(dir, name string) (*Table, error) {
	known := strings.Join(UCIDatasets(), ", ")
	if name == "" {
		return nil, fmt.Errorf("data: LoadUCI: empty data set name (known: %s)", known)
	}
	tab, err := LoadCSV(filepath.Join(dir, name+".csv.gz"), Options{Header: HeaderPresent})
	if err != nil && errors.Is(err, fs.ErrNotExist) && !slices.Contains(UCIDatasets(), name) {
		return nil, fmt.Errorf("data: LoadUCI: unknown data set %q (known: %s): %w", name, known, err)
	}
	return tab, err
}

// LoadUCIMasks reads the test masks of data set name from
// <dir>/<name>_test_mask.csv.gz and checks that each has n rows.
func LoadUCIMasks(dir, name string, n int) ([][]bool, error) {
	path := filepath.Join(dir, name+"_test_mask.csv.gz")
	masks, err := LoadTestMasks(path)
	if err != nil {
		return nil, err
	}
	if len(masks) > 0 && len(masks[0]) != n {
		return nil, fmt.Errorf("data: %s: %d mask rows, but the data set has %d rows", path, len(masks[0]), n)
	}
	return masks, nil
}
