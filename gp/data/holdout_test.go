package data

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// heldRows reads every row of shards with ReadShards in batches of b and
// returns their targets (the tests below make each target a row's id).
func heldRows(t *testing.T, shards []Shard, b int) []float64 {
	t.Helper()
	var ys []float64
	err := ReadShards(shards, b, func(x *mat.Dense, y []float64) error {
		if n, d := x.Dims(); n != len(y) || n > b || d != 2 {
			return fmt.Errorf("batch of %d×%d for %d targets, batch size %d", n, d, len(y), b)
		}
		for i, v := range y {
			if x.At(i, 0) != v || x.At(i, 1) != -v {
				return fmt.Errorf("row %v carries inputs %v", v, x.RawRowView(i))
			}
		}
		ys = append(ys, y...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ys
}

// idShards returns k memory shards of n rows each whose target is the row's
// id and inputs (id, −id).
func idShards(t *testing.T, k, n int) []Shard {
	t.Helper()
	var out []Shard
	for s := 0; s < k; s++ {
		x := mat.NewDense(n, 2, nil)
		y := make([]float64, n)
		for i := range y {
			y[i] = float64(s*n + i)
			x.Set(i, 0, y[i])
			x.Set(i, 1, -y[i])
		}
		sh, err := MemoryShard(fmt.Sprint(s), x, y)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sh)
	}
	return out
}

// TestHoldOutPartitions checks that HoldOut's two sides partition the rows
// (every row in exactly one), that the validation side holds about frac of
// them (within four binomial standard deviations), that the split repeats
// for a seed and changes with it, and that a Stream over the training
// side draws exactly its rows.
func TestHoldOutPartitions(t *testing.T) {
	const k, n, frac = 3, 2000, 0.2
	shards := idShards(t, k, n)
	tr, va, err := HoldOut(shards, frac, 7)
	if err != nil {
		t.Fatal(err)
	}
	a, b := heldRows(t, tr, 97), heldRows(t, va, 1000)
	all := slices.Sorted(slices.Values(append(append([]float64(nil), a...), b...)))
	if len(all) != k*n {
		t.Fatalf("%d + %d rows, want %d", len(a), len(b), k*n)
	}
	for i, v := range all {
		if v != float64(i) {
			t.Fatalf("rows of the two sides, sorted: position %d holds %v", i, v)
		}
	}
	if sd := math.Sqrt(k * n * frac * (1 - frac)); math.Abs(float64(len(b))-k*n*frac) > 4*sd {
		t.Errorf("%d validation rows of %d, expected about %.0f ± %.0f", len(b), k*n, k*n*frac, sd)
	}
	_, va2, _ := HoldOut(shards, frac, 7)
	if again := heldRows(t, va2, 13); !slices.Equal(again, b) {
		t.Error("the same seed held out other rows")
	}
	_, va3, _ := HoldOut(shards, frac, 8)
	if other := heldRows(t, va3, 13); slices.Equal(other, b) {
		t.Error("another seed held out the same rows")
	}
	st, err := NewStream(tr, StreamOptions{Buffer: 50, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if st.Len() != len(a) {
		t.Fatalf("stream over the training side: %d rows, want %d", st.Len(), len(a))
	}
	if err := st.Open(0); err != nil {
		t.Fatal(err)
	}
	x, y := make([]float64, 2*len(a)), make([]float64, len(a))
	if got, err := st.Read(x, y); got != len(a) || err != nil {
		t.Fatalf("Read: %d rows, %v", got, err)
	}
	if !slices.Equal(slices.Sorted(slices.Values(y)), slices.Sorted(slices.Values(a))) {
		t.Error("the stream over the training side drew other rows")
	}
}

// TestHoldOutNamesAndErrors checks that a CSV shard's header reaches
// Summarize through HoldOut, and the errors of HoldOut and ReadShards.
func TestHoldOutNamesAndErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.csv")
	var b strings.Builder
	b.WriteString("u,v,target\n")
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, "%d,%d,%d\n", i, -i, i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	shards, err := OpenShards([]string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr, _, err := HoldOut(shards, 0.3, 1)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Summarize(tr, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(sum.Names, ",") != "u,v,target" || tr[0].Name() != path {
		t.Errorf("names %v, shard %q", sum.Names, tr[0].Name())
	}
	for _, frac := range []float64{0, 1, -0.1, math.NaN()} {
		if _, _, err := HoldOut(shards, frac, 1); err == nil {
			t.Errorf("HoldOut with fraction %v: no error", frac)
		}
	}
	if _, _, err := HoldOut(nil, 0.5, 1); err == nil {
		t.Error("HoldOut of no shards: no error")
	}
	if err := ReadShards(shards, 0, func(*mat.Dense, []float64) error { return nil }); err == nil {
		t.Error("ReadShards with batch 0: no error")
	}
	stop := errors.New("stop")
	if err := ReadShards(shards, 10, func(*mat.Dense, []float64) error { return stop }); err != stop {
		t.Errorf("ReadShards passes on %v, want fn's error", err)
	}
	wide, _ := MemoryShard("wide", mat.NewDense(2, 3, nil), []float64{1, 2})
	err = ReadShards(append(idShards(t, 1, 5), wide), 4, func(*mat.Dense, []float64) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "wide") {
		t.Errorf("ReadShards over shards of different widths: %v", err)
	}
}

// TestStreamKnownCount checks that a Stream given the row and column
// counts of a Summary draws the same rows in the same order as one that
// counts them itself, and the errors of wrong counts.
func TestStreamKnownCount(t *testing.T) {
	shards := idShards(t, 3, 40)
	sum, err := Summarize(shards, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	draw := func(opts StreamOptions) []float64 {
		t.Helper()
		st, err := NewStream(shards, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Open(2); err != nil {
			t.Fatal(err)
		}
		x, y := make([]float64, 2*200), make([]float64, 200)
		k, err := st.Read(x, y)
		if err != nil {
			t.Fatal(err)
		}
		return y[:k]
	}
	counted := draw(StreamOptions{Buffer: 7, Seed: 5})
	known := draw(StreamOptions{Buffer: 7, Seed: 5, Rows: sum.Rows, Dim: sum.Dim})
	if len(counted) != 120 || !slices.Equal(counted, known) {
		t.Errorf("with the counts given: %v\ncounted: %v", known, counted)
	}
	if _, err := NewStream(shards, StreamOptions{Rows: -1}); err == nil {
		t.Error("negative Rows: no error")
	}
	std := &Standardizer{XMean: []float64{0}, XScale: []float64{1}, YScale: 1}
	if _, err := NewStream(shards, StreamOptions{Rows: 120, Dim: 2, Std: std}); err == nil {
		t.Error("a standardizer of 1 column for Dim 2: no error")
	}
}
