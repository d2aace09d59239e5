package main

import (
	"flag"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/likelihood"
	gpmetrics "github.com/solvegp/solvegp/gp/metrics"
	"github.com/solvegp/solvegp/gp/modelfile"
)

// csvFlags are the flags that say how to read a CSV file.
type csvFlags struct {
	header string
	// targetSpec is -target as given; target is its column number for a
	// single target, targets its entries for several (multi-output).
	targetSpec string
	target     int
	targets    []string
}

func (c *csvFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.header, "header", "auto", "first line is a header: auto, yes or no")
	fs.StringVar(&c.targetSpec, "target", "0", "1-based column of the target (0: the last column), or a comma-separated list of the target columns of a multi-output model, by header name or 1-based number (a,b,c)")
}

func (c *csvFlags) options() (data.Options, error) {
	var o data.Options
	switch c.header {
	case "auto":
		o.Header = data.HeaderAuto
	case "yes", "true":
		o.Header = data.HeaderPresent
	case "no", "false":
		o.Header = data.HeaderAbsent
	default:
		return o, fmt.Errorf("-header %q: want auto, yes or no", c.header)
	}
	if err := c.parseTarget(); err != nil {
		return o, err
	}
	o.Target = c.target
	return o, nil
}

// metrics are the test statistics of a model on labelled data.
type metrics struct {
	N int `json:"n"`
	// RMSE and LogLik are in the original units of the target; RMSEStd
	// and LogLikStd on standardized targets (Gaussian models), the units
	// of the paper's tables.
	RMSE      *float64 `json:"rmse,omitempty"`
	LogLik    float64  `json:"log_lik"`
	RMSEStd   *float64 `json:"rmse_standardized,omitempty"`
	LogLikStd *float64 `json:"log_lik_standardized,omitempty"`
	Accuracy  *float64 `json:"accuracy,omitempty"`
	// Bound is the evidence lower bound of the model on this data set,
	// on standardized targets; BoundMC says it is a Monte Carlo estimate.
	Bound   *float64 `json:"bound,omitempty"`
	BoundMC bool     `json:"bound_monte_carlo,omitempty"`
	// Outputs are the statistics of each output of a multi-output model
	// (LogLik is then the mean over points of the sum over its outputs).
	Outputs []outputMetrics `json:"outputs,omitempty"`
}

func ptr(v float64) *float64 { return &v }

// evaluate computes the metrics of b on raw inputs x and targets y. If
// withBound is set it also computes the evidence lower bound.
func evaluate(b *modelfile.Bundle, x *mat.Dense, y []float64, withBound bool) (metrics, error) {
	n := len(y)
	if isMultiOutput(b) {
		n = rows(x)
	}
	m := metrics{N: n}
	p, err := b.Predictor(0)
	if err != nil {
		return m, err
	}
	pred, err := p.Predict(x)
	if err != nil {
		return m, err
	}
	lp, err := p.LogPredictive(x, y)
	if err != nil {
		return m, err
	}
	m.LogLik = mean(lp)
	_, c := pred.YMean.Dims()
	if isMultiOutput(b) {
		m.Outputs = evaluateOutputs(b, pred, y)
	} else if c == 1 || isHeteroscedastic(b.Model) {
		if isBernoulli(b.Model) {
			correct := 0
			for i, v := range y {
				if (pred.YMean.At(i, 0) > 0.5) == (v == 1) {
					correct++
				}
			}
			m.Accuracy = ptr(float64(correct) / float64(n))
		} else {
			var se float64
			for i, v := range y {
				r := v - pred.YMean.At(i, 0)
				se += r * r
			}
			m.RMSE = ptr(math.Sqrt(se / float64(n)))
			if s := b.Standardizer; s != nil && (s.YScale != 1 || s.YMean != 0) {
				m.RMSEStd = ptr(*m.RMSE / s.YScale)
				m.LogLikStd = ptr(m.LogLik - s.LogDensityOffset())
			}
		}
	} else {
		correct := 0
		for i, v := range y {
			row := pred.YMean.RawRowView(i)
			best := 0
			for j := range row {
				if row[j] > row[best] {
					best = j
				}
			}
			if float64(best) == v {
				correct++
			}
		}
		m.Accuracy = ptr(float64(correct) / float64(n))
	}
	if withBound {
		bound, err := fullBound(b, x, y)
		if err != nil {
			return m, err
		}
		m.Bound, m.BoundMC = ptr(bound), sampledLikelihood(b)
	}
	return m, nil
}

// isHeteroscedastic reports whether m's likelihood is the heteroscedastic
// Gaussian, whose two latent functions are a regression mean and a log
// noise variance, not classes.
func isHeteroscedastic(m *gp.Model) bool {
	if m == nil {
		return false
	}
	_, ok := m.Likelihood().(*likelihood.Heteroscedastic)
	return ok
}

func isBernoulli(m *gp.Model) bool {
	if m == nil {
		return false
	}
	_, ok := m.Likelihood().(*likelihood.Bernoulli)
	return ok
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// boundBatch is the batch size of full-data bound evaluations.
const boundBatch = 4096

// sampledLikelihood reports whether the model's likelihood estimates its
// expectations by Monte Carlo (softmax), so that its bound is an estimate
// that differs from call to call.
func sampledLikelihood(b *modelfile.Bundle) bool {
	if b.Model == nil {
		return false // a model of separate outputs, which train fits with Gaussian likelihoods
	}
	_, ok := b.Model.Likelihood().(*likelihood.Softmax)
	return ok
}

// mcNote is the note printed after a bound that is a Monte Carlo estimate.
func mcNote(mc bool) string {
	if mc {
		return "; a Monte Carlo estimate, as the softmax likelihood is sampled"
	}
	return ""
}

// fullBound evaluates the evidence lower bound of the bundle's model on all
// of raw x, y (standardized first), in batches: with batches b_i of a data
// set of n points, Σ_i (|b_i|/n)·Objective(b_i) = Σ_n E[log p] − KL.
func fullBound(b *modelfile.Bundle, x *mat.Dense, y []float64) (float64, error) {
	xs := mat.DenseCopyOf(x)
	ys := append([]float64(nil), y...)
	if s := b.Standardizer; s != nil {
		if err := s.TransformX(xs); err != nil {
			return 0, err
		}
		s.TransformY(ys)
	}
	if b.Separate != nil {
		return gpmetrics.FullBound(b.Separate, xs, ys, boundBatch)
	}
	return gpmetrics.FullBound(b.Model, xs, ys, boundBatch)
}
