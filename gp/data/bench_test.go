package data

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkReadCSV parses a generated table shaped like the UCI files
// (20 columns of full-precision numbers), plain and gzip-compressed, and
// reports throughput in uncompressed bytes. With -short it uses 1000 rows.
func BenchmarkReadCSV(b *testing.B) {
	rows := 50000
	if testing.Short() {
		rows = 1000
	}
	rng := rand.New(rand.NewPCG(1, 1))
	var buf bytes.Buffer
	for j := 0; j < 20; j++ {
		if j > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, "x%d", j+1)
	}
	buf.WriteByte('\n')
	for i := 0; i < rows; i++ {
		for j := 0; j < 20; j++ {
			if j > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(strconv.FormatFloat(rng.NormFloat64(), 'g', -1, 64))
		}
		buf.WriteByte('\n')
	}
	plain := buf.Bytes()
	var zbuf bytes.Buffer
	zw := gzip.NewWriter(&zbuf)
	zw.Write(plain)
	zw.Close()
	for _, c := range []struct {
		name string
		in   []byte
	}{{"plain", plain}, {"gzip", zbuf.Bytes()}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			for i := 0; i < b.N; i++ {
				if _, err := ReadCSV(bytes.NewReader(c.in), "bench.csv", Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
