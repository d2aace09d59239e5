package randstate

import (
	"math/rand/v2"
	"testing"
)

func TestSaveRestore(t *testing.T) {
	p := rand.NewPCG(1, 2)
	p.Uint64()
	st := Save(p)
	a, b := p.Uint64(), p.Uint64()
	if err := Restore(p, []byte("not a state")); err == nil {
		t.Error("a bad state was accepted")
	}
	if got := p.Uint64(); got == a {
		t.Error("a refused state rewound the generator")
	}
	if err := Restore(p, st); err != nil {
		t.Fatal(err)
	}
	if x, y := p.Uint64(), p.Uint64(); x != a || y != b {
		t.Errorf("after Restore the generator gives %d, %d; want %d, %d", x, y, a, b)
	}
}
