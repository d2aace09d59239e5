package modelfile

import (
	"errors"
	"slices"
	"testing"
)

func TestInputNames(t *testing.T) {
	b := &Bundle{Meta: Meta{InputNames: []string{"a", "b", "c"}}}
	if got := b.InputNames(3); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("InputNames(3) = %q", got)
	}
	if got := b.InputNames(2); got != nil {
		t.Errorf("InputNames(2) of three names = %q, want nil", got)
	}
	b.Meta.InputNames = []string{"a", "b", "a"}
	if got := b.InputNames(3); got != nil {
		t.Errorf("InputNames with a repeated name = %q, want nil", got)
	}
}

func TestMatchHeader(t *testing.T) {
	inputs := []string{"a", "b"}
	for _, c := range []struct {
		header []string
		target int
		cols   []int
		msg    string
	}{
		{[]string{"a", "b"}, -1, []int{0, 1}, ""},
		{[]string{"y", "b", "a"}, 0, []int{2, 1}, ""},
		{[]string{"b", "a", "a"}, 2, []int{1, 0}, ""}, // the target column is left out even if it names an input
		{[]string{"a", "c"}, -1, nil, `the header does not name the model's inputs a, b: no column "b"; column 2 ("c") is not an input`},
		{[]string{"x", "y", "t"}, 2, nil, `the header does not name the model's inputs a, b: no column "a" or "b"; columns 1 ("x") and 2 ("y") are not inputs`},
		{[]string{"a", "b", "a"}, -1, nil, `the header names the input "a" twice, in columns 1 and 3`},
	} {
		cols, err := MatchHeader(c.header, c.target, inputs)
		if c.msg == "" {
			if err != nil || !slices.Equal(cols, c.cols) {
				t.Errorf("MatchHeader(%q, %d) = %v, %v, want %v", c.header, c.target, cols, err, c.cols)
			}
			continue
		}
		var he *HeaderError
		if !errors.As(err, &he) || err.Error() != c.msg || cols != nil {
			t.Errorf("MatchHeader(%q, %d) = %v, %v, want a *HeaderError %q", c.header, c.target, cols, err, c.msg)
		}
	}
}
