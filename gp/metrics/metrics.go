package metrics

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// RMSE returns the root mean squared error of the predictions mean for
// the targets y. Both must be finite. The result is finite whenever it is
// representable: residuals too large to square (beyond about 1e154) are
// scaled, and +Inf is returned only for an error beyond math.MaxFloat64.
func RMSE(y, mean []float64) (float64, error) {
	if len(y) == 0 || len(y) != len(mean) {
		return math.NaN(), fmt.Errorf("metrics: RMSE: %d targets, %d predictions", len(y), len(mean))
	}
	if err := finitePairs("RMSE", y, mean); err != nil {
		return math.NaN(), err
	}
	var s float64
	for i, v := range y {
		r := v - mean[i]
		s += r * r
	}
	if !math.IsInf(s, 0) {
		return math.Sqrt(s / float64(len(y))), nil
	}
	// Overflow: the residuals of halves (exact for these magnitudes)
	// scaled by the largest.
	var big float64
	for i, v := range y {
		big = math.Max(big, math.Abs(v/2-mean[i]/2))
	}
	s = 0
	for i, v := range y {
		r := (v/2 - mean[i]/2) / big
		s += r * r
	}
	return 2 * big * math.Sqrt(s/float64(len(y))), nil
}

// finitePairs returns an error naming the first non-finite target or mean.
func finitePairs(fn string, y, mean []float64) error {
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("metrics: %s: target %d is %v", fn, i, v)
		}
		if m := mean[i]; math.IsNaN(m) || math.IsInf(m, 0) {
			return fmt.Errorf("metrics: %s: mean %d is %v", fn, i, m)
		}
	}
	return nil
}

// GaussianLogLik returns the mean log predictive density
// (1/n)·Σ log N(y_i | mean_i, variance_i), the paper's test
// log-likelihood when variance includes the noise variance. Targets and
// means must be finite, and every variance positive and finite. As with
// RMSE, overflow in the terms or their sum is avoided: the result is −Inf
// only for a mean beyond −math.MaxFloat64.
func GaussianLogLik(y, mean, variance []float64) (float64, error) {
	if len(y) == 0 || len(y) != len(mean) || len(y) != len(variance) {
		return math.NaN(), fmt.Errorf("metrics: GaussianLogLik: %d targets, %d means, %d variances", len(y), len(mean), len(variance))
	}
	if err := finitePairs("GaussianLogLik", y, mean); err != nil {
		return math.NaN(), err
	}
	var s float64
	for i, v := range y {
		if !(variance[i] > 0) || math.IsInf(variance[i], 1) {
			return math.NaN(), fmt.Errorf("metrics: GaussianLogLik: variance %d is %v", i, variance[i])
		}
		r := v - mean[i]
		s += -0.5*math.Log(2*math.Pi*variance[i]) - 0.5*r*r/variance[i]
	}
	if !math.IsInf(s, 0) {
		return s / float64(len(y)), nil
	}
	// Overflow (r², 2π·variance or the sum): each term with the residual
	// standardized first and the logarithm split, over n as it is added. The mean is −Inf only when it is
	// beyond −math.MaxFloat64.
	s = 0
	n := float64(len(y))
	sn := math.Sqrt(n)
	for i, v := range y {
		// −0.5·r²/variance/n = −2·(z/√n)², z the standardized half residual.
		z := (v/2 - mean[i]/2) / math.Sqrt(variance[i]) / sn
		s += -0.5*(math.Log(2*math.Pi)+math.Log(variance[i]))/n - 2*z*z
	}
	return s, nil
}

// Objectiver is a model whose objective can be evaluated on a batch of a
// data set of nTotal points, such as *gp.Model (grad may be nil).
type Objectiver interface {
	Objective(x *mat.Dense, y []float64, nTotal int, grad []float64) (float64, error)
}

// FullBound evaluates the model's evidence lower bound on all of x, y in
// batches of at most batch rows (≤ 0: all at once): with batches b_i of a
// data set of n points, Σ_i (|b_i|/n)·Objective(b_i) = Σ_n E[log p] − KL.
// For ODVGP with column sampling the KL term is the model's stochastic
// estimate. Batching bounds the memory of one evaluation; the sum is the
// same bound as one full-batch evaluation up to rounding. A model with a
// NumOutputs() int method (gp.Model) takes that many targets per row.
func FullBound(m Objectiver, x *mat.Dense, y []float64, batch int) (float64, error) {
	n, d := x.Dims()
	w := 1
	if mo, ok := m.(interface{ NumOutputs() int }); ok {
		w = mo.NumOutputs()
	}
	if n*w != len(y) || n == 0 {
		return 0, fmt.Errorf("metrics: FullBound: %d rows of inputs and %d targets", n, len(y))
	}
	if batch <= 0 || batch > n {
		batch = n
	}
	var total float64
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		obj, err := m.Objective(x.Slice(lo, hi, 0, d).(*mat.Dense), y[lo*w:hi*w], n, nil)
		if err != nil {
			return 0, err
		}
		total += float64(hi-lo) / float64(n) * obj
	}
	return total, nil
}
