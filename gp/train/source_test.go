package train

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// permSource replays, epoch by epoch, the permutation Fit draws from
// Config.Seed, so that FitSource on it must take exactly Fit's steps.
type permSource struct {
	x      *mat.Dense
	y      []float64
	seed   uint64
	perm   []int
	epochs int // epochs opened
	pos    int
	extra  int // rows served beyond Len (to test the check)
	short  int // rows withheld (to test the check)
}

func (s *permSource) Len() int { return len(s.y) }
func (s *permSource) Dim() int { _, d := s.x.Dims(); return d }
func (s *permSource) Open(epoch int) error {
	rng := rand.New(rand.NewPCG(s.seed, 0x7a11ab1e))
	s.perm = make([]int, len(s.y))
	for i := range s.perm {
		s.perm[i] = i
	}
	for e := 0; e <= epoch; e++ {
		rng.Shuffle(len(s.perm), func(i, j int) { s.perm[i], s.perm[j] = s.perm[j], s.perm[i] })
	}
	s.pos = 0
	s.epochs++
	return nil
}
func (s *permSource) Read(x, y []float64) (int, error) {
	d := s.Dim()
	k := 0
	for ; k < len(y) && s.pos < len(s.y)+s.extra-s.short; k++ {
		i := s.perm[s.pos%len(s.y)]
		copy(x[k*d:(k+1)*d], s.x.RawRowView(i))
		y[k] = s.y[i]
		s.pos++
	}
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}

// TestFitSourceEqualsFit checks that FitSource shares Fit's step code: on
// a source that draws Fit's own permutations it gives the same
// parameters bit for bit, also when resumed from a mid-epoch checkpoint.
func TestFitSourceEqualsFit(t *testing.T) {
	x, y := blrData(53, 4)
	cfg := Config{Epochs: 4, BatchSize: 10, Seed: 7, Schedule: Constant(0.05)}
	b1 := newBLR(3)
	r1, err := Fit(context.Background(), b1, x, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b2 := newBLR(3)
	var mid *Checkpoint
	var midParams []float64
	cfg2 := cfg
	cfg2.OnStep = func(s StepInfo) error {
		if s.Step == 13 {
			c := s.Checkpoint()
			mid = &c
			midParams = make([]float64, b2.NumParams())
			b2.Params(midParams)
		}
		return nil
	}
	r2, err := FitSource(context.Background(), b2, &permSource{x: x, y: y, seed: 7}, cfg2)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Steps != r2.Steps || r1.Epochs != r2.Epochs || math.Float64bits(r1.Objective) != math.Float64bits(r2.Objective) {
		t.Fatalf("Fit %+v, FitSource %+v", r1, r2)
	}
	p1, p2 := make([]float64, b1.NumParams()), make([]float64, b1.NumParams())
	b1.Params(p1)
	b2.Params(p2)
	for i := range p1 {
		if math.Float64bits(p1[i]) != math.Float64bits(p2[i]) {
			t.Fatalf("param %d: Fit %v, FitSource %v", i, p1[i], p2[i])
		}
	}
	// Resume mid-epoch (step 13 is the third batch of epoch 2).
	b3 := newBLR(3)
	if err := b3.SetParams(midParams); err != nil {
		t.Fatal(err)
	}
	cfg3 := cfg
	cfg3.Resume = mid
	if _, err := FitSource(context.Background(), b3, &permSource{x: x, y: y, seed: 7}, cfg3); err != nil {
		t.Fatal(err)
	}
	p3 := make([]float64, b3.NumParams())
	b3.Params(p3)
	for i := range p1 {
		if math.Float64bits(p1[i]) != math.Float64bits(p3[i]) {
			t.Fatalf("resumed param %d: %v, uninterrupted %v", i, p3[i], p1[i])
		}
	}
}

// TestFitSourceBadSources checks the errors for sources that break their
// contract or serve bad rows.
func TestFitSourceBadSources(t *testing.T) {
	x, y := blrData(20, 4)
	cfg := Config{Epochs: 2, BatchSize: 6, Seed: 1}
	for _, c := range []struct {
		name string
		src  Source
		want string
	}{
		{"nil", nil, "nil source"},
		{"short", &permSource{x: x, y: y, short: 3}, "ended after 17 rows"},
		{"long", &permSource{x: x, y: y, extra: 1}, "more rows than"},
	} {
		_, err := FitSource(context.Background(), newBLR(3), c.src, cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	bad := mat.DenseCopyOf(x)
	bad.Set(14, 1, math.NaN())
	b := newBLR(3)
	before := make([]float64, b.NumParams())
	b.Params(before)
	res, err := FitSource(context.Background(), b, &permSource{x: bad, y: y}, cfg)
	if err == nil || !strings.Contains(err.Error(), "NaN") || res.Reason != Failed {
		t.Fatalf("NaN row: %v, %v", res.Reason, err)
	}
	after := make([]float64, b.NumParams())
	b.Params(after)
	for _, v := range after {
		if math.IsNaN(v) {
			t.Fatal("NaN parameters after a bad batch")
		}
	}
	if errors.Is(err, ErrDiverged) {
		t.Error("a bad row is not divergence")
	}
}
