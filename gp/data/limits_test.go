package data

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// endless yields n bytes of digits and no line break.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), e.n)
	for i := range p[:k] {
		p[i] = '1'
	}
	e.n -= k
	return int(k), nil
}

// TestLongLineRefusedBounded: a 200 MB input that is one line is refused
// after reading about MaxLineBytes, with little memory and time.
func TestLongLineRefusedBounded(t *testing.T) {
	src := &endless{n: 200 << 20}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := ReadCSV(src, "big.csv", Options{Header: HeaderAbsent})
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 1 || !strings.Contains(err.Error(), "longer than 1048576 bytes") {
		t.Fatalf("err = %v, want a ParseError at line 1 about the line limit", err)
	}
	if read := int64(200<<20) - src.n; read > 4*MaxLineBytes {
		t.Errorf("read %d bytes before refusing, want at most %d", read, 4*MaxLineBytes)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("allocated %d bytes, want at most 32 MiB", alloc)
	}
	if elapsed > 5*time.Second {
		t.Errorf("took %v", elapsed)
	}
}

func TestLongLinePositionsAndLimitEdge(t *testing.T) {
	ok := strings.Repeat("0", MaxLineBytes-3) + "1,2\n"
	tab, err := ReadCSV(strings.NewReader("a,b\n"+ok), "ok.csv", Options{})
	if err != nil || len(tab.Y) != 1 {
		t.Fatalf("a line of exactly MaxLineBytes: %v", err)
	}
	over := "a,b\n" + strings.Repeat("0", MaxLineBytes-2) + "1,2\n"
	if _, err := ReadCSV(strings.NewReader(over), "over.csv", Options{}); err == nil || !strings.Contains(err.Error(), "over.csv:2: line longer") {
		t.Fatalf("a line of MaxLineBytes+1: err = %v", err)
	}
	long := "a,b\n1,2\n\n" + strings.Repeat("1", MaxLineBytes) + "1,2\n3,4\n"
	_, err = ReadCSV(strings.NewReader(long), "long.csv", Options{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 4 {
		t.Fatalf("err = %v, want line 4", err)
	}
	// A quoted field with many line breaks is bounded as a record.
	quoted := "a,b\n\"" + strings.Repeat("1\n", MaxLineBytes) + "\",2\n"
	if _, err := ReadCSV(strings.NewReader(quoted), "q.csv", Options{}); err == nil || !strings.Contains(err.Error(), "record") {
		t.Fatalf("err = %v, want the record limit", err)
	}
	_, err = ReadTestMasks(&endless{n: 10 << 20}, "mask.csv")
	if !errors.As(err, &pe) || pe.Line != 1 {
		t.Fatalf("masks: err = %v", err)
	}
}

func TestDuplicateHeaderNames(t *testing.T) {
	_, err := ReadCSV(strings.NewReader("x,x,y\n1,2,3\n"), "d.csv", Options{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 1 || pe.Column != 2 || !strings.Contains(err.Error(), `duplicate column name "x" (columns 1 and 2)`) {
		t.Fatalf("err = %v", err)
	}
	_, err = ReadCSV(strings.NewReader("a, y ,y\n1,2,3\n"), "d.csv", Options{Header: HeaderPresent})
	if !errors.As(err, &pe) || pe.Column != 3 {
		t.Fatalf("trimmed duplicate: err = %v", err)
	}
	if _, err := ReadCSV(strings.NewReader("a,,,y\n1,2,3,4\n"), "e.csv", Options{Header: HeaderPresent}); err != nil {
		t.Fatalf("empty names are missing names, not duplicates: %v", err)
	}
}

// TestManyBlankLines: blank lines are not a long record, and the lines
// after them keep their numbers.
func TestManyBlankLines(t *testing.T) {
	const blank = 3 * MaxLineBytes
	in := "a,b\n1,2\n" + strings.Repeat("\n", blank/2) + strings.Repeat("\r\n", blank/4) + "3,4\n5,x\n"
	_, err := ReadCSV(strings.NewReader(in), "blank.csv", Options{})
	var pe *ParseError
	if want := 3 + blank/2 + blank/4 + 1; !errors.As(err, &pe) || pe.Line != want || pe.Column != 2 {
		t.Fatalf("err = %v, want line %d column 2", err, want)
	}
}
