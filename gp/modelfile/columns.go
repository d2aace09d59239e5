package modelfile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// InputNames returns the names of the model's d inputs as training
// recorded them (Meta.InputNames), or nil if it did not record d of them or
// two are the same: the columns of a table can then only be taken by
// position.
func (b *Bundle) InputNames(d int) []string {
	names := b.Meta.InputNames
	if len(names) != d {
		return nil
	}
	for i, s := range names {
		if slices.Contains(names[:i], s) {
			return nil
		}
	}
	return names
}

// HeaderError reports a header that does not name a model's inputs: it
// names one twice (Twice), or some inputs have no column (Missing) or some
// columns name no input (Unknown).
type HeaderError struct {
	Header  []string
	Inputs  []string
	Twice   string // an input named twice, "" if none
	TwiceAt [2]int // its 0-based columns
	Missing []string
	Unknown []int // 0-based columns, the target column left out
}

// Error says what the header lacks or has too much of, with 1-based
// column numbers.
func (e *HeaderError) Error() string {
	if e.Twice != "" {
		return fmt.Sprintf("the header names the input %q twice, in columns %d and %d", e.Twice, e.TwiceAt[0]+1, e.TwiceAt[1]+1)
	}
	var parts []string
	if len(e.Missing) > 0 {
		q := make([]string, len(e.Missing))
		for i, name := range e.Missing {
			q[i] = strconv.Quote(name)
		}
		parts = append(parts, "no column "+joinList(q, "or"))
	}
	if len(e.Unknown) > 0 {
		cols := make([]string, len(e.Unknown))
		for i, k := range e.Unknown {
			cols[i] = fmt.Sprintf("%d (%q)", k+1, e.Header[k])
		}
		if len(cols) == 1 {
			parts = append(parts, "column "+cols[0]+" is not an input")
		} else {
			parts = append(parts, "columns "+joinList(cols, "and")+" are not inputs")
		}
	}
	return fmt.Sprintf("the header does not name the model's inputs %s: %s", strings.Join(e.Inputs, ", "), strings.Join(parts, "; "))
}

// joinList joins items as "a", "a or b", "a, b or c" with conj.
func joinList(items []string, conj string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + conj + " " + items[len(items)-1]
}

// MatchHeader returns the 0-based column of header that holds each of the
// inputs, in their order, leaving out column target (-1 for none). Every
// other column must name an input and each input must be named once;
// otherwise it returns a *HeaderError.
func MatchHeader(header []string, target int, inputs []string) ([]int, error) {
	cols := make([]int, len(inputs))
	e := &HeaderError{Header: header, Inputs: inputs}
	for j, name := range inputs {
		cols[j] = -1
		for k, h := range header {
			if k == target || h != name {
				continue
			}
			if cols[j] >= 0 {
				e.Twice, e.TwiceAt = name, [2]int{cols[j], k}
				return nil, e
			}
			cols[j] = k
		}
		if cols[j] < 0 {
			e.Missing = append(e.Missing, name)
		}
	}
	for k, h := range header {
		if k != target && !slices.Contains(inputs, h) {
			e.Unknown = append(e.Unknown, k)
		}
	}
	if e.Missing != nil || e.Unknown != nil {
		return nil, e
	}
	return cols, nil
}
