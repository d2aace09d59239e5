package train

import (
	"fmt"
	"math"
)

// RMSE returns the root mean squared error of the predictions mean for
// the targets y.
func RMSE(y, mean []float64) (float64, error) {
	if len(y) == 0 || len(y) != len(mean) {
		return math.NaN(), fmt.Errorf("train: RMSE: %d targets, %d predictions", len(y), len(mean))
	}
	var s float64
	for i, v := range y {
		r := v - mean[i]
		s += r * r
	}
	return math.Sqrt(s / float64(len(y))), nil
}

// GaussianLogLik returns the mean log predictive density
// (1/n)·Σ log N(y_i | mean_i, variance_i), the paper's test
// log-likelihood when variance includes the noise variance. Every
// variance must be positive.
func GaussianLogLik(y, mean, variance []float64) (float64, error) {
	if len(y) == 0 || len(y) != len(mean) || len(y) != len(variance) {
		return math.NaN(), fmt.Errorf("train: GaussianLogLik: %d targets, %d means, %d variances", len(y), len(mean), len(variance))
	}
	var s float64
	for i, v := range y {
		if !(variance[i] > 0) || math.IsInf(variance[i], 1) {
			return math.NaN(), fmt.Errorf("train: GaussianLogLik: variance %d is %v", i, variance[i])
		}
		r := v - mean[i]
		s += -0.5*math.Log(2*math.Pi*variance[i]) - 0.5*r*r/variance[i]
	}
	return s / float64(len(y)), nil
}
