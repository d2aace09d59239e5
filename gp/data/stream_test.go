package data

import (
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// writeShards writes rows 0..n-1 (inputs id, id², target id) into
// len(sizes) CSV files of the given sizes, the second one gzip-compressed,
// and returns their paths and the rows as matrices, one per shard.
func writeShards(t *testing.T, dir string, sizes []int) ([]string, []*mat.Dense, [][]float64) {
	t.Helper()
	var paths []string
	var xs []*mat.Dense
	var ys [][]float64
	id := 0
	for s, size := range sizes {
		var b strings.Builder
		b.WriteString("a,b,target\n")
		x := mat.NewDense(size, 2, nil)
		y := make([]float64, size)
		for i := 0; i < size; i++ {
			v := float64(id) + 0.25
			x.Set(i, 0, v)
			x.Set(i, 1, math.Sin(v))
			y[i] = float64(id)
			fmt.Fprintf(&b, "%v,%v,%v\n", x.At(i, 0), x.At(i, 1), y[i])
			id++
		}
		p := filepath.Join(dir, fmt.Sprintf("part%d.csv", s))
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if s == 1 {
			zw := gzip.NewWriter(f)
			io.WriteString(zw, b.String())
			zw.Close()
		} else {
			io.WriteString(f, b.String())
		}
		f.Close()
		paths = append(paths, p)
		xs = append(xs, x)
		ys = append(ys, y)
	}
	return paths, xs, ys
}

// drain reads one epoch of s in batches of b rows.
func drain(t *testing.T, s *Stream, epoch, b int) (x, y []float64) {
	t.Helper()
	if err := s.Open(epoch); err != nil {
		t.Fatal(err)
	}
	bx, by := make([]float64, b*s.Dim()), make([]float64, b)
	for {
		k, err := s.Read(bx, by)
		if err == io.EOF {
			return x, y
		}
		if err != nil {
			t.Fatal(err)
		}
		x = append(x, bx[:k*s.Dim()]...)
		y = append(y, by[:k]...)
	}
}

// TestStreamVisitsEveryRowOnce reads several epochs of four shards through
// a 5-row buffer and checks that each epoch holds every row exactly once
// (with its own inputs), that epochs differ, and that the order is
// reproducible from the seed.
func TestStreamVisitsEveryRowOnce(t *testing.T) {
	paths, _, _ := writeShards(t, t.TempDir(), []int{7, 13, 1, 9})
	shards, err := OpenShards([]string{filepath.Join(filepath.Dir(paths[0]), "part*.csv")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStream(shards, StreamOptions{Buffer: 5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 30 || s.Dim() != 2 {
		t.Fatalf("Len %d Dim %d", s.Len(), s.Dim())
	}
	var first []float64
	for epoch := 0; epoch < 4; epoch++ {
		x, y := drain(t, s, epoch, 4)
		seen := make([]int, 30)
		for i, v := range y {
			seen[int(v)]++
			if x[2*i] != v+0.25 || x[2*i+1] != math.Sin(v+0.25) {
				t.Fatalf("epoch %d: row %v carries inputs %v", epoch, v, x[2*i:2*i+2])
			}
		}
		for id, c := range seen {
			if c != 1 {
				t.Fatalf("epoch %d: row %d seen %d times", epoch, id, c)
			}
		}
		if epoch == 0 {
			first = y
		} else if fmt.Sprint(y) == fmt.Sprint(first) {
			t.Errorf("epoch %d has epoch 0's order", epoch)
		}
	}
	s2, _ := NewStream(shards, StreamOptions{Buffer: 5, Seed: 3})
	if _, y := drain(t, s2, 0, 7); fmt.Sprint(y) != fmt.Sprint(first) {
		t.Error("same seed and epoch, different order (or batch size changed it)")
	}
}

// TestStreamFilesEqualMemory checks that file shards and memory shards
// with the same rows give the same epochs bit for bit, with a buffer that
// holds every row and with a small one.
func TestStreamFilesEqualMemory(t *testing.T) {
	paths, xs, ys := writeShards(t, t.TempDir(), []int{6, 11, 8})
	files, err := OpenShards(paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mem []Shard
	for i := range xs {
		sh, err := MemoryShard(fmt.Sprint(i), xs[i], ys[i])
		if err != nil {
			t.Fatal(err)
		}
		mem = append(mem, sh)
	}
	for _, buf := range []int{25, 3} {
		sf, err := NewStream(files, StreamOptions{Buffer: buf, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		sm, err := NewStream(mem, StreamOptions{Buffer: buf, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		for epoch := 0; epoch < 3; epoch++ {
			xf, yf := drain(t, sf, epoch, 4)
			xm, ym := drain(t, sm, epoch, 4)
			if fmt.Sprint(xf, yf) != fmt.Sprint(xm, ym) {
				t.Fatalf("buffer %d epoch %d: files and memory differ", buf, epoch)
			}
		}
	}
}

// TestSummarizeMatchesFitStandardizer compares the one-pass statistics
// with the two-pass standardizer, and checks the reservoir sample.
func TestSummarizeMatchesFitStandardizer(t *testing.T) {
	paths, xs, ys := writeShards(t, t.TempDir(), []int{40, 25, 35})
	shards, err := OpenShards(paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Summarize(shards, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(100, 2, nil)
	var y []float64
	r := 0
	for i := range xs {
		n, _ := xs[i].Dims()
		for k := 0; k < n; k++ {
			x.SetRow(r, xs[i].RawRowView(k))
			r++
		}
		y = append(y, ys[i]...)
	}
	want, err := FitStandardizer(x, y)
	if err != nil {
		t.Fatal(err)
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-14*math.Max(math.Abs(b), 1) }
	for j := 0; j < 2; j++ {
		if !close(sum.Std.XMean[j], want.XMean[j]) || !close(sum.Std.XScale[j], want.XScale[j]) {
			t.Errorf("column %d: %v %v, want %v %v", j, sum.Std.XMean[j], sum.Std.XScale[j], want.XMean[j], want.XScale[j])
		}
	}
	if !close(sum.Std.YMean, want.YMean) || !close(sum.Std.YScale, want.YScale) || sum.Rows != 100 {
		t.Errorf("target %v %v, want %v %v (rows %d)", sum.Std.YMean, sum.Std.YScale, want.YMean, want.YScale, sum.Rows)
	}
	if n, _ := sum.SampleX.Dims(); n != 10 {
		t.Fatalf("sample of %d rows", n)
	}
	seen := map[float64]bool{}
	late := 0
	for i, v := range sum.SampleY {
		if seen[v] || sum.SampleX.At(i, 0) != v+0.25 {
			t.Fatalf("sample row %d: %v, %v", i, v, sum.SampleX.RawRowView(i))
		}
		seen[v] = true
		if v >= 10 {
			late++
		}
	}
	if late == 0 {
		t.Error("the reservoir kept only the first rows")
	}
}

// TestStreamShardErrors checks that a malformed shard is an error naming
// the file, and that shards of different widths are refused.
func TestStreamShardErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.csv")
	os.WriteFile(good, []byte("1,2,3\n4,5,6\n"), 0o644)
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("1,2,3\n4,x,6\n"), 0o644)
	narrow := filepath.Join(dir, "narrow.csv")
	os.WriteFile(narrow, []byte("1,2\n"), 0o644)
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{good, bad}, "bad.csv:2:2"},
		{[]string{good, narrow}, "narrow.csv: 1 input columns, the first shard has 2"},
		{[]string{filepath.Join(dir, "none*.csv")}, "matches no file"},
	} {
		shards, err := OpenShards(c.files, Options{})
		if err == nil {
			_, err = NewStream(shards, StreamOptions{})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.files, err, c.want)
		}
	}
}
