package modelfile

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/solvegp/solvegp/gp"
)

// TestCollapsedBound checks that Bundle.CollapsedBound is written and read
// back, is covered by model_sha256, that a value other than standard or
// tighter is refused by Marshal and Unmarshal, and that a file claiming a
// version before 4 may not carry it.
func TestCollapsedBound(t *testing.T) {
	model := build(t, cases()[0], rand.New(rand.NewPCG(41, 41)))
	for _, v := range []string{"", "standard", "tighter"} {
		buf, err := Marshal(&Bundle{Model: model, CollapsedBound: v})
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(buf), `"collapsed_bound"`); has != (v != "") {
			t.Errorf("bound %q: collapsed_bound written %v", v, has)
		}
		b, err := Unmarshal(buf)
		if err != nil || b.CollapsedBound != v {
			t.Errorf("bound %q: read back %q, %v", v, b.CollapsedBound, err)
		}
	}
	if _, err := Marshal(&Bundle{Model: model, CollapsedBound: "tight"}); err == nil {
		t.Error("Marshal accepted collapsed bound \"tight\"")
	}
	buf, err := Marshal(&Bundle{Model: model, CollapsedBound: "tighter"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(buf)
	for _, c := range []struct{ old, new, want string }{
		{`"collapsed_bound": "tighter"`, `"collapsed_bound": "standard"`, "model_sha256"},
		{`"collapsed_bound": "tighter"`, `"collapsed_bound": "loose"`, "neither"},
		{curVersion, `"version": 3`, "collapsed_bound needs format version 4"},
	} {
		_, err := Unmarshal([]byte(strings.Replace(s, c.old, c.new, 1)))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: %v, want %q", c.old, c.new, err, c.want)
		}
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
