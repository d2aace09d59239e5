package data

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"

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
	vals, names, lines, cols, err := readNumeric(r, name, HeaderAuto, func(_ int, v float64) string {
		if v != 0 && v != 1 {
			return fmt.Sprintf("mask value %v is not 0 or 1", v)
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	n := len(vals) / cols
	split := func(k int) string {
		if names != nil {
			return fmt.Sprintf("%q", names[k])
		}
		return fmt.Sprintf("column %d", k+1)
	}
	for i := 0; i < n; i++ {
		first := -1
		for k, v := range vals[i*cols : (i+1)*cols] {
			if v != 1 {
				continue
			}
			if first >= 0 {
				return nil, &ParseError{File: name, Line: lines[i], Column: k + 1,
					Msg: fmt.Sprintf("row %d (from 0) is a test row in both split %s and split %s; each row must be a test row in exactly one split", i, split(first), split(k))}
			}
			first = k
		}
		if first < 0 {
			return nil, &ParseError{File: name, Line: lines[i],
				Msg: fmt.Sprintf("row %d (from 0) is a test row in no split; each row must be a test row in exactly one split", i)}
		}
	}
	masks := make([][]bool, cols)
	for k := range masks {
		masks[k] = make([]bool, n)
	}
	for i := 0; i < n; i++ {
		for k := 0; k < cols; k++ {
			masks[k][i] = vals[i*cols+k] == 1
		}
	}
	return masks, nil
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
