package data_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/solvegp/solvegp/gp"
	"github.com/solvegp/solvegp/gp/data"
	"github.com/solvegp/solvegp/gp/kernel"
	"github.com/solvegp/solvegp/gp/likelihood"
	"github.com/solvegp/solvegp/gp/train"
)

// svgp returns a small SOLVE-GP model on 2D inputs, the same each call.
func svgp(t *testing.T) *gp.Model {
	t.Helper()
	k, _ := kernel.NewRBF(2, 1, 1)
	lik, _ := likelihood.NewGaussian(0.1)
	z := mat.NewDense(3, 2, []float64{-1, 0, 0, 0.5, 1, -0.5})
	o := mat.NewDense(2, 2, []float64{-0.5, -0.5, 0.5, 0.5})
	m, err := gp.NewSOLVEGP(k, lik, z, o, gp.WithWhitening(true), gp.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFitSourceFilesEqualMemory trains the same model from three CSV
// shards and from memory shards holding the same rows, with a shuffle
// buffer that holds every row: the parameters agree bit for bit (the CSV
// text round-trips float64 exactly, and both streams draw the same order).
func TestFitSourceFilesEqualMemory(t *testing.T) {
	dir := t.TempDir()
	var files, mem []data.Shard
	id := 0
	for s, size := range []int{17, 9, 14} {
		x := mat.NewDense(size, 2, nil)
		y := make([]float64, size)
		var b strings.Builder
		for i := 0; i < size; i++ {
			u, v := math.Sin(float64(3*id+1)), math.Cos(float64(7*id+2))
			x.SetRow(i, []float64{u, v})
			y[i] = math.Sin(2*u) + 0.3*v
			fmt.Fprintf(&b, "%v,%v,%v\n", u, v, y[i])
			id++
		}
		p := filepath.Join(dir, fmt.Sprintf("s%d.csv", s))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		sh, err := data.CSVShard(p, data.Options{})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, sh)
		ms, _ := data.MemoryShard(p, x, y)
		mem = append(mem, ms)
	}
	params := func(shards []data.Shard) []float64 {
		src, err := data.NewStream(shards, data.StreamOptions{Buffer: 40, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		m := svgp(t)
		if _, err := train.FitSource(context.Background(), m, src, train.Config{Epochs: 3, BatchSize: 8, Schedule: train.Constant(0.02)}); err != nil {
			t.Fatal(err)
		}
		p := make([]float64, m.NumParams())
		m.Params(p)
		return p
	}
	pf, pm := params(files), params(mem)
	for i := range pf {
		if math.Float64bits(pf[i]) != math.Float64bits(pm[i]) {
			t.Fatalf("param %d: files %v, memory %v", i, pf[i], pm[i])
		}
	}
	p0 := svgp(t)
	init := make([]float64, p0.NumParams())
	p0.Params(init)
	moved := false
	for i := range pf {
		moved = moved || pf[i] != init[i]
	}
	if !moved {
		t.Fatal("training did not move the parameters")
	}
}
