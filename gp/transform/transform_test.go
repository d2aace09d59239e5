package transform

import (
	"math"
	"testing"
)

func TestSoftplusRoundTrip(t *testing.T) {
	for _, p := range []float64{1e-300, 1e-12, 1e-6, 0.1, 0.5, 1, 2, 10, 29.9, 30, 30.1, 100, 1e6, 1e300} {
		u := InvSoftplus(p)
		got := Softplus(u)
		// exp(u) carries a relative error of about |u|·ε, the conditioning of
		// the map itself, so the tolerance scales with |u|.
		if math.Abs(got-p) > 4e-16*math.Max(1, math.Abs(u))*p {
			t.Errorf("Softplus(InvSoftplus(%g)) = %g", p, got)
		}
	}
}

func TestSoftplusDerivFiniteDifference(t *testing.T) {
	for _, u := range []float64{-40, -5, -1, -1e-3, 0, 1e-3, 1, 5, 40} {
		const h = 1e-6
		fd := (Softplus(u+h) - Softplus(u-h)) / (2 * h)
		if d := SoftplusDeriv(u); math.Abs(d-fd) > 1e-8 {
			t.Errorf("SoftplusDeriv(%g) = %g, finite difference %g", u, d, fd)
		}
	}
}

func TestSoftplusExtremes(t *testing.T) {
	if v := Softplus(-800); !(v >= 0) || math.IsNaN(v) {
		t.Errorf("Softplus(-800) = %g", v)
	}
	if v := Softplus(800); v != 800 {
		t.Errorf("Softplus(800) = %g, want 800", v)
	}
	for _, p := range []float64{0, -1, math.NaN()} {
		if u := InvSoftplus(p); !math.IsNaN(u) {
			t.Errorf("InvSoftplus(%g) = %g, want NaN", p, u)
		}
	}
	if d := SoftplusDeriv(-800); d != 0 && !(d > 0) {
		t.Errorf("SoftplusDeriv(-800) = %g", d)
	}
}
