package benchutil

import "github.com/solvegp/solvegp/gp/data"

// The regression tables (Table 2 of the paper) hold out TestFrac of each
// data set for testing and ValidFrac of the rest for validation; the
// remaining 64% are the training rows.
const (
	TestFrac  = 0.2
	ValidFrac = 0.2
)

// SplitSeed is the seed of split k under the base seed: every model of a
// table, and the exact GP, sees the same rows in split k.
func SplitSeed(seed uint64, k int) uint64 { return seed*1000003 + uint64(k) }

// TableSplit returns split k of n rows under the base seed, as the
// regression tables draw it.
func TableSplit(n int, seed uint64, k int) (data.Split, error) {
	return data.RandomSplit(n, TestFrac, ValidFrac, SplitSeed(seed, k))
}
