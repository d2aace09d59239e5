package data

import (
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestPrepareSplitInvariant checks that Prepare refuses a split whose sets
// overlap, repeat an index or hold one out of range.
func TestPrepareSplitInvariant(t *testing.T) {
	x := mat.NewDense(6, 1, []float64{1, 2, 3, 4, 5, 6})
	tab := &Table{X: x, Y: []float64{1, 3, 2, 5, 4, 6}}
	for _, tc := range []struct {
		s    Split
		want string
	}{
		{Split{Train: []int{0, 1, 2}, Valid: []int{2}, Test: []int{4}}, "row 2 is in both the training and the validation rows"},
		{Split{Train: []int{0, 1, 2}, Valid: []int{3}, Test: []int{1}}, "row 1 is in both the training and the test rows"},
		{Split{Train: []int{0, 1, 2}, Valid: []int{3, 4}, Test: []int{4}}, "row 4 is in both the validation and the test rows"},
		{Split{Train: []int{0, 1, 1, 2}}, "training rows: row 1 appears twice"},
		{Split{Train: []int{0, 1}, Test: []int{5, 5}}, "test rows: row 5 appears twice"},
		{Split{Train: []int{0, 1}, Valid: []int{6}}, "validation rows: index 6 out of range [0, 6)"},
		{Split{Train: []int{-1, 1}}, "training rows: index -1 out of range"},
	} {
		_, err := Prepare(tab, tc.s)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.want)
		}
	}
	// A split that leaves rows out is fine.
	if _, err := Prepare(tab, Split{Train: []int{0, 2, 3}, Test: []int{5}}); err != nil {
		t.Error(err)
	}
}
