package data

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// HoldOut splits the rows of shards into a training and a validation set
// without reading them: row r of piece p of shards[s] goes to the
// validation set when a hash of (seed, s, p, r) falls below frac, so that
// each row is held out independently with probability frac, the split
// depends only on the seed and the rows' places (not on the order a Stream
// visits them in), and both sets are read from the same files. The
// returned shards name the files as the originals do; a piece may hold no
// row of one of the sets. frac must be in (0, 1).
func HoldOut(shards []Shard, frac float64, seed uint64) (train, valid []Shard, err error) {
	if !(frac > 0 && frac < 1) {
		return nil, nil, fmt.Errorf("data: HoldOut: fraction %v not in (0, 1)", frac)
	}
	if len(shards) == 0 {
		return nil, nil, errors.New("data: HoldOut: no shards")
	}
	// The hash is compared with frac scaled to 53 bits.
	limit := uint64(math.Ldexp(frac, 53))
	for s, sh := range shards {
		train = append(train, &heldShard{Shard: sh, index: uint64(s), seed: seed, limit: limit, valid: false})
		valid = append(valid, &heldShard{Shard: sh, index: uint64(s), seed: seed, limit: limit, valid: true})
	}
	return train, valid, nil
}

// heldShard is one side of a HoldOut split of a shard.
type heldShard struct {
	Shard
	index, seed, limit uint64
	valid              bool
}

func (h *heldShard) Open(i int) (RowReader, error) {
	r, err := h.Shard.Open(i)
	if err != nil {
		return nil, err
	}
	key := mix(mix(h.seed^0x686f6c646f7574) ^ h.index)
	return &heldReader{RowReader: r, key: mix(key ^ uint64(i)), h: h}, nil
}

// heldReader passes on the rows of a piece on its side of the split.
type heldReader struct {
	RowReader
	key uint64
	row uint64
	h   *heldShard
}

// Names passes on the column names of the underlying reader, if it has
// them.
func (r *heldReader) Names() []string {
	if nr, ok := r.RowReader.(interface{ Names() []string }); ok {
		return nr.Names()
	}
	return nil
}

func (r *heldReader) Next() ([]float64, float64, error) {
	for {
		x, y, err := r.RowReader.Next()
		if err != nil {
			return x, y, err
		}
		u := mix(r.key^r.row) >> 11
		r.row++
		if (u < r.h.limit) == r.h.valid {
			return x, y, nil
		}
	}
}

// mix is SplitMix64's finalizer, a bijection of 64-bit words whose output
// bits each depend on every input bit.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// ReadShards reads the rows of shards in order (shards, then their pieces,
// then rows) and calls fn with consecutive batches of at most batch rows:
// the inputs as a matrix and the targets, both valid only during the call.
// It holds one batch at a time, whatever the size of the shards. Read
// errors name the file; fn's error ends the reading and is returned.
func ReadShards(shards []Shard, batch int, fn func(x *mat.Dense, y []float64) error) error {
	if batch < 1 {
		return fmt.Errorf("data: ReadShards: batch %d, need at least 1", batch)
	}
	var xs, ys []float64
	d := -1
	flush := func() error {
		if len(ys) == 0 {
			return nil
		}
		err := fn(mat.NewDense(len(ys), d, xs), ys)
		xs, ys = xs[:0], ys[:0]
		return err
	}
	err := scanShards(shards, func(sh Shard, x []float64, y float64, _ RowReader) error {
		if d < 0 {
			if d = len(x); d == 0 {
				return fmt.Errorf("data: %s: no input column", sh.Name())
			}
			xs, ys = make([]float64, 0, batch*d), make([]float64, 0, batch)
		} else if len(x) != d {
			return fmt.Errorf("data: %s: %d input columns, the first shard has %d", sh.Name(), len(x), d)
		}
		xs, ys = append(xs, x...), append(ys, y)
		if len(ys) == batch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if d < 0 {
		return errors.New("data: ReadShards: no rows")
	}
	return nil
}
