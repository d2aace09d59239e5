package modelfile

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp"
)

// TestCollapsedBound checks that Bundle.CollapsedBound and
// CollapsedBlockSize are written and read back, are covered by
// model_sha256, that a value other than standard, tighter or blockdiag, a
// blockdiag bound without a block size and a block size with another
// bound are refused by Marshal and Unmarshal, and that a file claiming a
// version before 4 may not carry a bound, nor one before 5 blockdiag.
func TestCollapsedBound(t *testing.T) {
	model := build(t, cases()[0], rand.New(rand.NewPCG(41, 41)))
	for _, c := range []struct {
		bound string
		size  int
	}{{"", 0}, {"standard", 0}, {"tighter", 0}, {"blockdiag", 1}, {"blockdiag", 128}} {
		buf, err := Marshal(&Bundle{Model: model, CollapsedBound: c.bound, CollapsedBlockSize: c.size})
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(buf), `"collapsed_bound"`); has != (c.bound != "") {
			t.Errorf("bound %q: collapsed_bound written %v", c.bound, has)
		}
		if has := strings.Contains(string(buf), `"collapsed_block_size"`); has != (c.size != 0) {
			t.Errorf("bound %q: collapsed_block_size written %v", c.bound, has)
		}
		b, err := Unmarshal(buf)
		if err != nil || b.CollapsedBound != c.bound || b.CollapsedBlockSize != c.size {
			t.Errorf("bound %q size %d: read back %q %d, %v", c.bound, c.size, b.CollapsedBound, b.CollapsedBlockSize, err)
		}
	}
	for _, c := range []struct {
		bound string
		size  int
	}{{"tight", 0}, {"blockdiag", 0}, {"blockdiag", -2}, {"tighter", 8}, {"", 8}} {
		if _, err := Marshal(&Bundle{Model: model, CollapsedBound: c.bound, CollapsedBlockSize: c.size}); err == nil {
			t.Errorf("Marshal accepted collapsed bound %q with block size %d", c.bound, c.size)
		}
	}
	buf, err := Marshal(&Bundle{Model: model, CollapsedBound: "blockdiag", CollapsedBlockSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	s := string(buf)
	cur := fmt.Sprintf(`"version": %d`, Version)
	for _, c := range []struct{ old, new, want string }{
		{`"collapsed_bound": "blockdiag"`, `"collapsed_bound": "standard"`, "goes with"},
		{`"collapsed_block_size": 64`, `"collapsed_block_size": 65`, "model_sha256"},
		{`"collapsed_block_size": 64`, `"collapsed_block_size": 0`, "at least 1"},
		{`"collapsed_bound": "blockdiag"`, `"collapsed_bound": "loose"`, "none of"},
		{cur, `"version": 4`, "blockdiag\" needs format version 5"},
		{cur, `"version": 3`, "collapsed_bound needs format version 4"},
	} {
		_, err := Unmarshal([]byte(strings.Replace(s, c.old, c.new, 1)))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: %v, want %q", c.old, c.new, err, c.want)
		}
	}
	// A version 4 file with the tighter bound still loads, and a resigned
	// version 4 file with blockdiag does not.
	buf, err = Marshal(&Bundle{Model: model, CollapsedBound: "tighter"})
	if err != nil {
		t.Fatal(err)
	}
	v4 := resign(t, []byte(strings.Replace(string(buf), cur, `"version": 4`, 1)))
	if b, err := Unmarshal(v4); err != nil || b.CollapsedBound != "tighter" {
		t.Errorf("version 4 file with the tighter bound: %v", err)
	}
	if _, err := Unmarshal(resign(t, []byte(strings.Replace(s, cur, `"version": 4`, 1)))); err == nil {
		t.Error("version 4 file with the blockdiag bound loaded")
	}
}

// TestModelBound checks that the bound of a model trained by mini-batches
// (gp.WithBound) is written as "bound" for the tighter bound only, read
// back into the loaded model (which evaluates the same objective), covered
// by model_sha256, refused with an unknown value, and refused in a file
// claiming a version before 5.
func TestModelBound(t *testing.T) {
	x, y := randMatrix(rand.New(rand.NewPCG(3, 3)), 9, 2), make([]float64, 9)
	for i := range y {
		y[i] = x.At(i, 0) - x.At(i, 1)
	}
	for _, c := range cases()[:6] {
		for _, b := range []gp.BoundKind{gp.StandardBound, gp.TighterBound} {
			model := build(t, c, rand.New(rand.NewPCG(42, 42)), gp.WithBound(b))
			buf, err := Marshal(&Bundle{Model: model})
			if err != nil {
				t.Fatal(err)
			}
			if has := strings.Contains(string(buf), `"bound": "tighter"`); has != (b == gp.TighterBound) {
				t.Errorf("%v %v: bound written %v", c.kind, b, has)
			}
			back, err := Unmarshal(buf)
			if err != nil {
				t.Fatal(err)
			}
			if back.Model.Bound() != b {
				t.Errorf("%v: read back bound %v, want %v", c.kind, back.Model.Bound(), b)
			}
			f0, err0 := model.Objective(x, y, 30, nil)
			f1, err1 := back.Model.Objective(x, y, 30, nil)
			if err0 != nil || err1 != nil || f0 != f1 {
				t.Errorf("%v %v: objective %v (%v) before, %v (%v) after the round trip", c.kind, b, f0, err0, f1, err1)
			}
		}
	}
	model := build(t, cases()[0], rand.New(rand.NewPCG(42, 42)), gp.WithBound(gp.TighterBound))
	buf, err := Marshal(&Bundle{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	s := string(buf)
	for _, c := range []struct{ old, new, want string }{
		{`"bound": "tighter"`, `"bound": "standard"`, "model_sha256"},
		{`"bound": "tighter"`, `"bound": "loose"`, "neither"},
		{curVersion, `"version": 4`, "bound needs format version 5"},
	} {
		_, err := Unmarshal([]byte(strings.Replace(s, c.old, c.new, 1)))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: %v, want %q", c.old, c.new, err, c.want)
		}
	}
}

// curVersion is the version field of a file this package writes.
var curVersion = fmt.Sprintf(`"version": %d`, Version)
