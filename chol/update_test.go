package chol

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestUpdateDowndate(t *testing.T) {
	rnd := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{1, 2, 7, 40, 100} {
		a := randSPD(rnd, n, n, 100)
		x := make([]float64, n)
		for i := range x {
			x[i] = rnd.NormFloat64()
		}
		// A + x·xᵀ by refactoring, against Update.
		b := append([]float64(nil), a...)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				b[i*n+j] += x[i] * x[j]
			}
		}
		var c, want Cholesky
		if _, err := c.Factor(n, a, n, NoJitter(), 1); err != nil {
			t.Fatal(err)
		}
		if _, err := want.Factor(n, b, n, NoJitter(), 1); err != nil {
			t.Fatal(err)
		}
		xc := append([]float64(nil), x...)
		if err := c.Update(x); err != nil {
			t.Fatal(err)
		}
		for i := range x {
			if x[i] != xc[i] {
				t.Fatal("Update modified x")
			}
		}
		for i, v := range c.RawL() {
			if math.Abs(v-want.RawL()[i]) > 1e-10*(1+math.Abs(v)) {
				t.Fatalf("n=%d: updated L[%d] = %g, want %g", n, i, v, want.RawL()[i])
			}
		}
		if be := backwardError(n, c.RawL(), n, b, n, 0); be > 1e-13 {
			t.Errorf("n=%d: update backward error %g", n, be)
		}
		// Downdating by the same x recovers the factor of A.
		if err := c.Downdate(x); err != nil {
			t.Fatal(err)
		}
		if be := backwardError(n, c.RawL(), n, a, n, 0); be > 1e-12 {
			t.Errorf("n=%d: downdate backward error %g", n, be)
		}
		// A downdate that leaves the matrix indefinite fails without
		// touching the factor, naming the pivot: x = 2·L[:,0]-direction.
		before := append([]float64(nil), c.RawL()...)
		y := make([]float64, n)
		for i := 0; i < n; i++ {
			y[i] = 1.5 * c.RawL()[i*n]
		}
		err := c.Downdate(y)
		var npd *NotPositiveDefiniteError
		if !errors.As(err, &npd) || npd.Pivot != 0 || !(npd.Value < 0) {
			t.Fatalf("n=%d: indefinite downdate: %v", n, err)
		}
		if !c.Valid() {
			t.Fatal("failed downdate invalidated the factor")
		}
		if n >= 7 {
			// y = L·p with p = 0.8·(e3 + e4): Σp² crosses 1 at pivot 4.
			l := c.RawL()
			for i := 0; i < n; i++ {
				y[i] = 0.8 * (l[i*n+3] + l[i*n+4])
			}
			if err := c.Downdate(y); !errors.As(err, &npd) || npd.Pivot != 4 {
				t.Fatalf("n=%d: downdate failing at pivot 4: %v", n, err)
			}
		}
		for i, v := range c.RawL() {
			if v != before[i] {
				t.Fatal("failed downdate modified the factor")
			}
		}
	}
	var c Cholesky
	if _, err := c.Factor(2, []float64{4, 0, 1, 3}, 2, NoJitter(), 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Update([]float64{1}); !errors.Is(err, ErrShape) {
		t.Errorf("short x: %v", err)
	}
	var nf *NonFiniteError
	if err := c.Downdate([]float64{0, math.NaN()}); !errors.As(err, &nf) || nf.Row != 1 {
		t.Errorf("NaN x: %v", err)
	}
	var empty Cholesky
	if err := empty.Update(nil); !errors.Is(err, ErrNoFactor) {
		t.Errorf("no factor: %v", err)
	}
}

// TestUpdateOverflow checks that an update whose result overflows float64
// is an error that leaves the factor as it was, not a factor holding Inf
// and NaN.
func TestUpdateOverflow(t *testing.T) {
	var c Cholesky
	if _, err := c.Factor(2, []float64{1, 0, 0, 1}, 2, NoJitter(), 1); err != nil {
		t.Fatal(err)
	}
	before := append([]float64(nil), c.l...)
	if err := c.Update([]float64{1e200, 1e200}); !errors.Is(err, ErrOverflow) {
		t.Fatalf("Update = %v, want ErrOverflow", err)
	}
	for i, v := range c.l {
		if math.Float64bits(v) != math.Float64bits(before[i]) {
			t.Fatalf("factor changed: %v, was %v", c.l, before)
		}
	}
	if ld := c.LogDet(); ld != 0 {
		t.Errorf("LogDet %v after the failed update, want 0", ld)
	}
}

// TestJitterScaleOverflow checks that the jitter scale, the mean of the
// diagonal, is found when the diagonal's sum overflows.
func TestJitterScaleOverflow(t *testing.T) {
	var c Cholesky
	jit, err := c.Factor(2, []float64{1e308, 0, 1e308, 1e308}, 2, DefaultJitter(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1e308 * DefaultJitter().Start; jit < want || jit > want*1e7 {
		t.Errorf("jitter %g, want a multiple of %g", jit, want)
	}
}

// TestDowndateFloor: a downdate that leaves a pivot below the floor of the
// policy the factor was computed with is refused, as Factor would have
// refused (and jittered) the downdated matrix; the factor is unchanged.
// Without a floor the same downdate goes through.
func TestDowndateFloor(t *testing.T) {
	a := []float64{1, 0, 0, 1 + 1e-15}
	x := []float64{0, 1}
	var c Cholesky
	if jit, err := c.Factor(2, a, 2, DefaultJitter(), 1); err != nil || jit != 0 {
		t.Fatalf("Factor: jitter %v, err %v", jit, err)
	}
	before := append([]float64(nil), c.RawL()...)
	err := c.Downdate(x)
	var npd *NotPositiveDefiniteError
	if !errors.As(err, &npd) || npd.Pivot != 1 || !(npd.Value > 0) || npd.Floor == 0 || !strings.Contains(err.Error(), "below the floor") {
		t.Fatalf("Downdate below the floor: %v", err)
	}
	if !c.Valid() || !slices.Equal(c.RawL(), before) {
		t.Error("a refused downdate changed the factor")
	}
	// The downdated matrix itself gets jitter from Factor.
	if jit, err := c.Factor(2, []float64{1, 0, 0, 1e-15}, 2, DefaultJitter(), 1); err != nil || jit == 0 {
		t.Errorf("Factor of the downdated matrix: jitter %v, err %v", jit, err)
	}
	// No floor: the downdate is done.
	if _, err := c.Factor(2, a, 2, JitterPolicy{Start: 1e-10, MaxTries: 7}, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Downdate(x); err != nil {
		t.Errorf("Downdate without a floor: %v", err)
	}
}
