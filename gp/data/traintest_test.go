package data

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMaskFileTrainTest(t *testing.T) {
	in := "split0,split1\n1,0\n0,1\n0,1\n1,0\n0,1\n"
	m, err := ReadMaskFile(strings.NewReader(in), "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	train, test, err := m.TrainTest(5, 1)
	if err != nil || !equalInts(train, []int{0, 3}) || !equalInts(test, []int{1, 2, 4}) {
		t.Fatalf("split 1: train %v test %v err %v", train, test, err)
	}
	for _, c := range []struct {
		n, k int
		want string
	}{
		{5, 2, "m.csv: split 2 out of range: the file has 2 columns, splits 0 to 1"},
		{5, -1, "split -1 out of range"},
		{6, 0, "m.csv: 5 mask rows, but the data have 6 rows"},
	} {
		if _, _, err := m.TrainTest(c.n, c.k); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("TrainTest(%d, %d): err = %v, want %q", c.n, c.k, err, c.want)
		}
	}
	one, err := ReadMaskFile(strings.NewReader("is_test\n0\n0\n"), "one.csv")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := one.TrainTest(2, 0); err == nil || !strings.Contains(err.Error(), `column 1 ("is_test") marks no test rows`) {
		t.Errorf("empty test part: err = %v", err)
	}
	_, err = ReadMaskFile(strings.NewReader("a\n0\n2\n"), "bad.csv")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || pe.Column != 1 {
		t.Errorf("value 2: err = %v", err)
	}
}

// TestSharedMaskFileSplits applies a real UCI mask file when SOLVEGP_DATA
// names the shared data folder (skipped otherwise): every split's test
// rows are about a tenth of the rows and the splits' test parts partition
// the rows.
func TestSharedMaskFileSplits(t *testing.T) {
	dir := os.Getenv("SOLVEGP_DATA")
	if dir == "" {
		t.Skip("SOLVEGP_DATA not set")
	}
	path := filepath.Join(dir, "elevators_test_mask.csv.gz")
	m, err := LoadMaskFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const n = 16599
	seen := make([]int, n)
	for k := range m.Masks {
		train, test, err := m.TrainTest(n, k)
		if err != nil {
			t.Fatal(err)
		}
		if len(train)+len(test) != n || len(test) < n/11 || len(test) > n/9 {
			t.Fatalf("split %d: %d train, %d test", k, len(train), len(test))
		}
		for _, i := range test {
			seen[i]++
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("row %d is a test row in %d splits", i, c)
		}
	}
}

func TestRandomTrainTest(t *testing.T) {
	train, test, err := RandomTrainTest(10, 0.3, 7)
	if err != nil || len(train) != 7 || len(test) != 3 {
		t.Fatalf("train %v test %v err %v", train, test, err)
	}
	train2, test2, _ := RandomTrainTest(10, 0.3, 7)
	if !equalInts(train, train2) || !equalInts(test, test2) {
		t.Fatal("same seed, different partition")
	}
	for _, f := range []float64{0, 1, -0.1, 2} {
		if _, _, err := RandomTrainTest(10, f, 1); err == nil {
			t.Errorf("fraction %v accepted", f)
		}
	}
	if _, _, err := RandomTrainTest(3, 0.1, 1); err == nil || !strings.Contains(err.Error(), "rounds to no test rows") {
		t.Errorf("err = %v", err)
	}
}

func TestWriteRowsRoundTrip(t *testing.T) {
	in := "a,y,b\n0.1,1e-300,3\n-2.5,7,4\n1,2,3\n"
	tab, err := ReadCSV(strings.NewReader(in), "in.csv", Options{Target: 2})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteRows(&buf, tab, []int{2, 0}); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "a,y,b\n1,2,3\n0.1,1e-300,3\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	all, err := ReadCSV(strings.NewReader(in), "in.csv", Options{NoTarget: true})
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := WriteRows(&buf, all, []int{1}); err != nil || buf.String() != "a,y,b\n-2.5,7,4\n" {
		t.Fatalf("no target: %q %v", buf.String(), err)
	}
	if err := WriteRows(&buf, all, []int{3}); err == nil {
		t.Fatal("index out of range accepted")
	}
}
