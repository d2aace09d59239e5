package data

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// writeParquetFile writes n rows (x1 = i+0.5, x2 = -i/3, y = i) with
// row groups of at most group rows.
func writeParquetFile(t *testing.T, path string, n, group int) {
	t.Helper()
	x1, x2, y := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range y {
		x1[i], x2[i], y[i] = float64(i)+0.5, -float64(i)/3, float64(i)
	}
	var b bytes.Buffer
	if err := WriteParquet(&b, []string{"x2", "x1", "y"}, [][]float64{x2, x1, y}, group); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestParquetRoundTrip writes a Parquet file in several row groups and
// reads it back whole, by name, and through a Stream that must visit
// every row once per epoch and permute the row groups.
func TestParquetRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.parquet")
	writeParquetFile(t, path, 50, 8)
	tab, err := LoadParquet(path, Options{Target: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Columns are stored sorted by name: x1, x2, y.
	if fmt.Sprint(tab.Names) != "[x1 x2 y]" {
		t.Fatalf("names %v", tab.Names)
	}
	for i := 0; i < 50; i++ {
		if tab.X.At(i, 0) != float64(i)+0.5 || tab.X.At(i, 1) != -float64(i)/3 || tab.Y[i] != float64(i) {
			t.Fatalf("row %d: %v %v", i, tab.X.RawRowView(i), tab.Y[i])
		}
	}
	shards, err := OpenShards([]string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if shards[0].Pieces() != 7 {
		t.Fatalf("%d row groups, want 7", shards[0].Pieces())
	}
	s, err := NewStream(shards, StreamOptions{Buffer: 1, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	permuted := false
	for epoch := 0; epoch < 3; epoch++ {
		x, y := drain(t, s, epoch, 6)
		seen := map[float64]int{}
		for i, v := range y {
			seen[v]++
			if x[2*i] != v+0.5 || x[2*i+1] != -v/3 {
				t.Fatalf("row %v: %v", v, x[2*i:2*i+2])
			}
		}
		if len(seen) != 50 || len(y) != 50 {
			t.Fatalf("epoch %d: %d distinct of %d rows", epoch, len(seen), len(y))
		}
		// With a one-row buffer the order is the row-group order: the
		// first row must start a row group, and not always the first.
		if int(y[0])%8 != 0 {
			t.Fatalf("epoch %d starts at row %v", epoch, y[0])
		}
		// Rows within a row group stay in order.
		for i := 1; i < len(y); i++ {
			if int(y[i])%8 != 0 && y[i] != y[i-1]+1 {
				t.Fatalf("epoch %d: row %v follows %v inside a row group", epoch, y[i], y[i-1])
			}
		}
		permuted = permuted || y[0] != 0
	}
	if !permuted {
		t.Error("row groups were never permuted")
	}
}

// TestParquetTruncated checks that truncated and damaged files are errors
// naming the file, never partial tables.
func TestParquetTruncated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "full.parquet")
	writeParquetFile(t, path, 300, 64)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{"full": full}
	for _, cut := range []int{0, 3, len(full) / 2, len(full) - 9, len(full) - 1} {
		cases[fmt.Sprintf("cut%d", cut)] = full[:cut]
	}
	// Damage page bytes in the middle of the file, footer intact.
	bad := append([]byte(nil), full...)
	for i := len(bad) / 3; i < len(bad)/3+40; i++ {
		bad[i] ^= 0x5a
	}
	cases["damaged"] = bad
	for name, b := range cases {
		p := filepath.Join(dir, name+".parquet")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		tab, err := LoadParquet(p, Options{})
		// ReadParquet, on the same bytes in memory, agrees.
		mtab, merr := ReadParquet(bytes.NewReader(b), int64(len(b)), "mem-"+name, Options{})
		if (merr == nil) != (err == nil) || merr != nil && (mtab != nil || !strings.Contains(merr.Error(), "mem-"+name)) {
			t.Errorf("%s: LoadParquet error %v, ReadParquet %v", name, err, merr)
		}
		if err == nil && merr == nil && !mat.Equal(tab.X, mtab.X) {
			t.Errorf("%s: ReadParquet read other inputs than LoadParquet", name)
		}
		if err == nil {
			// Damage that leaves the values decodable is not detectable
			// without checksums; it must still give whole rows.
			if name != "damaged" && name != "full" {
				t.Errorf("%s: no error", name)
			} else if n, _ := tab.X.Dims(); n != 300 {
				t.Errorf("%s: %d rows", name, n)
			}
			continue
		}
		if tab != nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: table %v, error %v (must name the file)", name, tab != nil, err)
		}
		t.Logf("%s: %v", name, err)
	}
}

// FuzzLoadParquet feeds damaged Parquet files to LoadParquet: it must
// return a whole table or an error naming the file, never panic.
func FuzzLoadParquet(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed.parquet")
	var b bytes.Buffer
	if err := WriteParquet(&b, []string{"a", "y"}, [][]float64{{1, 2, 3}, {4, 5, 6}}, 2); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes(), 0, byte(0))
	f.Add(b.Bytes(), b.Len()/2, byte(0xff))
	f.Add(b.Bytes(), 20, byte(1))
	f.Add([]byte("PAR1\x00~\x01\x00\xffPAR1"), 0, byte(0)) // a footer length of 4 GiB
	if err := os.WriteFile(seed, b.Bytes(), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, file []byte, at int, flip byte) {
		if len(file) > 0 {
			file = append([]byte(nil), file...)
			file[(at%len(file)+len(file))%len(file)] ^= flip
		}
		p := filepath.Join(t.TempDir(), "f.parquet")
		if err := os.WriteFile(p, file, 0o644); err != nil {
			t.Fatal(err)
		}
		tab, err := LoadParquet(p, Options{})
		if err != nil {
			if tab != nil || !strings.Contains(err.Error(), p) {
				t.Fatalf("table %v, error %v", tab != nil, err)
			}
			return
		}
		if n, _ := tab.X.Dims(); n != len(tab.Y) {
			t.Fatalf("%d rows, %d targets", n, len(tab.Y))
		}
	})
}

// TestParquetFooterLength checks that a file whose footer claims more bytes
// than it has is refused before anything of that size is allocated.
func TestParquetFooterLength(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.parquet")
	if err := os.WriteFile(p, []byte("PAR1\x00~\x01\x00\xffPAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tab, err := LoadParquet(p, Options{})
	runtime.ReadMemStats(&after)
	if tab != nil || err == nil || !strings.Contains(err.Error(), "footer length 4278190462 does not fit in 13 bytes") {
		t.Fatalf("table %v, error %v", tab != nil, err)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 1<<20 {
		t.Errorf("refusing the file allocated %d bytes", grown)
	}
}
