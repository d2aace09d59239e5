package convgp

import "testing"

// TestFloatPool checks the pool's contract: get returns the length asked
// for, getZero zeroes what it hands back, a returned slice is handed out
// again for its length, and the number of lengths kept stays bounded.
func TestFloatPool(t *testing.T) {
	var fp floatPool
	a := fp.get(100)
	if len(a) != 100 {
		t.Fatalf("get(100) has length %d", len(a))
	}
	for i := range a {
		a[i] = 1
	}
	fp.put(a)
	b := fp.getZero(100)
	if len(b) != 100 {
		t.Fatalf("getZero(100) has length %d", len(b))
	}
	for i, v := range b {
		if v != 0 {
			t.Fatalf("getZero: element %d = %v", i, v)
		}
	}
	fp.put(nil) // ignored
	for n := 1; n <= 3*maxPoolLengths; n++ {
		fp.put(fp.get(n))
	}
	if len(fp.free) > maxPoolLengths {
		t.Errorf("%d lengths kept, at most %d", len(fp.free), maxPoolLengths)
	}
	held := make([][]float64, 2*maxPoolPerLength)
	for i := range held {
		held[i] = fp.get(7)
	}
	for _, s := range held {
		fp.put(s)
	}
	if k := len(fp.free[7]); k != maxPoolPerLength {
		t.Errorf("%d slices of one length kept, want the bound %d", k, maxPoolPerLength)
	}
	// A slice put on one goroutine is handed out on another.
	var fq floatPool
	fq.put(make([]float64, 5))
	done := make(chan bool)
	go func() { done <- testing.AllocsPerRun(1, func() { fq.put(fq.get(5)) }) == 0 }()
	if !<-done {
		t.Error("get on another goroutine allocated with a slice of its length free")
	}
}
