package data

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Shard is one part of a data set read sequentially by a Stream: a CSV
// file, a Parquet file or an in-memory matrix. A shard is made of pieces
// that can be read independently (the row groups of a Parquet file; a
// CSV file or a matrix is one piece), which a Stream visits in a random
// order.
type Shard interface {
	// Name names the shard in error messages.
	Name() string
	// Pieces returns the number of independently readable pieces.
	Pieces() int
	// Open starts reading piece i (0-based).
	Open(i int) (RowReader, error)
}

// RowReader reads the rows of one piece of a Shard.
type RowReader interface {
	// Next returns the next row's inputs (valid until the next call) and
	// target, or io.EOF after the last row. Errors name the file and,
	// where there is one, the line or row group.
	Next() (x []float64, y float64, err error)
	// Close releases the piece's resources.
	Close() error
}

// MemoryShard returns a one-piece shard over the rows of x and targets y,
// which must not change while it is in use. A Stream over memory shards
// draws the same rows in the same order as one over file shards holding
// the same rows in the same arrangement (shards, and row groups within
// them), which makes training from files reproducible in memory.
func MemoryShard(name string, x *mat.Dense, y []float64) (Shard, error) {
	if x == nil {
		return nil, fmt.Errorf("data: MemoryShard %s: nil inputs", name)
	}
	if n, _ := x.Dims(); n != len(y) {
		return nil, fmt.Errorf("data: MemoryShard %s: %d rows but %d targets", name, n, len(y))
	}
	return &memShard{name: name, x: x, y: y}, nil
}

type memShard struct {
	name string
	x    *mat.Dense
	y    []float64
}

func (s *memShard) Name() string { return s.name }
func (s *memShard) Pieces() int  { return 1 }
func (s *memShard) Open(i int) (RowReader, error) {
	if i != 0 {
		return nil, fmt.Errorf("data: %s: no piece %d", s.name, i)
	}
	return &memReader{s: s}, nil
}

type memReader struct {
	s *memShard
	i int
}

func (r *memReader) Next() ([]float64, float64, error) {
	if r.i >= len(r.s.y) {
		return nil, 0, io.EOF
	}
	r.i++
	return r.s.x.RawRowView(r.i - 1), r.s.y[r.i-1], nil
}

func (r *memReader) Close() error { return nil }

// CSVShard returns the shard of the CSV or gzip CSV file at path, read
// with opts (header, target column) as LoadCSV reads it; the file is
// opened each time the shard is read, never held in memory.
func CSVShard(path string, opts Options) (Shard, error) {
	if opts.NoTarget {
		return nil, fmt.Errorf("data: CSVShard %s: training shards need a target", path)
	}
	switch opts.Header {
	case HeaderAuto, HeaderPresent, HeaderAbsent:
	default:
		return nil, fmt.Errorf("data: %s: invalid header mode %d", path, opts.Header)
	}
	return &csvShard{path: path, opts: opts}, nil
}

type csvShard struct {
	path string
	opts Options
}

func (s *csvShard) Name() string { return s.path }
func (s *csvShard) Pieces() int  { return 1 }
func (s *csvShard) Open(i int) (RowReader, error) {
	if i != 0 {
		return nil, fmt.Errorf("data: %s: no piece %d", s.path, i)
	}
	f, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	sc, err := newNumScanner(f, s.path, s.opts.Header, nil)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &csvReader{f: f, sc: sc, target: s.opts.Target}, nil
}

// csvReader splits each row of a numScanner into inputs and target.
type csvReader struct {
	f      *os.File
	sc     *numScanner
	target int // 1-based option; 0 is the last column
	x      []float64
	rows   int
	names  []string // header names, the target's last (nil without a header)
}

// Names returns the column names after the first row, inputs first and
// the target last, or nil for a file without a header.
func (r *csvReader) Names() []string { return r.names }

// targetLast returns names with the name at t moved to the end.
func targetLast(names []string, t int) []string {
	return append(append(append([]string(nil), names[:t]...), names[t+1:]...), names[t])
}

func (r *csvReader) Next() ([]float64, float64, error) {
	row, _, err := r.sc.next()
	if err == io.EOF {
		if r.sc.first {
			return nil, 0, &ParseError{File: r.sc.name, Msg: "empty file"}
		}
		if r.rows == 0 {
			return nil, 0, &ParseError{File: r.sc.name, Msg: "no data rows after the header"}
		}
		return nil, 0, io.EOF
	}
	if err != nil {
		return nil, 0, err
	}
	cols := len(row)
	t := r.target
	if t == 0 {
		t = cols
	}
	if t < 1 || t > cols || cols < 2 {
		return nil, 0, &ParseError{File: r.sc.name, Msg: fmt.Sprintf("target column %d out of range or no input column: the file has %s", r.target, columns(cols))}
	}
	r.x = append(append(r.x[:0], row[:t-1]...), row[t:]...)
	if r.rows == 0 && r.sc.names != nil {
		r.names = targetLast(r.sc.names, t-1)
	}
	r.rows++
	return r.x, row[t-1], nil
}

func (r *csvReader) Close() error {
	r.sc.close()
	return r.f.Close()
}

// OpenShards returns the shards of the files at paths: Parquet files (by
// the .parquet extension) and CSV or gzip CSV files (any other name),
// read with opts. A pattern with *, ? or [ is expanded as filepath.Glob
// does, in sorted order; a pattern that matches nothing is an error.
func OpenShards(paths []string, opts Options) ([]Shard, error) {
	names, err := ExpandPaths(paths)
	if err != nil {
		return nil, err
	}
	var out []Shard
	for _, name := range names {
		var s Shard
		var err error
		if IsParquet(name) {
			s, err = ParquetShard(name, opts)
		} else {
			s, err = CSVShard(name, opts)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, errors.New("data: no input files")
	}
	return out, nil
}

// StreamOptions configure a Stream.
type StreamOptions struct {
	// Buffer is the number of rows of the shuffle buffer (default 4096).
	// Memory is Buffer·(columns+1) float64 values.
	Buffer int
	// Seed seeds the order of every epoch.
	Seed uint64
	// Std, if not nil, standardizes every row drawn (inputs and target).
	Std *Standardizer
	// Rows and Dim, if both positive, are the shards' row and input
	// column counts as a pass over them found (Summary.Rows and
	// Summary.Dim): NewStream then trusts them instead of reading every
	// shard to count. A wrong count surfaces at an epoch's end, as an
	// error of gp/train's FitSource, and a wrong width when a row is
	// drawn.
	Rows, Dim int
}

// Stream is a file-backed training source (it implements gp/train's
// Source) over shards that never holds the whole data set.
//
// Randomness: epoch e draws its order from two PCG generators seeded by
// (Seed, e), one for the order of the shards (a uniform permutation) and
// of the pieces within each shard (a uniform permutation of a Parquet
// file's row groups), one for the shuffle buffer. The buffer takes rows
// in that order until it holds Buffer rows (or the input ends), then
// emits a row chosen uniformly among those it holds and takes the next.
// A row thus leaves after a geometric number of draws (mean Buffer) once
// the buffer is full, and never before the rows Buffer places ahead of it
// in that order have arrived: the shuffle is local, rows far apart in the
// shard order keep roughly that order, and a buffer smaller than a shard
// mixes rows across shards only at the shards' borders. With Buffer ≥ Len the epoch is a uniform random permutation of
// the rows. The order depends only on Seed, the epoch and the shards'
// contents and arrangement, so a resumed run sees the same batches, and a
// Stream over MemoryShards holding the same rows in the same shards
// draws exactly the same sequence.
type Stream struct {
	shards []Shard
	opts   StreamOptions
	n, d   int

	// The epoch in progress.
	order     []int // shard order
	pieces    []int // piece order of the current shard
	si, pi    int   // position in order and pieces
	cur       RowReader
	rngBuf    *rand.Rand
	rngOrder  *rand.Rand
	bx        []float64 // buffer rows, row-major
	by        []float64
	count     int
	exhausted bool
	open      bool
}

// NewStream returns a Stream over shards. It reads every shard once to
// count the rows and check that all have the same number of input
// columns; a parse error names the file.
func NewStream(shards []Shard, opts StreamOptions) (*Stream, error) {
	if len(shards) == 0 {
		return nil, errors.New("data: NewStream: no shards")
	}
	if opts.Buffer < 0 {
		return nil, fmt.Errorf("data: NewStream: negative Buffer %d", opts.Buffer)
	}
	if opts.Buffer == 0 {
		opts.Buffer = 4096
	}
	if opts.Std != nil {
		if err := opts.Std.Validate(); err != nil {
			return nil, fmt.Errorf("data: NewStream: %w", err)
		}
	}
	s := &Stream{shards: shards, opts: opts, d: -1}
	if opts.Rows < 0 || opts.Dim < 0 {
		return nil, fmt.Errorf("data: NewStream: negative Rows %d or Dim %d", opts.Rows, opts.Dim)
	}
	if opts.Rows > 0 && opts.Dim > 0 {
		s.n, s.d = opts.Rows, opts.Dim
		if err := s.checkStd(); err != nil {
			return nil, err
		}
		return s, nil
	}
	err := scanShards(shards, func(sh Shard, x []float64, y float64, _ RowReader) error {
		if s.d < 0 {
			s.d = len(x)
		} else if len(x) != s.d {
			return fmt.Errorf("data: %s: %d input columns, the first shard has %d", sh.Name(), len(x), s.d)
		}
		s.n++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.n == 0 {
		return nil, errors.New("data: NewStream: no rows")
	}
	if err := s.checkStd(); err != nil {
		return nil, err
	}
	return s, nil
}

// checkStd checks that the standardizer fits the data's width.
func (s *Stream) checkStd() error {
	if s.opts.Std != nil && len(s.opts.Std.XMean) != s.d {
		return fmt.Errorf("data: NewStream: standardizer for %d columns, data have %d", len(s.opts.Std.XMean), s.d)
	}
	return nil
}

// scanShards calls fn for every row of the shards, in order.
func scanShards(shards []Shard, fn func(sh Shard, x []float64, y float64, r RowReader) error) error {
	for _, sh := range shards {
		for p := 0; p < sh.Pieces(); p++ {
			r, err := sh.Open(p)
			if err != nil {
				return err
			}
			for {
				x, y, err := r.Next()
				if err == io.EOF {
					break
				}
				if err == nil {
					err = fn(sh, x, y, r)
				}
				if err != nil {
					r.Close()
					return err
				}
			}
			if err := r.Close(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Len returns the number of rows of an epoch.
func (s *Stream) Len() int { return s.n }

// Dim returns the number of input columns.
func (s *Stream) Dim() int { return s.d }

// Open starts epoch e (see Stream for the order).
func (s *Stream) Open(epoch int) error {
	s.Close()
	s.rngOrder = rand.New(rand.NewPCG(s.opts.Seed, 0x5eed0<<32|uint64(uint32(epoch))))
	s.rngBuf = rand.New(rand.NewPCG(s.opts.Seed, 0xb0ff<<32|uint64(uint32(epoch))))
	s.order = s.rngOrder.Perm(len(s.shards))
	s.si, s.pi, s.pieces = 0, 0, nil
	b := min(s.opts.Buffer, s.n)
	if cap(s.by) < b {
		s.bx, s.by = make([]float64, b*s.d), make([]float64, b)
	}
	s.bx, s.by = s.bx[:b*s.d], s.by[:b]
	s.count, s.exhausted, s.open = 0, false, true
	return nil
}

// Close ends the epoch in progress, closing its open piece.
func (s *Stream) Close() error {
	var err error
	if s.cur != nil {
		err = s.cur.Close()
		s.cur = nil
	}
	s.open = false
	return err
}

// next returns the next row in shard and piece order, or io.EOF.
func (s *Stream) next() ([]float64, float64, error) {
	for {
		if s.cur != nil {
			x, y, err := s.cur.Next()
			if err != io.EOF {
				return x, y, err
			}
			if err := s.cur.Close(); err != nil {
				return nil, 0, err
			}
			s.cur = nil
			s.pi++
		}
		if s.si >= len(s.order) {
			return nil, 0, io.EOF
		}
		sh := s.shards[s.order[s.si]]
		if s.pieces == nil {
			s.pieces = s.rngOrder.Perm(sh.Pieces())
		}
		if s.pi >= len(s.pieces) {
			s.si, s.pi, s.pieces = s.si+1, 0, nil
			continue
		}
		r, err := sh.Open(s.pieces[s.pi])
		if err != nil {
			return nil, 0, err
		}
		s.cur = r
	}
}

// fill tops the buffer up from the input.
func (s *Stream) fill() error {
	for !s.exhausted && s.count < len(s.by) {
		x, y, err := s.next()
		if err == io.EOF {
			s.exhausted = true
			break
		}
		if err != nil {
			return err
		}
		if len(x) != s.d {
			return fmt.Errorf("data: %s: %d input columns, the stream has %d", s.shards[s.order[s.si]].Name(), len(x), s.d)
		}
		copy(s.bx[s.count*s.d:], x)
		s.by[s.count] = y
		s.count++
	}
	return nil
}

// Read copies up to len(y) rows of the epoch into x and y (see
// train.Source).
func (s *Stream) Read(x, y []float64) (int, error) {
	if !s.open {
		return 0, errors.New("data: Stream.Read before Open")
	}
	d := s.d
	if len(x) < len(y)*d {
		return 0, fmt.Errorf("data: Stream.Read: %d input values for %d rows of %d", len(x), len(y), d)
	}
	k := 0
	for ; k < len(y); k++ {
		if err := s.fill(); err != nil {
			return k, err
		}
		if s.count == 0 {
			break
		}
		j := s.rngBuf.IntN(s.count)
		last := s.count - 1
		xr := x[k*d : (k+1)*d]
		copy(xr, s.bx[j*d:(j+1)*d])
		y[k] = s.by[j]
		copy(s.bx[j*d:(j+1)*d], s.bx[last*d:(last+1)*d])
		s.by[j] = s.by[last]
		s.count--
		if std := s.opts.Std; std != nil {
			for c, v := range xr {
				xr[c] = standardize(v, std.XMean[c], std.XScale[c])
			}
			y[k] = standardize(y[k], std.YMean, std.YScale)
		}
	}
	if k == 0 && len(y) > 0 {
		return 0, io.EOF
	}
	return k, nil
}

// globSorted expands a file pattern, sorted.
func globSorted(pattern string) ([]string, error) {
	m, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("data: bad pattern %q: %w", pattern, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("data: %q matches no file", pattern)
	}
	slices.Sort(m)
	return m, nil
}

// standardize is (v − mean)/scale as Standardizer.TransformX computes it,
// guarded against the overflow of the difference.
func standardize(v, mean, scale float64) float64 {
	z := (v - mean) / scale
	if math.IsInf(z, 0) && !math.IsInf(v, 0) {
		z = v/scale - mean/scale
	}
	return z
}
