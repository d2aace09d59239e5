package data

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Summary is what one streaming pass over shards learns: the row count,
// the standardization statistics and a uniform random sample of rows.
type Summary struct {
	Rows, Dim int
	// Names holds the column names of the first shard (inputs, then the
	// target), or nil if it has none.
	Names []string
	// Std holds the means and population standard deviations of the
	// inputs and the target, by the rule of FitStandardizer.
	Std *Standardizer
	// SampleX and SampleY hold min(k, Rows) rows drawn uniformly without
	// replacement (a reservoir sample), in original units, for example
	// for k-means initialization of inducing points.
	SampleX *mat.Dense
	SampleY []float64
}

// welford accumulates a column's mean and sum of squared deviations
// (Welford's update) and its largest absolute value.
type welford struct {
	mean, m2, maxAbs float64
}

func (w *welford) add(v float64, n int) {
	delta := v - w.mean
	w.mean += delta / float64(n)
	w.m2 += delta * (v - w.mean)
	w.maxAbs = math.Max(w.maxAbs, math.Abs(v))
}

// scale is the population standard deviation, or 1 for a column that
// counts as constant (see Standardizer).
func (w *welford) scale(n int) float64 {
	sc := math.Sqrt(math.Max(w.m2/float64(n), 0))
	if !(sc > 1e-12*w.maxAbs) || sc == 0 {
		return 1
	}
	return sc
}

// Summarize reads the shards once, in order, and returns their Summary
// with a reservoir sample of k rows (k = 0: none) drawn by Vitter's
// Algorithm R from a PCG generator seeded by seed. The statistics are
// Welford's one-pass recurrences, which agree with FitStandardizer's
// two-pass compensated ones to rounding (a relative difference of a few
// ulps times log of the row count for well-scaled data); values beyond
// about 1e150, whose squares overflow, are refused.
func Summarize(shards []Shard, k int, seed uint64) (*Summary, error) {
	if k < 0 {
		return nil, fmt.Errorf("data: Summarize: negative sample size %d", k)
	}
	var cols []welford
	var yw welford
	n, d := 0, -1
	var sx, sy []float64
	rng := rand.New(rand.NewPCG(seed, 0x5a3971e))
	var names []string
	err := scanShards(shards, func(sh Shard, x []float64, y float64, r RowReader) error {
		if d < 0 {
			if nr, ok := r.(interface{ Names() []string }); ok {
				names = nr.Names()
			}
			d = len(x)
			cols = make([]welford, d)
		} else if len(x) != d {
			return fmt.Errorf("data: %s: %d input columns, the first shard has %d", sh.Name(), len(x), d)
		}
		for _, v := range append(x[:len(x):len(x)], y) {
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e150 {
				return fmt.Errorf("data: %s: row %d of the data set: value %v is not finite or too large for one-pass statistics", sh.Name(), n+1, v)
			}
		}
		n++
		for j, v := range x {
			cols[j].add(v, n)
		}
		yw.add(y, n)
		switch {
		case n <= k:
			sx = append(sx, x...)
			sy = append(sy, y)
		case k > 0:
			if j := rng.IntN(n); j < k {
				copy(sx[j*d:(j+1)*d], x)
				sy[j] = y
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errors.New("data: Summarize: no rows")
	}
	std := &Standardizer{XMean: make([]float64, d), XScale: make([]float64, d), YMean: yw.mean, YScale: yw.scale(n)}
	for j := range cols {
		std.XMean[j], std.XScale[j] = cols[j].mean, cols[j].scale(n)
	}
	sum := &Summary{Rows: n, Dim: d, Names: names, Std: std, SampleY: sy}
	if len(sy) > 0 {
		sum.SampleX = mat.NewDense(len(sy), d, sx)
	}
	return sum, nil
}
