package gpbeam

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/modelfile"
)

func init() {
	register.DoFn3x1[context.Context, Shard, func(string), error](&predictFn{})
	register.Emitter1[string]()
}

// OutputPath is the file Predict writes for shard index of n shards:
// prefix-00003-of-00010.csv, or prefix-00003-of-00010.parquet when prefix
// ends in .parquet (which the name then carries only at its end).
func OutputPath(prefix string, index, n int) string {
	ext := ".csv"
	if data.IsParquet(prefix) {
		prefix, ext = prefix[:len(prefix)-len(".parquet")], prefix[len(prefix)-len(".parquet"):]
	}
	return fmt.Sprintf("%s-%05d-of-%05d%s", prefix, index, n, ext)
}

// Predict adds to s the prediction of the model in modelJSON (a model
// file, as modelfile.Marshal writes it) for every row of every shard: each
// shard is written to OutputPath(prefix, index, len(shards)) as CSV (or,
// for a prefix ending in .parquet, as Parquet of DOUBLE columns, one row
// group per shard) whose rows are the shard's rows (every column, as read)
// followed by the columns solvegp predict writes (f_mean, f_var, y_mean,
// y_var, or per class f_mean_j, f_var_j, p_j). The column names are the
// shard's, or column_1.. when it has none, followed by the prediction
// columns. Every output file is written whole or not at all. It returns
// the PCollection of the paths written.
func Predict(s beam.Scope, modelJSON []byte, shards []Shard, prefix string) beam.PCollection {
	s = s.Scope("gpbeam.Predict")
	in := beam.CreateList(s, shards)
	return beam.ParDo(s, &predictFn{Model: modelJSON, Prefix: prefix, Shards: len(shards)}, in)
}

// predictFn predicts the rows of one shard and writes them.
type predictFn struct {
	Model  []byte // the model file
	Prefix string // the output prefix
	Shards int    // the number of shards, for the output names

	b *modelfile.Bundle
	p *modelfile.Predictor
}

// Setup decodes the model once per worker instance.
func (f *predictFn) Setup() error {
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
	f.b, f.p = b, p
	return nil
}

// ProcessElement reads, predicts and writes one shard and emits the path
// written.
func (f *predictFn) ProcessElement(ctx context.Context, sh Shard, emit func(string)) error {
	buf, err := readFile(ctx, sh.Path)
	if err != nil {
		return fmt.Errorf("%s: %w", sh.Path, err)
	}
	tab, err := parseShard(f.b, sh.Path, buf, false)
	if err != nil {
		return err
	}
	pred, err := f.p.Predict(tab.x)
	if err != nil {
		return tab.inputError(err)
	}
	var out bytes.Buffer
	path := OutputPath(f.Prefix, sh.Index, f.Shards)
	if data.IsParquet(path) {
		if err := writeParquetRows(&out, tab, pred); err != nil {
			return fmt.Errorf("%s (the output of %s): %w", path, sh.Path, err)
		}
	} else {
		writeRows(&out, tab, pred)
	}
	if err := writeFile(ctx, path, out.Bytes()); err != nil {
		return fmt.Errorf("%s (the output of %s): %w", path, sh.Path, err)
	}
	emit(path)
	return nil
}

// PredictionColumns returns the names of the prediction columns for c
// latent functions, as solvegp predict writes them.
func PredictionColumns(c int) []string {
	if c == 1 {
		return []string{"f_mean", "f_var", "y_mean", "y_var"}
	}
	var out []string
	for _, name := range []string{"f_mean_", "f_var_", "p_"} {
		for j := 0; j < c; j++ {
			out = append(out, name+strconv.Itoa(j))
		}
	}
	return out
}

// predictionRow appends the prediction columns of row i of p to dst, in
// the shortest form that reads back exactly ("NaN" for a missing observed
// variance), as solvegp predict writes them.
func predictionRow(dst []byte, p *modelfile.Prediction, i int) []byte {
	_, c := p.FMean.Dims()
	sep := func() {
		if len(dst) > 0 {
			dst = append(dst, ',')
		}
	}
	mats := []*mat.Dense{p.FMean, p.FVar, p.YMean}
	if c == 1 {
		mats = append(mats, p.YVar)
	}
	for _, m := range mats {
		for j := 0; j < c; j++ {
			sep()
			if m == nil {
				dst = append(dst, "NaN"...)
				continue
			}
			dst = strconv.AppendFloat(dst, m.At(i, j), 'g', -1, 64)
		}
	}
	return dst
}

// outputNames returns the column names of tab's output: the shard's (or
// column_1.. without a header) and the prediction columns.
func outputNames(tab *shardTable, p *modelfile.Prediction) []string {
	_, c := tab.raw.X.Dims()
	_, nl := p.FMean.Dims()
	names := append([]string(nil), tab.raw.Names...)
	if tab.raw.Names == nil {
		for j := 0; j < c; j++ {
			names = append(names, "column_"+strconv.Itoa(j+1))
		}
	}
	return append(names, PredictionColumns(nl)...)
}

// writeParquetRows writes the columns of tab followed by their predictions
// as a Parquet file (NaN for a missing observed variance).
func writeParquetRows(w *bytes.Buffer, tab *shardTable, p *modelfile.Prediction) error {
	n, c := tab.raw.X.Dims()
	_, nl := p.FMean.Dims()
	cols := make([][]float64, 0, c+4*nl)
	for j := 0; j < c; j++ {
		cols = append(cols, mat.Col(nil, j, tab.raw.X))
	}
	mats := []*mat.Dense{p.FMean, p.FVar, p.YMean}
	if nl == 1 {
		mats = append(mats, p.YVar)
	}
	for _, m := range mats {
		for j := 0; j < nl; j++ {
			col := make([]float64, n)
			if m == nil {
				for i := range col {
					col[i] = math.NaN()
				}
			} else {
				mat.Col(col, j, m)
			}
			cols = append(cols, col)
		}
	}
	return data.WriteParquet(w, outputNames(tab, p), cols, n)
}

// writeRows writes the header and the rows of tab followed by their
// predictions.
func writeRows(w *bytes.Buffer, tab *shardTable, p *modelfile.Prediction) {
	n, _ := tab.raw.X.Dims()
	for j, name := range outputNames(tab, p) {
		if j > 0 {
			w.WriteByte(',')
		}
		w.WriteString(csvField(name))
	}
	w.WriteByte('\n')
	var line []byte
	for i := 0; i < n; i++ {
		line = line[:0]
		for _, v := range tab.raw.X.RawRowView(i) {
			if len(line) > 0 {
				line = append(line, ',')
			}
			line = strconv.AppendFloat(line, v, 'g', -1, 64)
		}
		line = predictionRow(line, p, i)
		line = append(line, '\n')
		w.Write(line)
	}
}

// csvField quotes a header name when CSV requires it.
func csvField(s string) string {
	for _, r := range s {
		if r == ',' || r == '"' || r == '\n' || r == '\r' {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
	}
	return s
}
