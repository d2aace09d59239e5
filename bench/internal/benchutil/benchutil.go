// Package benchutil holds what the reproduction programs under bench/ share:
// summaries over repeated runs (mean and standard error, formatted as in the
// paper's tables), an append-only JSON-lines log that makes long runs
// resumable, and the evaluation of a trained Gaussian-likelihood gp model
// (test RMSE, test log-likelihood and the full-data evidence lower bound).
package benchutil

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/metrics"
)

// Summary is the mean and standard error of a set of repeated measurements.
type Summary struct {
	// N is the number of finite values summarized.
	N int `json:"n"`
	// Mean is their mean (NaN if N is 0).
	Mean float64 `json:"mean"`
	// SE is the standard error of the mean, s/√N with the sample standard
	// deviation s (NaN if N < 2).
	SE float64 `json:"se"`
}

// Summarize returns the mean and standard error of the finite values in v;
// NaN and ±Inf values are skipped.
func Summarize(v []float64) Summary {
	var n int
	var sum float64
	for _, x := range v {
		if isFinite(x) {
			n++
			sum += x
		}
	}
	s := Summary{N: n, Mean: math.NaN(), SE: math.NaN()}
	if n == 0 {
		return s
	}
	s.Mean = sum / float64(n)
	if n < 2 {
		return s
	}
	var ss float64
	for _, x := range v {
		if isFinite(x) {
			d := x - s.Mean
			ss += d * d
		}
	}
	s.SE = math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
	return s
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Format writes the summary with prec digits after the decimal point as
// "mean ± se"; with a single value it writes "mean (n=1)" and with none "—".
func (s Summary) Format(prec int) string {
	switch {
	case s.N == 0:
		return "—"
	case s.N == 1 || math.IsNaN(s.SE):
		return fmt.Sprintf("%.*f (n=1)", prec, s.Mean)
	}
	return fmt.Sprintf("%.*f ± %.*f", prec, s.Mean, prec, s.SE)
}

// MarshalJSON writes NaN fields as null, which encoding/json cannot
// represent otherwise.
func (s Summary) MarshalJSON() ([]byte, error) {
	f := func(x float64) any {
		if isFinite(x) {
			return x
		}
		return nil
	}
	return json.Marshal(struct {
		N    int `json:"n"`
		Mean any `json:"mean"`
		SE   any `json:"se"`
	}{s.N, f(s.Mean), f(s.SE)})
}

// AppendJSONL appends v as one JSON line to the file at path (created if
// missing) and flushes it to stable storage before returning, so that a
// record, once AppendJSONL has returned, survives the program being killed.
// If the file ends in a partial line (a write cut short by a crash), that
// incomplete record is removed first. One file must not be appended to by
// two processes at once.
func AppendJSONL(path string, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding record for %s: %w", path, err)
	}
	line = append(line, '\n')
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	err = appendLine(f, line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("appending to %s: %w", path, err)
	}
	return nil
}

func appendLine(f *os.File, line []byte) error {
	old, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	end := int64(len(old))
	if len(old) > 0 && old[len(old)-1] != '\n' {
		end = int64(bytes.LastIndexByte(old, '\n') + 1)
		if err := f.Truncate(end); err != nil {
			return err
		}
	}
	if _, err := f.WriteAt(line, end); err != nil {
		return err
	}
	return f.Sync()
}

// ReadJSONL decodes every line of the JSON-lines file at path into a T. A
// missing file gives no records and no error. A final line that does not
// parse and has no newline after it is the trace of an interrupted write
// and is skipped (reported by skipped = 1); any other malformed line is an
// error naming the line.
func ReadJSONL[T any](path string) (recs []T, skipped int, err error) {
	buf, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	return ParseJSONL[T](bytes.NewReader(buf), path)
}

// ParseJSONL is ReadJSONL on a reader; name is used in error messages.
func ParseJSONL[T any](r io.Reader, name string) (recs []T, skipped int, err error) {
	br := bufio.NewReader(r)
	for lineNo := 1; ; lineNo++ {
		line, rerr := br.ReadString('\n')
		if rerr != nil && rerr != io.EOF {
			return recs, skipped, fmt.Errorf("%s: %w", name, rerr)
		}
		complete := strings.HasSuffix(line, "\n")
		if s := strings.TrimSpace(line); s != "" {
			var v T
			dec := json.NewDecoder(strings.NewReader(s))
			if derr := dec.Decode(&v); derr != nil {
				if !complete {
					skipped++
				} else {
					return recs, skipped, fmt.Errorf("%s:%d: %w", name, lineNo, derr)
				}
			} else {
				recs = append(recs, v)
			}
		}
		if rerr == io.EOF {
			return recs, skipped, nil
		}
	}
}

// Metrics are the test statistics of a Gaussian-likelihood model.
type Metrics struct {
	// RMSE is the root mean squared error of the predictive mean.
	RMSE float64 `json:"rmse"`
	// LogLik is the mean log predictive density log N(y | mean, var_f +
	// noise).
	LogLik float64 `json:"log_lik"`
}

// Evaluate predicts the observations at the rows of x with the model's
// current posterior and returns the RMSE and mean log predictive density
// against y. batch bounds the number of points predicted at once (≤ 0:
// gp.DefaultPredictBatch).
func Evaluate(m *gp.Model, x *mat.Dense, y []float64, batch int) (Metrics, error) {
	p, err := m.Predictor(batch)
	if err != nil {
		return Metrics{}, err
	}
	mean, variance, err := p.PredictY(x)
	if err != nil {
		return Metrics{}, err
	}
	mu := mat.Col(nil, 0, mean)
	vr := mat.Col(nil, 0, variance)
	rmse, err := metrics.RMSE(y, mu)
	if err != nil {
		return Metrics{}, err
	}
	ll, err := metrics.GaussianLogLik(y, mu, vr)
	if err != nil {
		return Metrics{}, err
	}
	return Metrics{RMSE: rmse, LogLik: ll}, nil
}

// Revision returns the version control revision the running program was
// built from, as recorded by the go command (vcs.revision, with "+dirty"
// when the working tree had uncommitted changes), or "" when the build
// does not record it (go run of a file list, -buildvcs=false, no VCS).
// Results carry it so that a number can be traced to the code that made
// it.
func Revision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "+dirty"
	}
	return rev
}
