package data

import (
	"errors"
	"strings"
	"testing"
)

// wantParseError checks that reading in fails with a *ParseError at line
// and col whose message contains msg.
func wantParseError(t *testing.T, in string, opts Options, line, col int, msg string) {
	t.Helper()
	_, err := ReadCSV(strings.NewReader(in), "f.csv", opts)
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Errorf("%q: error %v is not a *ParseError", in, err)
		return
	}
	if pe.Line != line || pe.Column != col || !strings.Contains(pe.Error(), msg) {
		t.Errorf("%q: got %q (line %d col %d), want line %d col %d containing %q", in, pe.Error(), pe.Line, pe.Column, line, col, msg)
	}
}

// TestHeaderAutoEmptyField checks that an empty field on the first line is
// no evidence of a header: the line is data, and its missing value is
// reported where it is.
func TestHeaderAutoEmptyField(t *testing.T) {
	wantParseError(t, "1,,3\n4,5,6\n7,8,9\n", Options{}, 1, 2, "missing value")
	wantParseError(t, "1,2,\n3,4,\n", Options{}, 1, 3, "missing value")
	wantParseError(t, " 1 , ,3\n4,5,6\n", Options{}, 1, 2, "missing value")
	// A non-empty name still makes a header, even next to an empty one.
	tab, err := ReadCSV(strings.NewReader("a,,c\n1,2,3\n"), "f.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(tab.Names, "|") != "a||c" || tab.Lines[0] != 2 {
		t.Errorf("names %q lines %v", tab.Names, tab.Lines)
	}
	// The same rule for test masks.
	_, err = ReadTestMasks(strings.NewReader("1,\n0,1\n"), "m.csv")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 1 || pe.Column != 2 {
		t.Errorf("mask with a missing value on line 1: %v", err)
	}
}

// TestMalformedCSVField checks that a malformed-CSV error names the field,
// not the byte, at which the input goes wrong.
func TestMalformedCSVField(t *testing.T) {
	for _, c := range []struct {
		in        string
		line, col int
	}{
		{"a,b\n1,\"2\n", 2, 2},                      // unterminated quote at the end
		{"a,b,c\n1,22x\"3,4\n", 2, 2},               // bare quote
		{"a,b,c\n11111,\"2\"x,3\n", 2, 2},           // text after a closing quote
		{"a,b,c\n\n  \n111,\"2,2\",3\"\n", 4, 3},    // after blank lines; comma in quotes
		{"a,b,c\n1,\"2\n2\",33\"x\n", 3, 3},         // record over two lines
		{"a,b,c\r\n1,2,3\r\n44,\"5\"6,7\r\n", 3, 2}, // CRLF
	} {
		wantParseError(t, c.in, Options{}, c.line, c.col, "malformed CSV")
	}
}

// TestWhitespaceOnlyLines checks that lines of spaces or tabs only are
// skipped like empty lines, wherever they are.
func TestWhitespaceOnlyLines(t *testing.T) {
	for _, in := range []string{
		"a,b\n   \n1,2\n\t\n3,4\n \t \n",
		"  \na,b\n1,2\n3,4\n",
		"\t\r\n1,2\r\n   \r\n3,4\r\n",
	} {
		tab, err := ReadCSV(strings.NewReader(in), "f.csv", Options{})
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if r, _ := tab.X.Dims(); r != 2 || tab.Y[0] != 2 || tab.Y[1] != 4 {
			t.Errorf("%q: X rows %d Y %v", in, r, tab.Y)
		}
	}
	tab, err := ReadCSV(strings.NewReader("a,b\n   \n1,2\n\t\n3,4\n"), "f.csv", Options{})
	if err == nil && (tab.Lines[0] != 3 || tab.Lines[1] != 5) {
		t.Errorf("lines %v, want [3 5]", tab.Lines)
	}
	// A quoted empty field in a one-column file is a missing value, not a
	// blank line.
	_, err = ReadCSV(strings.NewReader("x\n1\n\"\"\n"), "f.csv", Options{NoTarget: true})
	if err == nil {
		t.Error("quoted empty field skipped")
	}
	// One column: a line of spaces is blank, too.
	tab, err = ReadCSV(strings.NewReader("x\n1\n  \n2\n"), "f.csv", Options{NoTarget: true})
	if err != nil || tab.X.RawMatrix().Rows != 2 {
		t.Errorf("one column with a blank line: %v", err)
	}
}

func TestMalformedCSVFieldEOF(t *testing.T) {
	wantParseError(t, "a,b\n1,\"2\n\n", Options{}, 3, 2, "malformed CSV")
	wantParseError(t, "a,b\n1,\"2", Options{}, 2, 2, "malformed CSV")
	wantParseError(t, "\"a", Options{}, 1, 1, "malformed CSV")
}
