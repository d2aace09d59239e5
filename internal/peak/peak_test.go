package peak

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestUnitsEndWithScalar(t *testing.T) {
	us := Units()
	if len(us) == 0 || us[len(us)-1].Name != "scalar" {
		t.Fatalf("Units() = %v, want a list ending with the scalar loop", us)
	}
	for _, u := range us {
		if u.Flops <= 0 || u.loop == nil {
			t.Errorf("unit %q: Flops %d, loop set %v", u.Name, u.Flops, u.loop != nil)
		}
	}
}

// TestLoopsRun runs every loop, including zero and negative counts, which
// must return at once.
func TestLoopsRun(t *testing.T) {
	for _, u := range Units() {
		for _, n := range []int{-1, 0, 1, 3} {
			u.loop(n)
		}
	}
}

func TestMeasurePositive(t *testing.T) {
	for _, u := range Units() {
		if r := u.Measure(5 * time.Millisecond); !(r > 0) {
			t.Errorf("%s: Measure = %v, want > 0", u.Name, r)
		}
		if r := u.MeasureCores(2, 5*time.Millisecond); !(r > 0) {
			t.Errorf("%s: MeasureCores(2) = %v, want > 0", u.Name, r)
		}
	}
}

func TestMachineNamesUnit(t *testing.T) {
	if m := Machine(); !strings.Contains(m, Best().Name+" FMA") {
		t.Errorf("Machine() = %q, does not name the FMA unit %q", m, Best().Name)
	}
}

func BenchmarkPeak(b *testing.B) {
	for _, u := range Units() {
		b.Run(u.Name, func(b *testing.B) {
			n := u.chunk()
			for b.Loop() {
				u.loop(n)
			}
			b.ReportMetric(float64(b.N)*float64(n)*float64(u.Flops)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestRoundTrip checks that the probe returns a positive latency with two
// threads and 0 with one, and that it terminates in both cases (the value
// itself depends on the host and its load).
func TestRoundTrip(t *testing.T) {
	if d := RoundTrip(2 * time.Millisecond); runtime.GOMAXPROCS(0) >= 2 && runtime.NumCPU() >= 2 && !(d > 0) {
		t.Errorf("RoundTrip = %v, want > 0", d)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if d := RoundTrip(2 * time.Millisecond); d != 0 {
		t.Errorf("RoundTrip with GOMAXPROCS 1 = %v, want 0", d)
	}
}
