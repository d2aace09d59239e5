package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"gonum.org/v1/gonum/mat"
)

// parquetFile is a Parquet file opened for reading: its numeric leaf
// columns, in schema order, stand for a CSV file's columns and their names
// for its header.
type parquetFile struct {
	path  string
	f     *os.File // nil for a file read from memory
	pf    *parquet.File
	names []string
}

// close closes the file, if parquetFile opened one.
func (pq *parquetFile) close() {
	if pq.f != nil {
		pq.f.Close()
	}
}

// openParquet opens path and checks that every column is a required or
// optional leaf of a numeric type (BOOLEAN, INT32, INT64, FLOAT, DOUBLE).
// Any failure, including a panic of the decoder on a damaged file, is an
// error that names the file.
func openParquet(path string) (*parquetFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	pq, err := readParquetSchema(f, st.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	pq.f = f
	return pq, nil
}

// readParquetSchema opens the Parquet file of size bytes read through r
// and checks its columns as openParquet does; name names it in errors.
func readParquetSchema(r io.ReaderAt, size int64, name string) (pq *parquetFile, err error) {
	defer func() {
		if r := recover(); r != nil {
			pq, err = nil, &ParseError{File: name, Msg: fmt.Sprintf("malformed Parquet file: %v", r)}
		}
	}()
	if err := checkParquetFrame(r, size); err != nil {
		return nil, &ParseError{File: name, Msg: "malformed or truncated Parquet file", Err: err}
	}
	pf, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, &ParseError{File: name, Msg: "malformed or truncated Parquet file", Err: err}
	}
	pq = &parquetFile{path: name, pf: pf}
	for _, field := range pf.Schema().Fields() {
		if !field.Leaf() || field.Repeated() {
			return nil, &ParseError{File: name, Msg: fmt.Sprintf("column %q is not a plain numeric column", field.Name())}
		}
		switch field.Type().Kind() {
		case parquet.Boolean, parquet.Int32, parquet.Int64, parquet.Float, parquet.Double:
		default:
			return nil, &ParseError{File: name, Msg: fmt.Sprintf("column %q has type %v, not a number", field.Name(), field.Type())}
		}
		pq.names = append(pq.names, field.Name())
	}
	if i, j := duplicateName(pq.names); j >= 0 {
		return nil, &ParseError{File: name, Msg: fmt.Sprintf("duplicate column name %q (columns %d and %d)", pq.names[j], i+1, j+1)}
	}
	if len(pq.names) == 0 {
		return nil, &ParseError{File: name, Msg: "no columns"}
	}
	return pq, nil
}

// checkParquetFrame checks the frame of a Parquet file of size bytes: the
// magic "PAR1" at both ends and a footer length that fits between them.
// parquet.OpenFile allocates the footer length the file claims before
// comparing it with the file's size, so a corrupt length of a few GiB
// would cost that much memory; this check comes first.
func checkParquetFrame(r io.ReaderAt, size int64) error {
	const magic = "PAR1"
	if size < 12 {
		return fmt.Errorf("%d bytes, shorter than the smallest Parquet file", size)
	}
	var head, tail [8]byte
	if _, err := r.ReadAt(head[:4], 0); err != nil {
		return err
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if string(head[:4]) != magic || string(tail[4:]) != magic {
		return errors.New("no PAR1 magic at the start and end")
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-12 {
		return fmt.Errorf("footer length %d does not fit in %d bytes", n, size)
	}
	return nil
}

// number reads a non-null numeric Parquet value as a float64.
func number(v parquet.Value) (float64, bool) {
	switch v.Kind() {
	case parquet.Boolean:
		if v.Boolean() {
			return 1, true
		}
		return 0, true
	case parquet.Int32:
		return float64(v.Int32()), true
	case parquet.Int64:
		return float64(v.Int64()), true
	case parquet.Float:
		return float64(v.Float()), true
	case parquet.Double:
		return v.Double(), true
	}
	return 0, false
}

// readGroup reads row group g of the file as row-major values, checking
// that it holds as many rows as its metadata says and that every value is
// a finite number, or, in the columns miss marks (Options.Missing), a null
// or NaN read as NaN in a row where not every such column is missing.
// Errors name the file and the row group (1-based).
func (pq *parquetFile) readGroup(g int, miss []bool) (vals []float64, err error) {
	where := fmt.Sprintf("%s: row group %d", pq.path, g+1)
	defer func() {
		if r := recover(); r != nil {
			vals, err = nil, &ParseError{File: pq.path, Msg: fmt.Sprintf("row group %d: malformed Parquet data: %v", g+1, r)}
		}
	}()
	rg := pq.pf.RowGroups()[g]
	want := rg.NumRows()
	cols := len(pq.names)
	rows := rg.Rows()
	defer rows.Close()
	buf := make([]parquet.Row, 256)
	var got int64
	for {
		k, rerr := rows.ReadRows(buf)
		for _, row := range buf[:k] {
			if len(row) != cols {
				return nil, fmt.Errorf("data: %s, row %d: %d values, want %d", where, got+1, len(row), cols)
			}
			start := len(vals)
			for _, v := range row {
				x, ok := number(v)
				switch {
				case miss != nil && miss[v.Column()] && (v.IsNull() || ok && x != x):
					x = math.NaN()
				case v.IsNull() || !ok || x != x || x-x != 0:
					return nil, fmt.Errorf("data: %s, row %d, column %q: value %v is missing or not a finite number", where, got+1, pq.names[v.Column()], v)
				}
				vals = append(vals, x)
			}
			if allMissing(vals[start:], miss) {
				return nil, fmt.Errorf("data: %s, row %d: every target of the row is missing (null or NaN)", where, got+1)
			}
			got++
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, &ParseError{File: pq.path, Msg: fmt.Sprintf("row group %d: malformed or truncated Parquet data", g+1), Err: rerr}
		}
	}
	if got != want {
		return nil, fmt.Errorf("data: %s: read %d rows, its metadata says %d (truncated file?)", where, got, want)
	}
	return vals, nil
}

// ParquetShard returns the shard of the Parquet file at path, one piece
// per row group. Its leaf columns are the file's columns and their names
// its header: opts.Target selects the target by 1-based position (0: the
// last column), as for CSV files. A row group is read whole when the
// Stream reaches it, so memory is bounded by the largest row group.
func ParquetShard(path string, opts Options) (Shard, error) {
	if opts.NoTarget {
		return nil, fmt.Errorf("data: ParquetShard %s: training shards need a target", path)
	}
	pq, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	defer pq.close()
	cols := len(pq.names)
	t := opts.Target
	if t == 0 {
		t = cols
	}
	if t < 1 || t > cols || cols < 2 {
		return nil, &ParseError{File: path, Msg: fmt.Sprintf("target column %d out of range or no input column: the file has %s", opts.Target, columns(cols))}
	}
	return &parquetShard{path: path, target: t - 1, groups: len(pq.pf.RowGroups())}, nil
}

type parquetShard struct {
	path   string
	target int // 0-based
	groups int
}

func (s *parquetShard) Name() string { return s.path }
func (s *parquetShard) Pieces() int  { return s.groups }
func (s *parquetShard) Open(i int) (RowReader, error) {
	pq, err := openParquet(s.path)
	if err != nil {
		return nil, err
	}
	defer pq.close()
	if i < 0 || i >= len(pq.pf.RowGroups()) {
		return nil, fmt.Errorf("data: %s: no row group %d (the file changed?)", s.path, i+1)
	}
	vals, err := pq.readGroup(i, nil)
	if err != nil {
		return nil, err
	}
	return &groupReader{vals: vals, cols: len(pq.names), target: s.target, names: targetLast(pq.names, s.target)}, nil
}

// groupReader serves the rows of a row group read whole.
type groupReader struct {
	vals         []float64
	cols, target int
	x            []float64
	names        []string
}

// Names returns the column names, inputs first and the target last.
func (r *groupReader) Names() []string { return r.names }

func (r *groupReader) Next() ([]float64, float64, error) {
	if len(r.vals) == 0 {
		return nil, 0, io.EOF
	}
	row := r.vals[:r.cols]
	r.vals = r.vals[r.cols:]
	r.x = append(append(r.x[:0], row[:r.target]...), row[r.target+1:]...)
	return r.x, row[r.target], nil
}

func (r *groupReader) Close() error { return nil }

// LoadParquet reads the whole Parquet file at path into a Table, with the
// column rules of ParquetShard (and opts.NoTarget for prediction inputs);
// Names holds the column names as for a CSV file with a header. A
// malformed or truncated file is an error naming the file and, where it
// applies, the row group; no partial table is returned.
func LoadParquet(path string, opts Options) (*Table, error) {
	pq, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	defer pq.close()
	return pq.table(opts)
}

// ReadParquet reads the Parquet file of size bytes that r holds (for
// example a bytes.Reader over a file fetched from an object store) into a
// Table, as LoadParquet reads a file; name names it in errors.
func ReadParquet(r io.ReaderAt, size int64, name string, opts Options) (*Table, error) {
	pq, err := readParquetSchema(r, size, name)
	if err != nil {
		return nil, err
	}
	return pq.table(opts)
}

// table reads every row group of pq into a Table.
func (pq *parquetFile) table(opts Options) (*Table, error) {
	path := pq.path
	var vals []float64
	for g := range pq.pf.RowGroups() {
		v, err := pq.readGroup(g, missingColumns(opts.Missing, pq.names, len(pq.names)))
		if err != nil {
			return nil, err
		}
		vals = append(vals, v...)
	}
	cols := len(pq.names)
	n := len(vals) / cols
	if n == 0 {
		return nil, &ParseError{File: path, Msg: "no data rows"}
	}
	if opts.NoTarget {
		return &Table{X: mat.NewDense(n, cols, vals), Names: pq.names}, nil
	}
	t := opts.Target
	if t == 0 {
		t = cols
	}
	if t < 1 || t > cols || cols < 2 {
		return nil, &ParseError{File: path, Msg: fmt.Sprintf("target column %d out of range or no input column: the file has %s", opts.Target, columns(cols))}
	}
	x := make([]float64, 0, n*(cols-1))
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := vals[i*cols : (i+1)*cols]
		x = append(append(x, row[:t-1]...), row[t:]...)
		y[i] = row[t-1]
	}
	return &Table{X: mat.NewDense(n, cols-1, x), Y: y, Names: targetLast(pq.names, t-1), TargetColumn: t}, nil
}

// WriteParquet writes the columns cols (each of the same length), named
// names, to w as a Parquet file of required DOUBLE columns, at most
// rowGroup rows per row group (0: one million). Parquet stores a flat
// schema's columns sorted by name, so a reader should select columns by
// name, not position. Write it through internal/atomicfile so that a
// failure leaves no partial file.
func WriteParquet(w io.Writer, names []string, cols [][]float64, rowGroup int) error {
	if len(names) != len(cols) || len(cols) == 0 {
		return fmt.Errorf("data: WriteParquet: %d names for %d columns", len(names), len(cols))
	}
	if i, j := duplicateName(names); j >= 0 || slices.Contains(names, "") {
		return fmt.Errorf("data: WriteParquet: column names must be distinct and non-empty (%d, %d)", i, j)
	}
	n := len(cols[0])
	for j, c := range cols {
		if len(c) != n {
			return fmt.Errorf("data: WriteParquet: column %q has %d values, %q has %d", names[j], len(c), names[0], n)
		}
	}
	if rowGroup <= 0 {
		rowGroup = 1 << 20
	}
	group := parquet.Group{}
	for _, name := range names {
		group[name] = parquet.Leaf(parquet.DoubleType)
	}
	schema := parquet.NewSchema("solvegp", group)
	// The schema orders the columns by name; map them.
	order := make([]int, len(names))
	for k, path := range schema.Columns() {
		for j, name := range names {
			if strings.Join(path, ".") == name {
				order[k] = j
			}
		}
	}
	pw := parquet.NewWriter(w, schema, parquet.MaxRowsPerRowGroup(int64(rowGroup)))
	row := make(parquet.Row, len(names))
	for i := 0; i < n; i++ {
		for k, j := range order {
			row[k] = parquet.DoubleValue(cols[j][i]).Level(0, 0, k)
		}
		if _, err := pw.WriteRows([]parquet.Row{row}); err != nil {
			return fmt.Errorf("data: WriteParquet: %w", err)
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("data: WriteParquet: %w", err)
	}
	return nil
}
