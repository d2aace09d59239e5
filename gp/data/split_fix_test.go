package data

import (
	"errors"
	"strings"
	"testing"
)

// TestReadTestMasksExactlyOne checks that a row that is a test row in two
// splits or in none is an error naming its line and row.
func TestReadTestMasksExactlyOne(t *testing.T) {
	for _, tc := range []struct {
		in        string
		line, col int
		want      string
	}{
		{"split0,split1,split2\n1,0,0\n0,1,1\n", 3, 3, `row 1 (from 0) is a test row in both split "split1" and split "split2"`},
		{"split0,split1\n1,0\n\n0,0\n", 4, 0, "row 1 (from 0) is a test row in no split"},
		{"0,1\n1,1\n", 2, 2, "row 1 (from 0) is a test row in both split column 1 and split column 2"},
		{"split0\n1\n0\n", 3, 0, "row 1 (from 0) is a test row in no split"},
	} {
		_, err := ReadTestMasks(strings.NewReader(tc.in), "m.csv")
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != tc.line || pe.Column != tc.col || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want line %d col %d and %q", tc.in, err, tc.line, tc.col, tc.want)
		}
	}
	masks, err := ReadTestMasks(strings.NewReader("split0,split1\n0,1\n1,0\n"), "m.csv")
	if err != nil || !masks[1][0] || !masks[0][1] || masks[0][0] || masks[1][1] {
		t.Errorf("valid masks: %v %v", masks, err)
	}
}
