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
