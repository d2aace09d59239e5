package data

import (
	"os"
	"testing"
)

// TestSharedUCI loads the project's real UCI files when SOLVEGP_DATA names
// their folder (for example ../shared/data); it is skipped otherwise, so
// the default test run needs no files outside the repository.
func TestSharedUCI(t *testing.T) {
	dir := os.Getenv("SOLVEGP_DATA")
	if dir == "" {
		t.Skip("SOLVEGP_DATA not set")
	}
	want := map[string][2]int{
		"elevators": {16599, 18}, "bike": {17379, 17}, "kin40k": {40000, 8},
		"protein": {45730, 9}, "keggdirected": {48827, 20}, "keggundirected": {63608, 27},
	}
	for _, name := range UCIDatasets() {
		tab, err := LoadUCI(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		n, d := tab.X.Dims()
		if w := want[name]; n != w[0] || d != w[1] {
			t.Errorf("%s: %d×%d, want %d×%d", name, n, d, w[0], w[1])
		}
		masks, err := LoadUCIMasks(dir, name, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(masks) != 10 {
			t.Errorf("%s: %d masks", name, len(masks))
		}
		s, err := FitStandardizer(tab.X, tab.Y)
		if err != nil {
			t.Fatal(err)
		}
		for j, sc := range s.XScale {
			if sc == 1 {
				t.Logf("%s: column %d treated as constant", name, j+1)
			}
		}
	}
}
