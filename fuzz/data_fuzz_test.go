package fuzz

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/solvegp/solvegp/gp/data"
)

// FuzzDataCSV feeds arbitrary bytes (plain or gzip) to the CSV reader with
// fuzzer-chosen options. It must return a table whose every value is
// finite and whose shapes agree, or a *data.ParseError naming the input —
// never panic.
func FuzzDataCSV(f *testing.F) {
	f.Add([]byte("a,b,y\n1,2,3\n4,5,6\n"), uint8(0), int8(0), false)
	f.Add([]byte("1,2\n3\n"), uint8(2), int8(1), false)
	f.Add([]byte("x\n-3\n1e308\n"), uint8(1), int8(0), true)
	f.Add([]byte("a,b\n1,NaN\n"), uint8(0), int8(2), false)
	f.Add([]byte("\"a\",\"b\"\n\"1\",2\n"), uint8(0), int8(-1), false)
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, uint8(0), int8(0), false)
	f.Fuzz(func(t *testing.T, in []byte, header uint8, target int8, noTarget bool) {
		opts := data.Options{Header: data.HeaderMode(header % 4), Target: int(target), NoTarget: noTarget}
		tab, err := data.ReadCSV(bytes.NewReader(in), "fuzz.csv", opts)
		if err != nil {
			var pe *data.ParseError
			if header%4 != 3 && !errors.As(err, &pe) {
				t.Fatalf("error is not a *ParseError: %v", err)
			}
			if pe != nil && pe.File != "fuzz.csv" {
				t.Fatalf("error names file %q", pe.File)
			}
			return
		}
		r, c := tab.X.Dims()
		if r < 1 || c < 1 {
			t.Fatalf("empty table returned without error")
		}
		if noTarget && tab.Y != nil || !noTarget && len(tab.Y) != r {
			t.Fatalf("targets %d for %d rows (noTarget %v)", len(tab.Y), r, noTarget)
		}
		for _, v := range tab.X.RawMatrix().Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite input value %v", v)
			}
		}
		for _, v := range tab.Y {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite target %v", v)
			}
		}
		if tab.Names != nil && len(tab.Names) != c+len(tab.Y)/max(r, 1) {
			t.Fatalf("%d names for %d columns", len(tab.Names), c)
		}
	})
}

// FuzzDataTestMasks reads arbitrary bytes as a test-mask file: the result
// is either an error or masks of 0/1 values with one entry per row.
func FuzzDataTestMasks(f *testing.F) {
	f.Add([]byte("split0,split1\n1,0\n0,1\n"))
	f.Add([]byte("split0\n2\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, in []byte) {
		masks, err := data.ReadTestMasks(bytes.NewReader(in), "mask.csv")
		if err != nil {
			return
		}
		if len(masks) == 0 {
			t.Fatal("no masks and no error")
		}
		for _, m := range masks {
			if len(m) != len(masks[0]) || len(m) == 0 {
				t.Fatal("masks of different or zero length")
			}
		}
	})
}

// FuzzDataMaskFile feeds arbitrary bytes and a split index to the mask-file
// reader and MaskFile.TrainTest: masks are rectangular, TrainTest
// partitions the rows into two non-empty parts or refuses, and every error
// is a *data.ParseError — never a panic.
func FuzzDataMaskFile(f *testing.F) {
	for _, s := range []string{"split0,split1\n1,0\n0,1\n", "0\n1\n", "a,a\n1,0\n", "x\n2\n", "", "\"1\n", "1,0\n0\n"} {
		f.Add([]byte(s), 0)
	}
	f.Add([]byte("split0,split1\n1,0\n0,1\n1,0\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, k int) {
		m, err := data.ReadMaskFile(bytes.NewReader(in), "f.csv")
		var pe *data.ParseError
		if err != nil {
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *data.ParseError", err)
			}
			return
		}
		n := len(m.Lines)
		for _, col := range m.Masks {
			if len(col) != n {
				t.Fatal("ragged masks")
			}
		}
		train, test, err := m.TrainTest(n, k)
		if err != nil {
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *data.ParseError", err)
			}
			return
		}
		if len(train) == 0 || len(test) == 0 || len(train)+len(test) != n {
			t.Fatalf("%d + %d rows, want %d, both non-empty", len(train), len(test), n)
		}
		for _, i := range test {
			if !m.Masks[k][i] {
				t.Fatalf("row %d is not marked but is a test row", i)
			}
		}
	})
}
