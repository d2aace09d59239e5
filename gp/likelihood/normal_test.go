package likelihood

import (
	"math"
	"testing"
)

func TestLogNormCDF(t *testing.T) {
	// Reference values: log Φ(x) from high-precision tables and the
	// asymptotic series −x²/2 − log(−x) − log√(2π) + log(1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸).
	asym := func(x float64) float64 {
		x2 := 1 / (x * x)
		return -0.5*x*x - math.Log(-x) - logSqrt2Pi + math.Log1p(-x2+3*x2*x2-15*x2*x2*x2+105*x2*x2*x2*x2-945*x2*x2*x2*x2*x2)
	}
	for _, x := range []float64{-19.99, -20, -20.01, -25, -40, -1e3, -1e8} {
		got, want := logNormCDF(x), asym(x)
		if math.Abs(got-want) > 1e-13*math.Abs(want) {
			t.Errorf("logNormCDF(%g) = %.17g, want %.17g", x, got, want)
		}
	}
	for _, c := range []struct{ x, want float64 }{
		{0, math.Log(0.5)},
		{1, math.Log(0.8413447460685429)},
		{-1, math.Log(0.15865525393145707)},
		{-5, math.Log(2.866515718791939e-07)},
		{10, -7.619853024160527e-24},
	} {
		if got := logNormCDF(c.x); math.Abs(got-c.want) > 1e-14*math.Abs(c.want) {
			t.Errorf("logNormCDF(%g) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
	// The derivative is the inverse Mills ratio, continuous across the cut.
	for _, x := range []float64{-30, -20.5, -19.5, -3, 0, 2, 8} {
		h := 1e-6 * math.Max(1, math.Abs(x))
		fd := (logNormCDF(x+h) - logNormCDF(x-h)) / (2 * h)
		if got := invMills(x); math.Abs(got-fd) > 1e-7*math.Max(1, math.Abs(fd)) {
			t.Errorf("invMills(%g) = %.12g, finite difference %.12g", x, got, fd)
		}
	}
	if d := invMills(-20+1e-12) - invMills(-20-1e-12); math.Abs(d) > 1e-9 {
		t.Errorf("invMills jumps by %g at the cut", d)
	}
}

func TestLogNormCDFMills(t *testing.T) {
	for _, x := range []float64{-1e6, -40, -20.0000001, -20, -19.99, -5, -1, -1e-3, 0, 1e-3, 0.7, 3, 9, 40} {
		lp, l := logNormCDFMills(x)
		if lp != logNormCDF(x) {
			t.Errorf("log Φ(%g): combined %.17g, separate %.17g", x, lp, logNormCDF(x))
		}
		if want := invMills(x); math.Abs(l-want) > 1e-15*want {
			t.Errorf("λ(%g): combined %.17g, separate %.17g", x, l, want)
		}
	}
}
