package data

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// Split holds the row indices of a train/validation/test partition of a
// data set. Each index appears in exactly one of the three sets; each set
// is sorted in increasing order.
type Split struct {
	Train []int
	Valid []int
	Test  []int
}

// maxSplitRows bounds the number of rows RandomSplit accepts: its
// permutation and index sets take 16 bytes per row, 64 GiB at the bound.
const maxSplitRows int64 = 1 << 32

// RandomSplit partitions the rows 0..n-1 at random: a fraction testFrac of
// all rows becomes the test set, then a fraction validFrac of the
// remaining rows becomes the validation set and the rest the training
// set. Set sizes are rounded to the nearest integer. The same seed always
// gives the same split.
//
// The SOLVE-GP regression benchmarks use RandomSplit(n, 0.2, 0.2, seed):
// for kin40k (n = 40000) that gives 8000 test, 6400 validation and 25600
// training rows.
//
// RandomSplit holds a permutation of all n rows in memory; n above 2³²
// is refused with an error.
func RandomSplit(n int, testFrac, validFrac float64, seed uint64) (Split, error) {
	if n < 1 {
		return Split{}, fmt.Errorf("data: RandomSplit: n = %d, need at least 1 row", n)
	}
	if int64(n) > maxSplitRows {
		return Split{}, fmt.Errorf("data: RandomSplit: n = %d rows, more than the %d a split can hold", n, int64(maxSplitRows))
	}
	if !(testFrac >= 0 && testFrac < 1) || !(validFrac >= 0 && validFrac < 1) {
		return Split{}, fmt.Errorf("data: RandomSplit: fractions must lie in [0, 1), got test %v, valid %v", testFrac, validFrac)
	}
	nTest := int(math.Round(testFrac * float64(n)))
	nValid := int(math.Round(validFrac * float64(n-nTest)))
	if n-nTest-nValid < 1 {
		return Split{}, fmt.Errorf("data: RandomSplit: no training rows left of %d (test %d, valid %d)", n, nTest, nValid)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed5eed5eed5eed))
	perm := rng.Perm(n)
	s := Split{
		Test:  sortedCopy(perm[:nTest]),
		Valid: sortedCopy(perm[nTest : nTest+nValid]),
		Train: sortedCopy(perm[nTest+nValid:]),
	}
	return s, nil
}

// MaskSplit builds a split from a test mask (test[i] reports whether row i
// is a test row) and holds out a random fraction validFrac of the other
// rows for validation.
func MaskSplit(test []bool, validFrac float64, seed uint64) (Split, error) {
	if !(validFrac >= 0 && validFrac < 1) {
		return Split{}, fmt.Errorf("data: MaskSplit: validation fraction must lie in [0, 1), got %v", validFrac)
	}
	var s Split
	var rest []int
	for i, t := range test {
		if t {
			s.Test = append(s.Test, i)
		} else {
			rest = append(rest, i)
		}
	}
	nValid := int(math.Round(validFrac * float64(len(rest))))
	if len(rest)-nValid < 1 {
		return Split{}, fmt.Errorf("data: MaskSplit: no training rows left (%d non-test rows, %d for validation)", len(rest), nValid)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed5eed5eed5eed))
	rng.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	s.Valid = sortedCopy(rest[:nValid])
	s.Train = sortedCopy(rest[nValid:])
	return s, nil
}

func sortedCopy(idx []int) []int {
	out := append([]int(nil), idx...)
	sort.Ints(out)
	return out
}

// Rows returns a new matrix and target slice holding the rows idx of x and
// y (y may be nil, giving a nil result). It returns an error if an index
// is out of range or the lengths of x and y differ.
func Rows(x *mat.Dense, y []float64, idx []int) (*mat.Dense, []float64, error) {
	if x == nil {
		return nil, nil, fmt.Errorf("data: Rows: nil x")
	}
	n, d := x.Dims()
	if y != nil && len(y) != n {
		return nil, nil, fmt.Errorf("data: Rows: %d rows in x but %d targets", n, len(y))
	}
	if len(idx) == 0 {
		return nil, nil, fmt.Errorf("data: Rows: no rows selected")
	}
	// Indices are checked before anything is allocated: an empty x
	// (such as &mat.Dense{}) has no rows to select and no columns for
	// a result.
	for _, i := range idx {
		if i < 0 || i >= n {
			return nil, nil, fmt.Errorf("data: Rows: index %d out of range [0, %d)", i, n)
		}
	}
	xs := mat.NewDense(len(idx), d, nil)
	var ys []float64
	if y != nil {
		ys = make([]float64, len(idx))
	}
	for k, i := range idx {
		xs.SetRow(k, x.RawRowView(i))
		if y != nil {
			ys[k] = y[i]
		}
	}
	return xs, ys, nil
}

// ReadTestMasks reads a test-mask file (CSV or gzip CSV with a header
// line such as "split0,...,split9" and one row of 0/1 values per row of
// the data set; see /work/shared/data/README.md). It returns one mask per
// split: masks[k][i] reports whether row i is a test row in split k.
//
// As in that README, each row must be a test row in exactly one split
// (k-fold cross-validation): a row of all zeros, or with a 1 in two or
// more columns, is an error naming its line and row. A file with a single
// column must therefore hold only ones.
func ReadTestMasks(r io.Reader, name string) ([][]bool, error) {
	m, err := ReadMaskFile(r, name)
	if err != nil {
		return nil, err
	}
	n := len(m.Lines)
	cols := len(m.Masks)
	split := func(k int) string {
		if m.Names != nil {
			return fmt.Sprintf("%q", m.Names[k])
		}
		return fmt.Sprintf("column %d", k+1)
	}
	for i := 0; i < n; i++ {
		first := -1
		for k := 0; k < cols; k++ {
			if !m.Masks[k][i] {
				continue
			}
			if first >= 0 {
				return nil, &ParseError{File: name, Line: m.Lines[i], Column: k + 1,
					Msg: fmt.Sprintf("row %d (from 0) is a test row in both split %s and split %s; each row must be a test row in exactly one split", i, split(first), split(k))}
			}
			first = k
		}
		if first < 0 {
			return nil, &ParseError{File: name, Line: m.Lines[i],
				Msg: fmt.Sprintf("row %d (from 0) is a test row in no split; each row must be a test row in exactly one split", i)}
		}
	}
	return m.Masks, nil
}

// MaskFile is a file of 0/1 columns, one row per row of a data set, such
// as the UCI test masks: column k marks the test rows of split k.
type MaskFile struct {
	// Masks holds one mask per column: Masks[k][i] reports whether row
	// i is marked (a test row) in column k.
	Masks [][]bool
	// Names holds the header names, or nil if the file had none.
	Names []string
	// Lines holds the 1-based file line of each row.
	Lines []int
	// File is the name used in error messages.
	File string
}

// ReadMaskFile reads a mask file: CSV or gzip CSV, an optional header,
// and one row of 0/1 values per data row (a value other than 0 or 1 is
// an error naming its line and column). Unlike ReadTestMasks it does not
// require each row to be marked in exactly one column, so that a single
// column of 0/1 (test or not) is a valid mask file.
func ReadMaskFile(r io.Reader, name string) (*MaskFile, error) {
	vals, names, lines, cols, err := readNumeric(r, name, Options{Header: HeaderAuto}, func(_ int, v float64) string {
		if v != 0 && v != 1 {
			return fmt.Sprintf("mask value %v is not 0 or 1", v)
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	n := len(vals) / cols
	masks := make([][]bool, cols)
	for k := range masks {
		masks[k] = make([]bool, n)
	}
	for i := 0; i < n; i++ {
		for k := 0; k < cols; k++ {
			masks[k][i] = vals[i*cols+k] == 1
		}
	}
	return &MaskFile{Masks: masks, Names: names, Lines: lines, File: name}, nil
}

// LoadMaskFile reads the mask file at path, or standard input if path is
// "-" (Stdin). See ReadMaskFile.
func LoadMaskFile(path string) (*MaskFile, error) {
	f, name, err := openInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadMaskFile(f, name)
}

// TrainTest returns the rows of a data set of n rows that column k
// (0-based; "split0" is 0) of the mask file marks as test rows, and the
// others as training rows, each in increasing order. It is an error if
// the file does not have n rows, k is not one of its columns, or either
// part would be empty.
func (m *MaskFile) TrainTest(n, k int) (train, test []int, err error) {
	if len(m.Masks) == 0 {
		return nil, nil, &ParseError{File: m.File, Msg: "no mask columns"}
	}
	if k < 0 || k >= len(m.Masks) {
		return nil, nil, &ParseError{File: m.File, Msg: fmt.Sprintf("split %d out of range: the file has %s, splits 0 to %d", k, columns(len(m.Masks)), len(m.Masks)-1)}
	}
	if rows := len(m.Masks[k]); rows != n {
		return nil, nil, &ParseError{File: m.File, Msg: fmt.Sprintf("%d mask rows, but the data have %d rows; the mask must have one row per data row", rows, n)}
	}
	for i, t := range m.Masks[k] {
		if t {
			test = append(test, i)
		} else {
			train = append(train, i)
		}
	}
	col := fmt.Sprintf("column %d", k+1)
	if m.Names != nil {
		col = fmt.Sprintf("column %d (%q)", k+1, m.Names[k])
	}
	switch {
	case len(test) == 0:
		return nil, nil, &ParseError{File: m.File, Column: k + 1, Msg: col + " marks no test rows"}
	case len(train) == 0:
		return nil, nil, &ParseError{File: m.File, Column: k + 1, Msg: col + " marks every row as a test row, leaving none to train on"}
	}
	return train, test, nil
}

// RandomTrainTest partitions the rows 0..n-1 at random into a training and
// a test part: round(testFrac·n) test rows, the rest training rows, each in
// increasing order. The same n, testFrac and seed always give the same
// partition (it is RandomSplit's test set with no validation rows). Both
// parts must be non-empty.
func RandomTrainTest(n int, testFrac float64, seed uint64) (train, test []int, err error) {
	if !(testFrac > 0 && testFrac < 1) {
		return nil, nil, fmt.Errorf("data: RandomTrainTest: test fraction must lie in (0, 1), got %v", testFrac)
	}
	s, err := RandomSplit(n, testFrac, 0, seed)
	if err != nil {
		return nil, nil, err
	}
	if len(s.Test) == 0 {
		return nil, nil, fmt.Errorf("data: RandomTrainTest: a test fraction of %v of %d rows rounds to no test rows", testFrac, n)
	}
	return s.Train, s.Test, nil
}

// WriteRows writes the rows idx of t to w as CSV, in the order given: the
// header line first if t has names, then one line per row with the target
// in its original column (t.TargetColumn; last if that is 0). Values are
// written in the shortest form that reads back as the same float64, so
// that ReadCSV of the output gives exactly the selected rows.
func WriteRows(w io.Writer, t *Table, idx []int) error {
	if t == nil || t.X == nil {
		return fmt.Errorf("data: WriteRows: nil table")
	}
	n, d := t.X.Dims()
	if t.Y != nil && len(t.Y) != n {
		return fmt.Errorf("data: WriteRows: %d rows in X but %d targets", n, len(t.Y))
	}
	cols := d
	tc := -1 // 0-based column of the target in the output
	if t.Y != nil {
		cols++
		tc = d
		if t.TargetColumn > 0 && t.TargetColumn <= cols {
			tc = t.TargetColumn - 1
		}
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if t.Names != nil {
		if len(t.Names) != cols {
			return fmt.Errorf("data: WriteRows: %d names for %s", len(t.Names), columns(cols))
		}
		names := t.Names
		if tc >= 0 {
			// Names lists the inputs, then the target.
			names = append(append(append([]string(nil), t.Names[:tc]...), t.Names[d]), t.Names[tc:d]...)
		}
		if err := writeCSVLine(bw, names); err != nil {
			return err
		}
	}
	var buf []byte
	for _, i := range idx {
		if i < 0 || i >= n {
			return fmt.Errorf("data: WriteRows: index %d out of range [0, %d)", i, n)
		}
		buf = buf[:0]
		row := t.X.RawRowView(i)
		for c, j := 0, 0; c < cols; c++ {
			if c > 0 {
				buf = append(buf, ',')
			}
			if c == tc {
				buf = strconv.AppendFloat(buf, t.Y[i], 'g', -1, 64)
				continue
			}
			buf = strconv.AppendFloat(buf, row[j], 'g', -1, 64)
			j++
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// writeCSVLine writes fields as one CSV line, quoting where needed.
func writeCSVLine(w io.Writer, fields []string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(fields); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// LoadTestMasks reads the test-mask file at path, or standard input if
// path is "-" (Stdin). See ReadTestMasks.
func LoadTestMasks(path string) ([][]bool, error) {
	f, name, err := openInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadTestMasks(f, name)
}
