// Package data loads regression data sets for the gp packages: CSV and
// gzip-compressed CSV files, the UCI benchmark files and test-split masks
// of the SOLVE-GP reproduction, standardization fitted on training data,
// seeded train/validation/test splits, and train/test partitions of a
// file's rows by a mask or a random fraction, written back as CSV;
// Parquet files (LoadParquet, WriteParquet); and Stream, a shuffled
// training source for gp/train's FitSource over CSV, gzip CSV and Parquet
// shards that never holds the whole data set, with Summarize for its
// one-pass standardization and k-means sample.
//
// Every malformed input is reported as an error that names the file, the
// line and the column (a *ParseError), never as a panic: ragged rows,
// fields that are not numbers, NaN or Inf values, empty files and target
// columns that do not exist.
package data

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// HeaderMode says whether the first line of a CSV file is a header.
type HeaderMode int

const (
	// HeaderAuto treats the first line as a header if at least one of its
	// fields is non-empty (after trimming spaces) and not a number, and as
	// data otherwise. Empty fields are no evidence either way: "1,,3" on
	// the first line is data with a missing value (an error), and "a,,c"
	// is a header. A header whose every name looks like a number (for
	// example "1,2,3") is therefore read as data; use HeaderPresent for
	// such files.
	HeaderAuto HeaderMode = iota
	// HeaderPresent always skips the first line as a header.
	HeaderPresent
	// HeaderAbsent reads the first line as data.
	HeaderAbsent
)

// Options control how ReadCSV and LoadCSV interpret a file. The zero value
// auto-detects the header and takes the last column as the target.
type Options struct {
	// Header says whether the first line is a header (default HeaderAuto).
	Header HeaderMode
	// Target is the 1-based column of the regression target. Zero selects
	// the last column. Values outside [0, columns] are an error.
	Target int
	// NoTarget reads every column as an input (for prediction inputs); the
	// returned y is then nil and Target is ignored.
	NoTarget bool
	// Missing lists the columns, by header name or 1-based number, that
	// may hold missing values: the target columns of a multi-output model,
	// whose NaN targets are missing values. In those columns an empty
	// field, NA or NaN (any case, spaces around allowed) reads as NaN and
	// a Parquet null or NaN likewise, where any other column refuses it
	// (with its line and column); a row in which every listed column is
	// missing is an error naming its line (or Parquet row), as it holds
	// nothing to learn from. With a header detected automatically, NA
	// counts as a value, not as a name. Entries that name no column are
	// ignored: the caller checks its columns.
	Missing []string
}

// Table is a numeric data set read from a CSV file: inputs X (one row per
// observation), targets Y and the column names of the header, if any.
type Table struct {
	// X holds the input columns, in file order, without the target.
	X *mat.Dense
	// Y holds the target column (nil if Options.NoTarget was set).
	Y []float64
	// Names holds the header names of the columns of X followed by the
	// target's name, or nil if the file had no header.
	Names []string
	// Lines holds, for each row of X, the 1-based line of the file on
	// which that row starts (header and blank lines are counted). It is
	// nil for tables that were not read by ReadCSV or LoadCSV.
	Lines []int
	// TargetColumn is the 1-based column of the file that holds Y (0 when
	// Options.NoTarget was set or the table was not read from a file).
	TargetColumn int
}

// Pos returns the 1-based line and column of the file at which the value
// X[row][col] was read, or, when col is negative, the target Y[row]. It
// returns (0, 0) when the table does not record positions or row or col is
// out of range, so that a *ParseError built from it names the file only.
func (t *Table) Pos(row, col int) (line, column int) {
	if t == nil || row < 0 || row >= len(t.Lines) || t.X == nil {
		return 0, 0
	}
	_, d := t.X.Dims()
	switch {
	case col < 0:
		if t.TargetColumn == 0 {
			return 0, 0
		}
		return t.Lines[row], t.TargetColumn
	case col >= d:
		return 0, 0
	case t.TargetColumn > 0 && col+1 >= t.TargetColumn:
		return t.Lines[row], col + 2 // the target column sits before it
	}
	return t.Lines[row], col + 1
}

// ParseError reports malformed input at a position in a file. Line and
// Column are 1-based; Column is the CSV field number (0 when the error
// concerns a whole line or the whole file, Line 0 when it concerns the
// whole file). For malformed CSV (a stray or missing quote) Line is the
// line of the offending character and Column the field of the record in
// which it lies, counted from the record's first line.
type ParseError struct {
	File   string
	Line   int
	Column int
	Msg    string
	Err    error // underlying error, if any
}

// Error formats the error as "file:line:column: message".
func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

// gzipMagic is the two-byte signature of a gzip stream (RFC 1952).
var gzipMagic = [2]byte{0x1f, 0x8b}

// decompress returns a reader of the plain contents of r, decompressing
// it if it starts with the gzip signature. close releases the gzip reader.
func decompress(r io.Reader, name string) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, nil, &ParseError{File: name, Msg: "read failed", Err: err}
	}
	if len(head) == 2 && head[0] == gzipMagic[0] && head[1] == gzipMagic[1] {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, &ParseError{File: name, Msg: "bad gzip stream", Err: err}
		}
		return zr, func() { zr.Close() }, nil
	}
	return br, func() {}, nil
}

// MaxLineBytes is the longest line, and the longest record (a row,
// including any line breaks inside quoted fields), that ReadCSV,
// ReadTestMasks and the loaders built on them accept: 1 MiB, enough for
// tens of thousands of numeric columns. A longer line is refused with a
// *ParseError as soon as the limit is passed, so that a hostile or
// mistaken input (a large file without line breaks) costs at most a few
// MiB of memory and the time to read 1 MiB.
const MaxLineBytes = 1 << 20

// Stdin is the path that LoadCSV and LoadTestMasks read as standard input;
// errors then name the file "stdin".
const Stdin = "-"

// openInput opens path, or standard input when path is Stdin, and returns
// the name to use in error messages.
func openInput(path string) (io.ReadCloser, string, error) {
	if path == Stdin {
		return io.NopCloser(os.Stdin), "stdin", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, path, err
	}
	return f, path, nil
}

// LoadCSV reads the CSV or gzip CSV file at path (gzip is detected from
// the file's first bytes, not its name), or standard input if path is
// "-" (Stdin). See ReadCSV.
func LoadCSV(path string, opts Options) (*Table, error) {
	f, name, err := openInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadCSV(f, name, opts)
}

// ReadCSV reads a comma-separated table of numbers from r, which may be
// gzip-compressed. name is used in error messages. Blank lines, including
// lines of spaces and tabs only, are skipped; spaces around fields are
// allowed. Every row must have the same
// number of fields and every field must be a finite number. Lines and
// records longer than MaxLineBytes are refused, and so are headers that
// give two columns the same (non-empty) name, which would make matching
// columns by name ambiguous.
func ReadCSV(r io.Reader, name string, opts Options) (*Table, error) {
	switch opts.Header {
	case HeaderAuto, HeaderPresent, HeaderAbsent:
	default:
		return nil, fmt.Errorf("data: %s: invalid header mode %d", name, opts.Header)
	}
	rows, names, lines, cols, err := readNumeric(r, name, opts, nil)
	if err != nil {
		return nil, err
	}
	n := len(rows) / cols
	if opts.NoTarget {
		return &Table{X: mat.NewDense(n, cols, rows), Names: names, Lines: lines}, nil
	}
	target := opts.Target
	if target == 0 {
		target = cols
	}
	if target < 1 || target > cols {
		return nil, &ParseError{File: name, Msg: fmt.Sprintf("target column %d out of range: the file has %s", opts.Target, columns(cols))}
	}
	if cols < 2 {
		return nil, &ParseError{File: name, Msg: "need at least 2 columns (inputs and a target), the file has 1 column"}
	}
	d := cols - 1
	t := target - 1
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := rows[i*cols : (i+1)*cols]
		y[i] = row[t]
		copy(x[i*d:], row[:t])
		copy(x[i*d+t:], row[t+1:])
	}
	if names != nil {
		reordered := make([]string, 0, cols)
		reordered = append(reordered, names[:t]...)
		reordered = append(reordered, names[t+1:]...)
		names = append(reordered, names[t])
	}
	return &Table{X: mat.NewDense(n, d, x), Y: y, Names: names, Lines: lines, TargetColumn: target}, nil
}

// readNumeric parses r into a row-major slice of values with cols columns
// and the 1-based file line of each row. If check is not nil it is called
// for each finite value with its 0-based column and returns a non-empty
// message to reject the value.
func readNumeric(r io.Reader, name string, opts Options, check func(col int, v float64) string) (vals []float64, names []string, lines []int, cols int, err error) {
	sc, err := newNumScanner(r, name, opts.Header, check)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	sc.missing = opts.Missing
	defer sc.close()
	for {
		row, line, err := sc.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, nil, 0, err
		}
		vals = append(vals, row...)
		lines = append(lines, line)
	}
	if sc.first {
		return nil, nil, nil, 0, &ParseError{File: name, Msg: "empty file"}
	}
	if len(vals) == 0 {
		return nil, nil, nil, 0, &ParseError{File: name, Msg: "no data rows after the header"}
	}
	return vals, sc.names, lines, sc.cols, nil
}

// numScanner reads a numeric CSV table one row at a time, so that
// readNumeric and the streaming sources share one parser: the header
// detection, the limits and the error positions are the same.
type numScanner struct {
	name    string
	header  HeaderMode
	check   func(col int, v float64) string
	tee     *recordTee
	cr      *csv.Reader
	closeFn func()
	first   bool     // no record read yet
	missing []string // Options.Missing
	miss    []bool   // the columns missing names, resolved at the first record
	cols    int
	names   []string
	row     []float64
}

// newNumScanner starts reading r (plain or gzip CSV); see readNumeric.
func newNumScanner(r io.Reader, name string, header HeaderMode, check func(col int, v float64) string) (*numScanner, error) {
	plain, closeFn, err := decompress(r, name)
	if err != nil {
		return nil, err
	}
	// Skip a UTF-8 byte-order mark, which some spreadsheet programs write.
	br := bufio.NewReader(plain)
	if bom, _ := br.Peek(3); len(bom) == 3 && bom[0] == 0xef && bom[1] == 0xbb && bom[2] == 0xbf {
		br.Discard(3)
	}
	// tee keeps the text of the current record (from the end of the
	// previous one), for whitespace-only lines and error positions.
	tee := &recordTee{r: br, line: 1, max: MaxLineBytes}
	cr := csv.NewReader(tee)
	cr.FieldsPerRecord = -1 // ragged rows are reported by us, with the line
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	return &numScanner{name: name, header: header, check: check, tee: tee, cr: cr, closeFn: closeFn, first: true}, nil
}

// close releases the decompressor.
func (s *numScanner) close() { s.closeFn() }

// next returns the next data row (valid until the following call) and the
// 1-based line it starts on, or io.EOF after the last row. The header, if
// any, is taken from the first record and stored in names.
func (s *numScanner) next() (row []float64, line int, err error) {
	name := s.name
	for {
		rec, rerr := s.cr.Read()
		if rerr == io.EOF {
			return nil, 0, io.EOF
		}
		if rerr != nil {
			var long *longLineError
			if errors.As(rerr, &long) {
				return nil, 0, &ParseError{File: name, Line: long.line, Msg: long.msg}
			}
			var pe *csv.ParseError
			if errors.As(rerr, &pe) {
				return nil, 0, &ParseError{File: name, Line: pe.Line, Column: s.tee.field(pe), Msg: "malformed CSV", Err: pe.Err}
			}
			return nil, 0, &ParseError{File: name, Msg: "read failed", Err: rerr}
		}
		text := s.tee.advance(s.cr.InputOffset())
		if len(rec) == 1 && len(bytes.TrimSpace(text)) == 0 {
			continue // a line of spaces or tabs only is blank
		}
		line, _ = s.cr.FieldPos(0)
		if s.first {
			s.first = false
			s.cols = len(rec)
			isHeader, err := s.takeHeader(rec, line)
			if err != nil {
				return nil, 0, err
			}
			s.miss = missingColumns(s.missing, s.names, s.cols)
			if isHeader {
				continue
			}
		}
		if len(rec) != s.cols {
			return nil, 0, &ParseError{File: name, Line: line, Column: min(len(rec), s.cols) + 1,
				Msg: fmt.Sprintf("ragged row: %d fields, want %d as on the first line", len(rec), s.cols)}
		}
		s.row = s.row[:0]
		for j, f := range rec {
			v, err := s.parse(f, j, line)
			if err != nil {
				return nil, 0, err
			}
			s.row = append(s.row, v)
		}
		if allMissing(s.row, s.miss) {
			return nil, 0, &ParseError{File: name, Line: line, Msg: "every target of the row is missing (empty, NA or NaN)"}
		}
		return s.row, line, nil
	}
}

// takeHeader decides whether the first record rec is a header and, if it
// is, keeps its names.
func (s *numScanner) takeHeader(rec []string, line int) (bool, error) {
	isHeader := s.header == HeaderPresent
	if s.header == HeaderAuto {
		for _, f := range rec {
			f = strings.TrimSpace(f)
			if f == "" || len(s.missing) > 0 && strings.EqualFold(f, "NA") {
				continue // a missing value, not a name
			}
			if _, perr := strconv.ParseFloat(f, 64); perr != nil {
				isHeader = true
				break
			}
		}
	}
	if !isHeader {
		return false, nil
	}
	s.names = make([]string, len(rec))
	for i, f := range rec {
		s.names[i] = strings.TrimSpace(f)
	}
	if i, j := duplicateName(s.names); j >= 0 {
		return false, &ParseError{File: s.name, Line: line, Column: j + 1,
			Msg: fmt.Sprintf("duplicate column name %q (columns %d and %d); names must differ so that columns can be matched by name", truncate(s.names[j], 40), i+1, j+1)}
	}
	return true, nil
}

// parse reads field f of column j (0-based) as a finite number, or as NaN
// for a missing value in a column of Options.Missing.
func (s *numScanner) parse(f string, j, line int) (float64, error) {
	if s.miss != nil && s.miss[j] && isMissingField(f) {
		return math.NaN(), nil
	}
	v, perr := strconv.ParseFloat(strings.TrimSpace(f), 64)
	if perr != nil {
		msg := fmt.Sprintf("not a number: %q", truncate(f, 40))
		if strings.TrimSpace(f) == "" {
			msg = `not a number: "" (a missing value, which only the target columns of a multi-output model may have)`
		}
		if errors.Is(perr, strconv.ErrRange) {
			msg = fmt.Sprintf("number out of float64 range: %q", truncate(f, 40))
		}
		return 0, &ParseError{File: s.name, Line: line, Column: j + 1, Msg: msg}
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, &ParseError{File: s.name, Line: line, Column: j + 1, Msg: fmt.Sprintf("non-finite value %q", truncate(f, 40))}
	}
	if s.check != nil {
		if msg := s.check(j, v); msg != "" {
			return 0, &ParseError{File: s.name, Line: line, Column: j + 1, Msg: msg}
		}
	}
	return v, nil
}

// duplicateName returns the 0-based columns i < j of the first pair of
// equal non-empty names, or (-1, -1). Empty names are missing names, not
// clashing ones.
func duplicateName(names []string) (i, j int) {
	seen := make(map[string]int, len(names))
	for j, n := range names {
		if n == "" {
			continue
		}
		if i, ok := seen[n]; ok {
			return i, j
		}
		seen[n] = j
	}
	return -1, -1
}

// truncate shortens s to at most n bytes for error messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// recordTee passes the bytes of r through and keeps those from the end of
// the last record the csv.Reader returned, so that the raw text of the
// current record is at hand.
//
// It also enforces the length limit max: a line, or the text of a record,
// longer than max bytes makes Read fail with a *longLineError, before
// csv.Reader has buffered more than that.
type recordTee struct {
	r       io.Reader
	buf     []byte // bytes read from r from offset base on
	base    int64  // offset in r of buf[0]: the end of the last record
	line    int    // 1-based line of buf[0]
	max     int    // longest line or record accepted, in bytes
	lineLen int    // bytes read since the last '\n'
}

// readAhead bounds how far past the end of a record csv.Reader's buffer
// reads, so that buf may exceed the record by that much.
const readAhead = 1 << 16

// longLineError is returned by recordTee.Read when the limit is passed.
type longLineError struct {
	line int
	msg  string
}

func (e *longLineError) Error() string { return e.msg }

func (t *recordTee) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.buf = append(t.buf, p[:n]...)
	if k := bytes.LastIndexByte(p[:n], '\n'); k >= 0 {
		// The longest line ending in p may have begun before it.
		first := bytes.IndexByte(p[:n], '\n')
		if t.lineLen+first > t.max {
			return n, t.tooLong("line", len(t.buf)-n+first)
		}
		t.lineLen = n - k - 1
	} else {
		t.lineLen += n
	}
	if t.lineLen > t.max {
		return n, t.tooLong("line", len(t.buf))
	}
	t.dropBlankLines()
	if len(t.buf) > t.max+readAhead {
		return n, t.tooLong("record (a row, with the line breaks inside its quoted fields)", t.max+1)
	}
	return n, err
}

// dropBlankLines drops the empty lines at the start of buf, which
// csv.Reader skips without returning a record, so that a run of them
// does not count as one long record.
func (t *recordTee) dropBlankLines() {
	k := 0
	for {
		if k < len(t.buf) && t.buf[k] == '\n' {
			k++
		} else if k+1 < len(t.buf) && t.buf[k] == '\r' && t.buf[k+1] == '\n' {
			k += 2
		} else {
			break
		}
		t.line++
	}
	t.buf = t.buf[k:]
	t.base += int64(k)
}

// tooLong reports the limit passed on the line that holds buf[at-1].
func (t *recordTee) tooLong(what string, at int) error {
	at = min(max(at, 1), len(t.buf))
	line := t.line + bytes.Count(t.buf[:at-1], []byte{'\n'})
	return &longLineError{line: line, msg: fmt.Sprintf("%s longer than %d bytes, the limit (data.MaxLineBytes); is this a CSV file with one row per line?", what, t.max)}
}

// advance drops the text up to offset end (csv.Reader.InputOffset after a
// record) and returns it: the record just read, after any blank lines
// before it.
func (t *recordTee) advance(end int64) []byte {
	k := int(end - t.base)
	if k < 0 || k > len(t.buf) {
		k = len(t.buf) // cannot happen; keep the buffer consistent
	}
	text := t.buf[:k]
	t.line += bytes.Count(text, []byte{'\n'})
	t.buf = t.buf[k:]
	t.base += int64(k)
	return text
}

// field returns the 1-based CSV field of the record at which the
// csv.ParseError pe occurred. pe.Column is a 1-based byte index in line
// pe.Line; field counts the commas outside quotes from the start of the
// record (line pe.StartLine) up to that byte. It returns 0 if the
// record's first line is not in the kept text (which cannot happen).
func (t *recordTee) field(pe *csv.ParseError) int {
	text := t.buf
	// Skip the blank lines before the record.
	for l := t.line; l < pe.StartLine; l++ {
		i := bytes.IndexByte(text, '\n')
		if i < 0 {
			return 0
		}
		text = text[i+1:]
	}
	field, inQuotes := 1, false
	line, col := pe.StartLine, 1
	for _, c := range text {
		if line > pe.Line || line == pe.Line && col >= pe.Column {
			return field
		}
		switch c {
		case '"':
			inQuotes = !inQuotes // "" inside quotes toggles twice
		case ',':
			if !inQuotes {
				field++
			}
		case '\n':
			line, col = line+1, 0
		}
		col++
	}
	// The error is at the end of the input (an unterminated quote), which
	// csv.Reader places just past the last line.
	return field
}

// columns returns "1 column" or "n columns".
func columns(n int) string {
	if n == 1 {
		return "1 column"
	}
	return fmt.Sprintf("%d columns", n)
}

// missingColumns returns, for a table of cols columns with the header
// names (nil without one), which columns the entries of spec (names or
// 1-based numbers; see Options.Missing) name; nil for an empty spec.
func missingColumns(spec, names []string, cols int) []bool {
	if len(spec) == 0 {
		return nil
	}
	miss := make([]bool, cols)
	for _, e := range spec {
		if k := slices.Index(names, e); k >= 0 {
			miss[k] = true
		} else if n, err := strconv.Atoi(e); err == nil && n >= 1 && n <= cols {
			miss[n-1] = true
		}
	}
	return miss
}

// isMissingField reports whether the CSV field f is a missing value: empty,
// NA or NaN, in any case, with spaces around.
func isMissingField(f string) bool {
	f = strings.TrimSpace(f)
	return f == "" || strings.EqualFold(f, "NA") || strings.EqualFold(f, "NaN")
}

// allMissing reports whether row has a column marked in miss and every
// such column is NaN.
func allMissing(row []float64, miss []bool) bool {
	found := false
	for j, m := range miss {
		if m {
			if !math.IsNaN(row[j]) {
				return false
			}
			found = true
		}
	}
	return found
}
