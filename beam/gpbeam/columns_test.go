package gpbeam

import (
	"testing"

	"github.com/solvegp/solvegp/gp/likelihood"
)

// TestParseShardErrors checks the messages of shards whose header does not
// name the model's inputs (a, b; target y) and of a bad label, with the
// file position of the label.
func TestParseShardErrors(t *testing.T) {
	gauss, _ := likelihood.NewGaussian(0.3)
	bern, _ := likelihood.NewBernoulli()
	gb, _ := newBundle(t, gauss, nil)
	bb, _ := newBundle(t, bern, nil)
	for _, c := range []struct {
		name, csv  string
		needTarget bool
		classifier bool
		want       string
	}{
		{"missing", "a,c\n1,2\n", false, false,
			`s.csv: the header does not name the model's inputs a, b: no column "b"; column 2 ("c") is not an input`},
		{"extra", "a,q,b,y\n1,2,3,4\n", true, false,
			`s.csv: the header does not name the model's inputs a, b: column 2 ("q") is not an input`},
		{"no b", "y,a\n1,2\n5,6\n", true, false,
			`s.csv: the header does not name the model's inputs a, b: no column "b"`},
		{"target is input", "a,b\n1,2\n", true, false,
			`s.csv: column 2 ("b"), taken for the target, is one of the model's inputs`},
		{"label", "a,b,y\n1,2,0\n3,4,2\n", true, true,
			`s.csv:3:3: target 2: Bernoulli labels must be 0 or 1`},
		{"label reordered", "y,b,a\n1,2,0\n0.5,4,2\n", true, true,
			`s.csv:3:1: target 0.5: Bernoulli labels must be 0 or 1`},
	} {
		b := gb
		if c.classifier {
			b = bb
		}
		_, err := parseShard(b, "s.csv", []byte(c.csv), c.needTarget)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %s", c.name, err, c.want)
		}
	}
}
