package data

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// TestLoadUCIUnknownName checks that a missing file under a name that is
// not a known data set lists the known names, and that a known name's
// missing file is still a plain file error.
func TestLoadUCIUnknownName(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadUCI(dir, "kin4k")
	if err == nil || !strings.Contains(err.Error(), `unknown data set "kin4k"`) ||
		!strings.Contains(err.Error(), strings.Join(UCIDatasets(), ", ")) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unknown name: %v", err)
	}
	_, err = LoadUCI(dir, "kin40k")
	if err == nil || strings.Contains(err.Error(), "unknown") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("known name, missing file: %v", err)
	}
}

// TestColumnsPlural checks the singular in "the file has 1 column".
func TestColumnsPlural(t *testing.T) {
	_, err := ReadCSV(strings.NewReader("1\n2\n"), "f.csv", Options{Target: 2})
	if err == nil || !strings.HasSuffix(err.Error(), "the file has 1 column") {
		t.Errorf("target out of range: %v", err)
	}
	_, err = ReadCSV(strings.NewReader("1\n2\n"), "f.csv", Options{})
	if err == nil || !strings.HasSuffix(err.Error(), "the file has 1 column") {
		t.Errorf("one column: %v", err)
	}
}
