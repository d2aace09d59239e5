package snelson

import (
	"math"
	"testing"
)

func TestLoad(t *testing.T) {
	x, y, xt := Load()
	if r, c := x.Dims(); r != 200 || c != 1 || len(y) != 200 {
		t.Fatalf("train dims %d×%d, %d targets", r, c, len(y))
	}
	if r, c := xt.Dims(); r != 301 || c != 1 {
		t.Fatalf("test dims %d×%d", r, c)
	}
	// First row of the file and the ends of the test grid.
	if x.At(0, 0) != 5.7007757 || y[0] != -0.4536778 {
		t.Errorf("first row %v %v", x.At(0, 0), y[0])
	}
	if xt.At(0, 0) != -3 || math.Abs(xt.At(300, 0)-10) > 1e-6 {
		t.Errorf("test grid ends %v %v", xt.At(0, 0), xt.At(300, 0))
	}
	// Fresh copies.
	x.Set(0, 0, 99)
	if x2, _, _ := Load(); x2.At(0, 0) == 99 {
		t.Error("Load returned shared storage")
	}
}

func TestTrainTest(t *testing.T) {
	xa, ya, xb, yb := TrainTest(7)
	if r, _ := xa.Dims(); r != 100 || len(ya) != 100 || len(yb) != 100 {
		t.Fatalf("sizes")
	}
	if r, _ := xb.Dims(); r != 100 {
		t.Fatalf("test size %d", r)
	}
	xc, _, _, _ := TrainTest(7)
	for i := 0; i < 100; i++ {
		if xa.At(i, 0) != xc.At(i, 0) {
			t.Fatal("same seed, different split")
		}
	}
	// Train and test together are the whole data set.
	x, _, _ := Load()
	var sumAll, sumParts float64
	for i := 0; i < 200; i++ {
		sumAll += x.At(i, 0)
	}
	for i := 0; i < 100; i++ {
		sumParts += xa.At(i, 0) + xb.At(i, 0)
	}
	if math.Abs(sumAll-sumParts) > 1e-9 {
		t.Errorf("split loses points: %v vs %v", sumAll, sumParts)
	}
}
