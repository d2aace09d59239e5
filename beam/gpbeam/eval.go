package gpbeam

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/modelfile"
)

func init() {
	register.DoFn2x2[context.Context, Shard, Sums, error](&evalFn{})
	register.Combiner3[Sums, Sums, Metrics](&metricsFn{})
	register.DoFn2x1[context.Context, Metrics, error](&writeMetricsFn{})
}

// Sums are the sufficient statistics of the test metrics over a set of
// rows: their count, the exact sums of the squared errors and of the log
// predictive densities, and the number classified correctly. Sums of
// disjoint sets of rows add.
type Sums struct {
	N       int64
	SqErr   []float64 // partials of an exactSum
	LogLik  []float64 // partials of an exactSum
	Correct int64
}

// Metrics are the test metrics of a model over all the rows, in the
// original units of the target, as solvegp eval prints them (without the
// bound). The Has fields say which of the optional ones apply.
type Metrics struct {
	N              int64   `json:"n"`
	HasRMSE        bool    `json:"has_rmse"`
	RMSE           float64 `json:"rmse,omitempty"`
	LogLik         float64 `json:"log_lik"`
	HasStandard    bool    `json:"has_standardized"`
	RMSEStandard   float64 `json:"rmse_standardized,omitempty"`
	LogLikStandard float64 `json:"log_lik_standardized,omitempty"`
	HasAccuracy    bool    `json:"has_accuracy"`
	Accuracy       float64 `json:"accuracy,omitempty"`
}

// WriteText prints m in the format of solvegp eval.
func (m Metrics) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "n          %d\n", m.N)
	if m.HasRMSE {
		fmt.Fprintf(w, "RMSE       %.6g\n", m.RMSE)
	}
	fmt.Fprintf(w, "log-lik    %.6g (mean per point)\n", m.LogLik)
	if m.HasStandard {
		fmt.Fprintf(w, "standardized: RMSE %.6g, log-lik %.6g\n", m.RMSEStandard, m.LogLikStandard)
	}
	if m.HasAccuracy {
		fmt.Fprintf(w, "accuracy   %.6g\n", m.Accuracy)
	}
	return err
}

// Eval adds to s the evaluation of the model in modelJSON on the labelled
// shards (each with a target column, chosen as solvegp eval chooses it):
// per-shard Sums, added by a CombineFn into one Metrics element.
func Eval(s beam.Scope, modelJSON []byte, shards []Shard) (beam.PCollection, error) {
	s = s.Scope("gpbeam.Eval")
	b, err := modelfile.Unmarshal(modelJSON)
	if err != nil {
		return beam.PCollection{}, err
	}
	if err := checkSingleOutput(b); err != nil {
		return beam.PCollection{}, err
	}
	fn := &metricsFn{Classifier: isClassifier(b)}
	if st := b.Standardizer; st != nil && !fn.Classifier && (st.YScale != 1 || st.YMean != 0) {
		fn.Standardized, fn.YScale, fn.LogOffset = true, st.YScale, st.LogDensityOffset()
	}
	sums := beam.ParDo(s, &evalFn{Model: modelJSON}, beam.CreateList(s, shards))
	return beam.Combine(s, fn, sums), nil
}

// isClassifier reports whether b's metrics are an accuracy rather than an
// RMSE: several latent functions (classes) or a Bernoulli likelihood.
func isClassifier(b *modelfile.Bundle) bool {
	_, _, _, c := b.Model.Dims()
	_, bern := b.Model.Likelihood().(*likelihood.Bernoulli)
	return c > 1 || bern
}

// evalFn computes the Sums of one shard.
type evalFn struct {
	Model []byte // the model file

	p          *modelfile.Predictor
	b          *modelfile.Bundle
	classifier bool
}

// Setup decodes the model once per worker instance.
func (f *evalFn) Setup() error {
	b, err := modelfile.Unmarshal(f.Model)
	if err != nil {
		return err
	}
	if err := checkSingleOutput(b); err != nil {
		return err
	}
	p, err := b.Predictor(0)
	if err != nil {
		return err
	}
	f.b, f.p, f.classifier = b, p, isClassifier(b)
	return nil
}

// ProcessElement returns the Sums of the rows of one shard.
func (f *evalFn) ProcessElement(ctx context.Context, sh Shard) (Sums, error) {
	buf, err := readFile(ctx, sh.Path)
	if err != nil {
		return Sums{}, fmt.Errorf("%s: %w", sh.Path, err)
	}
	tab, err := parseShard(f.b, sh.Path, buf, true)
	if err != nil {
		return Sums{}, err
	}
	return shardSums(f.p, tab, f.classifier)
}

// shardSums computes the Sums of tab's rows with the rules of solvegp
// eval: a Bernoulli prediction is right when p > 0.5 agrees with label 1,
// a C-class one when the most probable class (the first of equals) is the
// label; a regression adds squared errors of the predictive mean.
func shardSums(p *modelfile.Predictor, tab *shardTable, classifier bool) (Sums, error) {
	pred, err := p.Predict(tab.x)
	if err != nil {
		return Sums{}, tab.inputError(err)
	}
	lp, err := p.LogPredictive(tab.x, tab.y)
	if err != nil {
		return Sums{}, tab.inputError(err)
	}
	var out Sums
	out.N = int64(len(tab.y))
	var ll, se exactSum
	for _, v := range lp {
		ll = ll.add(v)
	}
	_, c := pred.YMean.Dims()
	for i, v := range tab.y {
		row := pred.YMean.RawRowView(i)
		switch {
		case c == 1 && classifier:
			if (row[0] > 0.5) == (v == 1) {
				out.Correct++
			}
		case c == 1:
			r := v - row[0]
			se = se.add(r * r)
		default:
			best := 0
			for j := range row {
				if row[j] > row[best] {
					best = j
				}
			}
			if float64(best) == v {
				out.Correct++
			}
		}
	}
	out.SqErr, out.LogLik = se, ll
	return out, nil
}

// metricsFn is the CombineFn that adds Sums and turns the total into
// Metrics. Its fields describe the model.
type metricsFn struct {
	Classifier   bool
	Standardized bool    // the model has a target standardization
	YScale       float64 // its scale
	LogOffset    float64 // its log-density offset (data.Standardizer.LogDensityOffset)
}

// CreateAccumulator returns the Sums of no rows.
func (f *metricsFn) CreateAccumulator() Sums { return Sums{} }

// AddInput adds the Sums of a shard.
func (f *metricsFn) AddInput(a, s Sums) Sums { return f.MergeAccumulators(a, s) }

// MergeAccumulators adds two Sums exactly.
func (f *metricsFn) MergeAccumulators(a, b Sums) Sums {
	return Sums{
		N:       a.N + b.N,
		SqErr:   exactSum(append([]float64(nil), a.SqErr...)).merge(b.SqErr),
		LogLik:  exactSum(append([]float64(nil), a.LogLik...)).merge(b.LogLik),
		Correct: a.Correct + b.Correct,
	}
}

// ExtractOutput turns the total Sums into Metrics.
func (f *metricsFn) ExtractOutput(a Sums) Metrics {
	return f.metrics(a)
}

func (f *metricsFn) metrics(a Sums) Metrics {
	n := float64(a.N)
	m := Metrics{N: a.N, LogLik: exactSum(a.LogLik).round() / n}
	if f.Classifier {
		m.HasAccuracy, m.Accuracy = true, float64(a.Correct)/n
		return m
	}
	m.HasRMSE, m.RMSE = true, math.Sqrt(exactSum(a.SqErr).round()/n)
	if f.Standardized {
		m.HasStandard = true
		m.RMSEStandard = m.RMSE / f.YScale
		m.LogLikStandard = m.LogLik - f.LogOffset
	}
	return m
}

// WriteMetrics adds to s the writing of the single Metrics element of
// metrics to path as JSON.
func WriteMetrics(s beam.Scope, metrics beam.PCollection, path string) {
	beam.ParDo0(s.Scope("gpbeam.WriteMetrics"), &writeMetricsFn{Path: path}, metrics)
}

// writeMetricsFn writes a Metrics element as JSON.
type writeMetricsFn struct {
	Path string
}

// ProcessElement writes m to the file.
func (f *writeMetricsFn) ProcessElement(ctx context.Context, m Metrics) error {
	if m.N == 0 {
		return fmt.Errorf("gpbeam: no rows to evaluate")
	}
	buf, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(ctx, f.Path, append(buf, '\n'))
}

// ReadMetrics reads the Metrics that WriteMetrics wrote to path.
func ReadMetrics(ctx context.Context, path string) (Metrics, error) {
	var m Metrics
	buf, err := readFile(ctx, path)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(buf, &m); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// checkSingleOutput reports a multi-output model (several target columns),
// whose shards the pipelines do not read: solvegp predict and eval take
// them.
func checkSingleOutput(b *modelfile.Bundle) error {
	if p := b.NumOutputs(); p > 1 || b.Model == nil {
		return fmt.Errorf("gpbeam: the model has %d outputs; the pipelines take single-output models (use solvegp predict or eval)", p)
	}
	return nil
}
