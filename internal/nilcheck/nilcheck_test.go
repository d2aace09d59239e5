package nilcheck

import (
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestIsNil(t *testing.T) {
	var m mat.Matrix
	var d *mat.Dense
	var f func()
	for _, c := range []struct {
		v    any
		want bool
	}{
		{nil, true}, {m, true}, {d, true}, {mat.Matrix(d), true}, {f, true}, {[]float64(nil), true}, {map[int]int(nil), true},
		{mat.NewDense(1, 1, nil), false}, {0, false}, {"", false}, {[]float64{}, false}, {struct{}{}, false}, {func() {}, false},
	} {
		if got := IsNil(c.v); got != c.want {
			t.Errorf("IsNil(%#v) = %v, want %v", c.v, got, c.want)
		}
	}
}

func TestSamePointer(t *testing.T) {
	a, b := mat.NewDense(1, 1, nil), mat.NewDense(1, 1, nil)
	if !SamePointer(a, a) || SamePointer(a, b) || SamePointer(*a, *a) || SamePointer(nil, nil) || SamePointer(1, 1) {
		t.Error("SamePointer is wrong")
	}
}

// empty is a zero-size type: Go may give two of its values one address.
type empty struct{}

// sink keeps the values of TestSamePointerZeroSize on the heap.
var sink []any

func TestSamePointerZeroSize(t *testing.T) {
	a, b := &empty{}, &empty{}
	sink = append(sink, a, b)
	if SamePointer(a, b) || SamePointer(a, a) {
		t.Error("pointers to zero-size values taken for the same one")
	}
}

// TestIsCopy checks the three ways a Clone result is not a copy: nil (also
// typed), another type, the original itself.
func TestIsCopy(t *testing.T) {
	a := mat.NewDense(1, 1, []float64{1})
	b := mat.NewDense(1, 1, []float64{1})
	var typedNil *mat.Dense
	for _, c := range []struct {
		name     string
		cp, orig any
		want     bool
	}{
		{"a new value", b, a, true},
		{"nil", nil, a, false},
		{"typed nil", typedNil, a, false},
		{"another type", mat.NewVecDense(1, nil), a, false},
		{"the original", a, a, false},
		{"a new zero-size value", &empty{}, &empty{}, true},
	} {
		if got := IsCopy(c.cp, c.orig); got != c.want {
			t.Errorf("%s: IsCopy = %v, want %v", c.name, got, c.want)
		}
	}
}
