package fuzz

import (
	"bytes"
	"slices"
	"testing"

	"github.com/solvegp/solvegp/convgp/dataset"
)

// FuzzIDX feeds arbitrary bytes to dataset.ReadIDX: it must return an
// error or an IDX whose dimensions hold its data, and what it accepts must
// be written back by IDX.WriteTo to the same bytes.
func FuzzIDX(f *testing.F) {
	f.Add([]byte{0, 0, 8, 1, 0, 0, 0, 3, 7, 8, 9})
	f.Add([]byte{0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4})
	f.Add([]byte{0, 0, 8, 2, 0, 0, 0, 0, 0, 0, 0, 5})
	f.Add([]byte{0, 0, 8, 1, 255, 255, 255, 255})
	f.Add([]byte{0, 0, 9, 1, 0, 0, 0, 1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := dataset.ReadIDX(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		total := 1
		for _, d := range x.Dims {
			total *= d
		}
		if len(x.Dims) == 0 || total != len(x.Data) {
			t.Fatalf("dims %v with %d data bytes", x.Dims, len(x.Data))
		}
		var out bytes.Buffer
		if n, err := x.WriteTo(&out); err != nil || n != int64(len(b)) || !bytes.Equal(out.Bytes(), b) {
			t.Fatalf("WriteTo: %d bytes, %v; want the %d bytes read", n, err, len(b))
		}
		y, err := dataset.ReadIDX(&out, "fuzz again")
		if err != nil || !slices.Equal(y.Dims, x.Dims) || !bytes.Equal(y.Data, x.Data) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
