package modelfile

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
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
		{versionField, `"version": 3`, "collapsed_bound needs format version 4"},
	} {
		_, err := Unmarshal([]byte(strings.Replace(s, c.old, c.new, 1)))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: %v, want %q", c.old, c.new, err, c.want)
		}
	}
}
